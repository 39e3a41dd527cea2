/* Loose objects that are not what their names say; see objfix.h. */
#define _GNU_SOURCE
#include "supervisor/git/objfix.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha1.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
