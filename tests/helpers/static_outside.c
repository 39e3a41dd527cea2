/* Reaching processes outside the session by an id, static so that only
 * the kernel layers see it. Each subcommand prints one line per call:
 * "NAME ok" or "NAME ERRNO-NAME"; the integration test checks the
 * victim itself too (test_outside.py).
 *
 *   limits PID       prlimit64(PID, RLIMIT_NOFILE, 64), setpriority of
 *                    PID's process group to 19, setpriority of our uid's
 *                    processes to their current nice (no change even
 *                    when it passes), ioprio_set of PID's group to idle
 *   self             the same calls on ourselves (pid 0): allowed
 *   sched PID        setpriority, ioprio_set, sched_setaffinity (CPU 0),
 *                    sched_setscheduler and sched_setattr (SCHED_IDLE),
 *                    sched_setparam of the process PID
 *   sched-own        the same on a child of ours and on our own thread
 *                    (by tid), each checked with the get calls
 *   ioprio PID       prints PID's I/O priority (run outside the harness)
 *   sysv SHM MSG SEM writes "PWNED" into the shared memory SHM, sends a
 *                    message on the queue MSG, adds 1 to semaphore 0 of
 *                    SEM
 *   mq NAME          mq_open(NAME, O_WRONLY) and sends "PWNED"
 *   own              a SysV segment and a message queue of its own:
 *                    created, written, read back, removed
 *   listen-any       a TCP socket bound to 0.0.0.0 (any port) listens:
 *                    prints "listening PORT"
 *   http-unix PATH   connects to the Unix socket PATH, sends an HTTP
 *                    request without a token: prints "connect ERRNO-NAME"
 *                    or "answer N" (the bytes of the answer: 0, the
 *                    connection closed unanswered)
 *   linkrace NB S    binds and serves "own.sock" in the cwd; for S
 *                    seconds one thread connects to "sw.sock" in a loop
 *                    while another makes that name, in turn, a hard link
 *                    of own.sock and of the neighbour's socket NB;
 *                    prints "own N" (connects that reached own.sock)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define WHO_PROCESS 1 /* linux/ioprio.h */
#define WHO_PGRP    2
#define CLASS_IDLE  3

static void say(const char *what, long r)
{
	printf("%s %s\n", what, r < 0 ? strerrorname_np(errno) : "ok");
}

static void limits(pid_t pid)
{
	struct rlimit rl = {64, 64};
	int nice;

	say("prlimit", syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, &rl, NULL));
	say("setpriority-pgrp", setpriority(PRIO_PGRP, (id_t)pid, 19));
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	say("setpriority-user", setpriority(PRIO_USER, getuid(), nice));
	say("ioprio-pgrp",
	    syscall(SYS_ioprio_set, WHO_PGRP, pid, CLASS_IDLE << 13));
}

static void self(void)
{
	struct rlimit rl;

	getrlimit(RLIMIT_NOFILE, &rl);
	say("prlimit", syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &rl, NULL));
	/* One above its own (a suite run under nice 10 may not go to 1). */
	say("setpriority",
	    setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0) + 1));
	say("ioprio",
	    syscall(SYS_ioprio_set, WHO_PROCESS, 0, CLASS_IDLE << 13));
}

struct attr { /* struct sched_attr, first version (48 bytes) */
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t prio;
	uint64_t runtime, deadline, period;
};

/* Each call on pid, printed; with check, each is read back too. */
static void sched_on(pid_t pid, bool check)
{
	struct sched_param sp = {0};
	struct attr at = {.size = sizeof(at), .policy = SCHED_IDLE};
	cpu_set_t set, got;
	int cpu = sched_getcpu() < 0 ? 0 : sched_getcpu();
	long r;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	r = setpriority(PRIO_PROCESS, (id_t)pid, 19);
	if (!r && check && getpriority(PRIO_PROCESS, (id_t)pid) != 19)
		r = -1, errno = EIO;
	say("setpriority", r);
	r = syscall(SYS_ioprio_set, WHO_PROCESS, pid, CLASS_IDLE << 13);
	if (!r && check &&
	    syscall(SYS_ioprio_get, WHO_PROCESS, pid) != CLASS_IDLE << 13)
		r = -1, errno = EIO;
	say("ioprio", r);
	r = sched_setaffinity(pid, sizeof(set), &set);
	if (!r && check &&
	    (sched_getaffinity(pid, sizeof(got), &got) ||
	     !CPU_EQUAL(&set, &got)))
		r = -1, errno = EIO;
	say("affinity", r);
	r = sched_setscheduler(pid, SCHED_BATCH, &sp);
	if (!r && check && sched_getscheduler(pid) != SCHED_BATCH)
		r = -1, errno = EIO;
	say("scheduler", r);
	say("param", sched_setparam(pid, &sp));
	r = syscall(SYS_sched_setattr, pid, &at, 0);
	if (!r && check && sched_getscheduler(pid) != SCHED_IDLE)
		r = -1, errno = EIO;
	say("attr", r);
}

