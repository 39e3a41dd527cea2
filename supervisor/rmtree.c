/* hx_rmtree (session.h) and hx_treewalk (treewalk.h). */
#define _GNU_SOURCE
#include "supervisor/session.h"
#include "supervisor/treewalk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deeper than this is left to too_deep: each level holds an fd. */
#define TREEWALK_DEPTH 128

/* One walk: its callbacks, the file system it stays on, its top. */
struct walk {
	const struct hx_treewalk *w;
	dev_t dev;
	int top;
};

static void walk_at(int dfd, const char *name, int depth, const struct walk *k);

/* The entries of the directory open at fd (closed here). */
static void walk_dir(int fd, int depth, const struct walk *k)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;

	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN)
			walk_at(dirfd(d), e->d_name, depth + 1, k);
		else
			k->w->file(dirfd(d), e->d_name, k->w->arg);
	}
	closedir(d);
}

/* The directory name in dfd (no symlink followed), opened for reading
 * into *fd, its stat in *st: 0 or -errno. First held by an O_PATH fd,
 * which needs no permission on it, so that for a removal a mode of the
 * agent's that keeps its entries (0, 0500) is made the owner's rwx on
 * the very directory looked at; a second open takes it from there. */
static int open_dir(int dfd, const char *name, bool own, dev_t dev,
		    struct stat *st, int *fd)
{
	int pfd =
	    openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char proc[64];
	int e = 0;

	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st)) {
		e = -errno;
	} else if (dev && st->st_dev != dev) {
		e = -EXDEV; /* another file system: not entered, not changed */
	} else {
		if (own && st->st_uid == geteuid() &&
		    (st->st_mode & S_IRWXU) != S_IRWXU) {
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
			if (!chmod(proc, (st->st_mode & 07777) | S_IRWXU))
				st->st_mode |= S_IRWXU;
		}
		*fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (*fd < 0)
			e = -errno;
	}
	close(pfd);
	return e;
}

static void walk_at(int dfd, const char *name, int depth, const struct walk *k)
{
	const struct hx_treewalk *w = k->w;
	struct stat st;
	int fd, e;

	if (depth > TREEWALK_DEPTH) {
		if (w->too_deep)
			w->too_deep(dfd, name, k->top, w->arg);
		return;
	}
	e = open_dir(dfd, name, w->own_modes, k->dev, &st, &fd);
	if (e == -ENOTDIR || e == -ELOOP)
		w->file(dfd, name, w->arg);
	else if (e && e != -ENOENT && e != -EXDEV && w->dir_done)
		w->dir_done(dfd, name, w->arg);
	if (e)
		return;
	walk_dir(fd, depth, k);
	if (w->dir_done)
		w->dir_done(dfd, name, w->arg);
}

int hx_treewalk_at(int dfd, const char *name, const struct hx_treewalk *w)
{
	struct walk k = {.w = w};
	struct stat st;
	int fd, e = open_dir(dfd, name, w->own_modes, 0, &st, &fd);

	if (e)
		return e;
	k.dev = st.st_dev;
	/* Its own fd for too_deep: walk_dir closes the one it reads. */
	k.top = w->too_deep ? dup(fd) : -1;
	walk_dir(fd, 0, &k);
	if (k.top >= 0)
		close(k.top);
	return 0;
}

struct rm_ctx {
	int err;
	unsigned moved; /* directories too deep moved to the top */
};

static void note(struct rm_ctx *c, int r)
{
	if (r && errno != ENOENT && !c->err)
		c->err = -errno;
}

static void rm_file(int dfd, const char *name, void *arg)
{
	note(arg, unlinkat(dfd, name, 0));
}

static void rm_dir(int dfd, const char *name, void *arg)
{
	note(arg, unlinkat(dfd, name, AT_REMOVEDIR));
}

/* A directory deeper than a walk holds fds for: moved to the top of
 * the tree under a dot name of its own, which the next pass removes
 * (an agent's TMPDIR 140 levels deep outlived its session). */
static void rm_deep(int dfd, const char *name, int top, void *arg)
{
	struct rm_ctx *c = arg;
	char to[32];

	if (top < 0)
		return;
	for (int i = 0; i < 8; i++) {
		snprintf(to, sizeof(to), ".hx-deep-%u", c->moved + (unsigned)i);
		if (!renameat2(dfd, name, top, to, RENAME_NOREPLACE)) {
			c->moved++;
			return;
		}
		if (errno != EEXIST)
			break;
	}
	note(c, -1);
}

/* Passes of the walk: each one removes 128 levels more of a deep tree. */
#define RM_PASSES 4096

int hx_rmtree_at(int dfd, const char *name)
{
	struct rm_ctx c = {0};
	struct hx_treewalk w = {.file = rm_file,
				.dir_done = rm_dir,
				.too_deep = rm_deep,
				.own_modes = true,
				.arg = &c};
	unsigned before;
	int r;

	for (int pass = 0; pass < RM_PASSES; pass++) {
		before = c.moved;
		c.err = 0;
		r = hx_treewalk_at(dfd, name, &w);
		if (r == -ENOTDIR || r == -ELOOP)
			return unlinkat(dfd, name, 0) ? -errno : 0;
		if (r)
			return r;
		if (c.moved == before)
			break;
	}
	note(&c, unlinkat(dfd, name, AT_REMOVEDIR));
	return c.err;
}

int hx_rmtree(const char *path)
{
	const char *slash = strrchr(path, '/');
	char parent[PATH_MAX];
	int dfd, r;

	if (!slash || !slash[1] || (size_t)(slash - path) >= sizeof(parent))
		return -EINVAL;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = '\0';
	dfd =
	    open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	r = hx_rmtree_at(dfd, slash + 1);
	close(dfd);
	return r;
}
