/* A client of the supervisor socket that bypasses the shim (it is linked
 * statically, so LD_PRELOAD never reaches it), for the bad-input tests.
 *
 *   static_wire_client hostile DIR   one connection per malformed message;
 *                                    prints "closed NAME" or "open NAME"
 *   static_wire_client good DIR N    N well-formed write requests for
 *                                    DIR/good-I; prints "replies N"
 *   static_wire_client both DIR N    the two at once, in two processes
 *   static_wire_client forge DIR     one request claiming pid 1; prints
 *                                    "pid P verdicts V" (P: our real pid)
 *   static_wire_client hello PATH ARG...
 *                                    a HELLO claiming to be PATH ARG...;
 *                                    prints "hello N" (N: reply bytes)
 *   static_wire_client hello-exit PATH ARG...
 *                                    the same HELLO, then exits at once
 *                                    without reading the reply
 *   static_wire_client hello-zombie PATH ARG...
 *                                    the same HELLO from a second thread
 *                                    once the first has exited (a zombie
 *                                    leader, the process alive)
 *   static_wire_client hello-on-signal READY PATH ARG...
 *                                    connects, writes its pid to READY,
 *                                    waits for SIGUSR1, then sends the
 *                                    same HELLO and exits at once (its
 *                                    number may be another's by the
 *                                    time the supervisor reads it)
 *   static_wire_client hello-unmapped PATH ARG...
 *                                    the same HELLO from a process that
 *                                    unmapped its argv strings first
 *                                    (its cmdline reads empty)
 *   static_wire_client hello-short READY PATH ARG...
 *                                    writes its pid to READY and waits
 *                                    for SIGUSR1 (the test lowers the
 *                                    supervisor's RLIMIT_NOFILE), then
 *                                    connects until a connect fails and
 *                                    again, each time one is closed,
 *                                    writes "full N" to READY, waits for
 *                                    SIGUSR1 again (the limit raised),
 *                                    then a forked child on each of the
 *                                    last connections sends the HELLO;
 *                                    prints "hellos N"
 *   static_wire_client reuse DIR COPY
 *                                    a child running COPY (a copy of
 *                                    this program) connects, sends a
 *                                    write request for DIR/first, and
 *                                    exits, leaving the connection to a
 *                                    grandchild, which forks until a
 *                                    child takes the reaped one's number:
 *                                    that child execs this program again
 *                                    and sends a request for DIR/second
 *                                    on the inherited connection; prints
 *                                    what DIR/done says ("sent PID")
 *   static_wire_client fill DIR      connects until a connect fails
 *                                    (the supervisor's fd table full),
 *                                    after three children did the same,
 *                                    writes DIR/ready, waits for DIR/go,
 *                                    closes them all, waits 0.5 s and
 *                                    prints DIR/.env (static: a mask is
 *                                    what keeps it)
 *   static_wire_client claim NAME IP PORT
 *                                    reports "NAME resolved to IP" as the
 *                                    shim would, waits, then connects to
 *                                    IP:PORT; prints "connected" or
 *                                    "denied ERRNO"
 *   static_wire_client named OP NAME TARGET [PORT]
 *                                    a REQUEST for OP (connect: TARGET an
 *                                    IPv4 address and PORT; write: TARGET
 *                                    a path) that also carries the host
 *                                    NAME, as no shim sends; prints
 *                                    "verdict V" or "closed", then for a
 *                                    connect connects itself ("connected"
 *                                    or "denied ERRNO") */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <pthread.h>
#include <unistd.h>

#include "common/wire.h"

/* The session socket by connect, or, with HX_DIAL_OPEN set, by an
 * open of its path, as the shim asks for it under the kernel layer
 * (answered with a connection made for the opener): fd, or -1. */
static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (getenv("HX_DIAL_OPEN"))
		return open(path, O_PATH | O_RDWR | O_CLOEXEC);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int dial(void)
{
	const char *path = getenv(HX_ENV_SOCKET);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 5};
	int fd;

	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "no %s\n", HX_ENV_SOCKET);
		exit(2);
	}
	if ((fd = connect_to(path)) < 0) {
		perror("connect");
		exit(2);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static size_t request(uint8_t *buf, size_t cap, const char *path)
{
	struct hx_wbuf w;

	hx_wire_begin(&w, buf, cap, HX_MSG_REQUEST, 7);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPEN);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	return hx_wire_finish(&w);
}

