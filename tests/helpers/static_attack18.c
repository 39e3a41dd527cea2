/* Writes of the OOM killer's weight by raw system calls (linked
 * statically: no shim), for the eighteenth attack review.
 *
 *   static_attack18 open PATH VALUE      open(2) for writing, write
 *   static_attack18 openat2 PATH VALUE   openat2(2)
 *   static_attack18 reopen PATH VALUE    O_PATH, then /proc/self/fd/N
 *   static_attack18 parent VALUE         /proc/PPID/oom_score_adj
 * Prints "wrote" or "refused ERRNO", then the adj read back. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_it(const char *how, const char *path)
{
	char fdp[64];
	int fd;

	if (!strcmp(how, "openat2")) {
		struct open_how oh = {.flags = O_WRONLY};

		return (int)syscall(SYS_openat2, AT_FDCWD, path, &oh,
				    sizeof(oh));
	}
	if (!strcmp(how, "reopen")) {
		if ((fd = open(path, O_PATH)) < 0)
			return -1;
		snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", fd);
		return open(fdp, O_WRONLY);
	}
	return open(path, O_WRONLY);
}

int main(int argc, char **argv)
{
	char path[64], buf[32];
	const char *p = argv[2], *v = argc > 3 ? argv[3] : argv[2];
	int fd;
	ssize_t n;

	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "parent")) {
		snprintf(path, sizeof(path), "/proc/%d/oom_score_adj",
			 (int)getppid());
		p = path;
	}
	fd = open_it(argv[1], p);
	if (fd < 0 || write(fd, v, strlen(v)) < 0)
		printf("refused %d\n", errno);
	else
		printf("wrote\n");
	fd = open(p, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	printf("adj %s", buf);
	return 0;
}
