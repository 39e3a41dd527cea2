/* Address -> host names, so that a connect to an address can be judged
 * by the names a policy uses. Fed by the shim's resolve reports and by a
 * background resolver of the policy's literal host names.
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

struct hx_dnsmap;
struct hx_policy;

/* cap 0 means HX_DNSMAP_CAP. */
int hx_dnsmap_new(size_t cap, struct hx_dnsmap **out);
/* Frees the map; stops and joins the resolver (if it is stuck in
 * getaddrinfo for more than 50 ms, it is detached and the map is
 * left to it rather than freed under it). NULL is a no-op. */
void hx_dnsmap_free(struct hx_dnsmap *m);

/* Maps the address of sa (AF_INET/AF_INET6; the port is ignored) to name
 * for ttl seconds (0: HX_DNSMAP_TTL). Copies. Returns 0 or -EINVAL. */
int hx_dnsmap_add(struct hx_dnsmap *m, const struct sockaddr *sa, socklen_t len,
		  const char *name, unsigned ttl);

/* Copies up to max names known for the address of sa into
 * names[i][HX_DNSMAP_NAME_MAX]; returns how many. */
size_t hx_dnsmap_lookup(struct hx_dnsmap *m, const struct sockaddr *sa,
			socklen_t len, char (*names)[HX_DNSMAP_NAME_MAX],
			size_t max);

/* Starts a thread resolving each literal host of p now and every
 * HX_DNSMAP_REFRESH seconds. The host names are copied: p may be freed
 * afterwards. Returns 0 or -errno. */
int hx_dnsmap_start_resolver(struct hx_dnsmap *m, const struct hx_policy *p);

/* Entries in use (for tests). */
size_t hx_dnsmap_size(struct hx_dnsmap *m);

#endif
