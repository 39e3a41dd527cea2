/* Changes the user's git will not show (issue 10, class 8). The index
 * is the agent's to write (every git add and commit writes it), and an
 * entry of it can keep git status and git diff from showing a file the
 * agent changed: one marked skip-worktree or assume-unchanged (git
 * update-index), or one whose stat data was made to match the changed
 * file (git then trusts the stat and reads nothing). The user reviews an
 * empty diff and runs make. Read at the session's end, in the plugin,
 * by libgit2: each such entry is hashed (the index's filters applied) and
 * compared with the blob the index names. */
#ifndef HX_GIT_HIDDEN_H
#define HX_GIT_HIDDEN_H

#include <stddef.h>
#include <time.h>

struct json_t;

/* The files at most this large are hashed; a larger one is counted in
 * *unchecked. */
#define HX_HIDDEN_MAX_BYTES (64u << 20)

/* The changes the index of the repository whose work tree holds dir
 * hides: in *out (a new array, empty when none) an object for each,
 * {"path": relative, "hidden_by": "skip-worktree" | "assume-unchanged" |
 * "stat"} and, where what git would show is not the content, "now": "a
 * symlink", "a directory", "missing", "executable"... An entry is looked at
 * when it carries one of those flags, or when its ctime is not older than since
 * (a forged stat must match the file's, which the kernel set when the file
 * changed). Its file is opened beneath the work tree, no symlink followed;
 * under a flag, a file of another kind than its entry's (a symlink put in a
 * regular file's place), a symlink's target and an executable bit count too.
 * ignores: the .gitignore files the session wrote (absolute paths); one
 * that git now ignores itself, which hides the new files beneath it
 * from git status and itself too, is {"path", "hidden_by": "ignored",
 * "now": "a .gitignore that ignores itself"}. A new file the index's
 * untracked cache leaves out is {"path", "hidden_by": "untracked-cache",
 * "now": "untracked"} (untracked.h).
 * Returns 0, or -errno with err. */
int hx_git_hidden_changes(const char *dir, const struct timespec *since,
			  const char *const *ignores, size_t nignores,
			  struct json_t **out, size_t *unchecked, char *err,
			  size_t errlen);

/* Whether the commit now (hex) of dir's repository is was or descends
 * from it: 1, 0 (not, or now is not a commit), or -errno. A branch
 * that no longer holds its commit of the start was rewritten (commit
 * --amend, reset): git log shows the changes put in its commits as the
 * user's. */
int hx_git_contains(const char *dir, const char *was, const char *now);

/* The supervisor's side: the plugin loaded (before a fork that runs
 * hx_git_hidden_changes, so that the child need not load it). 0, or
 * -ENOENT with err. */
int hx_git_plugin_load(char *err, size_t errlen);

#endif
