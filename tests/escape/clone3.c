/* clone3 must say ENOSYS (its flags are behind a pointer BPF cannot
 * read) while pthread_create and posix_spawn, which fall back to clone,
 * still work. */
#include "escape.h"

#include <linux/sched.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;

static void *thr(void *arg)
{
	return arg;
}

int main(void)
{
	struct clone_args ca;
	long r;
	int e, st;
	pthread_t t;
	void *ret = NULL;
	pid_t pid;
	char *argv[] = {"true", NULL};

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_NEWUSER;
	ca.exit_signal = SIGCHLD;
	r = syscall(__NR_clone3, &ca, sizeof(ca));
	e = errno;
	if (r == 0)
		_exit(0);
	if (r > 0) {
		waitpid((pid_t)r, NULL, 0);
		ESCAPED("clone3(CLONE_NEWUSER) made a child");
	}
	if (e != ENOSYS)
		ESCAPED("clone3 errno %d, not ENOSYS", e);
	if (pthread_create(&t, NULL, thr, (void *)7) || pthread_join(t, &ret) ||
	    ret != (void *)7)
		ESCAPED("(compat) pthread_create broke");
	if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) ||
	    waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		ESCAPED("(compat) posix_spawn of /bin/true broke");
	BLOCKED("clone3: ENOSYS; pthread_create and posix_spawn work");
}
