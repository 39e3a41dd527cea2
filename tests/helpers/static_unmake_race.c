/* static_unmake_race DIR VICTIMDIR NAME N: in DIR (writable), "d" a
 * directory and "s" a symlink to VICTIMDIR; one thread exchanges them
 * while the other opens d/NAME O_WRONLY|O_CREAT with no descriptor free
 * (EMFILE), N times, removing what is left. Harness removes the file
 * such an open made: should that removal walk d after the swap, it
 * removes VICTIMDIR/NAME, which the policy keeps the agent from
 * writing. Prints the outcomes' counts. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/fs.h>

static volatile int stop;
static const char *name;

static void *swapper(void *arg)
{
	(void)arg;
	while (!stop)
		syscall(SYS_renameat2, AT_FDCWD, "d", AT_FDCWD, "s",
			RENAME_EXCHANGE);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	char p[4096];
	struct rlimit rl;
	int n, i, fd, dfd, made = 0, emfile = 0, other = 0;

	if (argc != 5 || chdir(argv[1]))
		return 2;
	name = argv[3];
	n = atoi(argv[4]);
	mkdir("d", 0755);
	if (symlink(argv[2], "s") && errno != EEXIST)
		perror("symlink");
	dfd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 3;
	snprintf(p, sizeof(p), "d/%s", name);
	if (pthread_create(&th, NULL, swapper, NULL))
		return 4;
	/* The table full: every open fails with EMFILE. */
	for (i = 0; i < 64; i++)
		if (open("/dev/null", O_RDONLY) < 0)
			break;
	fd = open("/dev/null", O_RDONLY);
	rl.rlim_cur = (rlim_t)fd;
	rl.rlim_max = 1024;
	close(fd);
	setrlimit(RLIMIT_NOFILE, &rl);
	for (i = 0; i < n; i++) {
		fd = (int)syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CREAT,
				  0644);
		if (fd >= 0) {
			made++;
			close(fd);
		} else if (errno == EMFILE)
			emfile++;
		else
			other++;
		unlinkat(dfd, name, 0);
	}
	stop = 1;
	pthread_join(th, NULL);
	printf("made %d emfile %d other %d\n", made, emfile, other);
	return 0;
}
