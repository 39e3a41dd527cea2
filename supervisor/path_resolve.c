/* Agent-side symlink resolution; see resolve.h. */
#define _GNU_SOURCE
#include "supervisor/path_resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/path.h"
#include "supervisor/kernel/terminals.h"

#define MAX_LINKS 40

static void pop(char *cur)
{
	char *s = strrchr(cur, '/');

	if (s)
		*s = '\0';
}

/* "pipe:[123]", "socket:[4]", "anon_inode:[eventfd]": fd links that do
 * not name a file. */
static bool magic_target(const char *t)
{
	const char *c = strchr(t, ':');

	return c && (c[1] == '[' || !strncmp(t, "anon_inode:", 11));
}

/* Whether a and b (both followed) are one file. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Whether a /proc link (link, as we reach it) names a removed file:
 * its text ("/x/f (deleted)", in the target's root) is then no name of
 * it, and may be another file's, made under that name. */
static bool removed_target(const char *root, const char *link,
			   const char *target)
{
	char path[PATH_MAX + 64];
	size_t n = strlen(target);

	if (n <= 10 || strcmp(target + n - 10, " (deleted)"))
		return false;
	snprintf(path, sizeof(path), "%s%s", root, target);
	return !same_file(link, path);
}

static int set_rest(char *rest, size_t size, const char *target,
		    const char *tail)
{
	if ((size_t)snprintf(rest, size, "%s%s%s", target, *tail ? "/" : "",
			     tail) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* Whether the kernel finds path (absolute, normalized) without meeting
 * a symlink, the last name included. */
static bool no_symlink(const char *path)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS};
	int fd;

	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* The common case in a lookup or two instead of an lstat a
 * component: no symlink on the way to norm (normalized), or to its directory
 * when the last name is not there (yet) or is not followed, means norm is its
 * own resolution. /proc (whose self is the supervisor's) and every case
 * that fails here (a symlink, a missing directory, a directory that
 * may not be searched) take the walk. */
static bool resolves_to_itself(const char *norm, bool follow_last)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(norm, '/');

	/* ".." goes up from where a symlink led: only a normalized path
	 * is its own walk. */
	if (norm[0] != '/' || !strncmp(norm, "/proc/", 6) ||
	    !strcmp(norm, "/proc") ||
	    hx_path_normalize(NULL, norm, dir, sizeof(dir)) < 0 ||
	    strcmp(dir, norm))
		return false;
	/* Any symlink met, a dangling one last included, is ELOOP; ENOENT
	 * is a name that is not there. */
	if (follow_last && no_symlink(norm))
		return true;
	if (follow_last && errno != ENOENT)
		return false;
	if (slash == norm)
		return true; /* "/name": its directory is the root */
	if ((size_t)(slash - norm) >= sizeof(dir))
		return false;
	memcpy(dir, norm, (size_t)(slash - norm));
	dir[slash - norm] = '\0';
	return no_symlink(dir);
}

/* Whether path has a ".." component: only then is its lexical
 * normalization not its walk ("." and "//" are dropped by both). */
static bool has_dotdot(const char *path)
{
	for (const char *p = strstr(path, ".."); p; p = strstr(p + 2, ".."))
		if ((p == path || p[-1] == '/') && (!p[2] || p[2] == '/'))
			return true;
	return false;
}

/* Whether path's last component is "." ("x/.", "x/./"): the name before
 * it is then no last name but a directory walked through, its symlink
 * followed whatever the call says of its last one. */
static bool ends_dot(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	return n && path[n - 1] == '.' && (n == 1 || path[n - 2] == '/');
}

bool hx_path_root_ours(pid_t pid)
{
	char link[64], target[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/root", (int)pid);
	n = readlink(link, target, sizeof(target) - 1);
	return n <= 0 || (n == 1 && target[0] == '/');
}

int hx_path_resolve(pid_t pid, pid_t tid, const char *norm, bool follow_last,
		    char *out, size_t size)
{
	return hx_path_resolve_root(pid, tid, hx_path_root_ours(pid), norm,
				    follow_last, out, size);
}

int hx_path_resolve_root(pid_t pid, pid_t tid, bool root_ours, const char *norm,
			 bool follow_last, char *out, size_t size)
{
	char cur[PATH_MAX], rest[2 * PATH_MAX], tmp[2 * PATH_MAX];
	char root[64], full[PATH_MAX + 64], target[PATH_MAX], self[64];
	char selfpfx[80];
	int links = 0;
	struct stat st;
	ssize_t n;
	size_t rlen;

	/* Another root (chroot) is reached through /proc/<pid>/root. */
	root[0] = '\0';
	if (!root_ours)
		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	/* "link/." walks through link, as the walk below does: the
	 * normalized "link" would be its last name, not followed. */
	if (ends_dot(norm))
		follow_last = true;
	/* "./x" and "a//b" as "x" and "a/b": what the walk below does with
	 * them, and the common case a lookup decides. */
	if (!root[0] && !has_dotdot(norm) &&
	    hx_path_normalize(NULL, norm, cur, sizeof(cur)) >= 0 &&
	    resolves_to_itself(cur, follow_last)) {
		if ((size_t)snprintf(out, size, "%s", cur) >= size)
			return -ENAMETOOLONG;
		return 0;
	}

	cur[0] = '\0';
	if (set_rest(rest, sizeof(rest), norm, ""))
		return -ENAMETOOLONG;
	while (rest[0]) {
		char *p = rest, *comp, *tail;
		size_t clen;
		bool last;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		comp = p;
		while (*p && *p != '/')
			p++;
		clen = (size_t)(p - comp);
		tail = p;
		while (*tail == '/')
			tail++;
		last = !*tail;
		if (clen == 1 && comp[0] == '.') {
			memmove(rest, tail, strlen(tail) + 1);
			continue;
		}
		if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
			pop(cur);
			memmove(rest, tail, strlen(tail) + 1);
			continue;
		}
		if (strlen(cur) + 1 + clen + 1 > sizeof(cur))
			return -ENAMETOOLONG;
		rlen = strlen(cur);
		cur[rlen] = '/';
		memcpy(cur + rlen + 1, comp, clen);
		cur[rlen + 1 + clen] = '\0';
		memmove(rest, tail, strlen(tail) + 1);
		/* The supervisor's /proc/self is not the agent's. */
		if (!strcmp(cur, "/proc/self")) {
			snprintf(cur, sizeof(cur), "/proc/%d", (int)pid);
			continue;
		}
		if (!strcmp(cur, "/proc/thread-self")) {
			snprintf(cur, sizeof(cur), "/proc/%d/task/%d", (int)pid,
				 (int)(tid ? tid : pid));
			continue;
		}
		if (last && !follow_last)
			break;
		snprintf(full, sizeof(full), "%s%s", root, cur);
		if (lstat(full, &st)) {
			if (errno != ENOENT && errno != ENOTDIR &&
			    errno != EACCES)
				return -errno;
			/* Not there (yet): the rest stays as written. */
			break;
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++links > MAX_LINKS)
			return -ELOOP;
		n = readlink(full, target, sizeof(target) - 1);
		if (n <= 0)
			return n < 0 ? -errno : -EINVAL;
		target[n] = '\0';
		/* A terminal an fd names (/dev/stdout on a tty) is reached
		 * through the fd: in the agent's view that name is its own
		 * devpts instance's, another pty or none (terminals.h). */
		if (!strncmp(cur, "/proc/", 6) &&
		    (magic_target(target) || hx_terminals_path(target) ||
		     removed_target(root, full, target)))
			break;
		if (target[0] == '/')
			cur[0] = '\0';
		else
			pop(cur);
		snprintf(tmp, sizeof(tmp), "%s", rest);
		if (set_rest(rest, sizeof(rest), target, tmp))
			return -ENAMETOOLONG;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s%s%s", cur[0] ? cur : "/",
			     rest[0] && cur[0] ? "/" : "", rest) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (hx_path_normalize(NULL, tmp, cur, sizeof(cur)) < 0)
		return -ENAMETOOLONG;
	/* Policies say /proc/self; write the agent's own /proc that way. */
	snprintf(self, sizeof(self), "/proc/%d", (int)pid);
	snprintf(selfpfx, sizeof(selfpfx), "%s/", self);
	if (!strcmp(cur, self))
		n = snprintf(out, size, "/proc/self");
	else if (!strncmp(cur, selfpfx, strlen(selfpfx)))
		n = snprintf(out, size, "/proc/self/%s", cur + strlen(selfpfx));
	else
		n = snprintf(out, size, "%s", cur);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

int hx_path_real(const char *path, char *out, size_t size)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	long n;

	/* Most names have no symlink on the way: the path itself, without
	 * the /proc link's walk and d_path (a third of the Landlock
	 * derivation's time). ENOENT or ENOTDIR met before any symlink is
	 * the walk's own answer either way. */
	if (fd >= 0 || errno == ENOENT || errno == ENOTDIR) {
		if (fd < 0)
			return -errno;
		close(fd);
		n = hx_path_normalize(NULL, path, out, size);
		return n < 0 ? (int)n : 0;
	}
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = hx_path_of_fd(fd, out, size);
	close(fd);
	if (n == -ENAMETOOLONG)
		return (int)n;
	if (n < 0) {
		/* No /proc here (a chroot): the walk, as realpath(3). */
		char *real = realpath(path, NULL);

		if (!real)
			return -errno;
		n = snprintf(out, size, "%s", real);
		free(real);
		if ((size_t)n >= size)
			return -ENAMETOOLONG;
	}
	return 0;
}

/* path walked from a removed directory whose former name is base: its
 * rest after a leading "..", base cut to the parent; NULL when it looks
 * a name up in the removed directory itself (ENOENT). */
static const char *up_from_removed(const char *path, char *base)
{
	char *slash;

	while (path[0] == '.' && path[1] == '/')
		for (path++; *path == '/'; path++)
			;
	if (path[0] != '.' || path[1] != '.' || (path[2] && path[2] != '/'))
		return NULL;
	for (path += 2; *path == '/'; path++)
		;
	slash = strrchr(base, '/');
	slash[slash == base] = '\0';
	return *path ? path : ".";
}

int hx_path_absolute(pid_t pid, pid_t tid, int dirfd, const char *path,
		     char *out, size_t size)
{
	char link[64], base[PATH_MAX];
	ssize_t n;

	if (!path[0])
		return -ENOENT;
	if (path[0] == '/') {
		if ((size_t)snprintf(out, size, "%s", path) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd",
			 (int)(tid ? tid : pid));
	else if (dirfd >= 0)
		snprintf(link, sizeof(link), "/proc/%d/fd/%d",
			 (int)(tid ? tid : pid),
			 dirfd); /* the thread's table */
	else
		return -EBADF;
	n = readlink(link, base, sizeof(base) - 1);
	if (n <= 0)
		return dirfd == AT_FDCWD ? -ENOENT : -EBADF;
	base[n] = '\0';
	/* "pipe:[3]": not a directory the policy can name. */
	if (base[0] != '/')
		return -ENOTDIR;
	/* A removed directory reads "/x (deleted)", which may be another
	 * directory, made under that name: a file made "in" the removed
	 * cwd, which the kernel refuses (ENOENT), was made in that one. Of
	 * a removed directory only ".." is still walked. */
	if (n > 10 && !strcmp(base + n - 10, " (deleted)") &&
	    !same_file(link, base) &&
	    (path = up_from_removed(path, base)) == NULL)
		return -ENOENT;
	if ((size_t)snprintf(out, size, "%s/%s", base, path) >= size)
		return -ENAMETOOLONG;
	return 0;
}
