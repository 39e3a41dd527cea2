/* A second seccomp listener (the agent would answer its own syscalls);
 * a plain filter must still be allowed. */
#include "escape.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int main(void)
{
	struct sock_filter f = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {1, &f};
	long fd, plain;
	int e, st;
	pid_t p;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	fd = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	e = errno;
	if (fd >= 0)
		ESCAPED("got a second listener: fd %ld", fd);
	if (e != EPERM)
		ESCAPED("unexpected errno %d", e);
	p = fork();
	if (p == 0) {
		plain =
		    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
		_exit(plain ? 1 : 0);
	}
	waitpid(p, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		ESCAPED("(compat) a plain seccomp filter was refused");
	BLOCKED("seccomp NEW_LISTENER: EPERM; a plain filter still loads");
}
