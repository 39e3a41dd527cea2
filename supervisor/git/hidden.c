/* Changes the index hides from git status and git diff (hidden.h). */
#define _GNU_SOURCE
#include "supervisor/git/hidden.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <jansson.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/git/gitutil.h"
#include "supervisor/git/untracked.h"

/* Why e could hide a change: its flags, or a stat that git would trust
 * (ctime since the session began, as a changed file's is), else NULL. */
static const char *hiding(const git_index_entry *e,
			  const struct timespec *since)
{
	if (e->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE)
		return "skip-worktree";
	if (e->flags & GIT_INDEX_ENTRY_VALID)
		return "assume-unchanged";
	return (time_t)e->ctime.seconds >= since->tv_sec ? "stat" : NULL;
}

/* Whether git would take the file for unchanged by e's stat data alone,
 * to the second (git compares the size, the times, and more). */
static bool stat_matches(const git_index_entry *e, const struct stat *st)
{
	return e->file_size == (uint32_t)st->st_size &&
	       (time_t)e->mtime.seconds == st->st_mtime &&
	       (time_t)e->ctime.seconds == st->st_ctime;
}

static const struct open_how beneath = {
    .flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
	       RESOLVE_NO_XDEV};

/* What the work tree holds at e's path, opened beneath it (wfd) with no
 * symlink followed (the agent makes the work tree's names): an O_PATH
 * fd of it (a symlink itself), its stat in *st; -1 with *what naming
 * why git would not find e's file there ("missing", "beyond a
 * symlink"). */
static int look(int wfd, const git_index_entry *e, struct stat *st,
		const char **what)
{
	struct open_how how = beneath;
	int fd;

	how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
	fd = (int)syscall(SYS_openat2, wfd, e->path, &how, sizeof(how));
	if (fd < 0) {
		*what = errno == ENOENT || errno == ENOTDIR
			    ? "missing"
			    : "beyond a symlink";
		return -1;
	}
	if (fstat(fd, st)) {
		close(fd);
		*what = "missing";
		return -1;
	}
	return fd;
}

/* The kind of file st is where e names another, or NULL when the kinds
 * agree: a regular file's entry (either mode) now a symlink, a
 * directory, a fifo, or a symlink's now a regular file. */
static const char *other_kind(const git_index_entry *e, const struct stat *st)
{
	if (S_ISLNK(e->mode) ? S_ISLNK(st->st_mode) : S_ISREG(st->st_mode))
		return NULL;
	if (S_ISLNK(st->st_mode))
		return "a symlink";
	if (S_ISDIR(st->st_mode))
		return "a directory";
	return S_ISREG(st->st_mode) ? "a regular file" : "a special file";
}

/* The file e names, read whole into *buf (its length in *len), opened
 * beneath the work tree (wfd) without following a symlink. 1: read;
 * 0: not a regular file, missing, or too large (*big then); -errno. */
static int read_entry(int wfd, const git_index_entry *e, char **buf,
		      size_t *len, struct stat *st, bool *big)
{
	struct open_how how = beneath;
	int fd = (int)syscall(SYS_openat2, wfd, e->path, &how, sizeof(how));
	ssize_t n = 0;
	size_t got = 0;

	*big = false;
	if (fd < 0)
		return 0;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) ||
	    (*big = (uint64_t)st->st_size > HX_HIDDEN_MAX_BYTES)) {
		close(fd);
		return 0;
	}
	if (!(*buf = malloc((size_t)st->st_size + 1))) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st->st_size &&
	       (n = read(fd, *buf + got, (size_t)st->st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	*len = got;
	return n < 0 ? (free(*buf), -EIO) : 1;
}

/* Whether the content (its len bytes) differs from the blob e names,
 * once the path's filters (line endings, ident) made it what git would
 * store. */
static bool differs(git_repository *repo, const git_index_entry *e,
		    const char *content, size_t len)
{
	git_filter_list *fl = NULL;
	git_buf out = {0};
	git_oid id;
	bool diff = true;

	if (git_filter_list_load(&fl, repo, NULL, e->path, GIT_FILTER_TO_ODB,
				 GIT_FILTER_DEFAULT))
		return true;
	if (!fl)
		diff = git_odb_hash(&id, content, len, GIT_OBJECT_BLOB) ||
		       !git_oid_equal(&id, &e->id);
	else if (!git_filter_list_apply_to_buffer(&out, fl, content, len))
		diff = git_odb_hash(&id, out.ptr, out.size, GIT_OBJECT_BLOB) ||
		       !git_oid_equal(&id, &e->id);
	git_buf_dispose(&out);
	git_filter_list_free(fl);
	return diff;
}

/* Whether the symlink (its O_PATH fd) points elsewhere than the blob e
 * names says. */
static bool link_differs(const git_index_entry *e, int fd)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(fd, "", target, sizeof(target));
	git_oid id;

	return n < 0 || git_odb_hash(&id, target, (size_t)n, GIT_OBJECT_BLOB) ||
	       !git_oid_equal(&id, &e->id);
}

