/* Small libgit2 helpers shared by the worktree modules: one-time init,
 * error text, and the retry on a ref lock another session holds.
 * No libgit2 type appears here. */
#ifndef HX_GITUTIL_H
#define HX_GITUTIL_H

#include <stdbool.h>
#include <stddef.h>

/* git_libgit2_init, once per process (thread-safe). Returns 0 or -EIO. */
int hx_git_init(void);

/* The last libgit2 error of this thread, or "unknown error". Static or
 * thread-local storage: copy it before the next libgit2 call. */
const char *hx_git_err(void);

/* A libgit2 error code as -errno: ENOENT (GIT_ENOTFOUND), EEXIST,
 * EBUSY (GIT_ELOCKED, GIT_EMODIFIED), else EIO. */
int hx_git_errno(int gerr);

/* True for the codes worth a short retry: a lock file of another
 * writer (GIT_ELOCKED) or a compare-and-swap that lost (GIT_EMODIFIED). */
bool hx_git_retryable(int gerr);

/* Sleeps before retry number attempt (0-based), a few ms growing;
 * returns false once attempts are spent (about 2 s in all). */
bool hx_git_backoff(int attempt);

struct json_t;
/* o[k] = a path of the repository's (the agent's to name), as the log
 * writes such text: not UTF-8, each byte outside it as \xNN and each
 * backslash doubled, and k listed in o's "escaped". jansson takes UTF-8
 * only: json_string and json_pack fail on the rest, and a file named
 * "\377run.sh" was an entry of the manifest with no path. Returns
 * o[k]'s text, or NULL (no memory). */
const char *hx_git_json_path(struct json_t *o, const char *k, const char *path);

/* {"path": path (hx_git_json_path), "hidden_by": by, "now": now (when
 * not NULL)}: an entry of a hidden_changes record. */
struct json_t *hx_git_hidden_entry(const char *path, const char *by,
				   const char *now);

#endif
