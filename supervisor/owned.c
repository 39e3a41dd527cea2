/* The session's own sockets and /dev/shm files; see owned.h. */
#define _GNU_SOURCE
#include "supervisor/owned.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "policy/policy.h"

#define OWNED_MAX 1024

/* A file by its inode and its birth: a freed inode number is handed
 * out again (ext4 does at once), and the neighbour's socket that gets it
 * is not the session's. Without a birth time (a file system that keeps
 * none), the last status change: a chmod then makes the session's own
 * file a neighbour's, which fails safe. */
struct ident {
	dev_t dev;
	ino_t ino;
	int64_t sec;
	uint32_t nsec;
};

struct hx_owned {
	pthread_mutex_t lock;
	struct ident v[OWNED_MAX];
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

static int ident_at(int dirfd, const char *name, struct ident *id)
{
	struct statx sx;
	const struct statx_timestamp *t;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH,
		  STATX_INO | STATX_BTIME | STATX_CTIME, &sx))
		return -errno;
	t = (sx.stx_mask & STATX_BTIME) ? &sx.stx_btime : &sx.stx_ctime;
	*id = (struct ident){.dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
			     .ino = sx.stx_ino,
			     .sec = t->tv_sec,
			     .nsec = t->tv_nsec};
	return 0;
}

void hx_owned_add(struct hx_owned *o, int dirfd, const char *name)
{
	struct ident id;

	if (!o || ident_at(dirfd, name, &id))
		return;
	pthread_mutex_lock(&o->lock);
	o->v[o->n % OWNED_MAX] = id;
	o->n++;
	pthread_mutex_unlock(&o->lock);
}

/* Whether the file at path, which is st, is the session's. */
static bool has(struct hx_owned *o, const char *path, const struct stat *st)
{
	struct ident id;
	bool found = false;

	if (ident_at(AT_FDCWD, path, &id) || id.dev != st->st_dev ||
	    id.ino != st->st_ino)
		return false; /* swapped meanwhile: not known as ours */
	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < OWNED_MAX && i < o->n && !found; i++)
		found = o->v[i].dev == id.dev && o->v[i].ino == id.ino &&
			o->v[i].sec == id.sec && o->v[i].nsec == id.nsec;
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
	return !has(o, path, st);
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
	return !has(o, path, &st);
}

bool hx_owned_neighbour_name(struct hx_owned *o, const struct hx_policy *p,
			     uid_t uid, const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct hx_event ev = {.op = HX_OP_CONNECT};
	struct hx_decision d;
	struct stat st;
	size_t n;

	if (!hx_owned_neighbour_socket(o, uid, path, &st))
		return false;
	if (!p || (n = strlen(path)) >= sizeof(sun.sun_path))
		return true;
	memcpy(sun.sun_path, path, n + 1);
	ev.addr = (const struct sockaddr *)&sun;
	ev.addrlen =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	hx_policy_decide(p, &ev, &d);
	return !(d.verdict == HX_VERDICT_ALLOW && d.neighbours);
}
