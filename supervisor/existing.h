/* What predates the session in a store a rule keeps (a file rule's
 * "keep_existing: true", issue 10, class 5): toolchains extract what
 * they download (cargo's registry/src, Go's module directories, Maven's
 * jars) and use it later without checking it again, so a file the agent
 * rewrote there runs in the user's next build, outside the harness. The
 * agent's own builds add new entries; what was there before the session
 * (its birth time, which no call sets; the last status change on a file
 * system that keeps none) is never written, truncated, moved, removed,
 * re-moded or hard-linked. */
#ifndef HX_EXISTING_H
#define HX_EXISTING_H

#include <stdbool.h>
#include <time.h>

#include "common/types.h"

struct hx_policy;

/* Whether the call op on path (and path2: a rename's destination, a
 * link's existing file; NULL: none), both absolute and resolved, touches
 * a file or directory that a keep_existing rule allows writing and that
 * was born before since. */
bool hx_existing_refuses(const struct hx_policy *p, enum hx_op op,
			 const char *path, const char *path2,
			 const struct timespec *since);

#endif