static void *idle_thread(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

static void sched_own(void)
{
	pid_t child = fork();
	pthread_t th;

	if (child == 0) {
		pause();
		_exit(0);
	}
	sched_on(child, true);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* Our own thread by its tid, as pthread_setaffinity_np does. */
	pthread_create(&th, NULL, idle_thread, NULL);
	{
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		say("thread-affinity",
		    pthread_setaffinity_np(th, sizeof(set), &set)
			? (errno = EPERM, -1)
			: 0);
	}
}

static void sysv(int shm, int msg, int sem)
{
	struct {
		long type;
		char text[8];
	} m = {1, "PWNED"};
	struct sembuf op = {0, 1, IPC_NOWAIT};
	char *p = shmat(shm, NULL, 0);

	if (p == (void *)-1)
		say("shmat", -1);
	else {
		memcpy(p, "PWNED", 5);
		say("shmat", 0);
	}
	say("msgsnd", msgsnd(msg, &m, 5, IPC_NOWAIT));
	say("semop", semop(sem, &op, 1));
}

static void mq(const char *name)
{
	mqd_t q = mq_open(name, O_WRONLY | O_NONBLOCK);

	say("mq_open", q);
	if (q >= 0)
		say("mq_send", mq_send(q, "PWNED", 5, 0));
}

static void own(void)
{
	struct {
		long type;
		char text[8];
	} m = {1, "mine"}, back;
	int shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	int msg = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	char *p;

	if (shm < 0 || msg < 0) {
		say("own", -1);
		return;
	}
	p = shmat(shm, NULL, 0);
	if (p == (void *)-1 || msgsnd(msg, &m, 5, 0) ||
	    msgrcv(msg, &back, sizeof(back.text), 0, IPC_NOWAIT) != 5) {
		say("own", -1);
		return;
	}
	strcpy(p, "mine");
	say("own", strcmp(p, back.text) ? (errno = EIO, -1) : 0);
	shmctl(shm, IPC_RMID, NULL);
	msgctl(msg, IPC_RMID, NULL);
}

static atomic_bool stop;
static atomic_long reached;
static const char *nb;

static void *serve(void *arg)
{
	int l = *(int *)arg;

	for (;;) {
		int c = accept(l, NULL, NULL);

		if (c >= 0) {
			atomic_fetch_add(&reached, 1);
			close(c);
		}
	}
	return NULL;
}

static void *relink(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !atomic_load(&stop); i++) {
		unlink("sw.tmp");
		if (!link(i & 1 ? nb : "own.sock", "sw.tmp"))
			rename("sw.tmp", "sw.sock");
	}
	return NULL;
}

static void linkrace(const char *neighbour, int secs)
{
	struct sockaddr_un own = {.sun_family = AF_UNIX,
				  .sun_path = "own.sock"},
			   sw = {.sun_family = AF_UNIX, .sun_path = "sw.sock"};
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	time_t end = time(NULL) + secs;
	pthread_t ts, tr;

	nb = neighbour;
	unlink("own.sock");
	if (l < 0 || bind(l, (struct sockaddr *)&own, sizeof(own)) ||
	    listen(l, 128)) {
		say("linkrace", -1);
		return;
	}
	pthread_create(&ts, NULL, serve, &l);
	pthread_create(&tr, NULL, relink, NULL);
	while (time(NULL) < end) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0);

		connect(s, (struct sockaddr *)&sw, sizeof(sw));
		close(s);
	}
	atomic_store(&stop, true);
	pthread_join(tr, NULL);
	usleep(100000);
	printf("own %ld\n", atomic_load(&reached));
}

static void http_unix(const char *path)
{
	static const char req[] = "POST /mcp HTTP/1.1\r\nHost: x\r\n"
				  "Content-Length: 2\r\n\r\n{}";
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	char buf[4096];
	long got = 0, n;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		say("connect", -1);
		return;
	}
	if (send(s, req, sizeof(req) - 1, MSG_NOSIGNAL) < 0) {
		/* closed before it was read: no answer either */
	}
	while ((n = read(s, buf, sizeof(buf))) > 0)
		got += n;
	printf("answer %ld\n", got);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "limits"))
		limits(atoi(argv[2]));
	else if (argc == 2 && !strcmp(argv[1], "self"))
		self();
	else if (argc == 3 && !strcmp(argv[1], "sched"))
		sched_on(atoi(argv[2]), false);
	else if (argc == 2 && !strcmp(argv[1], "sched-own"))
		sched_own();
	else if (argc == 3 && !strcmp(argv[1], "ioprio"))
		printf("%ld\n",
		       syscall(SYS_ioprio_get, WHO_PROCESS, atoi(argv[2])));
	else if (argc == 5 && !strcmp(argv[1], "sysv"))
		sysv(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	else if (argc == 3 && !strcmp(argv[1], "mq"))
		mq(argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "own"))
		own();
	else if (argc == 2 && !strcmp(argv[1], "listen-any")) {
		struct sockaddr_in in = {.sin_family = AF_INET};
		socklen_t l = sizeof(in);
		int s = socket(AF_INET, SOCK_STREAM, 0);

		if (bind(s, (struct sockaddr *)&in, sizeof(in)) ||
		    listen(s, 1) || getsockname(s, (struct sockaddr *)&in, &l))
			say("listen-any", -1);
		else
			printf("listening %d\n", ntohs(in.sin_port));
	} else if (argc == 3 && !strcmp(argv[1], "http-unix"))
		http_unix(argv[2]);
	else if (argc == 4 && !strcmp(argv[1], "linkrace"))
		linkrace(argv[2], atoi(argv[3]));
	else {
		fprintf(stderr, "usage: see the comment at the top\n");
		return 2;
	}
	return 0;
}
