/* The calls of tests/integration/test_attack7.py, where the kernel layer
 * acts for the agent: built static (no shim), so the kernel layer alone
 * sees them. One line per call: "OK" or the errno's name, then what
 * the call left.
 *
 *   truncate PATH LEN LIMIT   truncate(2) to LEN under RLIMIT_FSIZE
 *                             LIMIT; prints the answer, "sigxfsz N" (the
 *                             SIGXFSZ signals caught) and "size N"
 *   open PATH FLAGS           openat(2), FLAGS: WRONLY|RDWR|CREAT|EXCL|
 *                             TRUNC|APPEND|NOFOLLOW (mode 0644); prints
 *                             the answer and "size N" of PATH. A write
 *                             open of /dev/null comes first, so that the
 *                             call is not the thread's first the kernel
 *                             layer sees (which reads all of its status)
 *   mkdir PATH                rename OLD NEW
 *   connect PATH              a stream connect to the Unix socket PATH
 *   removed DIR               DIR made, entered and removed, "DIR
 *                             (deleted)" made beside it; then a file f
 *                             and a directory sub made in the cwd, and
 *                             ../up: one answer each
 *   tmplink NEW               an O_TMPFILE file in the cwd; a file made
 *                             under the name its /proc link reads
 *                             ("/dir/#INODE (deleted)") with 5 bytes;
 *                             then linkat of /proc/self/fd/N to NEW with
 *                             AT_SYMLINK_FOLLOW: the answer, "size N"
 *                             of NEW (0: the unnamed file linked)
 *   create UMASK PATH KIND    under UMASK (octal), PATH made as KIND:
 *                             file (0666), dir (0777) or fifo (0666);
 *                             prints the answer and "mode M" (octal)
 *   procread PID FILE...      each /proc/PID/FILE opened through openat2
 *                             read-only (and read, but mem): "FILE OK" or
 *                             "FILE ERRNO"; PID 0 is the parent, "child"
 *                             a child of this program
 *   openat2 PATH FLAGS RESOLVE [DIR]   the same through openat2 (PATH
 *                             from DIR opened O_PATH when given), RESOLVE:
 *                             NO_SYMLINKS|NO_MAGICLINKS|NO_XDEV|0
 *   fdopen FILE RESOLVE       FILE opened read-only, then openat2 of
 *                             /proc/self/fd/N read-only with RESOLVE */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

struct name {
	const char *s;
	unsigned long v;
};

static const struct name open_flags[] = {
    {"RDONLY", O_RDONLY}, {"WRONLY", O_WRONLY},	    {"RDWR", O_RDWR},
    {"CREAT", O_CREAT},	  {"EXCL", O_EXCL},	    {"TRUNC", O_TRUNC},
    {"APPEND", O_APPEND}, {"NOFOLLOW", O_NOFOLLOW}, {NULL, 0}};

static const struct name resolve_flags[] = {
    {"0", 0},
    {"NO_SYMLINKS", RESOLVE_NO_SYMLINKS},
    {"NO_MAGICLINKS", RESOLVE_NO_MAGICLINKS},
    {"NO_XDEV", RESOLVE_NO_XDEV},
    {NULL, 0}};

static unsigned long parse(const struct name *t, const char *spec)
{
	char buf[256], *save = NULL, *w;
	unsigned long v = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (w = strtok_r(buf, "|", &save); w; w = strtok_r(NULL, "|", &save)) {
		const struct name *n = t;

		while (n->s && strcmp(n->s, w))
			n++;
		if (!n->s) {
			fprintf(stderr, "unknown flag %s\n", w);
			exit(2);
		}
		v |= n->v;
	}
	return v;
}

static void answer(long r)
{
	if (r < 0)
		printf("%s\n", strerrorname_np(errno));
	else
		printf("OK\n");
}

static void size_of(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		printf("size none\n");
	else
		printf("size %lld\n", (long long)st.st_size);
}

static volatile sig_atomic_t xfsz;

static void on_xfsz(int sig)
{
	(void)sig;
	xfsz++;
}