/* Sends one malformed datagram and reports whether the supervisor hung up. */
static void hostile_one(const char *name, const void *msg, size_t n)
{
	int fd = dial();
	char reply[HX_WIRE_MAX];
	ssize_t got;

	if (send(fd, msg, n, 0) < 0 && errno != EPIPE) {
		printf("sendfail %s %s\n", name, strerror(errno));
	} else {
		got = recv(fd, reply, sizeof(reply), 0);
		printf("%s %s\n",
		       got == 0 || (got < 0 && errno == ECONNRESET) ? "closed"
								    : "open",
		       name);
	}
	fflush(stdout);
	close(fd);
}

static void hostile(const char *dir)
{
	static uint8_t buf[HX_WIRE_MAX * 2];
	char path[4096];
	struct hx_wbuf w;
	size_t n;

	snprintf(path, sizeof(path), "%s/hostile", dir);
	memset(buf, 0xA5, 64);
	hostile_one("garbage", buf, 64);

	n = request(buf, sizeof(buf), path);
	hostile_one("truncated", buf, n - 3);
	hostile_one("short-header", buf, 8);

	n = request(buf, sizeof(buf), path);
	buf[4] ^= 0x40; /* length field */
	hostile_one("length-mismatch", buf, n);

	n = request(buf, sizeof(buf), path);
	buf[0] = 99; /* version */
	hostile_one("bad-version", buf, n);

	memset(buf, 0, sizeof(buf));
	n = request(buf, sizeof(buf), path);
	memcpy(buf + n, buf + 16, 24); /* repeat the first fields */
	{
		uint32_t len = (uint32_t)(n + 24);
		memcpy(buf + 4, &len, 4);
	}
	hostile_one("duplicate-field", buf, n + 24);

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_VERDICT, 1);
	hx_wire_put_u32(&w, HX_TAG_VERDICT, HX_VERDICT_ALLOW);
	hostile_one("wrong-type", buf, hx_wire_finish(&w));

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 1);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPEN);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_bytes(&w, HX_TAG_PATH, "/tmp/a\0b", 8);
	hostile_one("nul-in-path", buf, hx_wire_finish(&w));

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 1);
	hx_wire_put_u32(&w, HX_TAG_CALL, 9999);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hostile_one("bad-call", buf, hx_wire_finish(&w));

	n = request(buf, sizeof(buf), path);
	memset(buf + n, 'x', HX_WIRE_MAX + 100 - n);
	{
		uint32_t len = HX_WIRE_MAX + 100;
		memcpy(buf + 4, &len, 4);
	}
	hostile_one("oversized", buf, HX_WIRE_MAX + 100);
}

static int good(const char *dir, int count)
{
	uint8_t buf[8192], reply[HX_WIRE_MAX];
	char path[4096];
	int fd = dial(), replies = 0;

	for (int i = 0; i < count; i++) {
		struct hx_wreader r;
		struct hx_wire_hdr h;
		size_t n;
		ssize_t got;

		snprintf(path, sizeof(path), "%s/good-%d", dir, i);
		n = request(buf, sizeof(buf), path);
		if (send(fd, buf, n, 0) < 0)
			break;
		got = recv(fd, reply, sizeof(reply), 0);
		if (got <= 0)
			break;
		if (hx_wire_open(&r, reply, (size_t)got, &h) == HX_WIRE_OK &&
		    h.type == HX_MSG_VERDICT && h.id == 7)
			replies++;
		usleep(500);
	}
	printf("replies %d\n", replies);
	fflush(stdout);
	return replies == count ? 0 : 1;
}

/* A request that lies about who sends it. */
static int forge(const char *dir)
{
	uint8_t buf[8192], reply[HX_WIRE_MAX];
	char path[4096];
	struct hx_wbuf w;
	struct hx_wreader r;
	struct hx_wire_hdr h;
	int fd = dial(), ok = 0;
	ssize_t got;

	snprintf(path, sizeof(path), "%s/forged", dir);
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 9);
	hx_wire_put_u32(&w, HX_TAG_PID, 1);
	hx_wire_put_u32(&w, HX_TAG_TID, 1);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPEN);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	if (send(fd, buf, hx_wire_finish(&w), 0) > 0 &&
	    (got = recv(fd, reply, sizeof(reply), 0)) > 0 &&
	    hx_wire_open(&r, reply, (size_t)got, &h) == HX_WIRE_OK &&
	    h.type == HX_MSG_VERDICT && h.id == 9)
		ok = 1;
	printf("pid %d verdicts %d\n", (int)getpid(), ok);
	return ok ? 0 : 1;
}

