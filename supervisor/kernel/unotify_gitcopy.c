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

#include "supervisor/agentconf.h"
#include "supervisor/gitconf.h"
#include "supervisor/kernel/ipool.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* Installs len bytes of buf at pfd2/name2 (mode's permission bits) by
 * a rename of a new file, then removes pfd/name as a rename would. The
 * new file is one of pool's where the directory has them (in $HOME,
 * where Landlock grants by inode, a new inode would not read back). */
static int install(struct hx_ipool *pool, int pfd, const char *name, int pfd2,
		   const char *name2, unsigned flags, const char *buf,
		   size_t len, mode_t mode)
{
	char tmp[NAME_MAX + 1];
	size_t off = 0;
	ssize_t n = 0;
	int fd, e = 0;

	snprintf(tmp, sizeof(tmp), ".hx-%d-%.200s", (int)gettid(), name2);
	fd = pool ? hx_ipool_create(pool, pfd2, tmp, O_WRONLY | O_CLOEXEC,
				    mode & 0777)
		  : -ENOENT;
	if (fd == -ENOENT &&
	    (fd = openat(pfd2, tmp,
			 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			 mode & 0777)) < 0)
		fd = -errno;
	if (fd < 0)
		return fd;
	while (off < len && (n = write(fd, buf + off, len - off)) > 0)
		off += (size_t)n;
	if (off < len || fchmod(fd, mode & 0777))
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

/* The buffers on the heap: a thread-local array is zeroed at the start
 * of every thread of harness-exec. */
int hx_un_git_copy(struct hx_ipool *pool, int pfd, const char *name, int pfd2,
		   const char *name2, unsigned flags, bool agent)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int e;

	if (flags & ~RENAME_NOREPLACE)
		return -EACCES;
	/* -EACCES: it changed since it was decided */
	if (agent)
		n = hx_agentconf_read_checked(pfd, name, pfd2, name2, &buf,
					      &st);
	else if (!(buf = malloc(HX_GITCONF_COPY_MAX)))
		n = -ENOMEM;
	else
		n = hx_gitconf_read_checked(pfd, name, buf, &st);
	e = n < 0 ? (int)n
		  : install(pool, pfd, name, pfd2, name2, flags, buf, (size_t)n,
			    st.st_mode);
	free(buf);
	return e;
}
