/* A new user namespace (all capabilities inside), then a mount. */
#include "escape.h"

#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int main(void)
{
	int r = unshare(CLONE_NEWUSER), e = errno, st;
	int r2 = unshare(CLONE_NEWNS), e2 = errno;
	long c;

	if (r == 0) {
		if (!mount("none", "/tmp", "tmpfs", 0, NULL))
			ESCAPED("user namespace, then tmpfs mounted on /tmp");
		ESCAPED("unshare(CLONE_NEWUSER) worked");
	}
	if (r2 == 0)
		ESCAPED("unshare(CLONE_NEWNS) worked");
	/* The same through clone(2) directly. */
	c = syscall(__NR_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (c == 0)
		_exit(0);
	if (c > 0) {
		waitpid((pid_t)c, &st, 0);
		ESCAPED("clone(CLONE_NEWUSER) made a child");
	}
	if (e != EPERM || e2 != EPERM || errno != EPERM)
		ESCAPED("unexpected errno %d/%d/%d", e, e2, errno);
	BLOCKED("unshare/clone with CLONE_NEWUSER or CLONE_NEWNS: EPERM");
}
