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
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/git/gitutil.h"
#include "supervisor/git/indexfile.h"

/* An index larger than this is not read for its cache. */
#define MAX_INDEX_BYTES (256u << 20)
/* Caches (extensions named UNTR) an index is checked for, at most. */
#define MAX_CACHES 8
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

/* What the user's configuration makes of the cache: dropped
 * (core.untrackedCache false), trusted without a stat (core.fsmonitor),
 * and which of a directory's stat data git compares (core.checkStat,
 * core.trustctime). */
struct conf {
	bool dropped, fsmonitor, check_stat, trust_ctime;
};

static uint32_t field(const unsigned char *s, int i)
{
	s += 4 * i;
	return (uint32_t)s[0] << 24 | (uint32_t)s[1] << 16 |
	       (uint32_t)s[2] << 8 | s[3];
}

/* Whether git trusts the cached list of d: its stat data matches the
 * directory's now as git's match_stat_data compares it (the seconds of
 * the mtime and ctime, the inode, owner and size; git built with
 * USE_NSEC compares the nanoseconds too, so this errs there towards
 * saying a file is hidden), or fsmonitor is on. Comparing less let the
 * agent bend a cached directory's ctime: git read it again and showed
 * its new files, which were reported as hidden, 64 of them filling the
 * record before the one a cache did hide (twentieth attack review). */
static bool trusted(const struct hx_untr_dir *d, const struct stat *st,
		    const struct conf *c)
{
	const unsigned char *s = d->stat;

	if (!d->valid)
		return false;
	if (c->fsmonitor)
		return true;
	return field(s, 2) == (uint32_t)st->st_mtime &&
	       field(s, 8) == (uint32_t)st->st_size &&
	       (!c->check_stat || !c->trust_ctime ||
		field(s, 0) == (uint32_t)st->st_ctime) &&
	       (!c->check_stat || (field(s, 5) == (uint32_t)st->st_ino &&
				   field(s, 6) == (uint32_t)st->st_uid &&
				   field(s, 7) == (uint32_t)st->st_gid));
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
	    w->arr,
	    hx_git_hidden_entry(full_path, "untracked-cache", "untracked"));
}

/* Whether a directory on path's way (the work tree's root to its own
 * directory) holds a .gitignore that is a symbolic link: git does not
 * read one (it opens each with O_NOFOLLOW since 2.32), libgit2 does.
 * The agent linked tests/.gitignore to a file of "*" and made
 * tests/conftest.py: libgit2 took both for ignored, nothing was
 * recorded, and git without the cache showed both (twentieth attack
 * review). */
static bool linked_ignore_on_way(const struct walk *w, const char *path)
{
	char p[PATH_MAX];
	struct stat st;
	size_t n = strlen(path);

	for (size_t i = 0; i <= n; i++) {
		if (i && path[i - 1] != '/')
			continue;
		if ((size_t)snprintf(p, sizeof(p), "%.*s.gitignore", (int)i,
				     path) >= sizeof(p))
			return true;
		if (!fstatat(w->wfd, p, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISLNK(st.st_mode))
			return true;
	}
	return false;
}

/* Whether git ignores path: libgit2's answer, but for a path beneath a
 * .gitignore git does not read, taken as not ignored. */
static bool ignored(const struct walk *w, const char *path)
{
	int ign = 0;

	if (linked_ignore_on_way(w, path))
		return false;

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
		/* a name too long to hold: not looked at, said */
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", path,
				     de->d_name,
				     dir ? "/" : "") >= sizeof(sub)) {
			w->more = true;
			continue;
		}
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

/* The user's configuration of the cache (struct conf). */
static struct conf config_of(git_repository *repo)
{
	struct conf c = {false, false, true, true};
	git_config *cfg = NULL;
	git_config_entry *e = NULL;
	int on = 1;

