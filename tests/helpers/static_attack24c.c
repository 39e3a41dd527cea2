/* The twenty-fourth attack review's (c) static programs: raw system
 * calls, no shim.
 *
 *   static_attack24c unlinked NAME HOW
 *       opens NAME read-only (O_PATH for the *at forms), removes that
 *       name, then changes the file through the fd: HOW is fchmod,
 *       fchmodat2, fchown, futimens, utimensat, fsetxattr or chattr.
 *       Prints "ok" or "err ERRNO".
 *   static_attack24c casefold DIR
 *       chattr +F on DIR (FS_IOC_SETFLAGS adding FS_CASEFOLD_FL), then
 *       chattr +d (nodump); prints "ok" or "err ERRNO" for each.
 *   static_attack24c nodump NAME
 *       makes itself non-dumpable (as ssh and gpg do), then fchmod(fd,
 *       0640) of NAME opened read-only; prints "ok" or "err ERRNO".
 *   static_attack24c swap NAME N
 *       opens NAME read-only, then N times fchmod(fd, 0666) while a
 *       thread renames NAME away and a file of its own onto NAME and
 *       back, so that the name the fd's link read is the other file's
 *       when the decision looks; prints "changed K" (K calls that did
 *       not fail).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static int say(long r)
{
	if (r < 0)
		printf("err %s\n", strerrorname_np(errno));
	else
		printf("ok\n");
	return r < 0;
}

static int unlinked(const char *name, const char *how)
{
	bool at = !strcmp(how, "fchmodat2") || !strcmp(how, "fchown") ||
		  !strcmp(how, "utimensat");
	struct timespec ts[2] = {{1, 0}, {1, 0}};
	int fd = open(name, at ? O_PATH : O_RDONLY), fl = 0;

	if (fd < 0 || unlink(name))
		return say(-1);
	if (!strcmp(how, "fchmod"))
		return say(fchmod(fd, 0666));
	if (!strcmp(how, "fchmodat2"))
		return say(syscall(SYS_fchmodat2, fd, "", 0666, AT_EMPTY_PATH));
	if (!strcmp(how, "fchown"))
		return say(
		    syscall(SYS_fchownat, fd, "", -1, getgid(), AT_EMPTY_PATH));
	if (!strcmp(how, "futimens"))
		return say(syscall(SYS_utimensat, fd, NULL, ts, 0));
	if (!strcmp(how, "utimensat"))
		return say(syscall(SYS_utimensat, fd, "", ts, AT_EMPTY_PATH));
	if (!strcmp(how, "fsetxattr"))
		return say(syscall(SYS_fsetxattr, fd, "user.hx", "1", 1, 0));
	if (!strcmp(how, "chattr")) {
		if (ioctl(fd, FS_IOC_GETFLAGS, &fl))
			return say(-1);
		fl |= FS_NODUMP_FL;
		return say(syscall(SYS_ioctl, fd, FS_IOC_SETFLAGS, &fl));
	}
	errno = EINVAL;
	return say(-1);
}

static atomic_bool stop;
static const char *swap_name;

static void *swapper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		rename(swap_name, "hx24c.away");
		rename("hx24c.own", swap_name);
		rename(swap_name, "hx24c.own");
		rename("hx24c.away", swap_name);
	}
	return NULL;
}

static int swap(const char *name, int n)
{
	int fd = open(name, O_RDONLY), own, changed = 0;
	pthread_t th;

	own = open("hx24c.own", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0 || own < 0)
		return say(-1);
	close(own);
	swap_name = name;
	pthread_create(&th, NULL, swapper, NULL);
	for (int i = 0; i < n; i++)
		changed += fchmod(fd, 0666) == 0;
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	printf("changed %d\n", changed);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "unlinked"))
		return unlinked(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "casefold")) {
		int fd = open(argv[2], O_RDONLY | O_DIRECTORY), fl = 0, f2;

		if (fd < 0 || ioctl(fd, FS_IOC_GETFLAGS, &fl))
			return say(-1);
		f2 = fl | FS_CASEFOLD_FL;
		say(syscall(SYS_ioctl, fd, FS_IOC_SETFLAGS, &f2));
		f2 = fl | FS_NODUMP_FL;
		return say(syscall(SYS_ioctl, fd, FS_IOC_SETFLAGS, &f2));
	}
	if (argc == 3 && !strcmp(argv[1], "nodump")) {
		int fd = open(argv[2], O_RDONLY);

		if (fd < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
			return say(-1);
		return say(fchmod(fd, 0640));
	}
	if (argc == 4 && !strcmp(argv[1], "swap"))
		return swap(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: see the source\n");
	return 2;
}
