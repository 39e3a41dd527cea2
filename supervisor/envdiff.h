/* The environment an exec runs in, as it differs from the session's:
 * part of the call a person is asked about, a record shows, an answer
 * "once" and a grant hold for, and the exec gate holds the new image
 * to. GIT_WORK_TREE, GIT_DIR, GIT_SSH_COMMAND, LD_PRELOAD, BASH_ENV,
 * PYTHONPATH... steer what an approved command does; no list of names
 * is complete, so the whole difference is the call's.
 *
 * The session's environment is the one harness-exec gave the agent's
 * first process, less harness's own variables (the socket and
 * connection names the shim puts back on every exec, the shim's own
 * entry in LD_PRELOAD), which both layers' sights of an exec leave out
 * alike. A difference is a sorted list of entries: "NAME=value" for a
 * variable set other than the session's, "-NAME" for one of the
 * session's left out. */
#ifndef HX_ENVDIFF_H
#define HX_ENVDIFF_H

#include <stdbool.h>
#include <stddef.h>

struct hx_envbase;

/* The session's environment from env (NULL-terminated, as given to the
 * agent's first exec) and the shim's path. NULL: out of memory. */
struct hx_envbase *hx_envbase_new(const char *const *env, const char *shim);
void hx_envbase_free(struct hx_envbase *b);

/* A difference: n entries, NUL-terminated back to back in p (len bytes,
 * NULs counted), sorted; p NULL when n is 0. */
struct hx_envdiff {
	char *p;
	size_t len, n;
};

/* The difference of envc strings envp from b, into *d (free with
 * hx_envdiff_free). b NULL: none. 0 or -ENOMEM. */
int hx_envdiff_make(const struct hx_envbase *b, const char *const *envp,
		    size_t envc, struct hx_envdiff *d);
void hx_envdiff_free(struct hx_envdiff *d);
/* Appends entry (copied) to d, after what is there. 0 or -ENOMEM. */
int hx_envdiff_append(struct hx_envdiff *d, const char *entry);

/* Whether d sets (or changes) an entry that begins with one of the
 * prefixes (a NULL-terminated list): one pass over d. */
bool hx_envdiff_sets(const struct hx_envdiff *d, const char *const *prefixes);

/* Whether entry names a shell's bookkeeping (PWD, OLDPWD, SHLVL, _):
 * left out of what a question shows and a grant is keyed on, never out
 * of what an answer "once" and the exec gate hold. */
bool hx_envdiff_bookkeeping(const char *entry);

/* The SHA-256 (hex, 65 bytes) of the entries of p (len bytes) that are
 * not bookkeeping: a grant's key. "" for none. */
void hx_envdiff_shown_sum(const char *p, size_t len, char *hex);

#endif
