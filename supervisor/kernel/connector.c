/* The unix-socket connector; see connector.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/connector.h"
#include "supervisor/kernel/caps.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define CONN_CONNECT 1
#define CONN_SEND    2
#define CTRL_MAX     4096
#define DATA_MAX     (64u << 10) /* unotify_net.c sends no more */
#define FDS_MAX	     (253 + 1)	 /* SCM_MAX_FD, and the socket */
#define CHILD_FD     3

struct creq {
	uint32_t op;
	int32_t flags;
	uint32_t target; /* 1: fds[1] is an O_PATH fd of the socket to reach */
	uint32_t namelen, ctrllen, datalen;
};

struct hx_connector {
	pthread_mutex_t lock;
	int sock; /* -1: not started, or gone (then dead) */
	bool dead;
	pid_t pid;
	pthread_mutex_t pidfd_lock; /* of pidfd: hx_connector_interrupt */
	int pidfd;		    /* the process's, or -1 */
};

#define INTERRUPT_SIG SIGUSR2

/* ---- the connector process: system calls only (forked from a
 * multithreaded process) ---- */

static unsigned char rq_buf[sizeof(struct creq) +
			    sizeof(struct sockaddr_storage) + CTRL_MAX +
			    DATA_MAX];

/* Puts fds[k..] into the SCM_RIGHTS messages of ctrl, in order. */
static int64_t rewrite_rights(void *ctrl, size_t len, const int *fds,
			      size_t nfds, size_t k)
{
	struct msghdr m = {.msg_control = ctrl, .msg_controllen = len};

	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n > nfds - k)
			return -EPROTO;
		memcpy(CMSG_DATA(c), fds + k, n * sizeof(int));
		k += n;
	}
	return k == nfds ? 0 : -EPROTO;
}

/* "/proc/self/fd/N": the socket inode the supervisor opened (O_PATH,
 * no symlink followed), which connect reaches through the magic link
 * whatever its path has become since. */
static socklen_t fd_name(struct sockaddr_un *sa, int fd)
{
	static const char pre[] = "/proc/self/fd/";
	char digits[16];
	size_t n = 0;

	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0);
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, pre, sizeof(pre) - 1);
	for (size_t i = 0; i < n; i++)
		sa->sun_path[sizeof(pre) - 1 + i] = digits[n - 1 - i];
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
			   sizeof(pre) + n);
}

static int64_t act(size_t n, const int *fds, size_t nfds)
{
	struct sockaddr_un via;
	socklen_t vialen = 0;
	union {
		struct cmsghdr h;
		unsigned char b[CTRL_MAX];
	} ctrl;
	struct creq rq;
	const unsigned char *name, *data;
	struct iovec iov;
	struct msghdr m;
	int64_t e;

	if (n < sizeof(rq) || nfds < 1)
		return -EPROTO;
	memcpy(&rq, rq_buf, sizeof(rq));
	if (rq.target > 1 || nfds < 1 + rq.target ||
	    (rq.target && rq.namelen) ||
	    rq.namelen > sizeof(struct sockaddr_storage) ||
	    rq.ctrllen > CTRL_MAX || rq.datalen > DATA_MAX ||
	    n != sizeof(rq) + rq.namelen + rq.ctrllen + rq.datalen)
		return -EPROTO;
	name = rq_buf + sizeof(rq);
	memcpy(ctrl.b, name + rq.namelen, rq.ctrllen);
	data = name + rq.namelen + rq.ctrllen;
	if (rq.target) {
		vialen = fd_name(&via, fds[1]);
		name = (const unsigned char *)&via;
	}
	if (rq.op == CONN_CONNECT) {
		if (nfds != 1 + rq.target || !(vialen || rq.namelen))
			return -EPROTO;
		return connect(fds[0], (const void *)name,
			       vialen ? vialen : rq.namelen)
			   ? -errno
			   : 0;
	}
	if (rq.op != CONN_SEND)
		return -EPROTO;
	if ((e = rewrite_rights(ctrl.b, rq.ctrllen, fds, nfds, 1 + rq.target)))
		return e;
	iov = (struct iovec){(void *)data, rq.datalen};
	m = (struct msghdr){
	    .msg_name = vialen || rq.namelen ? (void *)name : NULL,
	    .msg_namelen = vialen ? vialen : rq.namelen,
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = rq.ctrllen ? ctrl.b : NULL,
	    .msg_controllen = rq.ctrllen,
	};
	e = sendmsg(fds[0], &m, rq.flags | MSG_NOSIGNAL);
	return e < 0 ? -errno : e;
}

