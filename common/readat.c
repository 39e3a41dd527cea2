/* See readat.h. */
#define _GNU_SOURCE
#include "common/readat.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

ssize_t hx_read_regular_at(int dirfd, const char *name, char *buf, size_t cap,
			   struct stat *st)
{
	size_t len = 0;
	ssize_t n = 0;
	int fd =
	    openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EACCES;
	}
	while (len < cap && (n = read(fd, buf + len, cap - len)) > 0)
		len += (size_t)n;
	close(fd);
	return n < 0 || len == cap ? -EACCES : (ssize_t)len;
}
