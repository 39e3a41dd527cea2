/* static_attack32c OP ARGS...: one file system call each, as a program
 * without the shim makes it (thirty-second attack review, part c: the
 * masks as the target). Prints what it read, or "err NAME".
 *   cat PATH        open and read PATH
 *   rw PATH         the same, opened O_RDWR
 *   creat PATH      the same, opened O_RDONLY | O_CREAT
 *   xchg A B        renameat2(A, B, RENAME_EXCHANGE)
 *   mv A B          rename(A, B)
 *   ln A B          link(A, B)
 *   at DIR NAME     open DIR (O_PATH), then openat(fd, NAME) and read
 *   reopen PATH     open PATH O_PATH, then its /proc/self/fd link, read
 *   loop N PATH     open PATH O_RDWR | O_CREAT N times (a measure) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/fs.h>

static int fail(void)
{
	printf("err %s\n", strerrorname_np(errno));
	return 1;
}

static int dump(int fd)
{
	char buf[4096];
	ssize_t n;

	if (fd < 0)
		return fail();
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	if (n < 0)
		return fail();
	printf("\nok\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *op = argc > 2 ? argv[1] : "";
	int d;

	if (!strcmp(op, "reopen")) {
		char link[64];

		if ((d = open(argv[2], O_PATH)) < 0)
			return fail();
		snprintf(link, sizeof(link), "/proc/self/fd/%d", d);
		return dump(open(link, O_RDONLY));
	}
	if (!strcmp(op, "cat"))
		return dump(open(argv[2], O_RDONLY));
	if (!strcmp(op, "rw"))
		return dump(open(argv[2], O_RDWR));
	if (!strcmp(op, "creat"))
		return dump(open(argv[2], O_RDONLY | O_CREAT, 0644));
	if (argc < 4)
		return 2;
	if (!strcmp(op, "xchg"))
		return syscall(SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD,
			       argv[3], RENAME_EXCHANGE)
			   ? fail()
			   : !printf("ok\n");
	if (!strcmp(op, "mv"))
		return rename(argv[2], argv[3]) ? fail() : !printf("ok\n");
	if (!strcmp(op, "ln"))
		return link(argv[2], argv[3]) ? fail() : !printf("ok\n");
	if (!strcmp(op, "loop")) {
		for (long n = atol(argv[2]); n > 0; n--)
			if ((d = open(argv[3], O_RDWR | O_CREAT, 0644)) >= 0)
				close(d);
		return !printf("ok\n");
	}
	if (!strcmp(op, "at")) {
		if ((d = open(argv[2], O_PATH | O_DIRECTORY)) < 0)
			return fail();
		return dump(openat(d, argv[3], O_RDONLY));
	}
	return 2;
}
