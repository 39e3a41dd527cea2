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
#include <unistd.h>

#include "policy/policy.h"
#include "supervisor/treewalk.h"

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
	/* Those made in /dev/shm (its device shm_dev), all of them up to
	 * HX_OWNED_SHM_MAX, for the sweep at the end. */
	dev_t shm_dev;
	struct ident *shm;
	size_t nshm, shm_cap;
	size_t swept; /* by the sweep at the end */
	bool shm_left;
};

int hx_owned_new(struct hx_owned **out)
{
	struct hx_owned *o = calloc(1, sizeof(*o));
	struct stat st;

	if (!o)
		return -ENOMEM;
	pthread_mutex_init(&o->lock, NULL);
	if (!stat("/dev/shm", &st) && S_ISDIR(st.st_mode))
		o->shm_dev = st.st_dev;
	*out = o;
	return 0;
}

void hx_owned_free(struct hx_owned *o)
{
	if (!o)
		return;
	pthread_mutex_destroy(&o->lock);
	free(o->shm);
	free(o);
}

/* Under o->lock. */
static void add_shm(struct hx_owned *o, const struct ident *id)
{
	struct ident *v;
	size_t cap;

	if (o->nshm == o->shm_cap) {
		cap = o->shm_cap ? o->shm_cap * 2 : 64;
		if (cap > HX_OWNED_SHM_MAX ||
		    !(v = realloc(o->shm, cap * sizeof(*v)))) {
			o->shm_left = true;
			return;
		}
		o->shm = v;
		o->shm_cap = cap;
	}
	o->shm[o->nshm++] = *id;
}

static bool same(const struct ident *a, const struct ident *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->sec == b->sec &&
	       a->nsec == b->nsec;
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
	if (o->shm_dev && id.dev == o->shm_dev)
		add_shm(o, &id);
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
		found = same(&o->v[i], &id);
	/* Past the ring, a /dev/shm file is still known by the sweep's. */
	for (size_t i = 0; i < o->nshm && !found; i++)
		found = same(&o->shm[i], &id);
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
	*fresh = false;
	if (!o || !path || strncmp(path, "/dev/shm/", 9))
		return false;
	return hx_owned_foreign_file(o, path, fresh);
}

bool hx_owned_foreign_file(struct hx_owned *o, const char *path, bool *fresh)
{
	struct stat st;

	*fresh = false;
	if (!o || !path)
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

/* Sorted for the sweep: a storm of files there costs it no square. */
static int cmp_ident(const void *a, const void *b)
{
	const struct ident *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->nsec < y->nsec ? -1 : x->nsec > y->nsec;
}

/* A file of /dev/shm, named by its directory's fd (treewalk.h): looked
 * at and removed there, so a directory swapped for a symlink by another
 * process meanwhile (another session's agent, another user) never
 * turns the removal onto a file elsewhere with the same name. */
static void sweep_one(int dfd, const char *name, void *arg)
{
	struct hx_owned *o = arg;
	struct ident id;

	if (ident_at(dfd, name, &id))
		return;
	if (bsearch(&id, o->shm, o->nshm, sizeof(*o->shm), cmp_ident) &&
	    !unlinkat(dfd, name, 0))
		o->swept++;
}

size_t hx_owned_sweep_shm(struct hx_owned *o, bool *left)
{
	*left = false;
	if (!o || !o->nshm) {
		*left = o && o->shm_left;
		return 0;
	}
	pthread_mutex_lock(&o->lock);
	qsort(o->shm, o->nshm, sizeof(*o->shm), cmp_ident);
	o->swept = 0;
	/* Its directories may hold the user's files too: kept. */
	hx_treewalk_at(AT_FDCWD, "/dev/shm/.", /* /dev/shm may be a link */
		       &(struct hx_treewalk){.file = sweep_one, .arg = o});
	*left = o->shm_left;
	pthread_mutex_unlock(&o->lock);
	return o->swept;
}
