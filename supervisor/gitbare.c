/* A bare repository's layout outside every ".git" (gitconf.h): what in
 * it git runs, judged by what the directory holds, since its name says
 * nothing (Go's $GOMODCACHE/cache/vcs/HASH, cargo's ~/.cargo/git/db,
 * uv's ~/.cache/uv/git-v0/db: the tools run git fetch there at the
 * user's next build, outside the harness, and fetch runs hooks). */
#define _GNU_SOURCE
#include "supervisor/gitconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#define NELEM(a) (sizeof(a) / sizeof(*(a)))

/* githooks(5). */
static const char *const hook_names[] = {
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
};

static bool in_list(const char *s, size_t n, const char *const *l, size_t nl)
{
	for (size_t i = 0; i < nl; i++)
		if (strlen(l[i]) == n && !strncmp(s, l[i], n))
			return true;
	return false;
}

/* dir/name exists (not followed). */
static bool has(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	return snprintf(p, sizeof(p), "%s/%s", dir, name) < (int)sizeof(p) &&
	       !lstat(p, &st);
}

/* Whether dir is a git directory by its layout: a HEAD, objects or
 * refs in it (git's own test wants all three; any one is enough here:
 * the others may come later). */
static bool layout_is_git(const char *dir)
{
	return has(dir, "HEAD") || has(dir, "objects") || has(dir, "refs");
}

/* name (config, config.worktree) in the directory open at dfd, if there
 * is one, made a new file of what was checked in it (false: it names
 * code, or could not be so made). Its old file may be written still, by
 * an fd or a second name the agent took while the directory was no
 * repository: a repository's config is no longer it. Every step is from
 * dfd: harness-exec writes here, unconfined, while the agent's other
 * threads run, and a directory swapped for a symlink to ~/.aws between
 * the look and the rename had it write the agent's text as that
 * directory's config. */
static bool fresh_config(int dfd, const char *name)
{
	char tmp[NAME_MAX + 1], *buf;
	struct stat st;
	size_t off = 0;
	ssize_t len, n = 0;
	int fd;
	bool ok;

	if (snprintf(tmp, sizeof(tmp), ".hx-%s-%d", name, (int)gettid()) >=
	    (int)sizeof(tmp))
		return false;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT;
	if (!(buf = malloc(HX_GITCONF_COPY_MAX)))
		return false;
	len = hx_gitconf_read_checked(dfd, name, buf, &st);
	fd = len >= 0
		 ? openat(dfd, tmp,
			  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  st.st_mode & 0777)
		 : -1;
	while (fd >= 0 && off < (size_t)len &&
	       (n = write(fd, buf + off, (size_t)len - off)) > 0)
		off += (size_t)n;
	free(buf);
	if (fd < 0)
		return false;
	ok = off == (size_t)len &&
	     (!fchown(fd, st.st_uid, st.st_gid) || geteuid()) &&
	     !fchmod(fd, st.st_mode & 0777);
	ok = !close(fd) && ok && !renameat(dfd, tmp, dfd, name);
	if (!ok)
		unlinkat(dfd, tmp, 0);
	return ok;
}

/* Whether name in dfd holds something git reads: anything but a
 * directory of nothing (of *.sample files only, with samples): a
 * remote of the old layout may force a push ("Push: +main:main"), a
 * hook runs; one that is no directory (a link elsewhere) or cannot be
 * read counts as holding one. */
static bool holds_some(int dfd, const char *name, bool samples)
{
	struct stat st;
	struct dirent *e;
	bool any = false;
	int fd;
	DIR *d;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return false;
	if (!S_ISDIR(st.st_mode))
		return true;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return true;
	}
	while (!any && (e = readdir(d))) {
		size_t k = strlen(e->d_name);

		any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		      !(samples && k >= 7 &&
			!strcmp(e->d_name + k - 7, ".sample"));
	}
	closedir(d);
	return any;
}

/* Whether the bare layout at dir would run code once it is a
 * repository: a hook (not *.sample), a configuration naming code, a
 * commondir, a remote of the old layout. dir is the name the decision
 * was made on, with no symlink in it: one found now was swapped in
 * since, and counts as code (the write is refused). */
static bool carries_code(const char *dir)
{
	struct open_how how = {
	    .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int dfd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));
	struct stat st;
	bool code;

	if (dfd < 0)
		return true;
	code = !fstatat(dfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) ||
	       !fresh_config(dfd, "config") ||
	       !fresh_config(dfd, "config.worktree") ||
	       holds_some(dfd, "remotes", false) ||
	       holds_some(dfd, "hooks", true);
	close(dfd);
	return code;
}

/* The directory of path (up levels up) into out. */
static bool dir_of(const char *path, int up, char *out, size_t size)
{
	size_t n = strlen(path);

	if (n >= size)
		return false;
	memcpy(out, path, n + 1);
	while (up-- > 0) {
		char *s = strrchr(out, '/');

		if (!s)
			return false;
		*s = '\0';
	}
	if (!*out)
		strcpy(out, "/");
	return true;
}

