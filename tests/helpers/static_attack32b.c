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
 *	"NAME R" a join, R "ok" or the errno's name. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "mcast-join"))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	join4();
	join6();
	/* The unsolicited reports go at once and again within a second
	 * (the robustness count); the leaves at exit. */
	usleep(1500000);
	return 0;
}
