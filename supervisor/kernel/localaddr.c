/* Source addresses that are not the machine's; see localaddr.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/localaddr.h"

#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/sockaddr.h"

/* Whether the kernel lets this namespace bind addresses that are not
 * its own (net.ipv4/ipv6.ip_nonlocal_bind, which an admin may set for
 * keepalived and the like); IP_FREEBIND is refused in BPF. */
static bool nonlocal_binds(int family)
{
	const char *p = family == AF_INET6
			    ? "/proc/sys/net/ipv6/ip_nonlocal_bind"
			    : "/proc/sys/net/ipv4/ip_nonlocal_bind";
	char c = '1';
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '1'; /* unknown: checked */
		close(fd);
	}
	return c != '0';
}

/* Whether ip is an address any socket may bind: loopback's (127/8,
 * ::1) or unspecified. */
static bool always_local(const struct hx_ipaddr *ip)
{
	static const unsigned char any[16], one6[16] = {[15] = 1};

	if (ip->family == AF_INET)
		return ip->addr[0] == 127 || !memcmp(ip->addr, any, 4);
	return !memcmp(ip->addr, any, 16) || !memcmp(ip->addr, one6, 16);
}

/* Whether ip is an address of this machine's interfaces. */
static bool machine_addr(const struct hx_ipaddr *ip)
{
	struct ifaddrs *ifs, *i;
	bool found = false;

	if (getifaddrs(&ifs))
		return false;
	for (i = ifs; i && !found; i = i->ifa_next) {
		struct hx_ipaddr a;
		sa_family_t f = i->ifa_addr ? i->ifa_addr->sa_family : 0;

		if (f != AF_INET && f != AF_INET6)
			continue;
		if (hx_sockaddr_ip(i->ifa_addr,
				   f == AF_INET ? sizeof(struct sockaddr_in)
						: sizeof(struct sockaddr_in6),
				   &a)) {
			a.port = ip->port; /* an interface's has none */
			found = hx_ipaddr_equal(&a, ip);
		}
	}
	freeifaddrs(ifs);
	return found;
}

bool hx_foreign_source(const void *sa, size_t len)
{
	struct hx_ipaddr ip;

	/* the sysctl read and the interfaces' dump: only for a bind to
	 * another address than these, rare (tens of us) */
	if (!hx_sockaddr_ip(sa, len, &ip) || always_local(&ip) ||
	    !nonlocal_binds(ip.family))
		return false;
	return !machine_addr(&ip);
}
