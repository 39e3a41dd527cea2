/* A static program (no shim) for tests/integration/test_unotify.py: each
 * subcommand makes one raw syscall the user-notify layer decides and
 * prints "ok ..." or "err ERRNO-NAME".
 *
 *   open PATH            openat(AT_FDCWD, PATH, O_WRONLY|O_CREAT, 0644),
 *                        then writes "data\n" through the fd
 *   openat2 PATH         the same through openat2
 *   connect PORT         TCP connect to 127.0.0.1:PORT, sends "ping\n"
 *   connect4 ADDR PORT   TCP connect to ADDR:PORT (IPv4)
 *   own-tcp | own-udp X  a server of the session on 127.0.0.1 (a port the
 *                        kernel picks): a child, its copy of the socket
 *                        closed, connects and sends "ping\n" (or sends it
 *                        as a datagram); prints "ok own-tcp" and, once
 *                        the server read it, "got ping"
 *   sendto PORT          UDP sendto 127.0.0.1:PORT "dgram\n" (also sendmsg,
 * sendmmsg) sendmsg PORT         UDP sendmsg with msg_name 127.0.0.1:PORT
 *   toctou OK DENIED S   one thread opens a buffer in a loop, another
 *                        swaps it between OK and DENIED, for S seconds
 *   rename A B           rename(A, B)       renameat2 A B  RENAME_NOREPLACE
 *   unlink P             unlink(P)          rmdirat P      unlinkat REMOVEDIR
 *   mkdir P              mkdir(P, 0750)     rmdir P        rmdir(P)
 *   link OLD NEW         link(OLD, NEW)     symlink TEXT P symlink(TEXT, P)
 *   truncate P           truncate(P, 2)     chmod P        chmod(P, 0600)
 *   fchmodat P           fchmodat(P, 0640)  chown P        chown to own ids
 *   mutrace S            for S seconds one thread exchanges the directory
 *                        "p" with the symlink "q" (renameat2 EXCHANGE),
 *                        another unlinks and chmods "p/key" and recreates
 *                        it
 *   ident DIR EXE        who a call's thread is, as it changes: makes
 *                        DIR/a under umask 022 and DIR/b under 077 (mode
 *                        0666 asked), then a child makes DIR/c, sees its
 *                        parent exit, makes DIR/d and execs EXE as
 *                        "open DIR/e"; prints "ok ident PARENT NEWPARENT"
 *   uconnect PATH        unix stream connect to PATH, sends "ping\n",
 *                        reads the answer
 *   usendto PATH         unix datagram sendto PATH "dgram\n"
 *   urights PATH         unix datagram sendmsg to PATH passing a pipe's
 *                        read end (SCM_RIGHTS) after writing "piped\n"
 *   utoctou OK DENIED S [seqpacket]
 *                        one thread connects unix stream (or seqpacket)
 *                        sockets to a sockaddr in a loop, another swaps
 *                        its path between OK and DENIED, for S seconds
 *   ulinkrace OK DENIED S  one thread connects to "sw.sock" in a loop,
 *                        another makes it, in turn, a hard link of the
 *                        socket OK and a symlink to DENIED, for S seconds
 *   ustall FULL OK       a thread connects to FULL until a connect blocks
 *                        (its backlog is full); then, within 5 s, a
 *                        connect to OK must succeed
 *   fdopen DIR NAME      opens DIR (O_PATH), then NAME for writing through
 *                        "/proc/self/fd/N/NAME" (as Claude Code does)
 *   diropen DIR          openat(DIR, O_RDONLY|O_DIRECTORY)
 *   chownto P UID        chown(P, UID, -1)
 *   wopen P              open(P, O_WRONLY) of an existing file
 *   nullpath2            symlink, rename and link calls that leave their
 *                        second path in the handler's buffers, then each
 *                        with that path NULL: one "NAME ERRNO-NAME" (or
 *                        "NAME ok") line per call */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int report(long r, const char *what)
{
	if (r < 0) {
		printf("err %s\n",
		       strerrorname_np(errno) ? strerrorname_np(errno) : "?");
		return 1;
	}
	printf("ok %s\n", what);
	return 0;
}

static struct sockaddr_in lo(const char *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)atoi(port))};

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

static char buf[4096];
static atomic_bool stop;
static struct sockaddr_un usa = {.sun_family = AF_UNIX};

static struct sockaddr_un un(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	return sa;
}

