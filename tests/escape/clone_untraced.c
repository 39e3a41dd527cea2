/* A child made with CLONE_UNTRACED is not auto-attached by the exec
 * gate's tracer: its execs go unchecked at the exec event, and without a
 * cgroup it would outlive a killed harness-exec (PTRACE_O_EXITKILL ends
 * tracees only). The raw clone must fail; plain fork must still work. */
#include "escape.h"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int main(void)
{
	long r = syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
	int e = errno, st;
	pid_t pid;

	if (r == 0)
		_exit(0);
	if (r > 0) {
		waitpid((pid_t)r, NULL, 0);
		ESCAPED("clone(CLONE_UNTRACED) made a child");
	}
	if (e != EPERM)
		ESCAPED("clone(CLONE_UNTRACED) errno %d, not EPERM", e);
	pid = fork();
	if (pid == 0)
		_exit(3);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 3)
		ESCAPED("(compat) fork broke");
	BLOCKED("clone(CLONE_UNTRACED): EPERM; fork works");
}
