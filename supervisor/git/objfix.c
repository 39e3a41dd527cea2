/* Loose objects that are not what their names say; see objfix.h. */
#define _GNU_SOURCE
#include "supervisor/git/objfix.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "supervisor/git/gitutil.h"

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

/* Whether the object id reads, streamed, as its name (1), not (0), or
 * cannot be read so either (-1). git_odb_read takes it whole, within the
 * check's memory: a forged object that inflates to more (code, then a
 * GiB of spaces) failed to read and was left, where git streams it
 * (thirty-first attack review, part a). */
static int streams_as_named(git_odb *odb, const git_oid *id)
{
	unsigned char buf[1 << 16], md[SHA1_DIGEST_SIZE];
	git_odb_stream *st = NULL;
	git_object_t type;
	struct sha1_ctx c;
	size_t len, got = 0;
	int n, k;

	if (git_odb_open_rstream(&st, &len, &type, odb, id))
		return -1;
	sha1_init(&c);
	k = snprintf((char *)buf, sizeof(buf), "%s %zu",
		     git_object_type2string(type), len);
	sha1_update(&c, (size_t)k + 1, buf);
	while ((n = git_odb_stream_read(st, (char *)buf, sizeof(buf))) > 0) {
		sha1_update(&c, (size_t)n, buf);
		got += (size_t)n;
	}
	git_odb_stream_free(st);
	if (n < 0)
		return -1;
	sha1_digest(&c, sizeof(md), md);
	return got == len && !memcmp(md, id->id, sizeof(md));
}

/* Bytes streamed at most, a process (the end's check): the check has
 * 10 s, and objects of many GiB of spaces would have used them up, the
 * sweep then unsaid. Past it, one not read whole is taken as forged. */
#define STREAM_BUDGET (2ull << 30)

/* Whether the object id is not what its name says: read whole, or
 * streamed when it cannot be read whole (within STREAM_BUDGET: past it,
 * when its file is the session's, own). */
static bool forged(git_odb *odb, const git_oid *id, bool own)
{
	static unsigned long long streamed;
	git_odb_object *obj = NULL;
	git_object_t type;
	size_t len;
	int e = git_odb_read(&obj, odb, id);

	git_odb_object_free(obj);
	if (e == GIT_EMISMATCH)
		return true;
	if (!e || e == GIT_ENOTFOUND ||
	    git_odb_read_header(&len, &type, odb, id))
		return false;
	/* never a file older than the session, through a new symlink */
	if ((streamed += len) > STREAM_BUDGET)
		return own;
	return streams_as_named(odb, id) == 0;
}

/* An inflated loose object's "type len\0" header, taken as it comes
 * (a stream may give it a byte at a time), then its len bytes hashed. */
struct obj256 {
	struct sha256_ctx c;
	char head[64];
	size_t hlen;
	bool headed;
	unsigned long long need, got;
};

/* Takes k inflated bytes: false when they cannot be a loose object. */
static bool take256(struct obj256 *o, const unsigned char *p, size_t k)
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
		sha256_update(&o->c, o->hlen, (const uint8_t *)o->head);
	}
	if (k > o->need - o->got)
		k = (size_t)(o->need - o->got); /* git reads no further */
	sha256_update(&o->c, k, p);
	o->got += k;
	return true;
}

/* Whether the loose object at fd hashes (SHA-256) to want: 1, 0 when
 * not, -1 when git could not read it either (not zlib, no header, too
 * short) or the budget is spent. */