static void *uswapper(void *arg)
{
	char **names = arg;

	while (!atomic_load(&stop)) {
		strcpy(usa.sun_path, names[0]);
		strcpy(usa.sun_path, names[1]);
	}
	return NULL;
}

static void *relinker(void *arg)
{
	char **names = arg;

	while (!atomic_load(&stop)) {
		syscall(SYS_link, names[0], "tmp.hard");
		syscall(SYS_rename, "tmp.hard", "sw.sock");
		syscall(SYS_symlink, names[1], "tmp.lnk");
		syscall(SYS_rename, "tmp.lnk", "sw.sock");
	}
	return NULL;
}

static void *filler(void *arg)
{
	struct sockaddr_un sa = un(arg);

	for (;;) /* until a connect blocks */
		syscall(SYS_connect, socket(AF_UNIX, SOCK_STREAM, 0), &sa,
			sizeof(sa));
	return NULL;
}

/* Connects sockets of type to *sa in a loop for secs seconds while racer
 * runs on a thread; prints "ok TAG conns=N fails=M". */
static int connect_loop(const char *tag, void *(*racer)(void *), void *arg,
			const struct sockaddr_un *sa, int type, int secs)
{
	time_t end = time(NULL) + secs;
	long conns = 0, fails = 0;
	pthread_t t;

	pthread_create(&t, NULL, racer, arg);
	while (time(NULL) < end) {
		int s = socket(AF_UNIX, type, 0);

		if (syscall(SYS_connect, s, sa, sizeof(*sa)) == 0)
			conns++;
		else
			fails++;
		close(s);
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	printf("ok %s conns=%ld fails=%ld\n", tag, conns, fails);
	return 0;
}

static int unix_cmd(int argc, char **argv)
{
	struct sockaddr_un sa = un(argv[2]);
	long r;

	if (!strcmp(argv[1], "uconnect")) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0);

		char pong[5];

		r = syscall(SYS_connect, s, &sa, sizeof(sa));
		/* Until the server answers: it has seen us by then. */
		if (r == 0 && (write(s, "ping\n", 5) != 5 ||
			       read(s, pong, sizeof(pong)) <= 0))
			return report(-1, "ping");
		return report(r, "uconnect");
	}
	if (!strcmp(argv[1], "ulinkrace") && argc == 5) {
		struct sockaddr_un sw = un("sw.sock");

		return connect_loop("ulinkrace", relinker, argv + 2, &sw,
				    SOCK_STREAM, atoi(argv[4]));
	}
	if (!strcmp(argv[1], "ustall") && argc == 4) {
		pthread_t t;
		struct sockaddr_un ok = un(argv[3]);
		int s = socket(AF_UNIX, SOCK_STREAM, 0);

		pthread_create(&t, NULL, filler, argv[2]);
		usleep(300000);
		alarm(5); /* a stalled connect fails the test, not hangs it */
		return report(syscall(SYS_connect, s, &ok, sizeof(ok)),
			      "ustall");
	}
	if (!strcmp(argv[1], "usendto")) {
		int s = socket(AF_UNIX, SOCK_DGRAM, 0);

		return report(
		    syscall(SYS_sendto, s, "dgram\n", 6, 0, &sa, sizeof(sa)),
		    "usendto");
	}
	if (!strcmp(argv[1], "urights")) {
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} cb;
		struct iovec iov = {"fd\n", 3};
		struct msghdr m = {.msg_name = &sa,
				   .msg_namelen = sizeof(sa),
				   .msg_iov = &iov,
				   .msg_iovlen = 1,
				   .msg_control = cb.b,
				   .msg_controllen = sizeof(cb.b)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		int s = socket(AF_UNIX, SOCK_DGRAM, 0), p[2];

		if (pipe(p) || write(p[1], "piped\n", 6) != 6)
			return report(-1, "pipe");
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &p[0], sizeof(int));
		return report(syscall(SYS_sendmsg, s, &m, 0), "urights");
	}
	if (!strcmp(argv[1], "utoctou") && argc >= 5) {
		int type = argc > 5 && !strcmp(argv[5], "seqpacket")
			       ? SOCK_SEQPACKET
			       : SOCK_STREAM;

		strcpy(usa.sun_path, argv[2]);
		return connect_loop("utoctou", uswapper, argv + 2, &usa, type,
				    atoi(argv[4]));
	}
	return -1;
}

static void *swapper(void *arg)
{
	char **names = arg;

	while (!atomic_load(&stop)) {
		strcpy(buf, names[0]);
		strcpy(buf, names[1]);
	}
	return NULL;
}

