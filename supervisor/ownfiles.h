/* The harness's own programs, which no session's agent may change. */
#ifndef HX_OWNFILES_H
#define HX_OWNFILES_H

#include <stddef.h>

/* The globs every session write-protects (harness:protect, writes only):
 * the cgroup file systems, and each program of the harness beside this
 * binary (harness-exec, harness-audit, harness-policy, harness-mcp and
 * its worker, the shim and the git plugin) and the shim $HARNESS_SHIM
 * names, each as a literal. Computed once; *n gets how many. */
const char *const *hx_own_write_globs(size_t *n);

#endif
