/* See unixlisten.h. */
#define _GNU_SOURCE
#include "supervisor/unixlisten.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "supervisor/fmt.h"

/* path's directory, opened O_PATH, and its last component. */
static int split(const char *path, char *base, size_t size)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s",
			 slash == path ? 1 : (int)(slash - path), path);
	slash = slash ? slash + 1 : path;
	if (!*slash || !strcmp(slash, ".") || !strcmp(slash, "..") ||
	    strlen(slash) >= size)
		return -EINVAL;
	snprintf(base, size, "%s", slash);
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* A socket file at base in dfd that nothing listens on. */
static bool is_stale(int dfd, const char *path, const char *base)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	bool stale;
	int fd;

	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) ||
	    !S_ISSOCK(st.st_mode) || strlen(path) >= sizeof(sa.sun_path))
		return false;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	stale = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
		errno == ECONNREFUSED;
	close(fd);
	return stale;
}

/* A private directory in dfd: made 0700, opened without following,
 * and checked to be this user's through its fd (one put there by who
 * may write dfd in between is not). Its fd (O_PATH), or -errno. */
static int private_dir(int dfd, char *name, size_t size)
{
	uint8_t rnd[8];
	char hex[2 * sizeof(rnd) + 1], self[64];
	struct stat st;
	int fd;

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -EAGAIN;
	hx_fmt_hex(rnd, sizeof(rnd), hex);
	snprintf(name, size, ".hx-%s", hex);
	if (mkdirat(dfd, name, 0700))
		return -errno;
	fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	/* 0700 whatever the umask or a default ACL: through our fd */
	if (fstat(fd, &st) || st.st_uid != geteuid() || chmod(self, 0700)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Moves tfd's "s" to base in dfd, replacing nothing. */
static int place(int tfd, int dfd, const char *base)
{
	if (!renameat2(tfd, "s", dfd, base, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL) /* a file system without NOREPLACE: a link */
		return errno == EEXIST ? -EADDRINUSE : -errno;
	if (linkat(tfd, "s", dfd, base, 0))
		return errno == EEXIST ? -EADDRINUSE : -errno;
	unlinkat(tfd, "s", 0);
	return 0;
}

static int bind_in(int tfd, int type, struct stat *file)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0), e;
	struct stat st;

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/s", tfd);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    fchmodat(tfd, "s", 0600, 0) ||
	    fstatat(tfd, "s", &st, AT_SYMLINK_NOFOLLOW)) {
		e = -errno;
		close(fd);
		return e;
	}
	if (file)
		*file = st;
	return fd;
}

int hx_unix_listen(const char *path, int type, int backlog, bool stale,
		   struct stat *file)
{
	char base[NAME_MAX + 1], tmp[64];
	int dfd, tfd, fd, e;

	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -ENAMETOOLONG;
	if ((dfd = split(path, base, sizeof(base))) < 0)
		return dfd;
	if ((tfd = private_dir(dfd, tmp, sizeof(tmp))) < 0) {
		close(dfd);
		return tfd;
	}
	fd = bind_in(tfd, type, file);
	if (fd >= 0 && listen(fd, backlog)) {
		e = -errno;
		close(fd);
		fd = e;
	}
	if (fd >= 0 && stale && is_stale(dfd, path, base))
		unlinkat(dfd, base, 0);
	if (fd >= 0 && (e = place(tfd, dfd, base))) {
		close(fd);
		fd = e;
	}
	unlinkat(tfd, "s", 0); /* not placed */
	unlinkat(dfd, tmp, AT_REMOVEDIR);
	close(tfd);
	close(dfd);
	return fd;
}

void hx_unix_remove(const char *path, const struct stat *file)
{
	char base[NAME_MAX + 1];
	struct stat st;
	int dfd = split(path, base, sizeof(base));

	if (dfd < 0)
		return;
	if (!fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) &&
	    st.st_dev == file->st_dev && st.st_ino == file->st_ino)
		unlinkat(dfd, base, 0);
	close(dfd);
}
