/* Execs /bin/true at the kernel's own bounds (fs/exec.c: a quarter of
 * the stack limit for the name, the environment and the argv with a
 * pointer each; MAX_ARG_STRLEN a string), from its own environment, so
 * that bare and harnessed runs can be compared:
 *   static_exec_limit fit      argv exactly at the bound: runs
 *   static_exec_limit over     one byte past it: E2BIG
 *   static_exec_limit longstr  one string of 128 KiB and its NUL: E2BIG
 *   static_exec_limit badenv   an environment it cannot read: EFAULT
 * Prints "ran" (from the child's status) or the errno's name. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char PROG[] = "/bin/true";

static size_t limit(void)
{
	struct rlimit rl;
	size_t l = 6u << 20;

	if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur / 4 < l)
		l = rl.rlim_cur / 4;
	return l < 32u * 4096 ? 32u * 4096 : l;
}

/* argv of PROG and strings of 4,000 bytes, the last cut so that the
 * name, the environment and the argv take exactly budget + extra. */
static char **fill(long extra)
{
	size_t envc = 0, envb = 0, used, room, n = 1;
	char **argv;

	for (char **e = environ; *e; e++, envc++)
		envb += strlen(*e) + 1;
	/* Up to 8 pointers a page-sized string: counted in the loop. */
	argv = calloc(4096, sizeof(*argv));
	argv[0] = (char *)PROG;
	used = sizeof(PROG) + envb + sizeof(PROG);
	for (;;) {
		size_t ptrs = (n + 1 + envc) * sizeof(void *);

		room = limit() - ptrs - used + (size_t)extra;
		if (room <= 4001 + 8)
			break;
		argv[n] = malloc(4001);
		memset(argv[n], 'x', 4000);
		argv[n][4000] = '\0';
		used += 4001;
		n++;
	}
	/* The last string takes what is left, with its NUL and pointer. */
	room = limit() - (n + 1 + envc) * sizeof(void *) - used + (size_t)extra;
	argv[n] = malloc(room);
	memset(argv[n], 'y', room - 1);
	argv[n][room - 1] = '\0';
	argv[n + 1] = NULL;
	return argv;
}

int main(int argc, char **argv)
{
	char **av = NULL, **env = environ;
	const char *m = argc > 1 ? argv[1] : "";
	int st;
	pid_t p;

	if (!strcmp(m, "fit"))
		av = fill(0);
	else if (!strcmp(m, "over"))
		av = fill(1);
	else if (!strcmp(m, "longstr")) {
		av = calloc(3, sizeof(*av));
		av[0] = (char *)PROG;
		av[1] = malloc(32 * 4096 + 1);
		memset(av[1], 'z', 32 * 4096);
		av[1][32 * 4096] = '\0';
	} else if (!strcmp(m, "badenv")) {
		static char *one[] = {(char *)PROG, NULL};

		av = one;
		env = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	} else {
		fprintf(stderr,
			"usage: static_exec_limit fit|over|longstr|badenv\n");
		return 2;
	}
	p = fork();
	if (p == 0) {
		syscall(SYS_execve, PROG, av, env);
		printf("%s\n", strerrorname_np(errno));
		fflush(stdout);
		_exit(99);
	}
	if (waitpid(p, &st, 0) != p)
		return 1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		printf("ran\n");
	return 0;
}
