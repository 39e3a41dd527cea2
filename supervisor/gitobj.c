/* Git objects by name; see gitobj.h. */
#define _GNU_SOURCE /* statx, memmem */
#include "supervisor/gitobj.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool all_hex(const char *s, size_t n)
{
	return n && strspn(s, "0123456789abcdef") >= n;
}

/* The name's length when it is a whole SHA-1 or SHA-256 hash. */
static bool hash_len(size_t n)
{
	return n == 40 || n == 64;
}

/* "pack-<hash>.<ext>", the names git gives a pack's files. */
static bool pack_name(const char *name)
{
	const char *dot = strrchr(name, '.');

	return !strncmp(name, "pack-", 5) && dot &&
	       hash_len((size_t)(dot - name - 5)) &&
	       all_hex(name + 5, (size_t)(dot - name - 5));
}

bool hx_gitobj_defines(const char *objects, const char *path)
{
	size_t n = objects ? strlen(objects) : 0;
	const char *rest;

	if (!n || !path || strncmp(path, objects, n) || path[n] != '/')
		return false;
	rest = path + n + 1;
	return (!strncmp(rest, "pack", 4) || !strncmp(rest, "info", 4)) &&
	       (!rest[4] || rest[4] == '/');
}

static bool object_file(const char *path, const struct timespec *since,
			bool any);

/* Whether path is a pack's or an index's file, the ones git writes
 * under another name first (a .keep or .promisor is written in place). */
static bool pack_data(const char *path)
{
	const char *dot = strrchr(path, '.');

	return dot && (!strcmp(dot, ".pack") || !strcmp(dot, ".idx"));
}

bool hx_gitobj_is_name(const char *path)
{
	const char *name = strrchr(path, '/');
	struct timespec never = {0, 0};

	/* a loose object's name is its hash, never "pack-..." */
	return name && object_file(path, &never, true) &&
	       (strncmp(name + 1, "pack-", 5) || pack_data(name));
}

bool hx_gitobj_predates(const char *path, const struct timespec *since)
{
	return object_file(path, since, false);
}

/* Whether path is an object's final name in a git dir (any: named,
 * whether there or not) or such a file that existed before since. */
static bool object_file(const char *path, const struct timespec *since,
			bool any)
{
	const char *name = strrchr(path, '/'), *dir;
	char gitdir[PATH_MAX];
	size_t dlen;
	struct stat st;

	if (!name || name == path)
		return false;
	for (dir = name - 1; dir > path && *dir != '/'; dir--)
		;
	dlen = (size_t)(name - dir - 1);
	if (dlen == 2 && all_hex(dir + 1, 2) &&
	    hash_len(2 + strlen(name + 1)) &&
	    all_hex(name + 1, strlen(name + 1)))
		; /* objects/xx/<rest of the hash> */
	else if (!(dlen == 4 && !strncmp(dir + 1, "pack", 4) &&
		   pack_name(name + 1)))
		return false;
	/* dir's parent must be "objects" of a git directory. */
	if ((size_t)(dir - path) < 8 || strncmp(dir - 8, "/objects", 8) ||
	    (size_t)(dir - 8 - path) + 6 > sizeof(gitdir))
		return false;
	snprintf(gitdir, sizeof(gitdir), "%.*s/HEAD", (int)(dir - 8 - path),
		 path);
	if (lstat(gitdir, &st))
		return false;
	if (any)
		return true;
	if (lstat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	return st.st_ctim.tv_sec < since->tv_sec ||
	       (st.st_ctim.tv_sec == since->tv_sec &&
		st.st_ctim.tv_nsec < since->tv_nsec);
}

/* Whether the first n bytes of path are a git directory (a HEAD in it);
 * old: one made before since (its birth time; none known: taken as
 * older unless its config is newer). */
static bool git_dir_at(const char *path, size_t n, bool old,
		       const struct timespec *since)
{
	char p[PATH_MAX];
	struct statx sx;
	struct stat st;

	if (!n ||
	    (size_t)snprintf(p, sizeof(p), "%.*s/HEAD", (int)n, path) >=
		sizeof(p) ||
	    lstat(p, &st))
		return false;
	if (!old)
		return true;
	p[n] = '\0';
	if (!statx(AT_FDCWD, p, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) &&
	    (sx.stx_mask & STATX_BTIME))
		return sx.stx_btime.tv_sec < since->tv_sec ||
		       (sx.stx_btime.tv_sec == since->tv_sec &&
			sx.stx_btime.tv_nsec < since->tv_nsec);
	/* no birth time: its config's last change, which the agent's
	 * writes never make (harness:git-config); none: older */
	strcpy(p + n, "/config");
	return lstat(p, &st) || st.st_ctim.tv_sec < since->tv_sec ||
	       (st.st_ctim.tv_sec == since->tv_sec &&
		st.st_ctim.tv_nsec < since->tv_nsec);
}

bool hx_gitobj_swaps(const char *path, const struct timespec *since,
		     const char *own, size_t ownlen)
{
	static const struct {
		const char *at;
		bool old;
	} k[] = {
	    {"/refs/replace", false},
	    {"/objects/pack", true},
	    {"/objects/info", true},
	};

	for (size_t i = 0; path && i < sizeof(k) / sizeof(k[0]); i++) {
		size_t n = strlen(k[i].at);

		for (const char *s = path; (s = strstr(s, k[i].at)); s++)
			if ((!s[n] || s[n] == '/') &&
			    !((size_t)(s - path) == ownlen && own &&
			      !strncmp(path, own, ownlen)) &&
			    git_dir_at(path, (size_t)(s - path), k[i].old,
				       since))
				return true;
	}
	return false;
}

bool hx_gitobj_packed_refs(const char *path, const char *own, size_t ownlen)
{
	const char *name = path ? strrchr(path, '/') : NULL;

	return name && !strcmp(name + 1, "packed-refs") &&
	       !((size_t)(name - path) == ownlen && own &&
		 !strncmp(path, own, ownlen)) &&
	       git_dir_at(path, (size_t)(name - path), false, NULL);
}

bool hx_gitobj_names_replace(const char *file)
{
	static const char want[] = "refs/replace/";
	const size_t w = sizeof(want) - 1;
	char buf[65536];
	size_t have = 0;
	bool found = false;
	ssize_t n;
	int fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return true; /* unread: refused */
	/* in chunks, the last bytes kept for a name across two */
	while (!found && (n = read(fd, buf + have, sizeof(buf) - have)) > 0) {
		have += (size_t)n;
		found = memmem(buf, have, want, w) != NULL;
		if (have >= w) {
			memmove(buf, buf + have - (w - 1), w - 1);
			have = w - 1;
		}
	}
	close(fd);
	return found || n < 0;
}
