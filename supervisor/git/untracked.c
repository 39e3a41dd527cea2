/* New files the index's untracked cache hides (untracked.h). */
#define _GNU_SOURCE
#include "supervisor/git/untracked.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/git/indexfile.h"

/* An index larger than this is not read for its cache. */
#define MAX_INDEX_BYTES (256u << 20)
/* Directories beneath one the cache leaves out, looked into at most. */
#define MAX_DEPTH 32

struct walk {
	git_repository *repo;
	git_index *idx;
	int wfd;
	const char *prefix;
	json_t *arr;
	const struct hx_untr *u;
	/* The blocks but the root, by parent and name: git's lookup of a
	 * directory's block is by its parent's and its name. */
	const struct hx_untr_dir **kids;
	size_t nkids;
	bool more; /* past HX_UNTR_MAX_REPORTS */
};

/* The index file of repo, read whole (a regular file, not past the
 * bound, no symlink followed) into *buf; 0 or -errno. */
static int read_index(git_repository *repo, unsigned char **buf, size_t *len)
{
	char path[PATH_MAX];
	struct stat st;
	size_t got = 0;
	ssize_t n = 1;
	int fd;

	snprintf(path, sizeof(path), "%sindex", git_repository_path(repo));
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > MAX_INDEX_BYTES ||
	    !(*buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return -EFBIG;
	}
	while (got < (size_t)st.st_size &&
	       (n = read(fd, *buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	*len = got;
	return n < 0 ? (free(*buf), -EIO) : 0;
}

/* Whether git trusts the cached list of d: its stat data matches the
 * directory's now (the size and mtime, to the second; git compares
 * more, so this errs towards saying a file is hidden), or fsmonitor
 * is on. */
static bool trusted(const struct hx_untr_dir *d, const struct stat *st,
		    bool fsmonitor)
{
	const unsigned char *s = d->stat;
	unsigned long mtime =
	    (unsigned long)s[8] << 24 | s[9] << 16 | s[10] << 8 | s[11];
	unsigned long size =
	    (unsigned long)s[32] << 24 | s[33] << 16 | s[34] << 8 | s[35];

	return d->valid &&
	       (fsmonitor ||
		(mtime == ((unsigned long)st->st_mtime & 0xffffffffu) &&
		 size == ((unsigned long)st->st_size & 0xffffffffu)));
}

/* A directory of the work tree (path relative, "" or "a/b/") opened
 * beneath it, no symlink followed; -1 when there is none. */
static int open_dir(int wfd, const char *path)
{
	struct open_how how = {
	    .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		       RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};

	return (int)syscall(SYS_openat2, wfd, *path ? path : ".", &how,
			    sizeof(how));
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the block d (its names sorted) lists name: a file as it is,
 * a directory with a '/' after it. */
static bool listed(const struct hx_untr_dir *d, const char *name, bool dir)
{
	char key[NAME_MAX + 2];
	const char *k = key;

	snprintf(key, sizeof(key), "%s%s", name, dir ? "/" : "");
	return bsearch(&k, d->names, d->nnames, sizeof(*d->names), by_string) ||
	       (dir && bsearch(&name, d->names, d->nnames, sizeof(*d->names),
			       by_string));
}

static int by_parent_name(const void *a, const void *b)
{
	const struct hx_untr_dir *x = *(const struct hx_untr_dir *const *)a;
	const struct hx_untr_dir *y = *(const struct hx_untr_dir *const *)b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Whether the block b has a child block named name. */
static bool has_block(const struct walk *w, const struct hx_untr_dir *b,
		      const char *name)
{
	struct hx_untr_dir key = {.parent = (size_t)(b - w->u->dirs),
				  .name = (char *)name};
	const struct hx_untr_dir *k = &key;

	return bsearch(&k, w->kids, w->nkids, sizeof(*w->kids),
		       by_parent_name) != NULL;
}

static bool full(const struct walk *w)
{
	return json_array_size(w->arr) >= HX_UNTR_MAX_REPORTS;
}

static void report(struct walk *w, const char *path)
{
	char full_path[2 * PATH_MAX];

	if (full(w)) {
		w->more = true;
		return;
	}
	snprintf(full_path, sizeof(full_path), "%s%s", w->prefix, path);
	json_array_append_new(
	    w->arr, json_pack("{s:s, s:s, s:s}", "path", full_path, "hidden_by",
			      "untracked-cache", "now", "untracked"));
}

static bool ignored(const struct walk *w, const char *path)
{
	int ign = 0;

	if (git_ignore_path_is_ignored(&ign, w->repo, path))
		git_error_clear();
	return ign != 0;
}

/* Whether the file path (relative) is in the index, or ignored: git
 * status shows neither as a new file. */
static bool accounted(const struct walk *w, const char *path)
{
	return git_index_get_bypath(w->idx, path, 0) || ignored(w, path);
}

/* Whether the entry de of the directory d is a directory (a file
 * system that gives no type is asked). */
static bool is_dir(DIR *d, const struct dirent *de)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	return !fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
	       S_ISDIR(st.st_mode);
}

/* The entries of the directory path (fd) git would not show: when b
 * is its trusted block, those its cached list leaves out; beneath a
 * directory of no block (b NULL), every one, since git does not look
 * into it at all. A file is hidden when it is untracked and not
 * ignored; a directory is looked into, tracked or not. */
static void look_in(struct walk *w, int fd, const char *path,
		    const struct hx_untr_dir *b, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	char sub[PATH_MAX];

	if (!d) {
		close(fd);
		return;
	}
	while (!full(w) && (de = readdir(d))) {
		bool dir;
		int sfd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (!*path && !strcmp(de->d_name, ".git")))
			continue;
		dir = is_dir(d, de);
		if (b && listed(b, de->d_name, dir))
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", path, de->d_name,
			 dir ? "/" : "");
		if (!dir) {
			if (!accounted(w, sub))
				report(w, sub);
		} else if (!(b && has_block(w, b, de->d_name)) &&
			   !ignored(w, sub)) {
			/* Too deep to look into: the directory itself. */
			if (depth >= MAX_DEPTH)
				report(w, sub);
			else if ((sfd = open_dir(w->wfd, sub)) >= 0)
				look_in(w, sfd, sub, NULL, depth + 1);
		}
	}
	if (full(w) && readdir(d))
		w->more = true;
	closedir(d);
}

/* Whether the user's configuration makes git trust the cache without a
 * stat (core.fsmonitor), or drop it (core.untrackedCache false: -1). */
static int config_of(git_repository *repo)
{
	git_config *cfg = NULL;
	git_config_entry *e = NULL;
	int on = 1, r = 0;

	if (git_repository_config_snapshot(&cfg, repo))
		return git_error_clear(), 0;
	if (!git_config_get_bool(&on, cfg, "core.untrackedCache") && !on)
		r = -1;
	else if (!git_config_get_entry(&e, cfg, "core.fsmonitor") && e &&
		 e->value && strcmp(e->value, "false") && *e->value)
		r = 1;
	git_config_entry_free(e);
	git_config_free(cfg);
	git_error_clear();
	return r;
}

int hx_git_untracked_hidden(git_repository *repo, git_index *idx, int wfd,
			    const char *prefix, json_t *arr, size_t *unchecked)
{
	struct walk w = {repo, idx, wfd, prefix, arr, NULL, NULL, 0, false};
	const unsigned char *ext;
	unsigned char *buf = NULL;
	struct hx_untr u;
	size_t len, extlen;
	int fsmonitor = config_of(repo), r;

	if (fsmonitor < 0)
		return 0;
	/* An index too large to read, or a cache too large to hold, is
	 * said unchecked (the agent can make either). */
	if ((r = read_index(repo, &buf, &len)) == -EFBIG)
		++*unchecked;
	if (r)
		return 0;
	if (hx_index_extension(buf, len, "UNTR", &ext, &extlen) != 1 ||
	    (r = hx_untr_parse(ext, extlen, &u))) {
		*unchecked += r == -2;
		free(buf);
		return 0; /* none, or one git would not use */
	}
	w.u = &u;
	if (!(w.kids = calloc(u.n ? u.n : 1, sizeof(*w.kids)))) {
		hx_untr_free(&u);
		free(buf);
		return -ENOMEM;
	}
	for (size_t i = 1; i < u.n; i++)
		w.kids[w.nkids++] = &u.dirs[i];
	qsort(w.kids, w.nkids, sizeof(*w.kids), by_parent_name);
	for (size_t i = 0; i < u.n; i++) {
		const struct hx_untr_dir *b = &u.dirs[i];
		struct stat st;
		int fd = b->reachable ? open_dir(wfd, b->path) : -1;

		if (fd < 0)
			continue;
		if (full(&w)) { /* a block not looked at */
			w.more = true;
			close(fd);
			break;
		}
		if (fstat(fd, &st) || !trusted(b, &st, fsmonitor) ||
		    (b->check_only && b->nnames)) {
			close(fd); /* read by git, or shown whole */
			continue;
		}
		qsort(b->names, b->nnames, sizeof(*b->names), by_string);
		look_in(&w, fd, b->path, b, 0);
	}
	*unchecked += w.more; /* more there, not listed */
	free(w.kids);
	hx_untr_free(&u);
	free(buf);
	return 0;
}
