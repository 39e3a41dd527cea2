/* x32 syscall numbers (nr | 0x40000000): openat of argv[1] and getpid.
 * The filter kills the child. */
#include "escape.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "secret/key";
	int st;
	pid_t p = fork();

	if (p == 0) {
		long fd = syscall(0x40000000L | __NR_openat, AT_FDCWD, path,
				  O_RDONLY);

		printf("ESCAPED x32 openat(%s) returned %ld (errno %d)\n", path,
		       fd, fd < 0 ? errno : 0);
		fflush(stdout);
		_exit(3);
	}
	if (waitpid(p, &st, 0) != p)
		SKIPPED("waitpid");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		exit(0);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
		BLOCKED("x32 openat killed by SIGSYS (bad arch)");
	ESCAPED("child ended with status 0x%x, not SIGSYS", st);
}
