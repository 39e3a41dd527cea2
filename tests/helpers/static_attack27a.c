/* The twenty-seventh attack review's static probe (tests/integration/
 * test_attack27a.py). No shim: each call is a raw system call.
 *
 *   named-sends
 *	listens on two TCP ports of 127.0.0.1 (A, B) and two unix
 *	seqpacket sockets in the cwd (a.sock, b.sock), connects to A and
 *	to a.sock, and sends on each with B's address (sendto, sendmsg):
 *	the kernel sends to the connected peer whatever the address says.
 *	Prints "A PORT B PORT", one line per send ("tcp-sendto R", R the
 *	result or errno name) and what each listener got ("a GOT", "b
 *	GOT", "ua GOT", "ub GOT": the bytes or "-"). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char *res(long r)
{
	static char buf[32];
	const char *s;

	if (r >= 0) {
		snprintf(buf, sizeof(buf), "%ld", r);
		return buf;
	}
	s = strerrorname_np(errno);
	return s ? s : "E?";
}

static int tcp_listener(struct sockaddr_in *sa)
{
	socklen_t l = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)sa, l) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)sa, &l))
		return -1;
	return fd;
}

static int unix_listener(const char *name, struct sockaddr_un *su)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);

	memset(su, 0, sizeof(*su));
	su->sun_family = AF_UNIX;
	snprintf(su->sun_path, sizeof(su->sun_path), "%s", name);
	unlink(name);
	if (fd < 0 || bind(fd, (struct sockaddr *)su, sizeof(*su)) ||
	    listen(fd, 4))
		return -1;
	return fd;
}

/* What listener l's first connection got, or "-". */
static void got(const char *tag, int l)
{
	char buf[256];
	ssize_t n = -1, k;
	int c;

	usleep(100000);
	c = accept4(l, NULL, NULL, SOCK_NONBLOCK);
	if (c >= 0) {
		n = 0;
		while (n < (ssize_t)sizeof(buf) - 1 &&
		       (k = recv(c, buf + n, sizeof(buf) - 1 - (size_t)n, 0)) >
			   0)
			n += k;
	}
	buf[n > 0 ? n : 0] = '\0';
	printf("%s %s\n", tag, n > 0 ? buf : "-");
}

static void sends(const char *tag, int c, const void *to, socklen_t len)
{
	char m1[32], m2[32];
	struct iovec io;
	struct msghdr mh = {.msg_name = (void *)to,
			    .msg_namelen = len,
			    .msg_iov = &io,
			    .msg_iovlen = 1};

	snprintf(m1, sizeof(m1), "[%s-sendto]", tag);
	snprintf(m2, sizeof(m2), "[%s-sendmsg]", tag);
	printf("%s-sendto %s\n", tag,
	       res(sendto(c, m1, strlen(m1), 0, to, len)));
	io = (struct iovec){m2, strlen(m2)};
	printf("%s-sendmsg %s\n", tag, res(sendmsg(c, &mh, 0)));
}

int main(int argc, char **argv)
{
	struct sockaddr_in a, b;
	struct sockaddr_un ua, ub;
	int la, lb, c, ula, ulb, uc;

	if (argc < 2 || strcmp(argv[1], "named-sends"))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	la = tcp_listener(&a);
	lb = tcp_listener(&b);
	ula = unix_listener("a.sock", &ua);
	ulb = unix_listener("b.sock", &ub);
	if (la < 0 || lb < 0 || ula < 0 || ulb < 0)
		return 3;
	printf("A %d B %d\n", ntohs(a.sin_port), ntohs(b.sin_port));
	c = socket(AF_INET, SOCK_STREAM, 0);
	printf("tcp-connect %s\n",
	       res(connect(c, (struct sockaddr *)&a, sizeof(a))));
	sends("tcp", c, &b, sizeof(b));
	uc = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	printf("useq-connect %s\n",
	       res(connect(uc, (struct sockaddr *)&ua, sizeof(ua))));
	sends("useq", uc, &ub, sizeof(ub));
	got("a", la);
	got("b", lb);
	got("ua", ula);
	got("ub", ulb);
	return 0;
}