/* A HELLO that claims another program and command line; with wait
 * false, the process exits as soon as it is sent. */
static int hello(const char *path, char **args, int nargs, bool wait)
{
	uint8_t buf[8192], reply[HX_WIRE_MAX];
	struct hx_wbuf w;
	int fd = dial();
	ssize_t got = -1;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_HELLO, 5);
	hx_wire_put_u32(&w, HX_TAG_PID, (uint32_t)getpid());
	hx_wire_put_u32(&w, HX_TAG_PPID, (uint32_t)getppid());
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_u32(&w, HX_TAG_FLAGS, 0);
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	for (int i = 0; i < nargs; i++)
		hx_wire_put_str(&w, HX_TAG_ARG, args[i]);
	if (send(fd, buf, hx_wire_finish(&w), 0) > 0 && !wait)
		_exit(0);
	got = recv(fd, reply, sizeof(reply), 0);
	printf("hello %zd\n", got);
	return got > 0 ? 0 : 1;
}

/* A HELLO claiming path and args, as a program of its own would say
 * it, into buf: its length. */
static size_t hello_msg(uint8_t *buf, size_t cap, const char *path, char **args,
			int nargs)
{
	struct hx_wbuf w;

	hx_wire_begin(&w, buf, cap, HX_MSG_HELLO, 5);
	hx_wire_put_u32(&w, HX_TAG_PID, (uint32_t)getpid());
	hx_wire_put_u32(&w, HX_TAG_FLAGS, 0);
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	for (int i = 0; i < nargs; i++)
		hx_wire_put_str(&w, HX_TAG_ARG, args[i]);
	return hx_wire_finish(&w);
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* hello-on-signal: nothing between the signal and the exit asks the
 * supervisor (a send without an address is not notified), so it can
 * run while the test holds the supervisor stopped. */
static int hello_on_signal(const char *ready, const char *path, char **args,
			   int nargs)
{
	uint8_t buf[8192];
	sigset_t usr1, old;
	int fd = dial(), sig;
	FILE *f;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	signal(SIGUSR1, on_usr1);
	if (!(f = fopen(ready, "w")) || fprintf(f, "%d\n", (int)getpid()) < 0 ||
	    fclose(f))
		return 2;
	if (sigwait(&usr1, &sig))
		return 2;
	if (send(fd, buf, hello_msg(buf, sizeof(buf), path, args, nargs), 0) <=
	    0)
		return 1;
	_exit(0);
}

/* child-send-on-signal: a forked child asks on its parent's connection
 * at SIGUSR1 and exits, and the parent reaps it at once, so that its
 * number is free before the supervisor reads the request. ready: the
 * child's pid. */
static int child_send_on_signal(const char *ready, const char *path)
{
	uint8_t buf[8192];
	sigset_t usr1;
	int fd = dial(), sig, st;
	pid_t kid;
	FILE *f;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	if ((kid = fork()) == 0) {
		if (sigwait(&usr1, &sig))
			_exit(2);
		send(fd, buf, request(buf, sizeof(buf), path), 0);
		_exit(0);
	}
	if (kid < 0 || !(f = fopen(ready, "w")) ||
	    fprintf(f, "%d\n", (int)kid) < 0 || fclose(f))
		return 2;
	waitpid(kid, &st, 0);
	sleep(2); /* the connection stays open while the request is read */
	return 0;
}

/* The HELLO of hello() on fd: the reply's size, or -1. */
static ssize_t say_hello(int fd, const char *path, char **args, int nargs)
{
	uint8_t buf[8192], reply[HX_WIRE_MAX];

	if (send(fd, buf, hello_msg(buf, sizeof(buf), path, args, nargs), 0) <=
	    0)
		return -1;
	return recv(fd, reply, sizeof(reply), 0);
}

static struct {
	int fd, nargs;
	char *path, **args;
	void *unmap; /* the pages of argv's strings, or NULL */
	size_t unmap_len;
} later;

/* On a thread of its own: the first one's stack (where argv's strings
 * are) is not this one's. */
static void *hello_later(void *arg)
{
	ssize_t got;

	(void)arg;
	usleep(300 * 1000); /* the first thread has exited */
	if (later.unmap)
		munmap(later.unmap, later.unmap_len);
	got = say_hello(later.fd, later.path, later.args, later.nargs);
	printf("hello %zd\n", got);
	fflush(stdout);
	exit(got > 0 ? 0 : 1);
}

/* A copy of argv's strings, which the caller may then unmap. */
static char **copy_args(char **argv, int n)
{
	char **c = calloc((size_t)n + 1, sizeof(*c));

	for (int i = 0; c && i < n; i++)
		c[i] = strdup(argv[i]);
	return c;
}

static int hello_odd(const char *how, char **argv, int argc)
{
	char **c = copy_args(argv, argc);
	pthread_t th;

	later.fd = dial();
	later.path = c[0];
	later.args = c + 1;
	later.nargs = argc - 1;
	if (!strcmp(how, "hello-unmapped")) {
		/* from argv[0] to the end of the last string */
		long pg = sysconf(_SC_PAGESIZE);
		uintptr_t a = (uintptr_t)argv[0] & ~(uintptr_t)(pg - 1);
		uintptr_t e =
		    (uintptr_t)argv[argc - 1] + strlen(argv[argc - 1]) + 1;

		later.unmap = (void *)a;
		later.unmap_len = e - a;
	}
	if (pthread_create(&th, NULL, hello_later, NULL))
		return 2;
	if (!later.unmap)
		pthread_exit(NULL);
	pthread_join(th, NULL); /* never returns: the thread exits */
	return 0;
}

/* A connect to the session socket that does not exit on failure: the
 * fd, or -1. */
static int try_dial(void)
{
	const char *path = getenv(HX_ENV_SOCKET);
	struct sockaddr_un sa;

	if (!path || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	return connect_to(path);
}

static int wait_usr1(const char *ready, const char *line)
{
	sigset_t usr1;
	int sig;
	FILE *f;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	if (!(f = fopen(ready, "w")) || fprintf(f, "%s\n", line) < 0 ||
	    fclose(f))
		return -1;
	return sigwait(&usr1, &sig) ? -1 : 0;
}

/* hello-short: connections made while the supervisor is short of fds,
 * each then used by a forked child for a HELLO (another process than
 * the one that connected). */
static int hello_short(const char *ready, const char *path, char **args,
		       int nargs)
{
	enum { MAX = 400, LAST = 6 };
	static int fds[MAX];
	char line[64];
	int n = 0, hellos = 0, st;

	snprintf(line, sizeof(line), "%d", (int)getpid());
	if (wait_usr1(ready, line))
		return 2;
	while (n < MAX && (fds[n] = try_dial()) >= 0)
		n++;
	/* Each close frees the supervisor's fds of that connection: the
	 * next connect finds just those free. */
	for (int round = 0; round < LAST && n > 0; round++) {
		close(fds[--n]);
		usleep(100 * 1000);
		if ((fds[n] = try_dial()) >= 0)
			n++;
	}
	snprintf(line, sizeof(line), "full %d", n);
	if (wait_usr1(ready, line))
		return 2;
	for (int i = n > LAST ? n - LAST : 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(say_hello(fds[i], path, args, nargs) > 0 ? 0 : 1);
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		    !WEXITSTATUS(st))
			hellos++;
	}
	printf("hellos %d\n", hellos);
	return 0;
}

static bool ask_write(int fd, const char *path)
{
	uint8_t buf[8192], reply[HX_WIRE_MAX];
	size_t n = request(buf, sizeof(buf), path);

	return send(fd, buf, n, 0) == (ssize_t)n &&
	       recv(fd, reply, sizeof(reply), 0) > 0;
}

static void put_done(const char *dir, const char *what, int pid)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/done", dir);
	if ((f = fopen(path, "w"))) {
		fprintf(f, "%s %d\n", what, pid);
		fclose(f);
	}
}

