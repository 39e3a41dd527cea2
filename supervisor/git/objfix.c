/* Loose objects that are not what their names say; see objfix.h. */
#define _GNU_SOURCE
#include "supervisor/git/objfix.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/nettle-meta.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static bool changed_since(const struct stat *st, const struct timespec *t)
{
	return st->st_ctim.tv_sec > t->tv_sec ||
	       (st->st_ctim.tv_sec == t->tv_sec &&
		st->st_ctim.tv_nsec >= t->tv_nsec);
}

/* Whether name (at dfd) is a file, or a symlink to one (git follows
 * it), made or changed since `since`: the link's or its file's. */
static bool new_file(int dfd, const char *name, struct stat *st,
		     const struct timespec *since)
{
	struct stat ls;

	return !fstatat(dfd, name, &ls, AT_SYMLINK_NOFOLLOW) &&
	       !fstatat(dfd, name, st, 0) && S_ISREG(st->st_mode) &&
	       (changed_since(&ls, since) || changed_since(st, since));
}

/* The sweep's bounds, a process (the end's check, or the worktree's
 * end), for both kinds of store together: bytes read and inflated, and,
 * for a large object, time. The check has 10 s, and its index check
 * comes after: objects that inflate to many GiB of zeros (each a few
 * hundred KiB on disk), read whole by libgit2 where each fit the
 * check's memory and so never counted, or a budget each kind, ran the
 * check out of its time, its answer lost and the object planted in e6/
 * after them left (thirty-third attack review, part a). An object cut
 * short by a bound is set aside when its file is the session's (own),
 * and left when older (never a file older than the session, through a
 * new symlink). A small one is read whatever the time: taking
 * each unread one as forged would lose the agent's commits (README). */
#define SWEEP_BYTES (2ull << 30)
#define SWEEP_MS    5000
#define SWEEP_LARGE (1u << 20) /* bytes an object, past which time counts */

static unsigned long long spent;
static long long sweep_end; /* ms, CLOCK_MONOTONIC */

static long long ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Whether an object that has cost mine bytes so far is to be cut short.
 * Cost: a vDSO clock read, for a large one only. */
static bool over(unsigned long long mine)
{
	return spent > SWEEP_BYTES ||
	       (mine > SWEEP_LARGE && ms_now() > sweep_end);
}

/* An inflated loose object's "type len\0" header, taken as it comes
 * (a stream may give it a byte at a time), then its len bytes hashed
 * with h (SHA-1 or SHA-256: the store's kind, by the name's length). */
struct obj {
	const struct nettle_hash *h;
	union {
		struct sha1_ctx a;
		struct sha256_ctx b;
	} c;
	char head[64];
	size_t hlen;
	bool headed;
	unsigned long long need, got;
};

/* Takes k inflated bytes: false when they cannot be a loose object. */
static bool take(struct obj *o, const unsigned char *p, size_t k)
{
	char *end;

	while (!o->headed && k) {
		if (o->hlen == sizeof(o->head))
			return false; /* git reads no longer header */
		o->head[o->hlen++] = (char)*p++;
		k--;
		if (o->head[o->hlen - 1])
			continue;
		if (!strchr(o->head, ' '))
			return false;
		o->need = strtoull(strchr(o->head, ' ') + 1, &end, 10);
		if (*end)
			return false;
		o->headed = true;
		o->h->update(&o->c, o->hlen, (const uint8_t *)o->head);
	}
	if (k > o->need - o->got)
		k = (size_t)(o->need - o->got); /* git reads no further */
	o->h->update(&o->c, k, p);
	o->got += k;
	return true;
}

/* Whether the loose object at fd hashes (h) to want: 1, 0 when not, -1
 * when git could not read it either (not zlib, no header, too short),
 * -2 when cut short by the bounds, checked each 16 KiB read (empty
 * deflate blocks inflate to nothing, and cost their reading). */
static int hashes_as_named(int fd, const struct nettle_hash *h,
			   const unsigned char *want)
{
	unsigned char in[1 << 14], out[1 << 15], md[SHA256_DIGEST_SIZE];
	unsigned long long mine = 0;
	struct obj o = {.h = h};
	z_stream z = {0};
	ssize_t n;
	int e = Z_OK;
	bool cut = false;

	if (inflateInit(&z) != Z_OK)
		return -1;
	h->init(&o.c);
	while (e == Z_OK && (!o.headed || o.got < o.need) &&
	       !(cut = over(mine))) {
		if (!z.avail_in) {
			if ((n = read(fd, in, sizeof(in))) <= 0)
				break;
			z.next_in = in;
			z.avail_in = (uInt)n;
			mine += (size_t)n;
			spent += (size_t)n;
		}
		z.next_out = out;
		z.avail_out = sizeof(out);
		e = inflate(&z, Z_NO_FLUSH);
		if ((e != Z_OK && e != Z_STREAM_END) ||
		    !take(&o, out, sizeof(out) - z.avail_out))
			break;
		mine += sizeof(out) - z.avail_out;
		spent += sizeof(out) - z.avail_out;
	}
	inflateEnd(&z);
	if (!o.headed || o.got < o.need)
		return cut ? -2 : -1;
	h->digest(&o.c, h->digest_size, md);
	return !memcmp(md, want, h->digest_size);
}

