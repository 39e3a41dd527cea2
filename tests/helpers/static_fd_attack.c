/* A static program (no shim: the kernel layer only) that opens PATH for
 * reading and tries what a read-only fd allows against the audit log:
 * ftruncate, write, fchmod, and a hard link through /proc/self/fd.
 * Prints one "NAME ok" or "NAME err ERRNO" line each. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(const char *what, int r)
{
	if (r < 0)
		printf("%s err %d\n", what, errno);
	else
		printf("%s ok\n", what);
}

int main(int argc, char **argv)
{
	char proc[64];
	int fd;

	if (argc != 3)
		return 2;
	fd = open(argv[1], O_RDONLY);
	say("open", fd);
	if (fd < 0)
		return 0;
	say("ftruncate", ftruncate(fd, 0));
	say("write", (int)write(fd, "x\n", 2));
	say("fchmod", fchmod(fd, 0));
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	say("link",
	    linkat(AT_FDCWD, proc, AT_FDCWD, argv[2], AT_SYMLINK_FOLLOW));
	return 0;
}
