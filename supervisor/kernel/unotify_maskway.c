/* The masks on the way of a path the kernel layer acts on; see
 * hx_un_masked_way in unotify_int.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/kernel/masks.h"

static int open_in(int dirfd, const char *path, uint64_t resolve)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = resolve};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* 1: path shows the target (its root rfd) another file than ours, or
 * none where ours has one; 0: the same; -ENOENT: none in ours either. */
static int differs(int rfd, const char *path)
{
	struct stat a, b;
	int ours = open_in(AT_FDCWD, path, 0), theirs, d;

	if (ours < 0)
		return ours == -ENOENT ? -ENOENT : 0; /* the call fails */
	theirs = open_in(rfd, path, RESOLVE_IN_ROOT);
	d = theirs < 0 || fstat(ours, &a) || fstat(theirs, &b) ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino;
	close(ours);
	if (theirs >= 0)
		close(theirs);
	return d;
}

/* Names whose view is the target's own by design (its /proc, its
 * terminals, its queues): no mask is there. */
static bool own_view(const char *path)
{
	return !strncmp(path, "/proc/", 6) ||
	       (!strncmp(path, "/dev/", 5) && strncmp(path, "/dev/shm/", 9));
}

/* Whether path (absolute, as the target names it), or the directory it
 * would be made in, lies on or beneath a mask of the target's view. */
static bool masked_path(int rfd, const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	int d;

	if (!path || path[0] != '/' || own_view(path))
		return false;
	if ((d = differs(rfd, path)) != -ENOENT)
		return d == 1;
	/* Not there: made in its directory (an O_CREAT, a link's or a
	 * rename's new name). */
	if ((size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir) ||
	    !(slash = strrchr(dir, '/')) || slash == dir)
		return false;
	*slash = '\0';
	return differs(rfd, dir) == 1;
}

bool hx_un_masked_way(const struct target *t, const struct job *j)
{
	char root[64];
	bool masked;
	int rfd;

	if (!hx_masks_dir_noted())
		return false;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)t->peer.pid);
	/* A view not ours to look at is refused (fails closed). */
	if ((rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return true;
	masked = masked_path(rfd, j->rq.path) || masked_path(rfd, j->rq.path2);
	close(rfd);
	return masked;
}
