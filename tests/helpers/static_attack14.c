/* The fourteenth attack review's static probes (tests/integration/
 * test_attack14.py). No shim: each call is a raw system call.
 *
 *   wire-sendmsg PATH
 *	connects to the session socket as the shim does and sends, by
 *	sendmsg (which the kernel layer emulates, sending from a process
 *	of its own), a request to write PATH; prints "pid P send R reply N"
 *	(R: the sendmsg's result or errno name, N: the reply's bytes or
 *	-1).
 *   tcp-metrics
 *	asks the kernel by NETLINK_GENERIC, with write(2) (no address,
 *	never notified), for its TCP metrics: the peers this machine's
 *	TCP connections had, any process's; prints "socket ERRNO",
 *	"family ERRNO" or "metrics N" and each IPv4 peer on a line of its
 *	own ("peer A.B.C.D").
 *   own-server NAME
 *	binds and listens on the unix socket NAME (in the cwd), connects
 *	to it and sends to it by sendmsg; prints "sent R got N" (R: the
 *	sendmsg's result or errno name). A server of the agent's own: its
 *	listen is made by the kernel layer, so its clients' peer is
 *	harness-exec's pid.
 *   read PATH...
 *	opens each PATH read-only and reads it: "PATH ok N" (N bytes) or
 *	"PATH ERRNO". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/tcp_metrics.h>

#include "common/wire.h"

static const char *err(int e)
{
	const char *s = strerrorname_np(e);

	return s ? s : "E?";
}

static int dial(void)
{
	const char *path = getenv(HX_ENV_SOCKET);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 5};
	int fd;

	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "no %s\n", HX_ENV_SOCKET);
		exit(2);
	}
	strcpy(sa.sun_path, path);
	fd =
	    (int)syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    syscall(SYS_connect, fd, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("connect %s\n", err(errno));
		exit(2);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static int wire_sendmsg(const char *path)
{
	uint8_t buf[8192], reply[HX_WIRE_MAX];
	struct hx_wbuf w;
	struct iovec io;
	struct msghdr m = {0};
	int fd = dial();
	long s;
	ssize_t got = -1;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 9);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPEN);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	io = (struct iovec){buf, hx_wire_finish(&w)};
	m.msg_iov = &io;
	m.msg_iovlen = 1;
	s = syscall(SYS_sendmsg, fd, &m, MSG_NOSIGNAL);
	if (s < 0)
		printf("pid %d send %s", (int)getpid(), err(errno));
	else
		printf("pid %d send %ld", (int)getpid(), s);
	if (s > 0)
		got = recv(fd, reply, sizeof(reply), 0);
	printf(" reply %zd\n", got);
	return 0;
}

/* One generic netlink request (cmd, family fam; one string attribute
 * when name), written with no address. */
static int nl_write(int fd, int fam, int cmd, int flags, const char *name)
{
	struct {
		struct nlmsghdr h;
		struct genlmsghdr g;
		char attrs[64];
	} m = {0};
	size_t len = NLMSG_LENGTH(GENL_HDRLEN);

	m.h.nlmsg_type = (uint16_t)fam;
	m.h.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	m.h.nlmsg_seq = 1;
	m.g.cmd = (uint8_t)cmd;
	m.g.version = 1;
	if (name) {
		struct nlattr *a = (void *)m.attrs;

		a->nla_type = CTRL_ATTR_FAMILY_NAME;
		a->nla_len = (uint16_t)(NLA_HDRLEN + strlen(name) + 1);
		memcpy(m.attrs + NLA_HDRLEN, name, strlen(name) + 1);
		len += NLA_ALIGN(a->nla_len);
	}
	m.h.nlmsg_len = (uint32_t)len;
	return syscall(SYS_write, fd, &m, len) == (long)len ? 0 : errno;
}

/* The attribute of type want in the attributes at p (n bytes). */
static struct nlattr *nl_attr(void *p, long n, int want)
{
	struct nlattr *a = p;

