/* What the user's git runs code from by configuration rather than by a
 * fixed place (issue 10, class 5): the directory core.hooksPath names
 * (teams set it to a tracked .githooks/ of the project), and the files
 * that configuration includes (include.path, includeIf.*.path: a
 * tracked ../.gitconfig can set aliases, core.fsmonitor, filters). In
 * the project they are writable like any file, and the user's next git
 * command outside the harness runs what the agent put there. Likewise
 * a program that a command key names by path (core.fsmonitor, filters,
 * diff drivers, editors, credential helpers, "!./x" aliases).
 *
 * Read from the system, global and project configuration at start, by
 * hand (no libgit2 in sessions without a worktree); pure but for
 * reading those files. */
#ifndef HX_GITCONF_H
#define HX_GITCONF_H

#include <limits.h>
#include <stddef.h>

#define HX_GITCONF_MAX 32

struct hx_gitconf {
	char globs[HX_GITCONF_MAX][PATH_MAX + 8]; /* absolute, escaped */
	const char *ptrs[HX_GITCONF_MAX];
	size_t n;
};

/* Fills c with a write-deny glob for each hooks directory (all beneath
 * it) and included file the configuration of the repository at cwd
 * names (home for "~/" and the global files; NULL: none). Missing files
 * are skipped; what does not fit is dropped. */
void hx_gitconf_find(const char *cwd, const char *home, struct hx_gitconf *c);

#endif