static void *exchanger(void *arg)
{
	long *n = arg;

	while (!atomic_load(&stop))
		if (syscall(SYS_renameat2, AT_FDCWD, "p", AT_FDCWD, "q",
			    2 /* RENAME_EXCHANGE */) == 0)
			(*n)++;
	return NULL;
}

/* A NULL second path: EFAULT from the kernel, whatever an earlier call
 * of this process (or another) left behind. */
static int nullpath2(void)
{
	static const struct {
		const char *name;
		long nr, a0, a1, a2, a3, a4;
	} calls[] = {
	    {"plant-symlink", SYS_symlink, (long)"planted", (long)"p1", 0, 0,
	     0},
	    {"symlink", SYS_symlink, 0, (long)"n1", 0, 0, 0},
	    {"symlinkat", SYS_symlinkat, 0, AT_FDCWD, (long)"n2", 0, 0},
	    {"plant-rename", SYS_rename, (long)"f1", (long)"f2", 0, 0, 0},
	    {"rename", SYS_rename, (long)"f2", 0, 0, 0, 0},
	    {"renameat2", SYS_renameat2, AT_FDCWD, (long)"f2", AT_FDCWD, 0, 0},
	    {"plant-link", SYS_link, (long)"f2", (long)"f3", 0, 0, 0},
	    {"link", SYS_link, 0, (long)"n3", 0, 0, 0},
	    {"linkat", SYS_linkat, AT_FDCWD, 0, AT_FDCWD, (long)"n4", 0},
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(*calls); i++) {
		long r = syscall(calls[i].nr, calls[i].a0, calls[i].a1,
				 calls[i].a2, calls[i].a3, calls[i].a4);

		printf("%s %s\n", calls[i].name,
		       r < 0 ? strerrorname_np(errno) : "ok");
	}
	return 0;
}

static int own_cmd(const char *mode)
{
	bool udp = !strcmp(mode, "own-udp");
	int type = udp ? SOCK_DGRAM : SOCK_STREAM, l = socket(AF_INET, type, 0);
	struct timeval tv = {.tv_sec = 3};
	struct sockaddr_in sa = lo("0");
	socklen_t sl = sizeof(sa);
	char got[16] = "";
	int st = 0, a;
	pid_t p;

	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    (!udp && listen(l, 4)) ||
	    getsockname(l, (struct sockaddr *)&sa, &sl))
		return report(-1, "listen");
	fflush(stdout);
	if ((p = fork()) == 0) {
		int c = socket(AF_INET, type, 0);
		long r;

		close(l);
		r = udp ? syscall(SYS_sendto, c, "ping\n", 5, 0, &sa,
				  sizeof(sa))
			: syscall(SYS_connect, c, &sa, sizeof(sa));
		if (!udp && r == 0 && write(c, "ping\n", 5) != 5)
			r = -1;
		r = report(r, mode);
		fflush(stdout);
		_exit((int)r);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return 1;
	a = udp ? l : accept(l, NULL, NULL);
	if (a < 0 || setsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    recv(a, got, sizeof(got) - 1, 0) <= 0)
		return report(-1, "recv");
	printf("got %s", got);
	return 0;
}

static long make(const char *dir, const char *name)
{
	char p[4096];
	long fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd =
	    syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CREAT | O_EXCL, 0666);
	if (fd >= 0)
		close((int)fd);
	return fd;
}

/* The kernel layer remembers who a thread is between its calls
 * (unotify_ident.c): each change must show in the next call. */