	while (n >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= n) {
		if ((a->nla_type & NLA_TYPE_MASK) == want)
			return a;
		n -= NLA_ALIGN(a->nla_len);
		a = (void *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return NULL;
}

static int tcp_metrics(void)
{
	static char buf[1 << 16];
	int fd = (int)syscall(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
			      NETLINK_GENERIC);
	int fam = -1, e, count = 0;
	long n;

	if (fd < 0) {
		printf("socket %s\n", err(errno));
		return 0;
	}
	if ((e = nl_write(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0,
			  TCP_METRICS_GENL_NAME))) {
		printf("family %s\n", err(e));
		return 0;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n > (long)NLMSG_LENGTH(GENL_HDRLEN)) {
		struct nlmsghdr *h = (void *)buf;
		struct nlattr *a =
		    h->nlmsg_type == NLMSG_ERROR
			? NULL
			: nl_attr(buf + NLMSG_LENGTH(GENL_HDRLEN),
				  (long)h->nlmsg_len -
				      (long)NLMSG_LENGTH(GENL_HDRLEN),
				  CTRL_ATTR_FAMILY_ID);

		if (a)
			fam = *(uint16_t *)((char *)a + NLA_HDRLEN);
	}
	if (fam < 0 ||
	    (e = nl_write(fd, fam, TCP_METRICS_CMD_GET, NLM_F_DUMP, NULL))) {
		printf("family %s\n", fam < 0 ? "ENOENT" : err(e));
		return 0;
	}
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			struct nlattr *a;

			if (h->nlmsg_type == NLMSG_DONE ||
			    h->nlmsg_type == NLMSG_ERROR)
				goto done;
			count++;
			a = nl_attr((char *)h + NLMSG_LENGTH(GENL_HDRLEN),
				    (long)h->nlmsg_len -
					(long)NLMSG_LENGTH(GENL_HDRLEN),
				    TCP_METRICS_ATTR_ADDR_IPV4);
			if (a) {
				char ip[INET_ADDRSTRLEN];

				inet_ntop(AF_INET, (char *)a + NLA_HDRLEN, ip,
					  sizeof(ip));
				printf("peer %s\n", ip);
			}
		}
	}
done:
	printf("metrics %d\n", count);
	return 0;
}

static int own_server(const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char buf[64] = "hello";
	struct iovec io = {buf, 5};
	struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1};
	int l, c, a;
	long s, g = -1;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", name);
	l = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || c < 0 ||
	    syscall(SYS_bind, l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    syscall(SYS_listen, l, 4) ||
	    syscall(SYS_connect, c, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("setup %s\n", err(errno));
		return 0;
	}
	a = (int)syscall(SYS_accept4, l, NULL, NULL, SOCK_CLOEXEC);
	s = syscall(SYS_sendmsg, c, &m, MSG_NOSIGNAL);
	if (s < 0)
		printf("sent %s", err(errno));
	else
		printf("sent %ld", s);
	if (a >= 0 && s > 0)
		g = recv(a, buf, sizeof(buf), 0);
	printf(" got %ld\n", g);
	return 0;
}

static int read_each(int argc, char **argv)
{
	char buf[4096];

	for (int i = 2; i < argc; i++) {
		int fd = (int)syscall(SYS_openat, AT_FDCWD, argv[i],
				      O_RDONLY | O_CLOEXEC);
		long n;

		if (fd < 0) {
			printf("%s %s\n", argv[i], err(errno));
			continue;
		}
		n = syscall(SYS_read, fd, buf, sizeof(buf));
		if (n < 0)
			printf("%s %s\n", argv[i], err(errno));
		else
			printf("%s ok %ld\n", argv[i], n);
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "wire-sendmsg"))
		return wire_sendmsg(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "tcp-metrics"))
		return tcp_metrics();
	if (argc > 2 && !strcmp(argv[1], "own-server"))
		return own_server(argv[2]);
	if (argc > 2 && !strcmp(argv[1], "read"))
		return read_each(argc, argv);
	fprintf(stderr,
		"usage: static_attack14 wire-sendmsg PATH | tcp-metrics\n");
	return 2;
}
