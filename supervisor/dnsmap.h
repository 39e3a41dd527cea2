/* Address -> host names, so that a connect to an address can be judged
 * by the names a policy uses. Fed only by what the supervisor resolves
 * itself: the policy's literal host names, and the names the shim
 * reports the agent looked up (a report is a claim: "localhost is
 * 1.2.3.4" must not make the loopback rule allow 1.2.3.4, so the name is
 * looked up again and only the supervisor's answers are mapped).
 *
 * Bounded (entries expire; when full the entry closest to expiry is
 * replaced) and thread safe (one mutex). Lifecycle: hx_dnsmap_new ->
 * hx_dnsmap_add / hx_dnsmap_lookup / hx_dnsmap_start_resolver ->
 * hx_dnsmap_free (stops the resolver). */
#ifndef HX_DNSMAP_H
#define HX_DNSMAP_H

#include <stddef.h>
#include <sys/socket.h>
#include <time.h>

#define HX_DNSMAP_CAP	   4096
#define HX_DNSMAP_TTL	   300 /* seconds, when the source gives none */
#define HX_DNSMAP_NAME_MAX 256
#define HX_DNSMAP_REFRESH  60 /* resolver period, seconds */
#define HX_DNSMAP_CLAIMS   64 /* reported names waiting to be looked up */

struct hx_dnsmap;
struct hx_policy;

/* Where a name of an address comes from. */
enum hx_dns_source {
	HX_DNS_POLICY, /* the supervisor's lookup of a policy's host name */
	HX_DNS_LOOKUP, /* its lookup of a name the shim said the agent
			* looked up */
	HX_DNS_ANSWER, /* its answer to the agent's own question (unotify_dns.c)
			*/
};

/* "policy", "lookup", "dns". */
const char *hx_dns_source_name(enum hx_dns_source s);

/* cap 0 means HX_DNSMAP_CAP. */
int hx_dnsmap_new(size_t cap, struct hx_dnsmap **out);
/* Frees the map; stops and joins the resolver (if it is stuck in
 * getaddrinfo for more than 50 ms, it is detached and the map is
 * left to it rather than freed under it). NULL is a no-op. */
void hx_dnsmap_free(struct hx_dnsmap *m);

/* Maps the address of sa (AF_INET/AF_INET6; the port is ignored; never
 * 0.0.0.0 or ::) to name for ttl seconds (0: HX_DNSMAP_TTL), from source. An
 * answer given to the agent holds at least HX_DNSMAP_TTL: what the session was
 * told stays true for it, whatever it caches. Copies. Returns 0 or -EINVAL. */
int hx_dnsmap_add(struct hx_dnsmap *m, const struct sockaddr *sa, socklen_t len,
		  const char *name, unsigned ttl, enum hx_dns_source source);

/* name was looked up by the agent: the resolver thread looks it up too
 * and maps its own answers (soon, not now: a connect right after may
 * not be judged by that name yet). Returns 0, -EINVAL, or -ENOSPC when
 * HX_DNSMAP_CLAIMS names wait already. */
int hx_dnsmap_claim(struct hx_dnsmap *m, const char *name);

/* Copies up to max names known for the address of sa into
 * names[i][HX_DNSMAP_NAME_MAX], and where each came from into
 * sources[i] (may be NULL); returns how many. */
size_t hx_dnsmap_lookup(struct hx_dnsmap *m, const struct sockaddr *sa,
			socklen_t len, char (*names)[HX_DNSMAP_NAME_MAX],
			enum hx_dns_source *sources, size_t max);

/* Starts a thread resolving each literal host of p now and every
 * HX_DNSMAP_REFRESH seconds. The host names are copied: p may be freed
 * afterwards. Returns 0 or -errno. */
int hx_dnsmap_start_resolver(struct hx_dnsmap *m, const struct hx_policy *p);

/* Entries in use (for tests). */
size_t hx_dnsmap_size(struct hx_dnsmap *m);

#endif
