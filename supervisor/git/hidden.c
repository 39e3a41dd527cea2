/* Changes the index hides from git status and git diff (hidden.h). */
#define _GNU_SOURCE
#include "supervisor/git/hidden.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <jansson.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/git/gitutil.h"

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

/* The file e names, read whole into *buf (its length in *len), opened
 * beneath the work tree (wfd) without following a symlink: the agent
 * makes the work tree's names. 1: read; 0: not a regular file, missing,
 * or too large (*big then); -errno. */
static int read_entry(int wfd, const git_index_entry *e, char **buf,
		      size_t *len, struct stat *st, bool *big)
{
	struct open_how how = {
	    .flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		       RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
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

/* The entries of idx that hide a change, into arr. */
static int scan(git_repository *repo, git_index *idx, int wfd,
		const struct timespec *since, json_t *arr, size_t *unchecked)
{
	size_t n = git_index_entrycount(idx);

	for (size_t i = 0; i < n; i++) {
		const git_index_entry *e = git_index_get_byindex(idx, i);
		const char *by =
		    e && !GIT_INDEX_ENTRY_STAGE(e) ? hiding(e, since) : NULL;
		struct stat st;
		char *buf = NULL;
		size_t len = 0;
		bool big, hidden;
		int got;

		if (!by || !S_ISREG(e->mode))
			continue;
		if ((got = read_entry(wfd, e, &buf, &len, &st, &big)) < 0)
			return got;
		*unchecked += big;
		if (!got)
			continue;
		hidden = (strcmp(by, "stat") || stat_matches(e, &st)) &&
			 differs(repo, e, buf, len);
		free(buf);
		if (hidden)
			json_array_append_new(arr, json_pack("{s:s, s:s}",
							     "path", e->path,
							     "hidden_by", by));
	}
	return 0;
}

/* The repository of dir with its index and an O_PATH fd of its work
 * tree; 0 or -errno with err. */
static int open_repo(const char *dir, git_repository **repo, git_index **idx,
		     int *wfd, char *err, size_t errlen)
{
	const char *wd;
	int e;

	if ((e = git_repository_open_ext(repo, dir, 0, NULL)) ||
	    (e = git_repository_index(idx, *repo))) {
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

int hx_git_hidden_changes(const char *dir, const struct timespec *since,
			  json_t **out, size_t *unchecked, char *err,
			  size_t errlen)
{
	git_repository *repo = NULL;
	git_index *idx = NULL;
	int e, wfd = -1;

	*out = NULL;
	*unchecked = 0;
	if (hx_git_init())
		return -EIO;
	if (!(e = open_repo(dir, &repo, &idx, &wfd, err, errlen))) {
		*out = json_array();
		if ((e = scan(repo, idx, wfd, since, *out, unchecked))) {
			snprintf(err, errlen, "%s: %s", dir, strerror(-e));
			json_decref(*out);
			*out = NULL;
		}
	}
	if (wfd >= 0)
		close(wfd);
	git_index_free(idx);
	git_repository_free(repo);
	return e;
}