/* Whether a sparse checkout explains a file missing under
 * skip-worktree: core.sparseCheckout on and its patterns
 * (info/sparse-checkout) older than the session. The agent's own `git
 * update-index --skip-worktree F; rm F` left git status empty and F
 * gone, and the exemption took it for a sparse checkout's (twenty-
 * fourth attack review). */
static bool sparse_before(git_repository *repo, git_config *cfg,
			  const struct timespec *since)
{
	char p[PATH_MAX + 32];
	struct stat st;
	git_config *wt = NULL;
	int on = 0;

	/* git sparse-checkout sets it in config.worktree, which libgit2
	 * does not read with the rest */
	snprintf(p, sizeof(p), "%sconfig.worktree", git_repository_path(repo));
	if ((!cfg || git_config_get_bool(&on, cfg, "core.sparsecheckout")) &&
	    !lstat(p, &st) && S_ISREG(st.st_mode) &&
	    !git_config_open_ondisk(&wt, p) &&
	    git_config_get_bool(&on, wt, "core.sparsecheckout"))
		on = 0;
	git_config_free(wt);
	if (!on)
		return false;
	snprintf(p, sizeof(p), "%sinfo/sparse-checkout",
		 git_repository_path(repo));
	return !lstat(p, &st) && S_ISREG(st.st_mode) &&
	       (st.st_ctim.tv_sec < since->tv_sec ||
		(st.st_ctim.tv_sec == since->tv_sec &&
		 st.st_ctim.tv_nsec < since->tv_nsec));
}

/* Whether e's file hides a change from git by e's stat data ("stat":
 * a regular file, its content) or by e's flag (anything git would show
 * were the flag not there: another kind of file, a symlink's target,
 * the content, the executable bit where core.filemode counts it; a file
 * missing under skip-worktree is a sparse checkout's when sparse, one
 * from before the session). *what names a change other than the
 * content. 1, 0 or -errno. */
static int judge(git_repository *repo, int wfd, const git_index_entry *e,
		 const char *by, bool filemode, bool sparse, const char **what,
		 size_t *unchecked)
{
	bool by_stat = !strcmp(by, "stat"), big, hidden;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, got;

	*what = NULL;
	if (by_stat ? !S_ISREG(e->mode) : e->mode == GIT_FILEMODE_COMMIT)
		return 0;
	if (!by_stat) {
		if ((fd = look(wfd, e, &st, what)) < 0)
			return strcmp(*what, "missing") || !sparse ||
			       !(e->flags_extended &
				 GIT_INDEX_ENTRY_SKIP_WORKTREE);
		if ((*what = other_kind(e, &st)) || S_ISLNK(st.st_mode)) {
			hidden = *what || link_differs(e, fd);
			close(fd);
			return hidden;
		}
		close(fd);
		if (filemode && !(e->mode & 0100) != !(st.st_mode & S_IXUSR))
			*what = st.st_mode & S_IXUSR ? "executable"
						     : "not executable";
	}
	if ((got = read_entry(wfd, e, &buf, &len, &st, &big)) < 0)
		return got;
	*unchecked += big;
	if (!got)
		return *what != NULL;
	hidden =
	    (!by_stat || stat_matches(e, &st)) && differs(repo, e, buf, len);
	free(buf);
	return hidden || *what;
}