static __attribute__((noreturn)) void serve(int sock)
{
	for (;;) {
		union {
			struct cmsghdr h;
			unsigned char b[CMSG_SPACE(FDS_MAX * sizeof(int))];
		} cb;
		struct iovec iov = {rq_buf, sizeof(rq_buf)};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cb.b,
				    .msg_controllen = sizeof(cb.b)};
		int fds[FDS_MAX];
		size_t nfds = 0;
		int64_t ret;
		ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);

		if (n == 0)
			_exit(0); /* the supervisor is done */
		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c;
		     c = CMSG_NXTHDR(&mh, c)) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			if (c->cmsg_level != SOL_SOCKET ||
			    c->cmsg_type != SCM_RIGHTS)
				continue;
			for (size_t i = 0; i < k && nfds < FDS_MAX; i++)
				memcpy(&fds[nfds++],
				       CMSG_DATA(c) + i * sizeof(int),
				       sizeof(int));
		}
		ret = mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)
			  ? -EPROTO
			  : act((size_t)n, fds, nfds);
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		if (send(sock, &ret, sizeof(ret), MSG_NOSIGNAL) < 0)
			_exit(1);
	}
}

static void interrupted(int sig)
{
	(void)sig;
}

static __attribute__((noreturn)) void child(int sock, pid_t parent)
{
	/* hx_connector_interrupt: a connect or send fails EINTR (no
	 * SA_RESTART), which is answered; a wait for the next request
	 * goes on. */
	struct sigaction sa = {.sa_handler = interrupted};

	sigemptyset(&sa.sa_mask);
	if (sigaction(INTERRUPT_SIG, &sa, NULL))
		_exit(1);
	/* Dies with the supervisor's thread that forked it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != parent)
		_exit(1);
	if (dup2(sock, CHILD_FD) != CHILD_FD)
		_exit(1);
	syscall(SYS_close_range, 0, CHILD_FD - 1, 0);
	syscall(SYS_close_range, CHILD_FD + 1, ~0U, 0);
	prctl(PR_SET_NAME, "harness-unix", 0, 0, 0);
	/* Not dumpable: the capability-less agent cannot ptrace it or
	 * read its memory (Landlock's domain rule forbids it too). */
	/* No capability left, for good: permitted empty, no_new_privs. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || hx_caps_limit(0))
		_exit(1);
	serve(CHILD_FD);
}

/* ---- the supervisor's side ---- */

static int start(struct hx_connector *c)
{
	int sv[2], big = (int)sizeof(rq_buf) * 2;
	pid_t self = getpid(), pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	/* One request must fit (the default is 208 KiB; best effort). */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (pid == 0)
		child(sv[1], self);
	close(sv[1]);
	c->sock = sv[0];
	c->pid = pid;
	pthread_mutex_lock(&c->pidfd_lock);
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	pthread_mutex_unlock(&c->pidfd_lock);
	return 0;
}

void hx_connector_interrupt(struct hx_connector *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->pidfd_lock);
	if (c->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, c->pidfd, INTERRUPT_SIG, NULL,
			0);
	pthread_mutex_unlock(&c->pidfd_lock);
}

static void close_pidfd(struct hx_connector *c)
{
	pthread_mutex_lock(&c->pidfd_lock);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
	pthread_mutex_unlock(&c->pidfd_lock);
}

