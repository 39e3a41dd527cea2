/* The thirty-second attack review's static probe, part b (tests/
 * integration/test_attack32b.py). No shim: each call is a raw system
 * call.
 *
 *   mcast-join
 *	joins multicast groups whose addresses carry the marker "SEC"
 *	(239.83.69.67; ff05::5345:4352:4554:...: "SECRET") on the
 *	interface the group routes by, each way the kernel offers (IPv4
 *	any-source and source-specific, the protocol-independent MCAST_
 *	forms, IPv6), then waits for the kernel's reports to go. Prints
 *	"NAME R" a join, R "ok" or the errno's name.
 *
 *   tfo-sends
 *	listens on two TCP ports of 127.0.0.1 (A, B), connects two
 *	sockets to A by a Fast Open connect deferred to the first send
 *	(TCP_FASTOPEN_CONNECT, TCP_FASTOPEN_NO_COOKIE: no SYN yet, the
 *	socket in SYN_SENT), then sends on the first with B's address and
 *	on the second with 10.0.0.1:80's: the kernel makes the SYN, with
 *	the bytes, to A whatever the send names. Prints "A PORT B PORT",
 *	"send-b R", "send-far R" and what each listener's connections got
 *	("a GOT1 GOT2", "b GOT": the bytes or "-"). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define GROUP4	"239.83.69.67"
#define SOURCE4 "10.83.69.67"
#define GROUP6	"ff05::5345:4352:4554:3332:6273"
#define SOURCE6 "2001:db8::5345:4352:4554"

static void say(const char *name, int r)
{
	const char *s = strerrorname_np(errno);

	printf("%s %s\n", name, !r ? "ok" : s ? s : "E?");
}

static void join4(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct ip_mreqn m = {.imr_ifindex = 0};
	struct ip_mreq_source ms;
	struct group_req g = {.gr_interface = 0};
	struct group_source_req gs = {.gsr_interface = 0};
	struct sockaddr_in *gi = (void *)&g.gr_group;
	struct sockaddr_in *gsg = (void *)&gs.gsr_group;
	struct sockaddr_in *gss = (void *)&gs.gsr_source;

	inet_pton(AF_INET, GROUP4, &m.imr_multiaddr);
	say("ip_add_membership",
	    setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m)));
	memset(&ms, 0, sizeof(ms));
	ms.imr_multiaddr = m.imr_multiaddr;
	inet_pton(AF_INET, SOURCE4, &ms.imr_sourceaddr);
	say("ip_add_source_membership",
	    setsockopt(fd, IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP, &ms,
		       sizeof(ms)));
	gi->sin_family = AF_INET;
	gi->sin_addr = m.imr_multiaddr;
	gi->sin_addr.s_addr ^= htonl(1); /* another group: 239.83.69.66 */
	say("mcast_join_group4",
	    setsockopt(fd, IPPROTO_IP, MCAST_JOIN_GROUP, &g, sizeof(g)));
	gsg->sin_family = gss->sin_family = AF_INET;
	gsg->sin_addr = m.imr_multiaddr;
	gsg->sin_addr.s_addr ^= htonl(2);
	gss->sin_addr = ms.imr_sourceaddr;
	say("mcast_join_source_group4",
	    setsockopt(fd, IPPROTO_IP, MCAST_JOIN_SOURCE_GROUP, &gs,
		       sizeof(gs)));
}

static void join6(void)
{
	int fd = socket(AF_INET6, SOCK_DGRAM, 0);
	struct ipv6_mreq m = {.ipv6mr_interface = 0};
	struct group_req g = {.gr_interface = 0};
	struct group_source_req gs = {.gsr_interface = 0};
	struct sockaddr_in6 *gi = (void *)&g.gr_group;
	struct sockaddr_in6 *gsg = (void *)&gs.gsr_group;
	struct sockaddr_in6 *gss = (void *)&gs.gsr_source;

	inet_pton(AF_INET6, GROUP6, &m.ipv6mr_multiaddr);
	say("ipv6_join_group",
	    setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m, sizeof(m)));
	gi->sin6_family = AF_INET6;
	gi->sin6_addr = m.ipv6mr_multiaddr;
	gi->sin6_addr.s6_addr[15] ^= 1;
	say("mcast_join_group6",
	    setsockopt(fd, IPPROTO_IPV6, MCAST_JOIN_GROUP, &g, sizeof(g)));
	gsg->sin6_family = gss->sin6_family = AF_INET6;
	gsg->sin6_addr = m.ipv6mr_multiaddr;
	gsg->sin6_addr.s6_addr[15] ^= 2;
	inet_pton(AF_INET6, SOURCE6, &gss->sin6_addr);
	say("mcast_join_source_group6",
	    setsockopt(fd, IPPROTO_IPV6, MCAST_JOIN_SOURCE_GROUP, &gs,
		       sizeof(gs)));
}

static int tcp_listener(struct sockaddr_in *sa)
{
	socklen_t l = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)sa, l) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)sa, &l))
		return -1;
	return fd;
}

/* A socket connected to a by a Fast Open connect, deferred. */
static int deferred(const struct sockaddr_in *a)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_NO_COOKIE, &one,
		       sizeof(one)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one,
		       sizeof(one)) ||
	    connect(fd, (const struct sockaddr *)a, sizeof(*a)))
		return -1;
	return fd;
}

static void sent(const char *tag, int fd, const char *what,
		 const struct sockaddr_in *to)
{
	ssize_t r = sendto(fd, what, strlen(what), MSG_NOSIGNAL,
			   (const struct sockaddr *)to, sizeof(*to));

	if (r >= 0)
		printf("%s %zd\n", tag, r);
	else
		say(tag, -1);
}

/* What the next connection listener l takes got, or "-". */
static const char *got(int l)
{
	static char buf[2][64];
	static int k;
	struct timeval tv = {.tv_sec = 1};
	char *b = buf[k++ & 1];
	ssize_t n = -1;
	int c;

	setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if ((c = accept(l, NULL, NULL)) >= 0) {
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = recv(c, b, 63, 0);
		close(c);
	}
	if (n <= 0)
		return "-";
	b[n] = '\0';
	return b;
}

static int tfo_sends(void)
{
	struct sockaddr_in a, b, far = {.sin_family = AF_INET};
	int la = tcp_listener(&a), lb = tcp_listener(&b), s1, s2;
	const char *g1, *g2;

	if (la < 0 || lb < 0)
		return 3;
	printf("A %d B %d\n", ntohs(a.sin_port), ntohs(b.sin_port));
	far.sin_port = htons(80);
	inet_pton(AF_INET, "10.0.0.1", &far.sin_addr);
	if ((s1 = deferred(&a)) < 0 || (s2 = deferred(&a)) < 0)
		return 4;
	sent("send-b", s1, "to-b", &b);
	sent("send-far", s2, "to-far", &far);
	g1 = got(la);
	g2 = got(la);
	printf("a %s %s\n", g1, g2);
	printf("b %s\n", got(lb));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "tfo-sends"))
		return tfo_sends();
	if (strcmp(argv[1], "mcast-join"))
		return 2;
	join4();
	join6();
	/* The unsolicited reports go at once and again within a second
	 * (the robustness count); the leaves at exit. */
	usleep(1500000);
	return 0;
}