/* The entries of idx that hide a change, into arr, their paths after
 * prefix (a submodule's path in the work tree). */
static int scan(git_repository *repo, git_index *idx, int wfd,
		const char *prefix, const struct timespec *since, json_t *arr,
		size_t *unchecked)
{
	char path[2 * PATH_MAX];
	size_t n = git_index_entrycount(idx);
	git_config *cfg = NULL;
	int filemode = 1;
	bool sparse;

	if (!git_repository_config_snapshot(&cfg, repo) &&
	    git_config_get_bool(&filemode, cfg, "core.filemode"))
		filemode = 1;
	sparse = sparse_before(repo, cfg, since);
	git_config_free(cfg);
	for (size_t i = 0; i < n; i++) {
		const git_index_entry *e = git_index_get_byindex(idx, i);
		const char *by =
		    e && !GIT_INDEX_ENTRY_STAGE(e) ? hiding(e, since) : NULL;
		const char *what;
		int got;

		if (!by)
			continue;
		if ((got = judge(repo, wfd, e, by, filemode != 0, sparse, &what,
				 unchecked)) < 0)
			return got;
		if (!got)
			continue;
		snprintf(path, sizeof(path), "%s%s", prefix, e->path);
		json_array_append_new(arr, hx_git_hidden_entry(path, by, what));
	}
	return 0;
}

/* Submodules within submodules looked at, at most. */
#define MAX_DEPTH 8

/* Whether repo's index changed since (its ctime, the kernel's). */
static bool index_new(git_repository *repo, const struct timespec *since)
{
	char p[PATH_MAX + 8];
	struct stat st;

	snprintf(p, sizeof(p), "%sindex", git_repository_path(repo));
	return !stat(p, &st) && (st.st_ctim.tv_sec > since->tv_sec ||
				 (st.st_ctim.tv_sec == since->tv_sec &&
				  st.st_ctim.tv_nsec >= since->tv_nsec));
}

static int check_repo(git_repository *repo, int wfd, const char *prefix,
		      int depth, const struct timespec *since, json_t *arr,
		      size_t *unchecked);

/* The submodule at e's path (a directory beneath the work tree, wfd,
 * reached by no symlink), checked as its superproject is: the user's
 * git status reads its index, which the agent writes as the project's
 * (an assume-unchanged there hid a change of the submodule's files).
 * One not checked out, or not a repository, is not looked at. */
static int submodule(git_repository *parent, int wfd, const git_index_entry *e,
		     const char *prefix, int depth,
		     const struct timespec *since, json_t *arr,
		     size_t *unchecked)
{
	struct open_how how = beneath;
	char path[2 * PATH_MAX], sub_prefix[2 * PATH_MAX];
	git_repository *sub = NULL;
	int fd, r;

	how.flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	fd = (int)syscall(SYS_openat2, wfd, e->path, &how, sizeof(how));
	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "%s%s", git_repository_workdir(parent),
		 e->path);
	snprintf(sub_prefix, sizeof(sub_prefix), "%s%s/", prefix, e->path);
	r = git_repository_open_ext(&sub, path, GIT_REPOSITORY_OPEN_NO_SEARCH,
				    NULL)
		? (git_error_clear(), 0)
		: check_repo(sub, fd, sub_prefix, depth, since, arr, unchecked);
	git_repository_free(sub);
	close(fd);
	return r;
}

/* repo's entries that hide a change when its index changed since, then
 * its submodules'. */