static void stop_child(struct hx_connector *c)
{
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
	c->dead = true;
	/* Through its pidfd where there is one: reaped by the exec gate's
	 * waitpid(-1), its number may be another process's. */
	pthread_mutex_lock(&c->pidfd_lock);
	if (c->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
	else if (c->pid > 0)
		kill(c->pid, SIGKILL);
	pthread_mutex_unlock(&c->pidfd_lock);
	close_pidfd(c);
}

/* One request and its answer. */
static int64_t call(struct hx_connector *c, const struct creq *rq,
		    const void *name, const void *ctrl, const void *data,
		    const int *fds, size_t nfds)
{
	union {
		struct cmsghdr h;
		unsigned char b[CMSG_SPACE(FDS_MAX * sizeof(int))];
	} cb;
	struct iovec iov[4] = {{(void *)rq, sizeof(*rq)},
			       {(void *)name, rq->namelen},
			       {(void *)ctrl, rq->ctrllen},
			       {(void *)data, rq->datalen}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 4};
	struct cmsghdr *cm;
	int64_t ret;
	ssize_t n;

	if (nfds < 1 || nfds > FDS_MAX)
		return -EINVAL;
	mh.msg_control = cb.b;
	mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	pthread_mutex_lock(&c->lock);
	if (c->dead) {
		ret = -EACCES; /* killed or broken: fail closed */
		goto out;
	}
	if (c->sock < 0 && (ret = start(c)))
		goto out;
	if (sendmsg(c->sock, &mh, MSG_NOSIGNAL) < 0) {
		ret = -EACCES;
		stop_child(c);
		goto out;
	}
	/* Not retried on EINTR: that is the stop signal (unotify.c). */
	n = recv(c->sock, &ret, sizeof(ret), 0);
	if (n != (ssize_t)sizeof(ret)) {
		/* Interrupted (stopping) or gone: no later answer can be
		 * matched with its request, so no later request. */
		ret = n < 0 && errno == EINTR ? -EINTR : -EACCES;
		stop_child(c);
	}
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int hx_connector_connect(struct hx_connector *c, int sfd, int target)
{
	struct creq rq = {.op = CONN_CONNECT, .target = 1};
	int fds[2] = {sfd, target};

	return (int)call(c, &rq, NULL, NULL, NULL, fds, 2);
}

int hx_connector_connect_addr(struct hx_connector *c, int sfd, const void *addr,
			      socklen_t len)
{
	struct creq rq = {.op = CONN_CONNECT, .namelen = len};

	if (len > sizeof(struct sockaddr_storage))
		return -EINVAL;
	return (int)call(c, &rq, addr, NULL, NULL, &sfd, 1);
}

ssize_t hx_connector_send(struct hx_connector *c, int sfd, int target,
			  const struct msghdr *m, int flags)
{
	struct creq rq = {.op = CONN_SEND, .flags = flags};
	int fds[FDS_MAX];
	size_t nfds = 1;
	struct cmsghdr *cm;

	if (m->msg_iovlen > 1 ||
	    m->msg_namelen > sizeof(struct sockaddr_storage) ||
	    m->msg_controllen > CTRL_MAX ||
	    (m->msg_iovlen && m->msg_iov[0].iov_len > DATA_MAX))
		return -EMSGSIZE;
	rq.target = target >= 0;
	rq.namelen = m->msg_name && !rq.target ? m->msg_namelen : 0;
	rq.ctrllen = (uint32_t)m->msg_controllen;
	rq.datalen = m->msg_iovlen ? (uint32_t)m->msg_iov[0].iov_len : 0;
	fds[0] = sfd;
	if (rq.target)
		fds[nfds++] = target;
	for (cm = CMSG_FIRSTHDR(m); cm;
	     cm = CMSG_NXTHDR((struct msghdr *)m, cm)) {
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		if (k > FDS_MAX - nfds)
			return -ETOOMANYREFS;
		memcpy(fds + nfds, CMSG_DATA(cm), k * sizeof(int));
		nfds += k;
	}
	return call(c, &rq, rq.namelen ? m->msg_name : NULL, m->msg_control,
		    m->msg_iovlen ? m->msg_iov[0].iov_base : NULL, fds, nfds);
}

int hx_connector_new(struct hx_connector **out)
{
	struct hx_connector *c = calloc(1, sizeof(*c));

	*out = c;
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->pidfd_lock, NULL);
	c->sock = -1;
	c->pidfd = -1;
	return 0;
}

void hx_connector_free(struct hx_connector *c)
{
	if (!c)
		return;
	if (c->sock >= 0)
		close(c->sock); /* the connector reads EOF and exits */
	close_pidfd(c);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->pidfd_lock);
	free(c);
}
