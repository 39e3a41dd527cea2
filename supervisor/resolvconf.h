/* The name servers the system is configured with (resolv.conf), as the
 * policy's network patterns, for the rule harness:resolver. */
#ifndef HX_RESOLVCONF_H
#define HX_RESOLVCONF_H

#include <stddef.h>

#define HX_MAX_RESOLVERS 8  /* glibc uses 3; more lines are ignored */
#define HX_RESOLVER_LEN	 64 /* "[v6addr]:53" */

/* Reads path's "nameserver ADDR" lines into out as "ADDR:53" or
 * "[ADDR]:53" (an IPv6 scope "%eth0" dropped). Lines that are no valid
 * address are skipped. Returns how many, 0 when the file is missing. */
size_t hx_resolvconf_read(const char *path, char out[][HX_RESOLVER_LEN],
			  size_t max);

#endif
