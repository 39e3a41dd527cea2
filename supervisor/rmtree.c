/* hx_rmtree (session.h) and hx_treewalk (treewalk.h). */
#define _GNU_SOURCE
#include "supervisor/session.h"
#include "supervisor/treewalk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deeper than this is left where it is: each level holds an fd. */
#define TREEWALK_DEPTH 128

static void walk_at(int dfd, const char *name, dev_t dev, int depth,
		    const struct hx_treewalk *w);

/* The entries of the directory open at fd (closed here). */
static void walk_dir(int fd, dev_t dev, int depth, const struct hx_treewalk *w)
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
			walk_at(dirfd(d), e->d_name, dev, depth + 1, w);
		else
			w->file(dirfd(d), e->d_name, w->arg);
	}
	closedir(d);
}

static void walk_at(int dfd, const char *name, dev_t dev, int depth,
		    const struct hx_treewalk *w)
{
	struct stat st;
	int fd;

	if (depth > TREEWALK_DEPTH)
		return;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOTDIR || errno == ELOOP)
			w->file(dfd, name, w->arg);
		else if (errno != ENOENT && w->dir_done)
			w->dir_done(dfd, name, w->arg);
		return;
	}
	if (fstat(fd, &st) || st.st_dev != dev) {
		close(fd);
		return;
	}
	walk_dir(fd, dev, depth, w);
	if (w->dir_done)
		w->dir_done(dfd, name, w->arg);
}

int hx_treewalk_at(int dfd, const char *name, const struct hx_treewalk *w)
{
	struct stat st;
	int fd =
	    openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		close(fd);
		return -errno;
	}
	walk_dir(fd, st.st_dev, 0, w);
	return 0;
}

struct rm_ctx {
	int err;
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

int hx_rmtree_at(int dfd, const char *name)
{
	struct rm_ctx c = {0};
	struct hx_treewalk w = {.file = rm_file, .dir_done = rm_dir, .arg = &c};
	int r = hx_treewalk_at(dfd, name, &w);

	if (r == -ENOTDIR || r == -ELOOP)
		return unlinkat(dfd, name, 0) ? -errno : 0;
	if (r)
		return r;
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
