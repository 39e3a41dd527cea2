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
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define HX_GITCONF_MAX 32

#define HX_GITCONF_SECRETS 8

struct hx_gitconf {
	char globs[HX_GITCONF_MAX][PATH_MAX + 8]; /* absolute, escaped */
	const char *ptrs[HX_GITCONF_MAX];
	size_t n;
	/* The files a credential helper keeps passwords in where the
	 * configuration names them (store --file, netrc -f): read and
	 * write denied (harness:git-credentials). */
	char secrets[HX_GITCONF_SECRETS][PATH_MAX + 8];
	const char *sptrs[HX_GITCONF_SECRETS];
	size_t nsecrets;
	/* The repository's objects directory (its common dir's), resolved;
	 * "": no repository. */
	char objects[PATH_MAX];
	size_t nparsed; /* files parsed, a find (gitconf.c, MAX_PARSES) */
	size_t nread;	/* bytes of them read (MAX_READ) */
};

/* Fills c with a write-deny glob for each hooks directory (all beneath
 * it) and included file the configuration of the repository around cwd
 * names (home for "~/" and the global files; NULL: none), and with the
 * credential helpers' files and sockets it names (a cache's --socket is
 * a write deny). Relative values are the work tree top's. mirror (or
 * NULL): a worktree of that repository, whose tree is merged into the
 * checkout: each glob beneath the checkout's top is added beneath it
 * too. Missing files are skipped; what does not fit is dropped. */
void hx_gitconf_find(const char *cwd, const char *mirror, const char *home,
		     struct hx_gitconf *c);

/* A repository the agent makes (inside the project (git init sub, a
 * gitlink to it in the project's index) is one the user's next git
 * status in the project recurses into: its configuration and hooks run
 * outside the harness. What in a path git reads as code (path absolute,
 * normalized; in_project: beneath the project or its worktree):
 *   CONFIG  a git directory's config or config.worktree (beneath a
 *           ".git"): git writes it by a rename of a lock file only, so a
 *           direct write is refused and a rename onto it is allowed when
 *           the bytes that land name no code (hx_gitconf_names_code);
 *   CODE    never written: a hook (not *.sample), a commondir (another
 *           directory's config), a ".git" that is not a directory (a
 *           gitfile or link to a git directory no name above guards),
 *           in the project, a HEAD outside a ".git" (a bare
 *           repository's layout, whose config is its own "config").
 * A path outside every ".git" (caches, where go, cargo and uv keep bare
 * repositories; the project, where the user keeps one) is also
 * hx_gitconf_bare_place's. */
enum hx_gitconf_place {
	HX_GITCONF_NONE,
	HX_GITCONF_CONFIG,
	HX_GITCONF_CODE,
};
enum hx_gitconf_place hx_gitconf_place(const char *path, bool in_project);

/* What git runs in a path outside every ".git" and outside the project,
 * judged by what the directories hold (gitbare.c: lstat and readdir,
 * for these names only): a bare repository's layout (a HEAD, objects
 * or refs beside it) in a cache, where Go, cargo and uv keep their git
 * dependencies and run git fetch at the user's next build:
 *   CONFIG  its config or config.worktree, or one where a toolchain
 *           makes its bare repositories (Go's cache/vcs, cargo's
 *           git/db, uv's git-v0/db), a repository there yet or not
 *           (git init keeps a config it finds);
 *   CODE    a hook (not *.sample), its commondir, a "hooks" that is a
 *           file or a link; a HEAD that completes a layout whose hooks
 *           or configuration run code. */
enum hx_gitconf_place hx_gitconf_bare_place(const char *path);

/* Whether path is DIR/hooks/NAME with NAME one of git's hooks: code once
 * it is executable (or a link) and a tool's git init makes a repository
 * of DIR, whatever else DIR holds (Go's does when objects is missing,
 * and keeps what it finds). The pipeline judges its mode. */
bool hx_gitconf_hook_name(const char *path);

/* Whether the tree at dir holds something hx_gitconf_bare_place calls
 * code, a configuration naming code, an executable or link named as a
 * hook in a "hooks" directory (at its top too when as_hooks: the tree
 * is moved to be one), or more than can be looked at: a bare repository
 * made elsewhere and moved into a cache. */
bool hx_gitconf_tree_carries_code(const char *dir, bool as_hooks);

/* Whether path has a ".git" component (a directory rename there, or of
 * one, could carry a configuration or hooks past the checks above). */
bool hx_gitconf_in_git(const char *path);

/* Whether the git configuration text buf (len bytes, any bytes) sets a
 * key whose value git runs or that brings in other configuration:
 * core.fsmonitor, core.hooksPath, core.editor/pager/sshCommand/askPass/
 * gitProxy, filters, diff and merge drivers, credential helpers, hook.*,
 * pager.*, include and includeIf, "!" aliases, ...; or that forces
 * every push to a remote (remote.X.push = +... or :..., remote.X.mirror),
 * which the destructive rule does not see in the push's argv. Read as
 * git reads it, but erring toward yes (every line a key line, any
 * section). */
bool hx_gitconf_names_code(const char *buf, size_t len);

/* The most a git configuration written by a rename may hold (a larger
 * one is refused). */
#define HX_GITCONF_COPY_MAX (128 * 1024)

/* hx_gitconf_names_code of the regular file at path (not following a
 * final symlink); true also when it cannot be read whole, is not a
 * regular file or is larger than HX_GITCONF_COPY_MAX. */
bool hx_gitconf_file_names_code(const char *path);

/* The regular file name (at dirfd, not followed if a link) read whole
 * into buf (HX_GITCONF_COPY_MAX bytes), *st its status, and checked: its
 * length, -errno when it cannot be opened, -EACCES when it is no
 * regular file, cannot be read whole, fills buf or names code. What a
 * copy of it then writes is what was checked. */
ssize_t hx_gitconf_read_checked(int dirfd, const char *name, char *buf,
				struct stat *st);

/* Whether the tree at dir holds a HEAD outside every ".git" (a bare
 * repository's layout: a directory moved into the project from outside
 * it brings one), or more than can be looked at. */
bool hx_gitconf_tree_has_bare(const char *dir);

#endif
