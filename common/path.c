/* Lexical path normalization; see path.h. */
#include "common/path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "common/sys.h"

long hx_path_normalize(const char *base, const char *path, char *out,
		       size_t cap)
{
	size_t len = 0;
	int pass;

	if (!path || !*path)
		return -EINVAL;
	if (path[0] != '/' && (!base || base[0] != '/'))
		return -EINVAL;
	if (cap < 2)
		return -ENAMETOOLONG;
	out[len++] = '/';
	/* Pass 0 walks the base (when path is relative), pass 1 the path. */
	for (pass = path[0] == '/' ? 1 : 0; pass < 2; pass++) {
		const char *p = pass ? path : base;

		while (*p) {
			const char *seg;
			size_t n;

			while (*p == '/')
				p++;
			seg = p;
			while (*p && *p != '/')
				p++;
			n = (size_t)(p - seg);
			if (n == 0 || (n == 1 && seg[0] == '.'))
				continue;
			if (n == 2 && seg[0] == '.' && seg[1] == '.') {
				/* Back to the previous '/', never past root. */
				while (len > 1 && out[len - 1] != '/')
					len--;
				if (len > 1)
					len--;
				continue;
			}
			if (len > 1) {
				if (len + 1 >= cap)
					return -ENAMETOOLONG;
				out[len++] = '/';
			}
			if (len + n >= cap)
				return -ENAMETOOLONG;
			memcpy(out + len, seg, n);
			len += n;
		}
		/* The kernel refuses such a path, even one that normalizes
		 * short: measured on the walk, not by a scan of its own. */
		if (pass && (size_t)(p - path) >= PATH_MAX)
			return -ENAMETOOLONG;
	}
	out[len] = '\0';
	return (long)len;
}

size_t hx_utoa(uint64_t v, char *out)
{
	char tmp[20];
	size_t n = 0, k = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		out[k++] = tmp[--n];
	return k;
}

/* The target of the link dir + fd (dir "/proc/.../fd/"). */
static long fd_link(const char *dir, int fd, char *out, size_t cap)
{
	char link[40];
	size_t at = strlen(dir);
	long r;

	if (fd < 0)
		return -EBADF;
	memcpy(link, dir, at);
	link[at + hx_utoa((unsigned)fd, link + at)] = '\0';
	if (cap < 2)
		return -ENAMETOOLONG;
	r = hx_sys3(SYS_readlink, link, out, cap - 1);
	/* No such entry under .../fd: not an open fd. */
	if (r == -ENOENT)
		return -EBADF;
	if (r < 0)
		return r;
	if ((size_t)r >= cap - 1)
		return -ENAMETOOLONG;
	out[r] = '\0';
	return r;
}

long hx_path_of_fd(int fd, char *out, size_t cap)
{
	return fd_link("/proc/self/fd/", fd, out, cap);
}

long hx_path_of_call_fd(int fd, char *out, size_t cap)
{
	/* The calling thread's table (a thread may have its own:
	 * unshare(CLONE_FILES)). /proc/self's is the main thread's, and one
	 * to two us cheaper a readlink: a single-threaded program's (find's
	 * openat of each directory by its parent's fd) pays two cheap
	 * system calls to know it is that thread. */
	if (hx_gettid() == hx_getpid())
		return fd_link("/proc/self/fd/", fd, out, cap);
	return fd_link("/proc/thread-self/fd/", fd, out, cap);
}

long hx_path_at(int dirfd, const char *path, char *out, size_t cap)
{
	char base[PATH_MAX];
	long r;

	if (!path || !*path)
		return -ENOENT;
	if (path[0] == '/')
		return hx_path_normalize(NULL, path, out, cap);
	if (dirfd == AT_FDCWD) {
		r = hx_sys2(SYS_getcwd, base, sizeof(base));
		if (r < 0)
			return r;
		/* The kernel prefixes "(unreachable)" for a cwd outside
		 * our root: not a path we can name. */
		if (base[0] != '/')
			return -ENOENT;
	} else {
		r = hx_path_of_call_fd(dirfd, base, sizeof(base));
		if (r < 0)
			return r;
		if (base[0] != '/')
			return -ENOTDIR;
	}
	return hx_path_normalize(base, path, out, cap);
}