/* Whether dir is where a toolchain makes a bare repository, one there
 * yet or not: Go's module cache (cache/vcs/HASH), cargo's git database
 * (git/db/NAME), uv's (git-vN/db/HASH). git init there keeps a config
 * it finds (core.hooksPath and all), and Go inits one where objects is
 * missing. Wherever the cache is: GOMODCACHE, CARGO_HOME and
 * UV_CACHE_DIR move it (a config in ~/.cache/gomod/cache/vcs/HASH ran
 * the agent's hook at the user's next go get: twentieth attack
 * review). */
static bool tool_repo_place(const char *dir)
{
	static const char *const places[] = {"/cache/vcs", "/git/db",
					     "/git-v0/db"};
	const char *leaf = strrchr(dir, '/');
	size_t n = leaf ? (size_t)(leaf - dir) : 0;

	for (size_t i = 0; i < NELEM(places); i++) {
		size_t k = strlen(places[i]);

		if (n >= k && !strncmp(dir + n - k, places[i], k))
			return true;
	}
	return false;
}

enum hx_gitconf_place hx_gitconf_bare_place(const char *path)
{
	const char *leaf = strrchr(path, '/');
	char dir[PATH_MAX], parent[PATH_MAX];
	size_t n;

	if (!leaf || !dir_of(path, 1, dir, sizeof(dir)))
		return HX_GITCONF_NONE;
	leaf++;
	if (!strcmp(leaf, "config") || !strcmp(leaf, "config.worktree"))
		return layout_is_git(dir) || tool_repo_place(dir)
			   ? HX_GITCONF_CONFIG
			   : HX_GITCONF_NONE;
	if (!strcmp(leaf, "commondir"))
		return layout_is_git(dir) ? HX_GITCONF_CODE : HX_GITCONF_NONE;
	if (!strcmp(leaf, "hooks") || /* made a link, or moved in whole */
	    !strcmp(leaf, "remotes"))
		return layout_is_git(dir) ? HX_GITCONF_CODE : HX_GITCONF_NONE;
	if (!strcmp(leaf, "HEAD")) /* the layout completed, with code */
		return carries_code(dir) ? HX_GITCONF_CODE : HX_GITCONF_NONE;
	n = strlen(leaf);
	if (dir_of(path, 2, parent, sizeof(parent)) &&
	    !strcmp(strrchr(dir, '/') + 1, "remotes"))
		return layout_is_git(parent) ? HX_GITCONF_CODE
					     : HX_GITCONF_NONE;
	if (!dir_of(path, 2, parent, sizeof(parent)) ||
	    strcmp(strrchr(dir, '/') + 1, "hooks") ||
	    (n >= 7 && !strcmp(leaf + n - 7, ".sample")))
		return HX_GITCONF_NONE;
	return layout_is_git(parent) ? HX_GITCONF_CODE : HX_GITCONF_NONE;
}

bool hx_gitconf_hook_name(const char *path)
{
	const char *leaf = strrchr(path, '/');

	if (!leaf || leaf - path < 6 || strncmp(leaf - 6, "/hooks", 6))
		return false;
	leaf++;
	return in_list(leaf, strlen(leaf), hook_names, NELEM(hook_names));
}

/* An executable file or a link: what git runs as a hook. */
static bool runs(const struct stat *st)
{
	return S_ISLNK(st->st_mode) ||
	       (S_ISREG(st->st_mode) && (st->st_mode & 0111));
}

static __thread size_t walk_seen;

static __thread bool walk_as_hooks;

static int walk_one(const char *p, const struct stat *st, int type,
		    struct FTW *w)
{
	if (++walk_seen > 50000)
		return FTW_STOP; /* too many to look at: as if found */
	if (w->level < 1 || (type == FTW_D && !strcmp(p + w->base, "hooks")))
		return FTW_CONTINUE; /* a hooks directory: what it holds */
	if (type != FTW_D && runs(st) &&
	    (hx_gitconf_hook_name(p) ||
	     (walk_as_hooks && w->level == 1 &&
	      in_list(p + w->base, strlen(p + w->base), hook_names,
		      NELEM(hook_names)))))
		return FTW_STOP;
	switch (hx_gitconf_bare_place(p)) {
	case HX_GITCONF_CODE:
		return FTW_STOP;
	case HX_GITCONF_CONFIG:
		return hx_gitconf_file_names_code(p) ? FTW_STOP : FTW_CONTINUE;
	default:
		return FTW_CONTINUE;
	}
}

bool hx_gitconf_tree_carries_code(const char *dir, bool as_hooks)
{
	walk_seen = 0;
	walk_as_hooks = as_hooks;
	return nftw(dir, walk_one, 16, FTW_PHYS | FTW_ACTIONRETVAL) != 0;
}
