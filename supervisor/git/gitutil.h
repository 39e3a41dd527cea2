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

#endif
