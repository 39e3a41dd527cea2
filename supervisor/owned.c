/* The session's own sockets and /dev/shm files; see owned.h. */
#define _GNU_SOURCE
#include "supervisor/owned.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define OWNED_MAX 1024

struct hx_owned {
	pthread_mutex_t lock;
	struct {
		dev_t dev;
		ino_t ino;
	} v[OWNED_MAX];
	size_t n; /* how many were ever added; the ring keeps the last */
};

int hx_owned_new(struct hx_owned **out)
{
	struct hx_owned *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	pthread_mutex_init(&o->lock, NULL);
	*out = o;
	return 0;
}

void hx_owned_free(struct hx_owned *o)
{
	if (!o)
		return;
	pthread_mutex_destroy(&o->lock);
	free(o);
}

void hx_owned_add(struct hx_owned *o, int dirfd, const char *name)
{
	struct stat st;

	if (!o ||
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return;
	pthread_mutex_lock(&o->lock);
	o->v[o->n % OWNED_MAX].dev = st.st_dev;
	o->v[o->n % OWNED_MAX].ino = st.st_ino;
	o->n++;
	pthread_mutex_unlock(&o->lock);
}

static bool has(struct hx_owned *o, const struct stat *st)
{
	bool found = false;

	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < OWNED_MAX && i < o->n && !found; i++)
		found = o->v[i].dev == st->st_dev && o->v[i].ino == st->st_ino;
	pthread_mutex_unlock(&o->lock);
	return found;
}

static bool system_place(const char *path)
{
	const char *p = !strncmp(path, "/run/", 5)	 ? path + 5
			: !strncmp(path, "/var/run/", 9) ? path + 9
							 : NULL;

	return (p && strncmp(p, "user/", 5)) || !strcmp(path, "/dev/log");
}

bool hx_owned_neighbour_socket(struct hx_owned *o, uid_t uid, const char *path,
			       struct stat *st)
{
	memset(st, 0, sizeof(*st));
	if (!o || lstat(path, st) || !S_ISSOCK(st->st_mode)) {
		st->st_ino = 0;
		return false;
	}
	if (st->st_uid != uid || (uid == 0 && system_place(path)))
		return false;
	return !has(o, st);
}

bool hx_owned_neighbour_shm(struct hx_owned *o, const char *path, bool *fresh)
{
	struct stat st;

	*fresh = false;
	if (!o || !path || strncmp(path, "/dev/shm/", 9))
		return false;
	if (lstat(path, &st)) {
		*fresh = errno == ENOENT;
		return false;
	}
	/* Whoever owns it: another user's, writable to the agent (a 0666
	 * semaphore), is no less a neighbour's. */
	return !has(o, &st);
}