/* reuse-a: runs as COPY; self: this program's own path. */
static int reuse_a(const char *dir, const char *self)
{
	char path[4096], fdstr[16];
	int fd = dial(), st;
	pid_t a = getpid(), b, p;

	snprintf(path, sizeof(path), "%s/first", dir);
	if (!ask_write(fd, path))
		return 1;
	if ((b = fork()) != 0)
		_exit(b < 0);
	while (kill(a, 0) == 0 || errno != ESRCH) /* until reaped */
		usleep(1000);
	for (long i = 0; i < 400000; i++) {
		p = fork();
		if (p == 0) {
			if (getpid() != a)
				_exit(0);
			snprintf(fdstr, sizeof(fdstr), "%d", fd);
			execl(self, self, "send-on", fdstr, dir, (char *)NULL);
			_exit(127);
		}
		if (p < 0) {
			usleep(1000);
			continue;
		}
		waitpid(p, &st, 0);
		if (p == a)
			return 0;
	}
	put_done(dir, "nopid", 0);
	return 1;
}

static int send_on(int fd, const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/second", dir);
	put_done(dir, ask_write(fd, path) ? "sent" : "unsent", getpid());
	return 0;
}

static int reuse(const char *dir, const char *copy)
{
	char self[4096], path[4096], line[64] = "";
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t a;
	int st;
	FILE *f;

	if (n <= 0)
		return 2;
	self[n] = '\0';
	if ((a = fork()) == 0) {
		execl(copy, copy, "reuse-a", dir, self, (char *)NULL);
		_exit(127);
	}
	waitpid(a, &st, 0); /* reaped: its number is free */
	snprintf(path, sizeof(path), "%s/done", dir);
	for (int i = 0; i < 6000 && !line[0]; i++) {
		if ((f = fopen(path, "r"))) {
			if (!fgets(line, sizeof(line), f))
				line[0] = '\0';
			fclose(f);
		}
		if (!line[0])
			usleep(10 * 1000);
	}
	printf("a %d %s", (int)a, line[0] ? line : "none\n");
	return 0;
}

