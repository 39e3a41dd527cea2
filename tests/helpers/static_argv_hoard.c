/* Threads whose execs of argvs the kernel refuses (more than a quarter
 * of the stack limit: E2BIG) after the supervisor read and approved
 * them, each thread then alive. What the supervisor keeps for them must
 * not grow with the argv.
 *
 *   static_argv_hoard N SECONDS
 *       N threads each try execve("/bin/true", ~6 MB of argv: 46 times
 *       one 128 KiB string); prints "e2big K" (K of N failed so), then
 *       "ready", holds the threads SECONDS, exits 0 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define NSTR 46

static char *big;
static atomic_int failed, done;

static void *one(void *arg)
{
	char *argv[NSTR + 2];

	(void)arg;
	argv[0] = "true";
	for (int i = 1; i <= NSTR; i++)
		argv[i] = big;
	argv[NSTR + 1] = NULL;
	execve("/bin/true", argv, (char *[]){NULL});
	if (errno == E2BIG)
		atomic_fetch_add(&failed, 1);
	atomic_fetch_add(&done, 1);
	pause();
	return NULL;
}

int main(int argc, char **argv)
{
	struct rlimit st = {8u << 20, 8u << 20};
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_attr_t at;
	pthread_t th;

	/* The kernel then takes 2 MiB of argv (a quarter of the stack). */
	setrlimit(RLIMIT_STACK, &st);
	big = malloc(128u << 10);
	memset(big, 'a', (128u << 10) - 1);
	big[(128u << 10) - 1] = '\0';
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64u << 10);
	for (int i = 0; i < n; i++)
		if (pthread_create(&th, &at, one, NULL))
			break;
	while (atomic_load(&done) < n)
		usleep(10000);
	printf("e2big %d\nready\n", atomic_load(&failed));
	fflush(stdout);
	sleep(argc > 2 ? (unsigned)atoi(argv[2]) : 1);
	return 0;
}
