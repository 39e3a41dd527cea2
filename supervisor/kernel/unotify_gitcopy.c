/* A rename onto a git configuration done as a checked copy; see
 * unotify_int.h (hx_un_git_copy). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/gitconf.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

static int copy_checked(int pfd, const char *name, int pfd2, const char *name2,
			unsigned flags, char *buf)
{
	char tmp[NAME_MAX + 1];
	struct stat st;
	size_t len, off = 0;
	ssize_t n = 0;
	int fd, e = 0;

	if (flags & ~RENAME_NOREPLACE)
		return -EACCES;
	/* -EACCES: it changed since it was decided */
	if ((n = hx_gitconf_read_checked(pfd, name, buf, &st)) < 0)
		return (int)n;
	len = (size_t)n;
	snprintf(tmp, sizeof(tmp), ".hx-%d-%.200s", (int)gettid(), name2);
	fd = openat(pfd2, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    st.st_mode & 0777);
	if (fd < 0)
		return -errno;
	while (off < len && (n = write(fd, buf + off, len - off)) > 0)
		off += (size_t)n;
	if (off < len || fchmod(fd, st.st_mode & 0777))
		e = n < 0 ? -errno : -EIO;
	if (close(fd) && !e)
		e = -errno;
	if (!e && syscall(SYS_renameat2, pfd2, tmp, pfd2, name2, flags))
		e = -errno;
	if (e) {
		unlinkat(pfd2, tmp, 0);
		return e;
	}
	unlinkat(pfd, name, 0);
	return 0;
}

/* The copy's buffer on the heap: a thread-local array is zeroed at the
 * start of every thread of harness-exec. */
int hx_un_git_copy(int pfd, const char *name, int pfd2, const char *name2,
		   unsigned flags)
{
	char *buf = malloc(HX_GITCONF_COPY_MAX);
	int e =
	    buf ? copy_checked(pfd, name, pfd2, name2, flags, buf) : -ENOMEM;

	free(buf);
	return e;
}
