/* A tree's removal that no process writing in it meanwhile can turn
 * into the removal of another tree (session.h, hx_rmtree). */
#define _GNU_SOURCE
#include "supervisor/session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deeper than this is left where it is: each level holds an fd. */
#define RMTREE_DEPTH 128

static int rm_at(int dfd, const char *name, dev_t dev, int depth);

/* Empties the directory open at fd (closed here). */
static int empty_dir(int fd, dev_t dev, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int r = 0, x;

	if (!d) {
		close(fd);
		return -errno;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN &&
		    !unlinkat(dirfd(d), e->d_name, 0))
			continue;
		if ((x = rm_at(dirfd(d), e->d_name, dev, depth + 1)) && !r)
			r = x;
	}
	closedir(d);
	return r;
}

/* Removes name in dfd: every step is relative to a directory already
 * open, and a directory is opened O_NOFOLLOW, so an entry swapped for
 * a symlink (to $HOME, to the state directory) is removed as the link
 * it is, never followed; a directory of another file system (something
 * mounted there) is not entered. */
static int rm_at(int dfd, const char *name, dev_t dev, int depth)
{
	struct stat st;
	int fd, r;

	if (depth > RMTREE_DEPTH)
		return -ELOOP;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOTDIR || errno == ELOOP)
			return unlinkat(dfd, name, 0) && errno != ENOENT
				   ? -errno
				   : 0;
		/* EACCES: a directory we may not read, such as an empty
		 * mask cover (mode 0), which rmdir removes all the same. */
		return unlinkat(dfd, name, AT_REMOVEDIR) && errno != ENOENT
			   ? -errno
			   : 0;
	}
	if (fstat(fd, &st) || st.st_dev != dev) {
		close(fd);
		return -EXDEV;
	}
	r = empty_dir(fd, dev, depth);
	if (unlinkat(dfd, name, AT_REMOVEDIR) && errno != ENOENT && !r)
		r = -errno;
	return r;
}

int hx_rmtree(const char *path)
{
	struct stat st;
	const char *slash = strrchr(path, '/');
	char parent[4096];
	int dfd, r;

	if (!slash || (size_t)(slash - path) >= sizeof(parent))
		return -EINVAL;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = '\0';
	dfd =
	    open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fstatat(dfd, slash + 1, &st, AT_SYMLINK_NOFOLLOW)) {
		r = -errno;
	} else if (!S_ISDIR(st.st_mode)) {
		r = unlinkat(dfd, slash + 1, 0) ? -errno : 0;
	} else {
		r = rm_at(dfd, slash + 1, st.st_dev, 0);
	}
	close(dfd);
	return r;
}
