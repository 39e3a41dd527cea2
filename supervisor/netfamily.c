/* Fixed decisions for the address families the policy does not name;
 * see netfamily.h. */
#include "supervisor/netfamily.h"

#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>

struct name {
	int v;
	const char *s;
};

static const struct name families[] = {
    {AF_UNSPEC, "unspec"},
    {AF_UNIX, "unix"},
    {AF_INET, "inet"},
    {AF_INET6, "inet6"},
    {AF_NETLINK, "netlink"},
    {AF_PACKET, "packet"},
    {AF_VSOCK, "vsock"},
    {AF_ALG, "alg"},
    {AF_BLUETOOTH, "bluetooth"},
    {AF_CAN, "can"},
    {AF_TIPC, "tipc"},
    {AF_XDP, "xdp"},
    {AF_APPLETALK, "appletalk"},
    {AF_X25, "x25"},
    {AF_AX25, "ax25"},
    {AF_IPX, "ipx"},
    {AF_KEY, "key"},
    {AF_RDS, "rds"},
    {AF_QIPCRTR, "qipcrtr"},
    {AF_MCTP, "mctp"},
};

static const struct name nl_protos[] = {
    {NETLINK_ROUTE, "route"},		{NETLINK_SOCK_DIAG, "sock_diag"},
    {NETLINK_AUDIT, "audit"},		{NETLINK_GENERIC, "generic"},
    {NETLINK_KOBJECT_UEVENT, "uevent"}, {NETLINK_XFRM, "xfrm"},
    {NETLINK_NETFILTER, "netfilter"},	{NETLINK_SELINUX, "selinux"},
    {NETLINK_CONNECTOR, "connector"},	{NETLINK_FIB_LOOKUP, "fib_lookup"},
};

static const char *name_of(const struct name *t, size_t n, int v)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].v == v)
			return t[i].s;
	return NULL;
}

const char *hx_netfamily_name(int family)
{
	return name_of(families, sizeof(families) / sizeof(*families), family);
}

const char *hx_netlink_proto_name(int proto)
{
	return name_of(nl_protos, sizeof(nl_protos) / sizeof(*nl_protos),
		       proto);
}

static void set(struct hx_decision *d, enum hx_verdict v, const char *rule)
{
	d->verdict = v;
	d->rule = rule;
	d->pattern = NULL;
}

/* A route query to the kernel (getifaddrs, if_nameindex, `ip addr`,
 * Node's os.networkInterfaces()) reads what /proc/net shows anyway; a
 * change (RTM_NEWADDR, RTM_NEWROUTE...) needs CAP_NET_ADMIN, which
 * neither the agent, whose socket it is, nor the worker that sends it
 * has (netlink_ns_capable checks both). Refused: a message to another
 * process's socket (nl_pid != 0: a channel out of the sandbox no policy
 * rule names), a multicast send, and every other protocol: sock_diag
 * lists the host's sockets, audit writes the host's audit log, generic
 * and xfrm configure devices and tunnels, uevent fakes device events. */
static void netlink(const struct sockaddr_nl *nl, int proto,
		    struct hx_decision *d)
{
	if (nl->nl_pid)
		set(d, HX_VERDICT_DENY, "harness:netlink-peer");
	else if (nl->nl_groups)
		set(d, HX_VERDICT_DENY, "harness:netlink-multicast");
	else if (proto != NETLINK_ROUTE)
		set(d, HX_VERDICT_DENY, "harness:netlink-protocol");
	else
		set(d, HX_VERDICT_ALLOW, "harness:netlink-route");
}

bool hx_netfamily_decide(const void *sa, size_t len, int proto,
			 struct hx_decision *d)
{
	sa_family_t fam;
	struct sockaddr_nl nl;

	if (!sa || len < sizeof(fam))
		return false;
	memcpy(&fam, sa, sizeof(fam));
	switch (fam) {
	case AF_INET:
	case AF_INET6:
	case AF_UNIX:
		return false;
	case AF_NETLINK:
		if (len < sizeof(nl))
			return false;
		memcpy(&nl, sa, sizeof(nl));
		netlink(&nl, proto, d);
		return true;
	default:
		/* AF_UNSPEC too: udp_sendmsg() reads an AF_UNSPEC address
		 * as an IPv4 one. (connect(AF_UNSPEC), which dissolves an
		 * association, is not decided: unotify_net.c.) */
		set(d, HX_VERDICT_DENY, "harness:family");
		return true;
	}
}
