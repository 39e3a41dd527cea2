/* The twenty-eighth attack review's static probe, part c
 * (tests/integration/test_attack28c.py). No shim: raw system calls.
 *
 *   DIR
 *	chdirs into DIR, then down by relative names into the one
 *	subdirectory there is, level after level, until a .env opens;
 *	prints "depth N: TEXT" (its bytes) and exits 0, or "stopped at
 *	depth N: ERRNO" and exits 1. A path past PATH_MAX is reached so:
 *	no name of it is ever given whole. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The name of the one subdirectory of the cwd into next, or -errno. */
static int only_subdir(char *next, size_t size)
{
	char buf[8192];
	long got;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, ".",
			      O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	next[0] = '\0';
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < got;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);

			off += de->d_reclen;
			if (de->d_type == DT_DIR && de->d_name[0] != '.')
				snprintf(next, size, "%s", de->d_name);
		}
	close(fd);
	return next[0] ? 0 : -ENOENT;
}

int main(int argc, char **argv)
{
	char next[256], text[128];
	int depth = 0, fd, e;
	long n;

	if (argc < 2 || syscall(SYS_chdir, argv[1]))
		return 2;
	for (;;) {
		fd = (int)syscall(SYS_openat, AT_FDCWD, ".env",
				  O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			break;
		if ((e = only_subdir(next, sizeof(next))) ||
		    (e = syscall(SYS_chdir, next) ? -errno : 0)) {
			printf("stopped at depth %d: %s\n", depth,
			       strerrorname_np(-e));
			return 1;
		}
		depth++;
	}
	n = syscall(SYS_read, fd, text, sizeof(text) - 1);
	text[n > 0 ? n : 0] = '\0';
	printf("depth %d: %s", depth, text);
	return 0;
}
