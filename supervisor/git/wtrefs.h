/* The refs a worktree session's end writes: the manifest's note and
 * the result's branch. */
#ifndef HX_GIT_WTREFS_H
#define HX_GIT_WTREFS_H

#include <git2.h>
#include <stdbool.h>

/* The manifest text as a note on target (refs/notes/harness), by
 * compare-and-swap, retried on top of a concurrent session's note.
 * 0 or a libgit2 error. */
int hx_wt_add_note(git_repository *repo, const git_signature *sig,
		   const git_oid *target, const char *text);

/* The tip of the session's branch, the result's parent: the base, or
 * the agent's own commits on it; *cas: whether the branch is a ref of
 * its own to compare with. The branch is the agent's to write, and a
 * symbolic ref there (ref: refs/heads/main) has no target of its own:
 * read as one, it ended harness-exec by SIGSEGV before the result
 * commit, the worktree's removal and the log's anchor. Such a branch,
 * or none, is said on stderr and the base is the tip (*cas false: the
 * branch is then written as a ref of its own, not through the link).
 * 0 or a libgit2 error. */
int hx_wt_branch_tip(git_repository *repo, const char *branch,
		     const char *base_hex, git_oid *tip, bool *cas);

#endif
