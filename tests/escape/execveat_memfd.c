/* Fileless exec: a copy of /bin/true in a memfd, run with
 * execveat(fd, "", AT_EMPTY_PATH). */
#include "escape.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int main(void)
{
	int fd = memfd_create("payload", 0), in = open("/bin/true", O_RDONLY);
	char buf[65536], *argv[] = {"true", NULL}, *envp[] = {NULL};
	ssize_t n;
	int st;
	pid_t p;

	if (fd < 0 || in < 0)
		SKIPPED("memfd or /bin/true: %s", strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			SKIPPED("write");
	p = fork();
	if (p == 0) {
		syscall(__NR_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
		_exit(errno == EPERM ? 40 : 41);
	}
	waitpid(p, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		ESCAPED("the memfd copy of /bin/true ran");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 40)
		ESCAPED("unexpected status 0x%x", st);
	BLOCKED("execveat(memfd, \"\", AT_EMPTY_PATH): EPERM");
}