static int check_repo(git_repository *repo, int wfd, const char *prefix,
		      int depth, const struct timespec *since, json_t *arr,
		      size_t *unchecked)
{
	git_index *idx = NULL;
	size_t n;
	int e = 0;

	if ((e = git_repository_index(&idx, repo)))
		return hx_git_errno(e) ? hx_git_errno(e) : -EIO;
	if (index_new(repo, since) &&
	    !(e = scan(repo, idx, wfd, prefix, since, arr, unchecked)))
		e = hx_git_untracked_hidden(repo, idx, wfd, prefix, arr,
					    unchecked);
	n = git_index_entrycount(idx);
	for (size_t i = 0; !e && depth < MAX_DEPTH && i < n; i++) {
		const git_index_entry *s = git_index_get_byindex(idx, i);

		if (s && !GIT_INDEX_ENTRY_STAGE(s) &&
		    s->mode == GIT_FILEMODE_COMMIT)
			e = submodule(repo, wfd, s, prefix, depth + 1, since,
				      arr, unchecked);
	}
	git_index_free(idx);
	return e;
}

/* The repository of dir and an O_PATH fd of its work tree; 0 or -errno
 * with err. */
static int open_repo(const char *dir, git_repository **repo, int *wfd,
		     char *err, size_t errlen)
{
	const char *wd;
	int e;

	if ((e = git_repository_open_ext(repo, dir, 0, NULL))) {
		snprintf(err, errlen, "%s: %s", dir, hx_git_err());
		return hx_git_errno(e);
	}
	if (!(wd = git_repository_workdir(*repo))) {
		snprintf(err, errlen, "%s: a bare repository", dir);
		return -EINVAL;
	}
	if ((*wfd = open(wd, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", wd, strerror(-e));
		return e;
	}
	return 0;
}

/* The .gitignore files of ignores (absolute) in repo's work tree (wfd)
 * that git ignores: such a file hides itself and every new file beneath
 * it from git status (tests/.gitignore holding "*", then a new
 * tests/conftest.py, which pytest runs: the eighteenth attack review). */
static void self_ignored(git_repository *repo, int wfd,
			 const char *const *ignores, size_t n, json_t *arr)
{
	const char *wd = git_repository_workdir(repo);
	size_t len = wd ? strlen(wd) : 0;

	for (size_t i = 0; len && i < n; i++) {
		git_index_entry e = {.path = ignores[i] + len};
		const char *what;
		struct stat st;
		int ign = 0, fd;

		if (strncmp(ignores[i], wd, len) || !*e.path)
			continue;
		if ((fd = look(wfd, &e, &st, &what)) < 0)
			continue;
		close(fd);
		if (S_ISREG(st.st_mode) &&
		    !git_ignore_path_is_ignored(&ign, repo, e.path) && ign)
			json_array_append_new(
			    arr, hx_git_hidden_entry(
				     e.path, "ignored",
				     "a .gitignore that ignores itself"));
	}
}

int hx_git_hidden_changes(const char *dir, const struct timespec *since,
			  const char *const *ignores, size_t nignores,
			  json_t **out, size_t *unchecked, char *err,
			  size_t errlen)
{
	git_repository *repo = NULL;
	int e, wfd = -1;

	*out = NULL;
	*unchecked = 0;
	if (hx_git_init())
		return -EIO;
	if (!(e = open_repo(dir, &repo, &wfd, err, errlen))) {
		*out = json_array();
		if ((e = check_repo(repo, wfd, "", 0, since, *out,
				    unchecked))) {
			snprintf(err, errlen, "%s: %s", dir,
				 git_error_last() ? hx_git_err()
						  : strerror(-e));
			json_decref(*out);
			*out = NULL;
		} else
			self_ignored(repo, wfd, ignores, nignores, *out);
	}
	if (wfd >= 0)
		close(wfd);
	git_repository_free(repo);
	return e;
}

int hx_git_contains(const char *dir, const char *was, const char *now)
{
	git_repository *repo = NULL;
	git_oid w, n;
	int e;

	if (hx_git_init())
		return -EIO;
	if (git_oid_fromstr(&w, was) || git_oid_fromstr(&n, now))
		return 0;
	if ((e = git_repository_open_ext(&repo, dir, 0, NULL)))
		return hx_git_errno(e) ? hx_git_errno(e) : -EIO;
	e = git_oid_equal(&w, &n) ? 1 : git_graph_descendant_of(repo, &n, &w);
	git_repository_free(repo);
	return e < 0 ? 0 : e;
}
