/* Local read decisions: the read rules the supervisor sent in HELLO_REPLY
 * and the classification of open flags and fopen modes. Lookups are pure
 * (glob matching over a table the shim fills once per process), so they
 * run in vfork children and signal handlers. */
#ifndef HX_SHIM_READRULES_H
#define HX_SHIM_READRULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/globindex.h"
#include "common/wire.h"

struct hx_read_rules {
	uint32_t flags;	       /* HX_HELLO_* */
	uint32_t default_read; /* enum hx_verdict */
	size_t nrules, used;
	struct {
		uint8_t verdict;
		uint32_t off; /* pattern in store, NUL-terminated */
	} rule[HX_WIRE_MAX_RULES];
	char store[HX_WIRE_MAX];
	/* By key (common/globindex.h), while the rules come sorted so, as
	 * the supervisor sends them; else each read scans them all. */
	struct hx_glob_need need[HX_WIRE_MAX_RULES];
	struct hx_glob_group group[HX_WIRE_MAX_RULES];
	size_t ngroups;
	bool sorted;
};

void hx_read_rules_reset(struct hx_read_rules *t);
/* Copies one rule; 0, or -1 when the table is full or the verdict bad. */
int hx_read_rules_add(struct hx_read_rules *t, uint8_t verdict,
		      const char *pattern, size_t len);
/* Fills t from a HELLO_REPLY datagram. 0, or -1 on any malformed input
 * (t is then reset: no local reads). */
int hx_read_rules_from_hello(struct hx_read_rules *t, const void *buf, size_t n,
			     uint32_t id);

/* The strongest matching rule's verdict (deny > ask > allow), else the
 * default. */
enum hx_verdict hx_read_verdict(const struct hx_read_rules *t,
				const char *path);
/* True when the shim may allow this read without a round trip. */
bool hx_read_local_allow(const struct hx_read_rules *t, const char *path);

/* open(2) flags without write intent: O_RDONLY, no O_CREAT/O_TRUNC/
 * O_TMPFILE. */
bool hx_open_is_read(int flags);
/* HX_OP_READ or HX_OP_WRITE for open(2) flags. */
enum hx_op hx_open_op(int flags);
/* open(2) flags for an fopen(3) mode string; -1 when the mode is invalid
 * (fopen fails EINVAL without opening anything). */
int hx_fopen_flags(const char *mode);

#endif
