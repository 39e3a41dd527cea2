/* The thirteenth attack review's static probes (tests/integration/
 * test_attack13.py). No shim: each call is a raw system call.
 *
 *   devioctl openat|openat2 PATH CMD [ARG]
 *	opens PATH read-only by that call and makes ioctl CMD on it (with
 *	ARG, or a pointer to an int), printing "ioctl ok R", "ioctl ERRNO"
 *	or "open ERRNO". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *err(int e)
{
	const char *s = strerrorname_np(e);

	return s ? s : "E?";
}

static int devioctl(int argc, char **argv)
{
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC};
	unsigned long cmd;
	int fd, out = 0;
	long r;

	if (argc < 5)
		return 2;
	if (!strcmp(argv[2], "openat2"))
		fd = (int)syscall(SYS_openat2, AT_FDCWD, argv[3], &how,
				  sizeof(how));
	else
		fd = (int)syscall(SYS_openat, AT_FDCWD, argv[3],
				  O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("open %s\n", err(errno));
		return 0;
	}
	cmd = strtoul(argv[4], NULL, 0);
	if (argc > 5)
		r = syscall(SYS_ioctl, fd, cmd, strtol(argv[5], NULL, 0));
	else
		r = syscall(SYS_ioctl, fd, cmd, &out);
	if (r < 0)
		printf("ioctl %s\n", err(errno));
	else
		printf("ioctl ok %ld\n", r);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "devioctl"))
		return devioctl(argc, argv);
	fprintf(stderr, "usage: static_attack13 devioctl ...\n");
	return 2;
}
