/* The HELLO_REPLY (server.c), the same for every process of a session,
 * built once: the session's flags, the default read verdict and the
 * policy's read rules, which the shim then decides reads by
 * (shim/readrules.h). The rules go along only when all of them fit,
 * sorted by their keys (common/globindex.h) so that the shim indexes
 * them as they come; otherwise the shim asks about every read. */
#ifndef HX_HELLO_REPLY_H
#define HX_HELLO_REPLY_H

#include <stddef.h>
#include <stdint.h>

struct hx_pipeline;

/* Into buf (cap bytes); its length, or 0 with *err set (-ENOMEM,
 * -E2BIG). */
size_t hx_hello_reply_build(const struct hx_pipeline *pl, uint8_t *buf,
			    size_t cap, int *err);

#endif