/* Connects until a connect fails or max are held; fds: max of them. */
static int hold(int *fds, int max)
{
	int n = 0;

	while (n < max && (fds[n] = try_dial()) >= 0)
		n++;
	return n;
}

static void wait_go(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/go", dir);
	while (access(path, F_OK))
		usleep(20 * 1000);
}

/* fill: three children hold what they can (each process's own table
 * is 1024 on a desktop too), then this one. */
static int fill(const char *dir)
{
	enum { MAX = 4096, KIDS = 3 };
	static int fds[MAX];
	char path[4096], buf[4096], c = 1;
	int n, fd, p[2], st;
	ssize_t got;
	FILE *f;

	if (pipe(p))
		return 2;
	for (int k = 0; k < KIDS; k++)
		if (fork() == 0) {
			hold(fds, 900);
			if (write(p[1], &c, 1) != 1)
				_exit(1);
			wait_go(dir);
			_exit(0);
		}
	for (int k = 0; k < KIDS; k++)
		if (read(p[0], &c, 1) != 1)
			return 2;
	n = hold(fds, MAX);
	/* Our own table may be what filled: room for the files below. */
	for (int k = 0; k < 4 && n > 0; k++)
		close(fds[--n]);
	snprintf(path, sizeof(path), "%s/ready", dir);
	if (!(f = fopen(path, "w")) || fprintf(f, "%d\n", n) < 0 || fclose(f))
		return 2;
	wait_go(dir);
	while (n > 0)
		close(fds[--n]);
	while (wait(&st) > 0)
		;
	usleep(500 * 1000);
	snprintf(path, sizeof(path), "%s/.env", dir);
	if ((fd = open(path, O_RDONLY)) < 0) {
		printf("refused %d\n", errno);
		return 0;
	}
	got = read(fd, buf, sizeof(buf) - 1);
	printf("read %s\n", got > 0 ? (buf[got] = '\0', buf) : "");
	return 0;
}

/* A TCP connect of our own to sin: prints "connected" or "denied
 * ERRNO". */
static int connect_say(const struct sockaddr_in *sin)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);

	if (connect(s, (const struct sockaddr *)sin, sizeof(*sin)) == 0)
		printf("connected\n");
	else
		printf("denied %d\n", errno);
	return 0;
}

