/* Loopback destinations, their listeners and the model endpoints; see
 * loopback.h. */
#define _GNU_SOURCE
#include "supervisor/loopback.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TCP_LISTEN_STATE 10 /* include/net/tcp_states.h: TCP_LISTEN */
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262 /* its subflows connect to TCP listeners */
#endif
/* Sockets on one port: more and the port is no one's (fails closed). */
#define PORT_SOCKETS 16

bool hx_loopback_addr(const void *sa, size_t len, struct hx_ipaddr *out)
{
	static const uint8_t lo6[16] = {[15] = 1};

	if (!hx_sockaddr_ip(sa, len, out))
		return false;
	return out->family == AF_INET ? out->addr[0] == 127
				      : !memcmp(out->addr, lo6, 16);
}

/* Whether a socket of family fam bound to src (the kernel's 16 bytes)
 * takes what is sent to d. */
static bool takes(const struct hx_ipaddr *d, int fam, const void *src,
		  bool v6only)
{
	static const unsigned char any[16],
	    mapped[12] = {[10] = 0xff, [11] = 0xff};
	const unsigned char *s = src;

	if (fam == AF_INET)
		return d->family == AF_INET &&
		       (!memcmp(s, d->addr, 4) || !memcmp(s, any, 4));
	if (fam != AF_INET6)
		return false;
	if (!memcmp(s, any, 16))
		return d->family == AF_INET6 || !v6only;
	if (d->family == AF_INET6)
		return !memcmp(s, d->addr, 16);
	return !memcmp(s, mapped, 12) && !memcmp(s + 12, d->addr, 4);
}

/* One dump of family fam's sockets of proto, the matching inodes added
 * to inos[*n..max). 0 or -errno. */
static int dump(int fd, int fam, int proto, const struct hx_ipaddr *d,
		unsigned long *inos, size_t max, size_t *n)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req = {
	    .h = {.nlmsg_len = sizeof(req),
		  .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		  .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
	    .r = {.sdiag_family = (__u8)fam,
		  .sdiag_protocol = (__u8)proto,
		  /* a datagram socket of any state is bound */
		  .idiag_states =
		      proto == IPPROTO_TCP ? 1u << TCP_LISTEN_STATE : ~0u},
	};
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
	long buf[32768 / sizeof(long)]; /* a dump's messages are <= 8K */
	int e = 0;

	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&nl,
		   sizeof(nl)) < 0)
		return -errno;
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			return len < 0 ? -errno : -EIO;
		for (; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			const struct rtattr *a = (const void *)(m + 1);
			int alen;
			bool v6only = false;

			if (h->nlmsg_type == NLMSG_DONE)
				return e;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *er = NLMSG_DATA(h);

				return er->error ? er->error : -EIO;
			}
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)) ||
			    ntohs(m->id.idiag_sport) != d->port)
				continue;
			alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
			for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen))
				if (a->rta_type == INET_DIAG_SKV6ONLY &&
				    RTA_PAYLOAD(a) >= 1)
					v6only = *(const __u8 *)RTA_DATA(a);
			if (!takes(d, m->idiag_family, m->id.idiag_src, v6only))
				continue;
			if (*n == max)
				e = -E2BIG; /* read on to the end of the dump */
			else
				inos[(*n)++] = m->idiag_inode;
		}
	}
}

int hx_loopback_sockets(const struct hx_ipaddr *d, int proto,
			unsigned long *inos, size_t max)
{
	size_t n = 0;
	int fd, e;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	/* An IPv6 socket on :: takes IPv4 too: both families, always. */
	e = dump(fd, AF_INET, proto, d, inos, max, &n);
	if (!e)
		e = dump(fd, AF_INET6, proto, d, inos, max, &n);
	close(fd);
	return e ? e : (int)n;
}

/* The variables the agents read their model API's address from, by
 * what reads them (checked in their builds): a small table, not a
 * pattern (OTEL_EXPORTER_OTLP_ENDPOINT is no model). */
static const char *const endpoint_vars[] = {
    "ANTHROPIC_BASE_URL",     /* Claude Code, Anthropic's SDKs */
    "OPENAI_BASE_URL",	      /* Codex, OpenAI's SDKs */
    "OPENAI_API_BASE",	      /* OpenAI's SDKs before 1.0, LiteLLM, Aider */
    "GOOGLE_GEMINI_BASE_URL", /* Gemini CLI (@google/genai) */
    "GOOGLE_VERTEX_BASE_URL", /* Gemini CLI on Vertex AI */
};

