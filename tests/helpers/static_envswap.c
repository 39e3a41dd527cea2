/* A static program (no shim) whose thread rewrites its exec's
 * environment while the exec is decided: what the kernel copies is
 * then not what the kernel layer read, recorded and approved, unless
 * the exec gate holds the new image to it (test_attack19a.py).
 *
 *   static_envswap PROG N
 *       N times: a child execs PROG with the environment "MODE=safe"
 *       alone while a thread of its own flips those bytes between
 *       "safe" and "evil"; prints "killed PID" for a child the exec
 *       gate killed, then "attempts N killed K". */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char mode[] = "MODE=safe";

/* Byte by byte through a volatile pointer: each store is made. */
static void *flipper(void *arg)
{
	volatile char *m = mode + 5;

	(void)arg;
	for (;;)
		for (int k = 0; k < 2; k++)
			for (int i = 0; i < 4; i++)
				m[i] = (k ? "safe" : "evil")[i];
	return NULL;
}

static void child(char *prog)
{
	char *av[] = {prog, NULL}, *env[] = {mode, NULL};
	pthread_t th;

	if (pthread_create(&th, NULL, flipper, NULL))
		_exit(2);
	execve(prog, av, env);
	_exit(3);
}

int main(int argc, char **argv)
{
	int n, killed = 0;

	if (argc != 3)
		return 2;
	n = atoi(argv[2]);
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		int st;

		if (p < 0)
			return 2;
		if (!p)
			child(argv[1]);
		if (waitpid(p, &st, 0) != p)
			return 2;
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) {
			printf("killed %d\n", (int)p);
			killed++;
		}
	}
	printf("attempts %d killed %d\n", n, killed);
	return 0;
}