static int claim(const char *name, const char *ip, int port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port)};
	uint8_t buf[4096];
	struct hx_wbuf w;
	int fd = dial();

	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1)
		return 2;
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REPORT, 11);
	hx_wire_put_u32(&w, HX_TAG_PID, (uint32_t)getpid());
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_GETADDRINFO);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_RESOLVE);
	hx_wire_put_str(&w, HX_TAG_HOST, name);
	hx_wire_put_bytes(&w, HX_TAG_ADDR, &sin, sizeof(sin));
	hx_wire_put_u32(&w, HX_TAG_RESULT, 0);
	if (send(fd, buf, hx_wire_finish(&w), 0) <= 0)
		return 2;
	usleep(300 * 1000); /* long enough for any mapping to be made */
	return connect_say(&sin);
}

static int named(const char *op, const char *name, const char *target, int port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port)};
	bool conn = !strcmp(op, "connect");
	uint8_t buf[4096], reply[HX_WIRE_MAX];
	struct hx_wbuf w;
	struct hx_wreader r;
	struct hx_wire_hdr h;
	uint16_t tag, len;
	const uint8_t *v;
	uint32_t verdict = 99;
	int fd = dial();
	ssize_t got;

	if (conn && inet_pton(AF_INET, target, &sin.sin_addr) != 1)
		return 2;
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 12);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_u32(&w, HX_TAG_CALL, conn ? HX_CALL_CONNECT : HX_CALL_OPEN);
	hx_wire_put_u32(&w, HX_TAG_OP, conn ? HX_OP_CONNECT : HX_OP_WRITE);
	if (conn)
		hx_wire_put_bytes(&w, HX_TAG_ADDR, &sin, sizeof(sin));
	else
		hx_wire_put_str(&w, HX_TAG_PATH, target);
	hx_wire_put_str(&w, HX_TAG_HOST, name);
	if (send(fd, buf, hx_wire_finish(&w), 0) <= 0)
		return 2;
	got = recv(fd, reply, sizeof(reply), 0);
	if (got <= 0) {
		printf("closed\n");
	} else if (hx_wire_open(&r, reply, (size_t)got, &h) == HX_WIRE_OK) {
		while (hx_wire_next(&r, &tag, &v, &len) > 0)
			if (tag == HX_TAG_VERDICT && len == 4)
				memcpy(&verdict, v, 4);
		printf("verdict %u\n", verdict);
	}
	fflush(stdout);
	if (!conn)
		return 0;
	return connect_say(&sin);
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "named"))
		return named(argv[2], argv[3], argv[4],
			     argc >= 6 ? atoi(argv[5]) : 0);
	if (argc >= 5 && !strcmp(argv[1], "claim"))
		return claim(argv[2], argv[3], atoi(argv[4]));
	if (argc >= 3 && !strcmp(argv[1], "forge"))
		return forge(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "hello"))
		return hello(argv[2], argv + 3, argc - 3, true);
	if (argc >= 4 && !strcmp(argv[1], "hello-on-signal"))
		return hello_on_signal(argv[2], argv[3], argv + 4, argc - 4);
	if (argc >= 4 && !strcmp(argv[1], "child-send-on-signal"))
		return child_send_on_signal(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "fill"))
		return fill(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "reuse"))
		return reuse(argv[2], argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "reuse-a"))
		return reuse_a(argv[2], argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "send-on"))
		return send_on(atoi(argv[2]), argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "hello-short"))
		return hello_short(argv[2], argv[3], argv + 4, argc - 4);
	if (argc >= 3 && !strcmp(argv[1], "hello-exit"))
		return hello(argv[2], argv + 3, argc - 3, false);
	if (argc >= 3 && (!strcmp(argv[1], "hello-zombie") ||
			  !strcmp(argv[1], "hello-unmapped")))
		return hello_odd(argv[1], argv + 2, argc - 2);
	if (argc >= 3 && !strcmp(argv[1], "hostile")) {
		hostile(argv[2]);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "good"))
		return good(argv[2], atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "both")) {
		pid_t pid = fork();
		int st;

		if (pid == 0)
			_exit(good(argv[2], atoi(argv[3])));
		hostile(argv[2]);
		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	fprintf(stderr,
		"usage: static_wire_client hostile|good|both DIR [N]\n");
	return 2;
}
