/* The nineteenth attack review's (a) static programs: raw system calls,
 * no shim.
 *
 *   static_attack19a sharedcwd A B NAME
 *       exec ./NAME from A while a process sharing the cwd (clone
 *       CLONE_FS, not a thread) moves it to B once the exec ran;
 *       prints "clone refused ERRNO" when that clone is refused
 *   static_attack19a threadcwd A B NAME N
 *       N times: a child execs ./NAME from A while a thread of its own
 *       moves the shared cwd between A and B; prints "exec PID" for
 *       each, and "killed PID" for one the exec gate killed
 *   static_attack19a askcwd A B PROG ARG...
 *       exec PROG ARG... from A while a thread of its own moves the cwd
 *       to B half a second later (while a question about it waits)
 *   static_attack19a askenv A - VAR=VALUE PROG ARG...
 *       exec PROG ARG... from A with VAR=VALUE its only environment
 *   static_attack19a proccwd A B NAME
 *       exec /proc/CHILD/cwd/NAME, CHILD a process of its own in A that
 *       moves to B once the exec ran (no cwd shared, nothing written)
 *   static_attack19a twice PROG OTHER
 *       exec PROG push origin main in a child, rename OTHER over PROG,
 *       then exec it again in another child
 *   static_attack19a creat PATH       open(PATH, O_CREAT|O_WRONLY)
 *   static_attack19a mkdir PATH       mkdir(PATH)
 *   static_attack19a bind PATH        bind a unix socket to PATH
 *   static_attack19a watch PATH       inotify_add_watch(PATH)
 *   static_attack19a truncate PATH    truncate(PATH, 0)
 *   static_attack19a chmod PATH       chmod(PATH, 0600)
 * The last six print "ok" or "err ERRNO". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir_a, *dir_b;
static pid_t parent;
static int mover_stays;
static char stack[65536];

/* Moves the shared cwd to B once the parent's image is the script
 * (its comm is the script's name): after the exec gate's look. */
static int mover(void *arg)
{
	const char *name = arg;
	char p[64], buf[64];

	int fd;

	snprintf(p, sizeof(p), "/proc/%d/comm", (int)parent);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		_exit(1);
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

		if (n < 0)
			_exit(0);
		buf[n] = '\0';
		if (!strncmp(buf, name, strlen(name) > 15 ? 15 : strlen(name)))
			break;
	}
	if (mover_stays)
		usleep(300); /* past the exec gate's look */
	if (chdir(dir_b))
		_exit(1);
	if (mover_stays)
		sleep(1); /* its /proc/PID/cwd stays */
	_exit(0);
}

/* A child in A that moves to B once its parent's image is NAME. */
static int proc_cwd(const char *name)
{
	char path[PATH_MAX];
	char *av[] = {path, NULL};
	int ready[2];
	pid_t kid;
	char c;

	parent = getpid();
	if (pipe(ready) || (kid = fork()) < 0)
		return 2;
	if (!kid) {
		if (chdir(dir_a) || write(ready[1], "x", 1) != 1)
			_exit(2);
		mover_stays = 1;
		mover((void *)name);
	}
	if (read(ready[0], &c, 1) != 1)
		return 2;
	snprintf(path, sizeof(path), "/proc/%d/cwd/%s", (int)kid, name);
	execv(path, av);
	printf("exec err %d\n", errno);
	return 1;
}

static int shared_cwd(const char *name)
{
	char rel[256];
	char *av[] = {rel, NULL};

	snprintf(rel, sizeof(rel), "./%s", name);
	if (chdir(dir_a))
		return 2;
	parent = getpid();
	if (clone(mover, stack + sizeof(stack), CLONE_FS | SIGCHLD,
		  (void *)name) < 0)
		printf("clone refused %d\n", errno);
	fflush(stdout);
	execv(rel, av);
	printf("exec err %d\n", errno);
	return 1;
}

static volatile int stop;

static void *flipper(void *arg)
{
	(void)arg;
	while (!stop)
		if (chdir(dir_b) || chdir(dir_a))
			break;
	return NULL;
}

static void thread_cwd_once(const char *name)
{
	char rel[256];
	char *av[] = {rel, NULL};
	pthread_t th;

	snprintf(rel, sizeof(rel), "./%s", name);
	if (chdir(dir_a) || pthread_create(&th, NULL, flipper, NULL))
		_exit(2);
	usleep(200);
	execv(rel, av);
	_exit(3);
}

static int thread_cwd(const char *name, int n)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			return 2;
		if (!pid)
			thread_cwd_once(name);
		printf("exec %d\n", (int)pid);
		fflush(stdout);
		if (waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
		    WTERMSIG(st) == SIGKILL)
			printf("killed %d\n", (int)pid);
		fflush(stdout);
	}
	return 0;
}

static void *later(void *arg)
{
	(void)arg;
	usleep(500000);
	if (chdir(dir_b))
		_exit(4);
	return NULL;
}

static int ask_cwd(char **argv)
{
	pthread_t th;

	if (chdir(dir_a) || pthread_create(&th, NULL, later, NULL))
		return 2;
	execv(argv[0], argv);
	printf("exec err %d\n", errno);
	return 1;
}

static int ask_env(char *var, char **argv)
{
	char *envp[] = {var, NULL};

	if (chdir(dir_a))
		return 2;
	execve(argv[0], argv, envp);
	printf("exec err %d\n", errno);
	return 1;
}

static int twice(char *prog, const char *other)
{
	char *av[] = {prog, "push", "origin", "main", NULL};

	for (int i = 0; i < 2; i++) {
		pid_t p = fork();
		int st;

		if (p < 0)
			return 2;
		if (!p) {
			execv(prog, av);
			_exit(3);
		}
		waitpid(p, &st, 0);
		if (!i && rename(other, prog))
			return 2;
	}
	return 0;
}

static void said(long r)
{
	if (r < 0)
		printf("err %d\n", errno);
	else
		printf("ok\n");
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "creat")) {
		said(open(argv[2], O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
		return 0;
	}
	if (!strcmp(argv[1], "mkdir")) {
		said(mkdir(argv[2], 0755));
		return 0;
	}
	if (!strcmp(argv[1], "bind")) {
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", argv[2]);
		said(s < 0 ? s : bind(s, (struct sockaddr *)&sun, sizeof(sun)));
		return 0;
	}
	if (!strcmp(argv[1], "truncate")) {
		said(truncate(argv[2], 0));
		return 0;
	}
	if (!strcmp(argv[1], "chmod")) {
		said(chmod(argv[2], 0600));
		return 0;
	}
	if (!strcmp(argv[1], "watch")) {
		int i = inotify_init1(IN_CLOEXEC);

		said(i < 0 ? i : inotify_add_watch(i, argv[2], IN_ALL_EVENTS));
		return 0;
	}
	if (!strcmp(argv[1], "twice") && argc > 3)
		return twice(argv[2], argv[3]);
	if (argc < 5)
		return 2;
	dir_a = argv[2];
	dir_b = argv[3];
	if (!strcmp(argv[1], "askenv"))
		return ask_env(argv[4], argv + 5);
	if (!strcmp(argv[1], "askcwd"))
		return ask_cwd(argv + 4);
	if (!strcmp(argv[1], "proccwd"))
		return proc_cwd(argv[4]);
	if (!strcmp(argv[1], "sharedcwd"))
		return shared_cwd(argv[4]);
	if (!strcmp(argv[1], "threadcwd") && argc > 5)
		return thread_cwd(argv[4], atoi(argv[5]));
	return 2;
}
