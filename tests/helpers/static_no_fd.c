/* Opens FILE for writing with no descriptor free (RLIMIT_NOFILE 3):
 *   static_no_fd FILE trunc    O_WRONLY|O_TRUNC of a file that is there
 *   static_no_fd FILE creat    O_WRONLY|O_CREAT|O_TRUNC
 *   static_no_fd FILE excl     O_WRONLY|O_CREAT|O_EXCL
 * Prints "ok" or the errno's name. The kernel takes a descriptor before
 * it opens, so EMFILE leaves the file as it was: harnessed, the same. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rlimit rl = {3, 3};
	int flags, fd;

	if (argc != 3) {
		fprintf(stderr, "usage: static_no_fd FILE trunc|creat|excl\n");
		return 2;
	}
	flags = !strcmp(argv[2], "trunc")   ? O_WRONLY | O_TRUNC
		: !strcmp(argv[2], "creat") ? O_WRONLY | O_CREAT | O_TRUNC
					    : O_WRONLY | O_CREAT | O_EXCL;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 1;
	fd = (int)syscall(SYS_openat, AT_FDCWD, argv[1], flags, 0644);
	printf("%s\n", fd < 0 ? strerrorname_np(errno) : "ok");
	return 0;
}
