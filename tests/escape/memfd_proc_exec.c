/* Fileless exec without execveat: a copy of /bin/true in a memfd, run
 * through its /proc/self/fd/N name with plain execve. */
#include "escape.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>

int main(void)
{
	int fd = memfd_create("payload", 0), in = open("/bin/true", O_RDONLY);
	char buf[65536], path[64], *argv[] = {"true", NULL}, *envp[] = {NULL};
	ssize_t n;
	int st;
	pid_t p;

	if (fd < 0 || in < 0)
		SKIPPED("memfd or /bin/true: %s", strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			SKIPPED("write");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	p = fork();
	if (p == 0) {
		execve(path, argv, envp);
		_exit(errno == EACCES ? 40 : 41);
	}
	waitpid(p, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		ESCAPED("the memfd copy of /bin/true ran from %s", path);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 40)
		ESCAPED("unexpected status 0x%x", st);
	BLOCKED("execve(/proc/self/fd/N of a memfd): EACCES");
}