/* What the sweep does with a loose object. */
enum verdict { KEEP, FORGED, UNREAD };

/* Whether the loose object name (at dfd, xx + the rest of its hash) is
 * not what its name says, inflated and hashed here for both kinds:
 * libgit2 reads SHA-1 stores only (a SHA-256 repository's objects were
 * never read: thirty-second attack review, part a), and its whole read
 * of a SHA-1 one could not be stopped at the bounds. One cut short by
 * them is UNREAD when the session changed it (own). */
static enum verdict judge(int dfd, const char *xx, const char *name, bool own)
{
	const struct nettle_hash *h = strlen(name) == 2 * SHA1_DIGEST_SIZE - 2
					  ? &nettle_sha1
					  : &nettle_sha256;
	unsigned char want[SHA256_DIGEST_SIZE];
	char hex[2 * SHA256_DIGEST_SIZE + 1];
	int fd, r;

	if (snprintf(hex, sizeof(hex), "%s%s", xx, name) >= (int)sizeof(hex))
		return KEEP;
	for (size_t i = 0; i < h->digest_size; i++)
		if (sscanf(hex + 2 * i, "%2hhx", &want[i]) != 1)
			return KEEP;
	if (over(0))
		return own ? UNREAD : KEEP;
	if ((fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return KEEP;
	r = hashes_as_named(fd, h, want);
	close(fd);
	return r == 0 ? FORGED : r == -2 && own ? UNREAD : KEEP;
}

/* An object the bounds left unread, set aside where git does not look
 * for it (name.harness-unread, beside it): unlinked, a large one the
 * agent committed late in a long sweep, or a user's whose ctime the
 * agent changed (a chmod, a link), was lost; renamed back, it is git's
 * again. Whether done. */
static bool set_aside(int dfd, const char *name)
{
	char aside[NAME_MAX + 1];

	return snprintf(aside, sizeof(aside), "%s.harness-unread", name) <
		   (int)sizeof(aside) &&
	       !renameat(dfd, name, dfd, aside);
}

/* Whether name is a loose object's: the rest of a SHA-1 or SHA-256
 * hash, in lower-case hex as git writes it. */
static bool object_name(const char *name)
{
	size_t n = strlen(name);

	return (n == 2 * SHA1_DIGEST_SIZE - 2 ||
		n == 2 * SHA256_DIGEST_SIZE - 2) &&
	       strspn(name, "0123456789abcdef") == n;
}

/* The loose objects of directory xx (at dfd) changed since `since`,
 * read; one that is not its content removed, one left unread set aside.
 * The number removed or set aside. */
static size_t sweep_dir(int dfd, const char *xx, const struct timespec *since)
{
	DIR *d = fdopendir(dfd);
	enum verdict v;
	struct dirent *de;
	struct stat st;
	size_t n = 0;

	if (!d) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		if (!object_name(de->d_name) ||
		    !new_file(dirfd(d), de->d_name, &st, since))
			continue;
		v = judge(dirfd(d), xx, de->d_name, changed_since(&st, since));
		if ((v == FORGED && !unlinkat(dirfd(d), de->d_name, 0)) ||
		    (v == UNREAD && set_aside(dirfd(d), de->d_name)))
			n++;
	}
	closedir(d);
	return n;
}

size_t hx_objfix_sweep(const char *objects, const struct timespec *since)
{
	char xx[3];
	size_t n = 0;
	int ofd, dfd;

	/* the bounds run from the first sweep of the process */
	if (!sweep_end)
		sweep_end = ms_now() + SWEEP_MS;
	if ((ofd = open(objects, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	for (int i = 0; i < 256; i++) {
		snprintf(xx, sizeof(xx), "%02x", i);
		/* a symlink there too: git follows it */
		dfd = openat(ofd, xx, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0)
			n += sweep_dir(dfd, xx, since);
	}
	close(ofd);
	return n;
}
