/* A static program (no shim) for the thirty-third attack review, part c:
 * the exec gate's bookkeeping of threads that exec at once.
 *
 *   static_attack33c texec K N   K children, one after the other, each
 *       with N threads that execve /bin/echo C<pid>T<i> at once: one
 *       wins the kernel's de_thread, the others die (some while their
 *       exec is decided, before its answer)
 *   static_attack33c lexec K     K children, each with a thread that
 *       execs /bin/sleep 30 while its leader execs /bin/sleep 31; then
 *       prints "ran PID ARG" for each once it runs (the one that won,
 *       read from /proc) and execs /bin/echo marker, the children left
 *       running to the session's end
 *   static_attack33c killgate K  K children, one after the other, each
 *       execs /bin/sleep 30 and is SIGKILLed by this program as soon
 *       as its cmdline says sleep (while the exec gate looks at it)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Held for writing until every thread is made: then they all go. */
static pthread_rwlock_t go = PTHREAD_RWLOCK_INITIALIZER;

struct ex {
	const char *path;
	char *argv[3];
};

static void *execer(void *arg)
{
	struct ex *x = arg;

	pthread_rwlock_rdlock(&go);
	syscall(SYS_execve, x->path, x->argv, environ);
	return NULL;
}

static struct ex *ex_new(const char *path, const char *a0, const char *a1)
{
	struct ex *x = calloc(1, sizeof(*x));

	x->path = path;
	x->argv[0] = strdup(a0);
	x->argv[1] = strdup(a1);
	return x;
}

static _Noreturn void threads_exec(int n)
{
	pthread_t th;
	char tag[64];

	pthread_rwlock_wrlock(&go);
	for (int i = 0; i < n; i++) {
		snprintf(tag, sizeof(tag), "C%dT%d", (int)getpid(), i);
		pthread_create(&th, NULL, execer,
			       ex_new("/bin/echo", "echo", tag));
	}
	pthread_rwlock_unlock(&go);
	for (;;)
		pause();
}

static int texec(int k, int n)
{
	for (int i = 0; i < k; i++) {
		pid_t c = fork();

		if (c == 0)
			threads_exec(n);
		waitpid(c, NULL, 0);
	}
	return 0;
}

static _Noreturn void leader_exec(void)
{
	pthread_t th;

	pthread_create(&th, NULL, execer, ex_new("/bin/sleep", "sleep", "30"));
	execer(ex_new("/bin/sleep", "sleep", "31"));
	_exit(127);
}

/* Which sleep c runs once it runs one (its cmdline read from /proc):
 * printed as "ran PID ARG"; false while it runs none yet. */
static bool print_ran(pid_t c)
{
	char path[64], buf[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)c);
	if (!(f = fopen(path, "r")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (strcmp(buf, "sleep") || n <= 6)
		return false;
	printf("ran %d %s\n", (int)c, buf + 6);
	return true;
}

/* Then the root execs /bin/echo marker: each exec of a leader that
 * lost to its thread's must be recorded as not run before that. */
static int lexec(int k)
{
	pid_t *c = calloc((size_t)k, sizeof(*c));
	char *marker[] = {"echo", "marker", NULL};

	for (int i = 0; i < k; i++)
		if ((c[i] = fork()) == 0)
			leader_exec();
	for (int i = 0; i < k; i++)
		while (!print_ran(c[i]))
			usleep(1000);
	syscall(SYS_execve, "/bin/echo", marker, environ);
	return 1;
}

/* Whether c's image is sleep (read from /proc: the exec is done, its
 * gate look under way or over). */
static bool runs_sleep(pid_t c)
{
	char path[64], buf[8] = "";
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)c);
	if ((fd = open(path, O_RDONLY)) < 0)
		return false;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	close(fd);
	return !strcmp(buf, "sleep");
}

static void spin_us(long us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000 +
		   (t.tv_nsec - t0.tv_nsec) / 1000 <
	       us);
}

static int killgate(int k)
{
	char *argv[] = {"sleep", "30", NULL};
	int st, killed = 0;
	size_t n = 0, big = 100u << 10;
	char **env;

	/* A large environment (8 strings of 100 KiB, each under the
	 * kernel's 128 KiB): the gate's read of it takes a while. */
	while (environ[n])
		n++;
	env = calloc(n + 9, sizeof(*env));
	memcpy(env, environ, n * sizeof(*env));
	for (int j = 0; j < 8; j++) {
		char *pad = malloc(big + 8);

		snprintf(pad, 8, "PAD%d=", j);
		memset(pad + 5, 'x', big);
		pad[big + 5] = '\0';
		env[n + (size_t)j] = pad;
	}
	for (int i = 0; i < k; i++) {
		pid_t c = fork();

		if (c == 0) {
			syscall(SYS_execve, "/bin/sleep", argv, env);
			_exit(127);
		}
		while (!runs_sleep(c) && waitpid(c, &st, WNOHANG) == 0)
			;
		spin_us((i % 40) * 25); /* into the gate's look, at times */
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
		killed += WIFSIGNALED(st);
	}
	printf("killed %d\n", killed);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 3 && !strcmp(argv[1], "texec"))
		return texec(atoi(argv[2]), atoi(argv[3]));
	if (argc > 2 && !strcmp(argv[1], "killgate"))
		return killgate(atoi(argv[2]));
	if (argc > 2 && !strcmp(argv[1], "lexec"))
		return lexec(atoi(argv[2]));
	fprintf(stderr, "usage\n");
	return 2;
}
