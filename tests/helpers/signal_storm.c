/* A dynamic program (under the shim) whose calls are hit by a storm of
 * signals it handles with SA_RESTART, as a C program, a Go runtime or
 * Node's does: a call broken off while the supervisor decides it is
 * restarted by the kernel, unseen by the shim. Each of N rounds creates
 * DIR/fI, makes DIR/dI, renames it to DIR/eI and unlinks DIR/fI; a
 * second process signals this one all the while.
 *
 *   signal_storm DIR N   prints "errors E" then one line a failure */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_signal(int sig)
{
	(void)sig;
}

static int fail(int *errors, const char *what, int i)
{
	if ((*errors)++ < 5)
		printf("%s %d: %s\n", what, i, strerror(errno));
	return -1;
}

static int round_of(const char *dir, int i, int *errors)
{
	char f[4096], d[4096], e[4096];
	int fd;

	snprintf(f, sizeof(f), "%s/f%d", dir, i);
	snprintf(d, sizeof(d), "%s/d%d", dir, i);
	snprintf(e, sizeof(e), "%s/e%d", dir, i);
	fd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail(errors, "open", i);
	if (write(fd, "x", 1) != 1)
		fail(errors, "write", i);
	close(fd);
	if (mkdir(d, 0755))
		return fail(errors, "mkdir", i);
	if (rename(d, e))
		return fail(errors, "rename", i);
	if (unlink(f))
		return fail(errors, "unlink", i);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	pid_t parent = getpid(), kid;
	int n, errors = 0;

	if (argc != 3 || (n = atoi(argv[2])) <= 0)
		return 2;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return 2;
	kid = fork();
	if (kid == 0) {
		while (kill(parent, SIGUSR1) == 0)
			;
		_exit(0);
	}
	if (kid < 0)
		return 2;
	for (int i = 0; i < n; i++)
		round_of(argv[1], i, &errors);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	printf("errors %d\n", errors);
	return 0;
}