bool hx_endpoint_parse(const char *url, struct hx_endpoint *out)
{
	struct sockaddr_in s4 = {.sin_family = AF_INET};
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
	char host[64];
	const char *p, *h, *end;
	unsigned long port;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (!url || !(p = strstr(url, "://")))
		return false;
	if (!strncasecmp(url, "https://", 8))
		port = 443;
	else if (!strncasecmp(url, "http://", 7))
		port = 80;
	else
		return false;
	h = p + 3;
	/* user:password@ before the host */
	end = h + strcspn(h, "/?#");
	for (p = h; p < end; p++)
		if (*p == '@')
			h = p + 1;
	if (*h == '[') {
		p = memchr(h, ']', (size_t)(end - h));
		if (!p)
			return false;
		n = (size_t)(p - h - 1);
		h++;
		p++;
	} else {
		p = memchr(h, ':', (size_t)(end - h));
		if (!p)
			p = end;
		n = (size_t)(p - h);
	}
	if (!n || n >= sizeof(host))
		return false;
	memcpy(host, h, n);
	host[n] = '\0';
	if (*p == ':' && p + 1 < end) {
		char *e;

		port = strtoul(p + 1, &e, 10);
		if (e != end || !port || port > 65535)
			return false;
	} else if (p != end && !(*p == ':' && p + 1 == end)) {
		return false;
	}
	if (!strcasecmp(host, "localhost") || !strcasecmp(host, "localhost.")) {
		out->localhost = true;
		snprintf(host, sizeof(host), "127.0.0.1");
	}
	if (inet_pton(AF_INET, host, &s4.sin_addr) == 1) {
		s4.sin_port = htons((uint16_t)port);
		return hx_loopback_addr(&s4, sizeof(s4), &out->at);
	}
	if (inet_pton(AF_INET6, host, &s6.sin6_addr) == 1) {
		s6.sin6_port = htons((uint16_t)port);
		return hx_loopback_addr(&s6, sizeof(s6), &out->at);
	}
	return false;
}

void hx_endpoints_from_env(struct hx_endpoints *e)
{
	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < sizeof(endpoint_vars) / sizeof(*endpoint_vars);
	     i++) {
		struct hx_endpoint *ep = &e->v[e->n];

		if (e->n < HX_ENDPOINTS_MAX &&
		    hx_endpoint_parse(getenv(endpoint_vars[i]), ep)) {
			ep->var = endpoint_vars[i];
			e->n++;
		}
	}
}

const char *hx_endpoints_match(const struct hx_endpoints *e,
			       const struct hx_ipaddr *d)
{
	static const unsigned char one6[16] = {[15] = 1};

	for (size_t i = 0; e && i < e->n; i++) {
		const struct hx_endpoint *ep = &e->v[i];

		if (ep->at.port != d->port)
			continue;
		if (hx_ipaddr_equal(&ep->at, d))
			return ep->var;
		/* localhost is ::1 too */
		if (ep->localhost && d->family == AF_INET6 &&
		    !memcmp(d->addr, one6, 16))
			return ep->var;
	}
	return NULL;
}

/* Whether only the session's sockets of proto take d: 1, 0, or -1 when
 * none does. */
static int own(const struct hx_ipaddr *d, int proto, pid_t self,
	       hx_tree_holds_fn *holds, void *arg)
{
	unsigned long inos[PORT_SOCKETS];
	int n = hx_loopback_sockets(d, proto, inos, PORT_SOCKETS);

	if (!n)
		return -1;
	/* SO_REUSEPORT lets a socket of the uid's outside share the port,
	 * and take part of what comes: every one must be the session's. */
	return n > 0 && holds(arg, self, inos, (size_t)n);
}

enum hx_lb_judgement hx_loopback_judge(const struct hx_ipaddr *d, int proto,
				       bool connect, pid_t self,
				       hx_tree_holds_fn *holds, void *arg,
				       const struct hx_endpoints *e,
				       const char **var)
{
	bool tcp = proto < 0 || proto == IPPROTO_TCP || proto == IPPROTO_MPTCP;
	bool udp = proto < 0 || proto == IPPROTO_UDP;
	int t = -1, u = -1;

	if ((*var = hx_endpoints_match(e, d)))
		return HX_LB_ENDPOINT;
	if (!holds)
		return HX_LB_OTHER;
	if (tcp && (t = own(d, IPPROTO_TCP, self, holds, arg)) == 1)
		return HX_LB_OWN;
	if (udp && (u = own(d, IPPROTO_UDP, self, holds, arg)) == 1)
		return HX_LB_OWN;
	return connect && tcp && t < 0 && u < 0 ? HX_LB_NOTHING : HX_LB_OTHER;
}
