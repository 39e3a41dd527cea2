/* The key both layers know a call by (correlate.h): 128 bits of the
 * SHA-256 of its object. The agent names both sides of a match, so no
 * two objects may be made to share a key: an FNV key could be (a shim
 * request for one path standing for the kernel layer's write of
 * another, whose record then never was). */
#ifndef HX_CORRKEY_H
#define HX_CORRKEY_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct hx_corr_key {
	uint64_t w[2];
};

static inline bool hx_corr_key_eq(const struct hx_corr_key *a,
				  const struct hx_corr_key *b)
{
	return !memcmp(a->w, b->w, sizeof(a->w));
}

#endif
