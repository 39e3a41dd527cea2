/* Loopback by owner (issue 13, point 2): every local service of the
 * machine listens on loopback (a Docker daemon on 2375, databases, other
 * projects' dev servers, an ssh -D or HTTP proxy that is egress past
 * every network rule), and all of them obey whoever connects, the agent
 * too. What the agent may reach there is its own: a port where only
 * sockets of the session's processes listen (TCP) or are bound (UDP),
 * found through sock_diag and judged by owner as a unix socket is
 * (owned.h) - rule harness:own-listener; and the model endpoint its
 * environment names (harness:model-endpoint). The pipeline applies both
 * where the policy says ask for a loopback address (pipeline.c,
 * judge_loopback). */
#ifndef HX_LOOPBACK_H
#define HX_LOOPBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common/sockaddr.h"

/* Whether sa (len bytes) is a loopback address: 127.0.0.0/8, ::1 or
 * ::ffff:127.0.0.0/104, fills *out as the kernel routes it (the mapped
 * form is the IPv4 one). */
bool hx_loopback_addr(const void *sa, size_t len, struct hx_ipaddr *out);

/* The inodes of the sockets that take a connect or datagram to d: TCP
 * sockets in LISTEN (proto IPPROTO_TCP) or UDP sockets bound to d's
 * port (IPPROTO_UDP), on d's address or a wildcard (0.0.0.0, ::; an
 * IPv6 one takes IPv4 too unless it is v6-only), in harness-exec's
 * network namespace, which is the agent's. Asked of sock_diag (exact,
 * binary, filtered by state in the kernel; /proc/net/tcp would be text
 * in hex and lists every connection). Returns how many (at most max
 * into inos), -E2BIG when there are more, or -errno. */
int hx_loopback_sockets(const struct hx_ipaddr *d, int proto,
			unsigned long *inos, size_t max);

/* The model endpoints the agent's environment names on loopback: the
 * host:port of ANTHROPIC_BASE_URL and the like (loopback.c lists
 * them), the scheme's port when the URL names none. */
#define HX_ENDPOINTS_MAX 8
struct hx_endpoints {
	size_t n;
	struct hx_endpoint {
		const char *var; /* static */
		bool localhost;	 /* "localhost": 127.0.0.1 and ::1 */
		struct hx_ipaddr at;
	} v[HX_ENDPOINTS_MAX];
};

/* Parses url ("http://127.0.0.1:8080/v1", "https://[::1]/",
 * "http://localhost:3000"): true, with *out filled (var unset), when
 * its host is on loopback. */
bool hx_endpoint_parse(const char *url, struct hx_endpoint *out);

/* Fills e from the environment (getenv): what harness-exec starts the
 * agent with. */
void hx_endpoints_from_env(struct hx_endpoints *e);

/* The variable naming d as a model endpoint, or NULL. e may be NULL. */
const char *hx_endpoints_match(const struct hx_endpoints *e,
			       const struct hx_ipaddr *d);

/* Whether processes of the agent's tree hold every one of n socket
 * inodes (n > 0); the kernel layer's hx_unotify_tree_holds. */
typedef bool hx_tree_holds_fn(void *arg, pid_t self, const unsigned long *inos,
			      size_t n);

enum hx_lb_judgement {
	HX_LB_OTHER,	/* someone else's, or cannot tell */
	HX_LB_OWN,	/* only the session's sockets take it */
	HX_LB_ENDPOINT, /* the model endpoint (*var names it) */
	HX_LB_NOTHING,	/* a TCP connect that nothing listens for */
};

/* What d is to the session, for a connect (else a send) from a socket
 * of proto (SO_PROTOCOL; -1: unknown, then a TCP or a UDP port of the
 * session's counts, as the shim's request does not say, and the kernel
 * layer decides again knowing it) asked by process self. holds NULL:
 * no port is the session's own. Decided on what exists now. */
enum hx_lb_judgement hx_loopback_judge(const struct hx_ipaddr *d, int proto,
				       bool connect, pid_t self,
				       hx_tree_holds_fn *holds, void *arg,
				       const struct hx_endpoints *e,
				       const char **var);

#endif
