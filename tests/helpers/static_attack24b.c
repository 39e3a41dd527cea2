/* The twenty-fourth attack review (part b): an agent that reaches what
 * the user's other processes share with it, by raw system calls (it is
 * linked statically: no shim).
 *
 *   static_attack24b mq PATH
 *     opens PATH read-only (a queue in a message queue mount) and takes
 *     a message from it: prints "open ERR", "receive ERR" or
 *     "receive ok TEXT"; then makes PATH.new (O_CREAT), printing "make
 *     ok" or "make ERR".
 *
 *   static_attack24b connect PATH
 *     connects a unix stream socket to PATH and reads what the server
 *     says: prints "connect ERR" or "said TEXT".
 *
 *   static_attack24b signal PID
 *     sends PID SIGUSR1 by kill and by pidfd_send_signal, and its
 *     parent (harness-exec, when it is the session's first process)
 *     signal 0: prints "kill ok|ERR", "pidfd ok|ERR", "harness ok|ERR",
 *     then reads PID's environ: "environ ok|ERR".
 *
 *   static_attack24b shm NAME
 *     makes /dev/shm/NAME of 64 MiB (in memory: a tmpfs) and a second
 *     name of it, NAME.2: prints "shm ok" or "shm ERR".
 *
 *   static_attack24b tty
 *     on its standard input (the user's terminal, harness-exec's): makes
 *     it exclusive (TIOCEXCL) and gives it the n_null line discipline
 *     (TIOCSETD 27), then stops its output with IXON off (tcflow
 *     TCOOFF: ^Q cannot start it); prints "excl ok|ERR setd ok|ERR
 *     stop ok|ERR" on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

static const char *err(int e)
{
	return e == EPERM ? "EPERM" : e == ENOENT ? "ENOENT" : strerror(e);
}

static int mq(const char *path)
{
	static char buf[1 << 16];
	unsigned prio;
	long n;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		printf("open %s\n", err(errno));
	} else {
		n = syscall(SYS_mq_timedreceive, fd, buf, sizeof(buf), &prio,
			    NULL);
		if (n < 0)
			printf("receive %s\n", err(errno));
		else
			printf("receive ok %.*s\n", (int)n, buf);
		close(fd);
	}
	snprintf(buf, sizeof(buf), "%s.new", path);
	fd = open(buf, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	printf("make %s\n", fd < 0 ? err(errno) : "ok");
	return 0;
}

static int tty(void)
{
	int ld = 27; /* N_NULL */
	int a = ioctl(0, TIOCEXCL), ea = errno;
	int b = ioctl(0, TIOCSETD, &ld), eb = errno, c, ec;
	struct termios t;

	if (!tcgetattr(0, &t)) {
		t.c_iflag &= ~(tcflag_t)IXON;
		tcsetattr(0, TCSANOW, &t);
	}
	c = tcflow(0, TCOOFF);
	ec = errno;
	dprintf(2, "excl %s setd %s stop %s\n", a ? err(ea) : "ok",
		b ? err(eb) : "ok", c ? err(ec) : "ok");
	return 0;
}

static int unix_connect(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char buf[64];
	ssize_t n;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a))) {
		printf("connect %s\n", err(errno));
		return 0;
	}
	n = read(s, buf, sizeof(buf));
	printf("said %.*s\n", n > 0 ? (int)n : 0, buf);
	return 0;
}

/* Another process's environment (Landlock's ptrace scope refuses it). */
static void read_environ(const char *pid)
{
	char path[64], buf[256];
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    read(fd, buf, sizeof(buf)) < 0)
		printf("environ %s\n", err(errno));
	else
		printf("environ ok\n");
	if (fd >= 0)
		close(fd);
}

static int signal_outside(const char *pid)
{
	pid_t v = (pid_t)atoi(pid);
	int pfd = (int)syscall(SYS_pidfd_open, v, 0), r;

	printf("kill %s\n", kill(v, SIGUSR1) ? err(errno) : "ok");
	r = pfd < 0
		? -1
		: (int)syscall(SYS_pidfd_send_signal, pfd, SIGUSR1, NULL, 0);
	printf("pidfd %s\n", r ? err(errno) : "ok");
	printf("harness %s\n", kill(getppid(), 0) ? err(errno) : "ok");
	read_environ(pid);
	return 0;
}

static int shm_leave(const char *name)
{
	char path[256], two[260];
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/%s", name);
	snprintf(two, sizeof(two), "%s.2", path);
	fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 || fallocate(fd, 0, 0, 64 << 20) || link(path, two)) {
		printf("shm %s\n", err(errno));
		return 0;
	}
	printf("shm ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "shm"))
		return shm_leave(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "signal"))
		return signal_outside(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "connect"))
		return unix_connect(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "tty"))
		return tty();
	if (argc == 3 && !strcmp(argv[1], "mq"))
		return mq(argv[2]);
	return 2;
}
