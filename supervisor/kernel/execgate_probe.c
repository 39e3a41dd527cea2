/* The exec gate's probe (--doctor); see execgate.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/execgate.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int hx_execgate_probe(void)
{
	int p[2], e = 0, st;
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		e = -errno;
		close(p[0]);
		close(p[1]);
		return e;
	}
	if (pid == 0) {
		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)(uintptr_t)HX_EXECGATE_OPTS))
		e = -errno;
	kill(pid, SIGKILL);
	close(p[1]);
	while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
	return e;
}
