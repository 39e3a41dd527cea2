/* The rule harness:resolver: what the agent's DNS may reach on port 53.
 * With the agent's DNS sealed (unotify_dns.c), port 53 of every address:
 * nothing reaches it, the supervisor's resolver answers there and judges
 * each question by its name. Else the name servers the system is
 * configured with (resolv.conf): lookups work wherever the system's DNS
 * is (a router, a corporate server), judged by the shim alone. */
#ifndef HX_RESOLVCONF_H
#define HX_RESOLVCONF_H

#include <stdbool.h>
#include <stddef.h>

struct hx_session_rule;

#define HX_MAX_RESOLVERS 8  /* glibc uses 3; more lines are ignored */
#define HX_RESOLVER_LEN	 64 /* "[v6addr]:53" */

/* Reads path's "nameserver ADDR" lines into out as "ADDR:53" or
 * "[ADDR]:53" (an IPv6 scope "%eth0" dropped). Lines that are no valid
 * address are skipped. Returns how many, 0 when the file is missing. */
size_t hx_resolvconf_read(const char *path, char out[][HX_RESOLVER_LEN],
			  size_t max);

/* The patterns harness:resolver borrows. */
struct hx_resolver {
	char servers[HX_MAX_RESOLVERS][HX_RESOLVER_LEN];
	const char *pats[HX_MAX_RESOLVERS];
};

/* Fills rule (borrowing res) for sealed DNS, or from /etc/resolv.conf. */
void hx_resolver_rule(struct hx_resolver *res, bool sealed,
		      struct hx_session_rule *rule);

#endif