static int ident(const char *dir, const char *exe)
{
	int res[2], go[2], done[2];
	pid_t mid, old, now;
	char out[128], e[4096];
	ssize_t n;

	umask(022);
	if (make(dir, "a") < 0)
		return printf("err a %s\n", strerror(errno)), 1;
	umask(077);
	if (make(dir, "b") < 0)
		return printf("err b %s\n", strerror(errno)), 1;
	/* done: held open by the exec'd image until it exits, so this
	 * process (whose exit ends the session) outlives its "ok open" */
	if (pipe(res) || pipe(go) || pipe(done))
		return 1;
	mid = fork();
	if (mid == 0) {
		if (fork() == 0) {
			old = getppid();
			if (make(dir, "c") < 0)
				_exit(1);
			close(go[1]); /* the middle one exits now */
			while ((now = getppid()) == old)
				usleep(1000);
			if (make(dir, "d") < 0)
				_exit(1);
			n = snprintf(out, sizeof(out), "ok ident %d %d\n",
				     (int)old, (int)now);
			if (write(res[1], out, (size_t)n) != n)
				_exit(1);
			close(res[1]);
			snprintf(e, sizeof(e), "%s/e", dir);
			execl(exe, exe, "open", e, (char *)NULL);
			_exit(127);
		}
		close(go[1]);
		close(done[1]);
		/* Until the child's call is made and remembered. */
		if (read(go[0], out, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	close(go[1]);
	close(res[1]);
	close(done[1]);
	waitpid(mid, NULL, 0);
	n = read(res[0], out, sizeof(out) - 1);
	if (n <= 0)
		return printf("err child\n"), 1;
	out[n] = '\0';
	fputs(out, stdout);
	/* Until the exec'd image has made DIR/e, said so and exited. */
	do
		n = read(done[0], out, 1);
	while (n > 0 || (n < 0 && errno == EINTR));
	return 0;
}

int main(int argc, char **argv)
{
	long r;

	if (argc == 4 && !strcmp(argv[1], "ident"))
		return ident(argv[2], argv[3]);

	if (argc == 2 && !strcmp(argv[1], "nullpath2"))
		return nullpath2();
	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "open") || !strcmp(argv[1], "openat2")) {
		if (!strcmp(argv[1], "open"))
			r = syscall(SYS_openat, AT_FDCWD, argv[2],
				    O_WRONLY | O_CREAT, 0644);
		else {
			struct open_how how = {.flags = O_WRONLY | O_CREAT,
					       .mode = 0644};

			r = syscall(SYS_openat2, AT_FDCWD, argv[2], &how,
				    sizeof(how));
		}
		if (r >= 0 && write((int)r, "data\n", 5) != 5)
			return report(-1, "write");
		return report(r, "open");
	}
	if (!strcmp(argv[1], "fdopen") && argc == 4) {
		char p[4096];
		long d = open(argv[2], O_PATH | O_DIRECTORY);

		if (d < 0)
			return report(d, "dir");
		snprintf(p, sizeof(p), "/proc/self/fd/%ld/%s", d, argv[3]);
		r = syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CREAT, 0644);
		if (r >= 0 && write((int)r, "data\n", 5) != 5)
			return report(-1, "write");
		return report(r, "open");
	}
	if (!strcmp(argv[1], "diropen"))
		return report(syscall(SYS_openat, AT_FDCWD, argv[2],
				      O_RDONLY | O_DIRECTORY),
			      "diropen");
	if (!strcmp(argv[1], "own-tcp") || !strcmp(argv[1], "own-udp"))
		return own_cmd(argv[1]);
	if (!strcmp(argv[1], "connect4") && argc == 4) {
		struct sockaddr_in sa = lo(argv[3]);
		int s = socket(AF_INET, SOCK_STREAM, 0);

		if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1)
			return 2;
		return report(syscall(SYS_connect, s, &sa, sizeof(sa)),
			      "connect4");
	}
	if (!strcmp(argv[1], "connect")) {
		struct sockaddr_in sa = lo(argv[2]);
		int s = socket(AF_INET, SOCK_STREAM, 0);

		r = syscall(SYS_connect, s, &sa, sizeof(sa));
		if (r == 0 && write(s, "ping\n", 5) != 5)
			return report(-1, "write");
		return report(r, "connect");
	}
	if (!strcmp(argv[1], "sendmsg-peer")) {
		/* A connected UDP socket, sendmsg with no destination: the
		 * supervisor emulates it to the peer. */
		struct sockaddr_in sa = lo(argv[2]);
		int s = socket(AF_INET, SOCK_DGRAM, 0);
		char d[] = "dgram\n";
		struct iovec iov = {d, 6};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

		if (syscall(SYS_connect, s, &sa, sizeof(sa)))
			return report(-1, "connect");
		return report(syscall(SYS_sendmsg, s, &m, 0), "sendmsg-peer");
	}
	if (!strcmp(argv[1], "sendto") || !strcmp(argv[1], "sendmsg") ||
	    !strcmp(argv[1], "sendmmsg")) {
		struct sockaddr_in sa = lo(argv[2]);
		int s = socket(AF_INET, SOCK_DGRAM, 0);
		char d[] = "dgram\n";
		struct iovec iov = {d, 6};
		struct msghdr m = {.msg_name = &sa,
				   .msg_namelen = sizeof(sa),
				   .msg_iov = &iov,
				   .msg_iovlen = 1};

		struct mmsghdr mm[2] = {{.msg_hdr = m}, {.msg_hdr = m}};

		if (!strcmp(argv[1], "sendto"))
			r = syscall(SYS_sendto, s, d, 6, 0, &sa, sizeof(sa));
		else if (!strcmp(argv[1], "sendmsg"))
			r = syscall(SYS_sendmsg, s, &m, 0);
		else {
			r = syscall(SYS_sendmmsg, s, mm, 2, 0);
			/* At least one sent, and its length reported. */
			if (r >= 1 && mm[0].msg_len != 6)
				return report(-1, "sendmmsg msg_len");
		}
		return report(r, argv[1]);
	}
	if (!strcmp(argv[1], "rename") && argc == 4)
		return report(syscall(SYS_rename, argv[2], argv[3]), "rename");
	if (!strcmp(argv[1], "renameat2") && argc == 4)
		return report(syscall(SYS_renameat2, AT_FDCWD, argv[2],
				      AT_FDCWD, argv[3], 1 /* NOREPLACE */),
			      "renameat2");
	if (!strcmp(argv[1], "unlink"))
		return report(syscall(SYS_unlink, argv[2]), "unlink");
	if (!strcmp(argv[1], "rmdirat"))
		return report(
		    syscall(SYS_unlinkat, AT_FDCWD, argv[2], AT_REMOVEDIR),
		    "rmdirat");
	if (!strcmp(argv[1], "rmdir"))
		return report(syscall(SYS_rmdir, argv[2]), "rmdir");
	if (!strcmp(argv[1], "mkdir"))
		return report(syscall(SYS_mkdir, argv[2], 0750), "mkdir");
	if (!strcmp(argv[1], "link") && argc == 4)
		return report(syscall(SYS_link, argv[2], argv[3]), "link");
	if (!strcmp(argv[1], "symlink") && argc == 4)
		return report(syscall(SYS_symlink, argv[2], argv[3]),
			      "symlink");
	if (!strcmp(argv[1], "truncate"))
		return report(syscall(SYS_truncate, argv[2], 2L), "truncate");
	if (!strcmp(argv[1], "chmod"))
		return report(syscall(SYS_chmod, argv[2], 0600), "chmod");
	if (!strcmp(argv[1], "fchmodat"))
		return report(syscall(SYS_fchmodat, AT_FDCWD, argv[2], 0640),
			      "fchmodat");
	if ((r = unix_cmd(argc, argv)) >= 0)
		return (int)r;
	if (!strcmp(argv[1], "chownto") && argc == 4)
		return report(syscall(SYS_chown, argv[2], atoi(argv[3]), -1),
			      "chownto");
	if (!strcmp(argv[1], "wopen"))
		return report(syscall(SYS_openat, AT_FDCWD, argv[2], O_WRONLY),
			      "wopen");
	if (!strcmp(argv[1], "chown"))
		return report(syscall(SYS_chown, argv[2], getuid(), getgid()),
			      "chown");
	if (!strcmp(argv[1], "mutrace")) {
		pthread_t t;
		time_t end = time(NULL) + atoi(argv[2]);
		long unlinks = 0, swaps = 0;

		pthread_create(&t, NULL, exchanger, &swaps);
		while (time(NULL) < end) {
			if (syscall(SYS_unlink, "p/key") == 0)
				unlinks++;
			syscall(SYS_chmod, "p/key", 0666);
			r = syscall(SYS_openat, AT_FDCWD, "p/key",
				    O_WRONLY | O_CREAT | O_EXCL, 0644);
			if (r >= 0)
				close((int)r);
		}
		atomic_store(&stop, true);
		pthread_join(t, NULL);
		printf("ok mutrace unlinks=%ld swaps=%ld\n", unlinks, swaps);
		return 0;
	}
	if (!strcmp(argv[1], "toctou") && argc == 5) {
		pthread_t t;
		time_t end = time(NULL) + atoi(argv[4]);
		long opens = 0, fails = 0;

		strcpy(buf, argv[2]);
		pthread_create(&t, NULL, swapper, argv + 2);
		while (time(NULL) < end) {
			r = syscall(SYS_openat, AT_FDCWD, buf,
				    O_WRONLY | O_CREAT, 0644);
			if (r >= 0) {
				opens++;
				close((int)r);
			} else
				fails++;
		}
		atomic_store(&stop, true);
		pthread_join(t, NULL);
		printf("ok toctou opens=%ld fails=%ld\n", opens, fails);
		return 0;
	}
	return 2;
}
