/* Pooled unnamed files for the carved directories; see ipool.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/ipool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct pool_dir {
	dev_t dev;
	ino_t ino;
	int *fds; /* unnamed files not yet linked in */
	size_t n;
};

struct hx_ipool {
	pthread_mutex_t lock;
	struct pool_dir dirs[HX_IPOOL_MAX_DIRS];
	size_t ndirs, used, left;
};

int hx_ipool_new(struct hx_ipool **out)
{
	struct hx_ipool *p = calloc(1, sizeof(*p));

	*out = p;
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	return 0;
}

int hx_ipool_fill(struct hx_ipool *p, const char *dir, size_t n,
		  int (*grant)(int fd, void *arg), void *arg)
{
	struct pool_dir *d;
	struct stat st;
	int dfd, e = 0;

	if (p->ndirs == HX_IPOOL_MAX_DIRS)
		return -ENOSPC;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	d = &p->dirs[p->ndirs];
	if (fstat(dfd, &st))
		e = -errno;
	else if (!(d->fds = calloc(n ? n : 1, sizeof(int))))
		e = -ENOMEM;
	if (e) {
		close(dfd);
		return e;
	}
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	for (size_t tries = 0; tries < n; tries++) {
		/* Created in dir itself: its file system, and the group
		 * and default ACL a file made there gets. */
		int fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

		if (fd < 0) {
			e = -errno;
			break;
		}
		e = grant(fd, arg);
		if (e) {
			close(fd);
			if (e == -ENOMEM)
				break;
			e = 0;
			continue;
		}
		d->fds[d->n++] = fd;
	}
	close(dfd);
	if (!d->n) {
		free(d->fds);
		d->fds = NULL;
		return e ? e : -ENOENT;
	}
	p->ndirs++;
	p->left += d->n;
	return e == -ENOMEM ? e : (int)d->n;
}

/* One unnamed file of the directory (dev, ino), or -ENOENT. */
static int take(struct hx_ipool *p, dev_t dev, ino_t ino)
{
	int fd = -ENOENT;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->ndirs; i++) {
		struct pool_dir *d = &p->dirs[i];

		if (d->dev == dev && d->ino == ino && d->n) {
			fd = d->fds[--d->n];
			p->left--;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return fd;
}

/* Gives back an unused one (still unnamed). */
static void give_back(struct hx_ipool *p, dev_t dev, ino_t ino, int fd)
{
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->ndirs; i++) {
		struct pool_dir *d = &p->dirs[i];

		if (d->dev == dev && d->ino == ino) {
			d->fds[d->n++] = fd; /* room: it came from there */
			p->left++;
			fd = -1;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (fd >= 0)
		close(fd);
}

static bool same_inode(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static bool still_ours(int dirfd, const char *name, int fd)
{
	struct stat sn, sf;

	return !fstatat(dirfd, name, &sn, AT_SYMLINK_NOFOLLOW) &&
	       !fstat(fd, &sf) && sn.st_dev == sf.st_dev &&
	       sn.st_ino == sf.st_ino;
}

int hx_ipool_create(struct hx_ipool *p, int dirfd, const char *name, int flags,
		    mode_t mode)
{
	char self[64];
	struct stat st;
	int fd, out, e;

	if (!p || fstat(dirfd, &st) || !S_ISDIR(st.st_mode))
		return -ENOENT;
	if ((fd = take(p, st.st_dev, st.st_ino)) < 0)
		return fd;
	snprintf(self, sizeof(self), "/proc/thread-self/fd/%d", fd);
	/* An O_TMPFILE file without O_EXCL may be linked once; an existing
	 * name is EEXIST, as O_CREAT|O_EXCL would say. */
	if (linkat(AT_FDCWD, self, dirfd, name, AT_SYMLINK_FOLLOW)) {
		e = -errno;
		give_back(p, st.st_dev, st.st_ino, fd);
		return e;
	}
	pthread_mutex_lock(&p->lock);
	p->used++;
	pthread_mutex_unlock(&p->lock);
	/* By its new name, not through our fd's magic link: that would
	 * give the agent an fd whose path is "#INODE (deleted)" (its
	 * fchmod was then decided on that name, and denied). Opened as
	 * asked before the mode is set: a creating open may write a file
	 * whose new mode says read-only (0444). */
	out = openat(dirfd, name,
		     (flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_DIRECTORY)) |
			 O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	e = out < 0 ? -errno : 0;
	if (!e && !same_inode(out, fd))
		e = -EAGAIN; /* swapped since the link: not ours */
	/* The mode asked for, and "now" rather than the session's start. */
	if (fchmod(fd, mode & 07777) || futimens(fd, NULL))
		e = e ? e : -errno;
	if (e) {
		/* Ours only while it still is the pooled inode. */
		if (out >= 0)
			close(out);
		if (e != -EAGAIN && still_ours(dirfd, name, fd))
			unlinkat(dirfd, name, 0);
		close(fd);
		return e;
	}
	close(fd);
	return out;
}

size_t hx_ipool_used(const struct hx_ipool *p)
{
	size_t n;

	if (!p)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&p->lock);
	n = p->used;
	pthread_mutex_unlock((pthread_mutex_t *)&p->lock);
	return n;
}

size_t hx_ipool_left(const struct hx_ipool *p)
{
	size_t n;

	if (!p)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&p->lock);
	n = p->left;
	pthread_mutex_unlock((pthread_mutex_t *)&p->lock);
	return n;
}

void hx_ipool_free(struct hx_ipool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->ndirs; i++) {
		for (size_t k = 0; k < p->dirs[i].n; k++)
			close(p->dirs[i].fds[k]);
		free(p->dirs[i].fds);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}
