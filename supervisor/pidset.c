/* A bitmap of pids; see pidset.h. */
#include "supervisor/pidset.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PID_LIMIT (1u << 22) /* PID_MAX_LIMIT on 64-bit */

struct hx_pidset {
	size_t nbits;
	atomic_uint_least64_t w[];
};

static size_t pid_max(void)
{
	unsigned long v = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v && v <= PID_LIMIT ? (size_t)v : PID_LIMIT;
}

int hx_pidset_new(struct hx_pidset **out)
{
	size_t n = pid_max();
	struct hx_pidset *s =
	    calloc(1, sizeof(*s) + (n + 63) / 64 * sizeof(s->w[0]));

	*out = s;
	if (!s)
		return -ENOMEM;
	s->nbits = n;
	return 0;
}

void hx_pidset_free(struct hx_pidset *s)
{
	free(s);
}

void hx_pidset_add(struct hx_pidset *s, pid_t pid)
{
	if (s && pid > 0 && (size_t)pid < s->nbits)
		atomic_fetch_or_explicit(&s->w[pid / 64],
					 (uint64_t)1 << (pid % 64),
					 memory_order_relaxed);
}

bool hx_pidset_take(struct hx_pidset *s, pid_t pid)
{
	uint64_t bit = (uint64_t)1 << (pid % 64);

	if (!s || pid <= 0 || (size_t)pid >= s->nbits)
		return false;
	return atomic_fetch_and_explicit(&s->w[pid / 64], ~bit,
					 memory_order_relaxed) &
	       bit;
}
