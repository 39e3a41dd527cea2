/* ptrace of the supervisor and of a sibling. */
#include "escape.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

int main(void)
{
	pid_t sup = find_supervisor(), sib = spawn_sleeper();
	long r1 = -1, r2, r3;
	int e1 = 0, e2, e3;

	if (sup > 0) {
		r1 = ptrace(PTRACE_ATTACH, sup, 0, 0);
		e1 = errno;
	}
	r2 = ptrace(PTRACE_ATTACH, sib, 0, 0);
	e2 = errno;
	r3 = ptrace(PTRACE_SEIZE, sib, 0, 0);
	e3 = errno;
	kill(sib, SIGKILL);
	waitpid(sib, NULL, 0);
	if (sup <= 0)
		ESCAPED("supervisor not found in the parent chain");
	if (!r1 || !r2 || !r3)
		ESCAPED("attached (supervisor %ld, sibling %ld/%ld)", r1, r2,
			r3);
	if (e1 != EPERM || e2 != EPERM || e3 != EPERM)
		ESCAPED("unexpected errno %d/%d/%d", e1, e2, e3);
	BLOCKED("PTRACE_ATTACH supervisor %d and sibling: EPERM", (int)sup);
}