static long open2(int dirfd, const char *path, unsigned long flags,
		  unsigned long resolve)
{
	struct open_how how = {.flags = flags,
			       .mode = (flags & O_CREAT) ? 0644 : 0,
			       .resolve = resolve};

	return syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	if (!strcmp(c, "truncate") && argc == 5) {
		struct rlimit rl = {strtoull(argv[4], NULL, 10),
				    strtoull(argv[4], NULL, 10)};

		signal(SIGXFSZ, on_xfsz);
		if (setrlimit(RLIMIT_FSIZE, &rl))
			return 2;
		answer(syscall(SYS_truncate, argv[2], atoll(argv[3])));
		printf("sigxfsz %d\n", (int)xfsz);
		size_of(argv[2]);
	} else if (!strcmp(c, "open") && argc == 4) {
		close(open("/dev/null", O_WRONLY | O_CLOEXEC));
		answer(syscall(SYS_openat, AT_FDCWD, argv[2],
			       parse(open_flags, argv[3]), 0644));
		size_of(argv[2]);
	} else if (!strcmp(c, "openat2") && (argc == 5 || argc == 6)) {
		int at =
		    argc == 6 ? open(argv[5], O_PATH | O_DIRECTORY) : AT_FDCWD;

		answer(open2(at, argv[2], parse(open_flags, argv[3]),
			     parse(resolve_flags, argv[4])));
		if (argc == 5)
			size_of(argv[2]);
	} else if (!strcmp(c, "mkdir") && argc == 3) {
		answer(syscall(SYS_mkdir, argv[2], 0755));
	} else if (!strcmp(c, "rename") && argc == 4) {
		answer(syscall(SYS_rename, argv[2], argv[3]));
	} else if (!strcmp(c, "connect") && argc == 3) {
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", argv[2]);
		answer(connect(s, (struct sockaddr *)&sun, sizeof(sun)));
	} else if (!strcmp(c, "removed") && argc == 3) {
		char self[PATH_MAX], other[PATH_MAX];

		snprintf(self, sizeof(self), "../%s", argv[2]);
		snprintf(other, sizeof(other), "../%s (deleted)", argv[2]);
		if (mkdir(argv[2], 0755) || chdir(argv[2]) || rmdir(self) ||
		    mkdir(other, 0755))
			return 2;
		answer(syscall(SYS_openat, AT_FDCWD, "f", O_WRONLY | O_CREAT,
			       0644));
		answer(syscall(SYS_mkdir, "sub", 0755));
		answer(syscall(SYS_mkdir, "../up", 0755));
	} else if (!strcmp(c, "tmplink") && argc == 3) {
		char text[PATH_MAX], p[64];
		int fd = open(".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644), o;
		ssize_t n;

		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		if (fd < 0 || (n = readlink(p, text, sizeof(text) - 1)) <= 0)
			return 2;
		text[n] = '\0';
		o = open(text, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (o < 0 || write(o, "other", 5) != 5)
			return 2;
		close(o);
		answer(syscall(SYS_linkat, AT_FDCWD, p, AT_FDCWD, argv[2],
			       AT_SYMLINK_FOLLOW));
		size_of(argv[2]);
		unlink(text);
	} else if (!strcmp(c, "create") && argc == 5) {
		struct stat st;
		long r;

		umask((mode_t)strtoul(argv[2], NULL, 8));
		if (!strcmp(argv[4], "dir"))
			r = syscall(SYS_mkdir, argv[3], 0777);
		else if (!strcmp(argv[4], "fifo"))
			r = syscall(SYS_mknodat, AT_FDCWD, argv[3],
				    S_IFIFO | 0666, 0);
		else
			r = syscall(SYS_openat, AT_FDCWD, argv[3],
				    O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
		answer(r);
		if (!stat(argv[3], &st))
			printf("mode %o\n", (unsigned)(st.st_mode & 07777));
	} else if (!strcmp(c, "procread") && argc >= 4) {
		pid_t pid = atoi(argv[2]), child = 0;

		if (!strcmp(argv[2], "child") && !(pid = child = fork())) {
			pause();
			_exit(0);
		}
		if (!pid)
			pid = getppid();
		for (int i = 3; i < argc; i++) {
			char p[96], buf[64];
			long fd;

			snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid,
				 argv[i]);
			fd = open2(AT_FDCWD, p, O_RDONLY | O_CLOEXEC, 0);
			if (fd >= 0 && strcmp(argv[i], "mem") &&
			    read((int)fd, buf, sizeof(buf)) < 0)
				fd = -1;
			printf("%s ", argv[i]);
			answer(fd);
			if (fd >= 0)
				close((int)fd);
		}
		if (child)
			kill(child, SIGKILL);
	} else if (!strcmp(c, "fdopen") && argc == 4) {
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
		char p[64];

		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		answer(open2(AT_FDCWD, p, O_RDONLY,
			     parse(resolve_flags, argv[3])));
	} else {
		fprintf(stderr, "usage: see the comment at the top\n");
		return 2;
	}
	return 0;
}
