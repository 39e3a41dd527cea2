/* An agent that exhausts memory with many small processes:
 *   static_oom_flood KILLS KIB
 * forks children that each touch KIB KiB and wait, one after another,
 * until KILLS of them have been killed by SIGKILL (the OOM killer, under
 * a memory limit) or 2000 were made; then ends the rest and prints
 * "killed N". Each child is a little smaller than harness-exec's
 * resident set when KIB is, and this parent is smaller still. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_KIDS 2000

static pid_t kids[MAX_KIDS];

static void child(size_t kib)
{
	char *m = mmap(NULL, kib << 10, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		_exit(1);
	memset(m, 1, kib << 10);
	for (;;)
		pause();
}

/* Reaps what has ended; returns how many of them a SIGKILL ended. */
static int reap(int n)
{
	int st, kills = 0;

	for (int i = 0; i < n; i++)
		if (kids[i] > 0 && waitpid(kids[i], &st, WNOHANG) == kids[i]) {
			kids[i] = 0;
			kills += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
		}
	return kills;
}

int main(int argc, char **argv)
{
	struct timespec pace = {0, 5 * 1000 * 1000};
	int want = argc > 2 ? atoi(argv[1]) : 5, kills = 0, n;
	size_t kib = argc > 2 ? strtoul(argv[2], NULL, 10) : 4096;

	for (n = 0; n < MAX_KIDS && kills < want; n++) {
		if ((kids[n] = fork()) == 0)
			child(kib);
		if (kids[n] < 0)
			break;
		nanosleep(&pace, NULL);
		kills += reap(n + 1);
	}
	for (int i = 0; i < n; i++)
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	printf("killed %d\n", kills);
	return 0;
}