	if (git_repository_config_snapshot(&cfg, repo))
		return git_error_clear(), c;
	if (!git_config_get_bool(&on, cfg, "core.untrackedCache") && !on)
		c.dropped = true;
	if (!git_config_get_entry(&e, cfg, "core.fsmonitor") && e && e->value &&
	    strcmp(e->value, "false") && *e->value)
		c.fsmonitor = true;
	git_config_entry_free(e);
	e = NULL;
	if (!git_config_get_bool(&on, cfg, "core.trustctime") && !on)
		c.trust_ctime = false;
	if (!git_config_get_entry(&e, cfg, "core.checkStat") && e && e->value &&
	    !strcasecmp(e->value, "minimal"))
		c.check_stat = false;
	git_config_entry_free(e);
	git_config_free(cfg);
	git_error_clear();
	return c;
}

/* The cache in ext (the index's UNTR payload) checked by the walk w:
 * each directory git would trust, its entries the cached list leaves
 * out. 0 or -ENOMEM. */
static int check_cache(struct walk *w, const unsigned char *ext, size_t extlen,
		       const struct conf *conf, size_t *unchecked)
{
	struct hx_untr u;
	int r;

	if ((r = hx_untr_parse(ext, extlen, &u))) {
		*unchecked += r == -2;
		return 0; /* one git would not use */
	}
	w->u = &u;
	w->nkids = 0;
	if (!(w->kids = calloc(u.n ? u.n : 1, sizeof(*w->kids)))) {
		hx_untr_free(&u);
		return -ENOMEM;
	}
	for (size_t i = 1; i < u.n; i++)
		w->kids[w->nkids++] = &u.dirs[i];
	qsort(w->kids, w->nkids, sizeof(*w->kids), by_parent_name);
	for (size_t i = 0; i < u.n; i++) {
		const struct hx_untr_dir *b = &u.dirs[i];
		struct stat st;
		int fd = b->reachable ? open_dir(w->wfd, b->path) : -1;

		if (fd < 0)
			continue;
		if (full(w)) { /* a block not looked at */
			w->more = true;
			close(fd);
			break;
		}
		if (fstat(fd, &st) || !trusted(b, &st, conf) ||
		    (b->check_only && b->nnames)) {
			close(fd); /* read by git, or shown whole */
			continue;
		}
		qsort(b->names, b->nnames, sizeof(*b->names), by_string);
		look_in(w, fd, b->path, b, 0);
	}
	free(w->kids);
	w->kids = NULL;
	hx_untr_free(&u);
	return 0;
}

int hx_git_untracked_hidden(git_repository *repo, git_index *idx, int wfd,
			    const char *prefix, json_t *arr, size_t *unchecked)
{
	struct walk w = {repo, idx, wfd, prefix, arr, NULL, NULL, 0, false};
	const unsigned char *ext, *seen[MAX_CACHES];
	size_t nseen = 0;
	unsigned char *buf = NULL;
	size_t len, extlen;
	struct conf conf = config_of(repo);
	int r;

	if (conf.dropped)
		return 0;
	/* An index too large to read, or a cache too large to hold, is
	 * said unchecked (the agent can make either). */
	if ((r = read_index(repo, &buf, &len)) == -EFBIG)
		++*unchecked;
	if (r)
		return 0;
	/* Every cache git may take: each UNTR walking the extensions from
	 * the entries' end (git keeps the last that parses), and each from
	 * the offset an EOIE extension gives, where git reads them when it
	 * loads them in a thread. The check took the first from the
	 * entries' end: one git drops before the forged one it kept had
	 * the check look at nothing (twentieth attack review). */
	for (int by = 0; by < 2 && !r; by++)
		for (size_t nth = 0; !r && nth < MAX_CACHES; nth++) {
			int f = by ? hx_index_extension_eoie(buf, len, "UNTR",
							     nth, &ext, &extlen)
				   : hx_index_extension(buf, len, "UNTR", nth,
							&ext, &extlen);
			bool again = false;

			if (f != 1)
				break;
			for (size_t k = 0; k < nseen; k++)
				again |= seen[k] == ext;
			if (again)
				continue;
			if (nseen == MAX_CACHES) {
				++*unchecked;
				break;
			}
			seen[nseen++] = ext;
			r = check_cache(&w, ext, extlen, &conf, unchecked);
		}
	*unchecked += w.more; /* more there, not listed */
	free(buf);
	return r;
}
