/* i386 syscalls through int $0x80 from a 64-bit process: getuid (24)
 * and open (5) of argv[1] with 32-bit numbers. The filter's bad-arch
 * action kills the child. */
#include "escape.h"

#include <signal.h>
#include <sys/wait.h>

static char path[256]; /* static binary, non-PIE: below 4 GiB */

static long int80(long nr, long a, long b)
{
	long r;

	__asm__ volatile("int $0x80"
			 : "=a"(r)
			 : "a"(nr), "b"(a), "c"(b)
			 : "memory");
	return r;
}

int main(int argc, char **argv)
{
	int st;
	pid_t p;

	snprintf(path, sizeof(path), "%s", argc > 1 ? argv[1] : "secret/key");
	if ((unsigned long)path >> 32)
		SKIPPED("data above 4 GiB");
	p = fork();
	if (p == 0) {
		long u = int80(24, 0, 0);
		long fd = int80(5, (long)path, 0);

		printf("ESCAPED int 0x80 getuid=%ld open(%s)=%ld\n", u, path,
		       fd);
		fflush(stdout);
		_exit(3);
	}
	if (waitpid(p, &st, 0) != p)
		SKIPPED("waitpid");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		exit(0); /* the child printed ESCAPED */
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
		BLOCKED("int 0x80 killed by SIGSYS (bad arch)");
	ESCAPED("child ended with status 0x%x, not SIGSYS", st);
}