static int sha256_as_named(int fd, const unsigned char *want,
			   unsigned long long *budget)
{
	unsigned char in[1 << 14], out[1 << 15], md[SHA256_DIGEST_SIZE];
	struct obj256 o = {0};
	z_stream z = {0};
	ssize_t n;
	int e = Z_OK;

	if (inflateInit(&z) != Z_OK)
		return -1;
	sha256_init(&o.c);
	while (e == Z_OK && (!o.headed || o.got < o.need) &&
	       *budget <= STREAM_BUDGET) {
		if (!z.avail_in) {
			if ((n = read(fd, in, sizeof(in))) <= 0)
				break;
			z.next_in = in;
			z.avail_in = (uInt)n;
		}
		z.next_out = out;
		z.avail_out = sizeof(out);
		e = inflate(&z, Z_NO_FLUSH);
		if ((e != Z_OK && e != Z_STREAM_END) ||
		    !take256(&o, out, sizeof(out) - z.avail_out))
			break;
		*budget += sizeof(out) - z.avail_out;
	}
	inflateEnd(&z);
	if (!o.headed || o.got < o.need)
		return -1;
	sha256_digest(&o.c, sizeof(md), md);
	return !memcmp(md, want, sizeof(md));
}

/* Whether the SHA-256 loose object name (xx + 62 hex, at dfd) is not
 * what its name says. libgit2 reads SHA-1 stores only: a SHA-256
 * repository's objects were never read, and one planted under the empty
 * blob's id gave the user's checkout of an empty file its code
 * (thirty-second attack review, part a). Past the budget, one the
 * session changed (own) is taken as forged, as forged() does. */
static bool forged256(int dfd, const char *xx, const char *name, bool own)
{
	static unsigned long long budget;
	unsigned char want[SHA256_DIGEST_SIZE];
	char hex[2 * SHA256_DIGEST_SIZE + 1];
	int fd, r;

	snprintf(hex, sizeof(hex), "%s%s", xx, name);
	for (size_t i = 0; i < sizeof(want); i++)
		if (sscanf(hex + 2 * i, "%2hhx", &want[i]) != 1)
			return false;
	if (budget > STREAM_BUDGET)
		return own;
	if ((fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return false;
	r = sha256_as_named(fd, want, &budget);
	close(fd);
	return r == 0 || (r < 0 && budget > STREAM_BUDGET && own);
}

/* The loose objects of directory xx (at dfd) changed since `since`,
 * read; one that is not its content removed. The number removed. */
static size_t sweep_dir(git_odb *odb, int dfd, const char *xx,
			const struct timespec *since)
{
	char hex[GIT_OID_HEXSZ + 1];
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	struct stat st;
	git_oid id;
	size_t n = 0;

	if (!d) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		if (strlen(de->d_name) == 2 * SHA256_DIGEST_SIZE - 2 &&
		    strspn(de->d_name, "0123456789abcdef") ==
			2 * SHA256_DIGEST_SIZE - 2 &&
		    new_file(dirfd(d), de->d_name, &st, since) &&
		    forged256(dirfd(d), xx, de->d_name,
			      changed_since(&st, since)) &&
		    !unlinkat(dirfd(d), de->d_name, 0)) {
			n++;
			continue;
		}
		if (strlen(de->d_name) != GIT_OID_HEXSZ - 2 ||
		    snprintf(hex, sizeof(hex), "%s%s", xx, de->d_name) !=
			GIT_OID_HEXSZ ||
		    git_oid_fromstr(&id, hex) ||
		    !new_file(dirfd(d), de->d_name, &st, since))
			continue;
		if (forged(odb, &id, changed_since(&st, since)) &&
		    !unlinkat(dirfd(d), de->d_name, 0))
			n++;
	}
	closedir(d);
	return n;
}

size_t hx_objfix_sweep(const char *objects, const struct timespec *since)
{
	char xx[3];
	git_odb *odb = NULL;
	size_t n = 0;
	int ofd, dfd;

	if (hx_git_init() ||
	    (ofd = open(objects, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	if (!git_odb_open(&odb, objects)) {
		for (int i = 0; i < 256; i++) {
			snprintf(xx, sizeof(xx), "%02x", i);
			/* a symlink there too: git follows it */
			dfd =
			    openat(ofd, xx, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (dfd >= 0)
				n += sweep_dir(odb, dfd, xx, since);
		}
		git_odb_free(odb);
	}
	close(ofd);
	return n;
}
