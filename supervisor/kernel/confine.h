/* Work harness-exec does on a tree the agent writes (a checkpoint's walk
 * of the worktree, a restore into it), done on a thread of its own that
 * Landlock confines to the trees it is given. libgit2 walks by path and
 * follows a symlink in the middle of one: a directory the agent swaps
 * for a symlink during the walk (to ~/.ssh, to the session's log) led
 * harness-exec, unconfined, to read what the link names into a commit
 * the agent can read, or to write there. Confined, such a read or write
 * fails (EACCES) and the work with it. A thread, not a child process:
 * the work's results (libgit2's index in memory) are the caller's at
 * once, with no copy of the process and no index read again (a fork
 * cost a 5,000-file checkpoint 4-5 ms more, a thread 0.1 ms). The
 * caller waits; nothing else may use the same libgit2 objects
 * meanwhile. */
#ifndef HX_KERNEL_CONFINE_H
#define HX_KERNEL_CONFINE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether this kernel confines (Landlock is on). */
bool hx_confine_available(void);

/* A Landlock ruleset, an fd, or -errno (-EOPNOTSUPP without Landlock
 * ABI 2): rw, trees read and written (files made, renamed, removed),
 * each there; ro, trees or files only read, one not there left out;
 * both NULL-ended. The rules hold the inodes the paths name now: made
 * before the agent runs, no link it makes later at one of those names
 * widens them. */
int hx_confine_prepare(const char *const *rw, const char *const *ro);

/* Runs fn(arg, reply) on a thread restricted by ruleset, and waits for
 * it. Returns fn's value (0 or -errno), or the restriction's -errno, fn
 * then not run. */
int hx_confine_run(int ruleset, int (*fn)(void *, void *), void *arg,
		   void *reply);

#endif
