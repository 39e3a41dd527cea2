/* static_rename_swap DIR SECONDS DEST: in DIR (writable), "f" a file and "d"
 * a directory holding inner/x. One thread exchanges "d" and "f" by name,
 * another keeps making a file "f" (O_CREAT) whenever the name is free,
 * and the main thread renames "f" to DEST (for "out" below), decided as the
 * move of a file. A policy that refuses writes beneath out/inner refuses the
 * move of the directory there. Counts the renames after which a directory is at
 * "out": "moved" when the call succeeded, "kept" when it was refused yet the
 * directory stayed (the harness's undo blocked); the first such ends the run
 * (the policy keeps the tree from going anywhere else). Prints "renames N done
 * D moved M kept K". */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

static volatile int stop;

static void *swapper(void *arg)
{
	(void)arg;
	while (!stop)
		syscall(SYS_renameat2, AT_FDCWD, "d", AT_FDCWD, "f",
			RENAME_EXCHANGE);
	return NULL;
}

static void *filler(void *arg)
{
	(void)arg;
	while (!stop) {
		int fd = open("f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

static bool is_dir(const char *p)
{
	struct stat st;

	return !lstat(p, &st) && S_ISDIR(st.st_mode);
}

int main(int argc, char **argv)
{
	long renames = 0, done = 0, moved = 0, kept = 0;
	const char *out;
	pthread_t s, f;
	time_t end;
	int fd;

	if (argc != 4 || chdir(argv[1]))
		return 2;
	out = argv[3];
	end = time(NULL) + atoi(argv[2]);
	if (mkdir("d", 0755) || mkdir("d/inner", 0755) ||
	    (fd = open("d/inner/x", O_WRONLY | O_CREAT, 0644)) < 0)
		return 2;
	close(fd);
	pthread_create(&s, NULL, swapper, NULL);
	pthread_create(&f, NULL, filler, NULL);
	while (time(NULL) < end) {
		int r = rename("f", out);

		renames++;
		done += !r;
		if (is_dir(out)) {
			*(r ? &kept : &moved) += 1;
			break;
		}
		unlink(out);
	}
	stop = 1;
	pthread_join(s, NULL);
	pthread_join(f, NULL);
	printf("renames %ld done %ld moved %ld kept %ld\n", renames, done,
	       moved, kept);
	return 0;
}
