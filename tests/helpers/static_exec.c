/* A static program (no shim) for the exec gate (supervisor/execgate.c):
 *
 *   static_exec exec PATH [ARGV0 ARGS...]   execve; prints "err ENAME"
 *   static_exec race ALLOWED DENIED SECS    per attempt: fork, start a
 *       thread flipping the exec path buffer between ALLOWED and DENIED
 *       in a tight loop, execve the buffer from the main thread
 *   static_exec racevm ALLOWED DENIED SECS  per attempt: a CLONE_VM
 *       child execs the buffer while the parent flips it
 *   static_exec raceshm ALLOWED DENIED SECS per attempt: a forked child
 *       (its own address space) execs the buffer, a MAP_SHARED page
 *       the parent flips
 *
 * The race modes print "attempts N ran-allowed A refused R killed K
 * other O" (killed: SIGKILL, the gate's answer to a swapped exec). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char *volatile cur; /* the path buffer execve reads */
static const char *paths[2];
static atomic_int stop;

static const char *ename(int e)
{
	switch (e) {
	case EACCES:
		return "EACCES";
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case E2BIG:
		return "E2BIG";
	case ENOEXEC:
		return "ENOEXEC";
	default:
		return "other";
	}
}

static void *flipper(void *arg)
{
	size_t n = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		/* Same-length copies: every state is one of the two paths
		 * or a mix of both, never a shorter string. */
		strcpy(cur, paths[n++ & 1]);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int vm_child(void *arg)
{
	char *argv[] = {"x", NULL};

	(void)arg;
	execve(cur, argv, environ);
	_exit(errno == EACCES ? 13 : 99);
}

enum race_mode { RACE_THREAD, RACE_VM, RACE_SHM };

static int race(const char *allowed, const char *denied, double secs,
		enum race_mode mode)
{
	unsigned long n = 0, ok = 0, refused = 0, killed = 0, other = 0;
	double end = now() + secs;
	size_t len =
	    strlen(allowed) > strlen(denied) ? strlen(allowed) : strlen(denied);
	static char stack[65536] __attribute__((aligned(16)));
	pthread_t th;

	paths[0] = allowed;
	paths[1] = denied;
	/* Shared so that the CLONE_VM or forked child and the parent see
	 * one buffer. */
	cur = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cur == MAP_FAILED || len >= 4096)
		return 2;
	strcpy(cur, allowed);
	if (mode != RACE_THREAD && pthread_create(&th, NULL, flipper, NULL))
		return 2;
	while (now() < end) {
		int st;
		pid_t p;

		if (mode == RACE_VM) {
			p = clone(vm_child, stack + sizeof(stack),
				  CLONE_VM | SIGCHLD, NULL);
		} else {
			p = fork();
			if (p == 0) {
				char *argv[] = {"x", NULL};

				if (mode == RACE_THREAD &&
				    pthread_create(&th, NULL, flipper, NULL))
					_exit(98);
				execve(cur, argv, environ);
				_exit(errno == EACCES ? 13 : 99);
			}
		}
		if (p < 0)
			return 2;
		n++;
		if (waitpid(p, &st, 0) < 0)
			return 2;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 13)
			refused++;
		else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			killed++;
		else
			other++;
	}
	atomic_store(&stop, 1);
	if (mode != RACE_THREAD)
		pthread_join(th, NULL);
	printf(
	    "attempts %lu ran-allowed %lu refused %lu killed %lu other %lu\n",
	    n, ok, refused, killed, other);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "exec")) {
		char *def[] = {argv[2], NULL};

		execve(argv[2], argc > 3 ? argv + 3 : def, environ);
		printf("err %s\n", ename(errno));
		return 1;
	}
	if (argc == 5 && !strncmp(argv[1], "race", 4))
		return race(argv[2], argv[3], atof(argv[4]),
			    !strcmp(argv[1], "racevm")	  ? RACE_VM
			    : !strcmp(argv[1], "raceshm") ? RACE_SHM
							  : RACE_THREAD);
	fprintf(stderr, "usage: static_exec exec PATH [ARGV...] | "
			"race|racevm|raceshm ALLOWED DENIED SECS\n");
	return 2;
}
