/* The seccomp user-notify handler; see unotify.h. */
#define _GNU_SOURCE
#include "unotify.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../shim/wire.h"
#include "connector.h"
#include "execgate.h"
#include "path.h"
#include "pipeline.h"
#include "resolve.h"
#include "server.h"

#include "seccomp_uapi.h"

#define MAX_THREADS 8
#define SEND_MAX    (64u << 10) /* bytes of a send emulated here */
#define CTRL_MAX    4096	    /* ancillary data of a sendmsg */
#define IOV_MAX_N   1024
#define WAKE_SIG    SIGUSR2

/* A request handed to the loop's thread. */
struct job {
	struct hx_peer peer;
	struct hx_request rq;
	struct hx_outcome out;
	char decided[PATH_MAX];
	bool adopt; /* no decision: serve adopt_fd as peer's connection;
		     * heap-allocated, nobody waits: the loop frees it */
	int adopt_fd;
	atomic_bool done; /* set by the loop's thread; polled, then waited */
	struct job *next;
};

struct hx_unotify {
	int lfd, efd, stopfd;
	struct hx_pipeline *pl;
	struct hx_server *srv;
	struct hx_source src;
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *head, *tail;
	atomic_bool stopping;
	int nthreads;
	pthread_t th[MAX_THREADS];
	atomic_ullong n_notif, n_emul, n_denied, n_cont, n_err;
	struct hx_execgate *gate; /* NULL: execs are not notified */
	pid_t root;		  /* harness-exec's child, before its exec */
	atomic_bool root_pending; /* its first exec not yet approved */
	char self_exe[PATH_MAX];  /* harness-exec's own image */
	atomic_bool setup_err;	  /* a worker kept its capabilities... */
};

/* This worker's connector for unix connects and sends (connector.h):
 * one per worker, so that a blocking one holds no other worker. */
static __thread struct hx_connector *worker_conn;

/* What a handler decided to send back. */
struct answer {
	enum { ANS_ERROR, ANS_VALUE, ANS_CONTINUE, ANS_SENT } kind;
	int err;      /* ANS_ERROR: positive errno */
	int64_t val;  /* ANS_VALUE */
};

/* ---- target memory and identity ---- */

static bool id_valid(struct hx_unotify *u, uint64_t id)
{
	return ioctl(u->lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* Exactly len bytes at addr in tid, or -errno. */
static int read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv(tid, &l, 1, &r, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* A NUL-terminated string of at most size-1 bytes, read page by page
 * so that the end of a mapping is not a fault. */
static int read_str(pid_t tid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	if (!addr)
		return -EFAULT;
	while (got < size) {
		size_t page = 4096 - ((addr + got) & 4095), want = size - got;
		struct iovec l, r;
		ssize_t n;
		char *z;

		if (want > page)
			want = page;
		l = (struct iovec){buf + got, want};
		r = (struct iovec){(void *)(uintptr_t)(addr + got), want};
		n = process_vm_readv(tid, &l, 1, &r, 1, 0);
		if (n <= 0)
			return n < 0 ? -errno : -EFAULT;
		z = memchr(buf + got, '\0', (size_t)n);
		if (z)
			return 0;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}

/* Tgid, ppid, uid and umask from /proc/<tid>/status. */
static int read_status(pid_t tid, pid_t *tgid, pid_t *ppid, uid_t *uid,
		       mode_t *umask_out)
{
	char path[64], buf[4096], *p;
	int fd;
	ssize_t n;
	unsigned um = 022;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	*tgid = 0;
	if ((p = strstr(buf, "\nTgid:")))
		*tgid = (pid_t)strtol(p + 6, NULL, 10);
	if ((p = strstr(buf, "\nPPid:")))
		*ppid = (pid_t)strtol(p + 6, NULL, 10);
	if ((p = strstr(buf, "\nUid:")))
		*uid = (uid_t)strtoul(p + 5, NULL, 10);
	if ((p = strstr(buf, "\nUmask:")))
		um = (unsigned)strtoul(p + 7, NULL, 8);
	*umask_out = (mode_t)(um & 0777);
	return *tgid > 0 ? 0 : -EIO;
}

struct target {
	pid_t tid;
	mode_t umask;
	char exe[PATH_MAX];
	struct hx_peer peer;
};

static int target_info(pid_t tid, struct target *t)
{
	char path[64];
	ssize_t n;
	int e;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	e = read_status(tid, &t->peer.pid, &t->peer.ppid, &t->peer.uid,
			&t->umask);
	if (e)
		return e;
	t->peer.tid = tid;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->peer.pid);
	n = readlink(path, t->exe, sizeof(t->exe) - 1);
	if (n > 0) {
		t->exe[n] = '\0';
		t->peer.exe = t->exe;
	}
	return 0;
}

/* The target's fd, in the supervisor (close it). */
static int take_fd(pid_t pid, int fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), r;

	if (pfd < 0)
		return -errno;
	r = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	if (r < 0)
		r = -errno;
	close(pfd);
	return r;
}

/* ---- the decision, on the loop's thread ---- */

static void on_jobs(struct hx_server *s, struct hx_source *src, uint32_t ev)
{
	struct hx_unotify *u = src->arg;
	struct job *j, *list;
	uint64_t v;

	(void)s;
	(void)ev;
	if (read(u->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&u->lock);
	list = u->head;
	u->head = u->tail = NULL;
	pthread_mutex_unlock(&u->lock);
	for (j = list; j;) {
		struct job *next = j->next;

		if (j->adopt) {
			/* Refused: it closes our end, and the target's shim
			 * reads EOF (unreachable: fail closed). */
			hx_server_adopt(u->srv, j->adopt_fd, j->peer.pid,
					j->peer.uid);
			free(j);
			j = next;
			continue;
		}
		hx_pipeline_decide_kernel(u->pl, &j->peer, &j->rq, &j->out,
					  j->decided, sizeof(j->decided));
		pthread_mutex_lock(&u->lock);
		atomic_store(&j->done, true); /* j may be gone after this */
		pthread_cond_broadcast(&u->cond);
		pthread_mutex_unlock(&u->lock);
		j = next;
	}
}

#define DECIDE_SPIN_NS 100000

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Hands j to the loop's thread; false when stopping. */
static bool enqueue(struct hx_unotify *u, struct job *j)
{
	uint64_t one = 1;

	atomic_store(&j->done, false);
	j->next = NULL;
	pthread_mutex_lock(&u->lock);
	if (atomic_load(&u->stopping)) {
		pthread_mutex_unlock(&u->lock);
		return false;
	}
	if (u->tail)
		u->tail->next = j;
	else
		u->head = j;
	u->tail = j;
	pthread_mutex_unlock(&u->lock);
	if (write(u->efd, &one, sizeof(one)) < 0 && errno != EAGAIN) {
		/* Unreachable in practice; the stop path answers it. */
	}
	return true;
}

/* Decides j on the loop's thread and waits; false when stopping (the
 * caller denies). */
static bool decide(struct hx_unotify *u, struct job *j)
{
	bool ok;

	if (!enqueue(u, j))
		return false;
	/* A decision takes tens of microseconds; waking from a futex on a
	 * VM costs as much again, so poll first. */
	for (uint64_t until = mono_ns() + DECIDE_SPIN_NS;
	     !atomic_load(&j->done) && mono_ns() < until;)
		__builtin_ia32_pause();
	pthread_mutex_lock(&u->lock);
	while (!atomic_load(&j->done) && !atomic_load(&u->stopping))
		pthread_cond_wait(&u->cond, &u->lock);
	ok = atomic_load(&j->done);
	if (!ok) {
		/* Still queued: take it out before its stack goes. */
		struct job **pp = &u->head, *prev = NULL;

		while (*pp && *pp != j) {
			prev = *pp;
			pp = &(*pp)->next;
		}
		if (*pp) {
			*pp = j->next;
			if (u->tail == j)
				u->tail = prev;
		}
	}
	pthread_mutex_unlock(&u->lock);
	return ok;
}

/* ---- open family ---- */

static int abs_path(const struct target *t, int dirfd, const char *path,
		    char *out, size_t size)
{
	char link[64], base[PATH_MAX];
	ssize_t n;

	if (!path[0])
		return -ENOENT;
	if (path[0] == '/') {
		if ((size_t)snprintf(out, size, "%s", path) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)t->tid);
	else if (dirfd >= 0)
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)t->peer.pid,
			 dirfd);
	else
		return -EBADF;
	n = readlink(link, base, sizeof(base) - 1);
	if (n <= 0)
		return dirfd == AT_FDCWD ? -ENOENT : -EBADF;
	base[n] = '\0';
	/* "pipe:[3]", "/x (deleted)": not a directory the policy can name. */
	if (base[0] != '/')
		return -ENOTDIR;
	if ((size_t)snprintf(out, size, "%s/%s", base, path) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* Opens what was decided, as the target would have, here. */
static int open_here(const struct target *t, const char *decided,
		     uint64_t flags, mode_t mode, uint64_t resolve)
{
	char path[PATH_MAX + 32];
	struct open_how how = {0};
	int fd;

	if (!decided[0] || decided[0] != '/')
		return -EACCES;
	how.flags = (flags | O_CLOEXEC | O_NOCTTY);
	if (flags & (O_CREAT | __O_TMPFILE))
		how.mode = mode & 07777 & ~t->umask;
	if (!strncmp(decided, "/proc/self/", 11) ||
	    !strcmp(decided, "/proc/self")) {
		/* The decision named the target's own /proc entry (often
		 * /dev/stdout -> /proc/self/fd/1): follow it for the
		 * target, magic link included, and nothing else. */
		snprintf(path, sizeof(path), "/proc/%d%s", (int)t->peer.pid,
			 decided + 10);
		how.resolve = resolve & ~(uint64_t)RESOLVE_NO_MAGICLINKS;
	} else {
		snprintf(path, sizeof(path), "%s", decided);
		/* The decided path has every existing symlink resolved: one
		 * that appears now is a swap after the decision. */
		how.resolve = resolve | RESOLVE_NO_MAGICLINKS |
			      RESOLVE_NO_SYMLINKS;
	}
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

static void do_open(struct hx_unotify *u, const struct seccomp_notif *n,
		    const struct target *t, struct answer *a)
{
	const __u64 *arg = n->data.args;
	uint64_t paddr, flags, mode = 0, resolve = 0;
	int dirfd = AT_FDCWD, e;
	struct job j;
	char raw[PATH_MAX], full[PATH_MAX];
	struct seccomp_notif_addfd add;

	memset(&j, 0, sizeof(j));
	switch (n->data.nr) {
	case SYS_open:
		paddr = arg[0];
		flags = (uint32_t)arg[1];
		mode = (uint32_t)arg[2];
		j.rq.call = HX_CALL_OPEN;
		break;
	case SYS_creat:
		paddr = arg[0];
		flags = O_CREAT | O_WRONLY | O_TRUNC;
		mode = (uint32_t)arg[1];
		j.rq.call = HX_CALL_CREAT;
		break;
	case SYS_openat:
		dirfd = (int)arg[0];
		paddr = arg[1];
		flags = (uint32_t)arg[2];
		mode = (uint32_t)arg[3];
		j.rq.call = HX_CALL_OPENAT;
		break;
	default: { /* openat2 */
		struct open_how how;
		unsigned char extra[64];
		size_t size = (size_t)arg[3];

		dirfd = (int)arg[0];
		paddr = arg[1];
		if (size < sizeof(how) || size > 4096) {
			a->err = size < sizeof(how) ? EINVAL : E2BIG;
			return;
		}
		if ((e = read_mem(t->tid, arg[2], &how, sizeof(how)))) {
			a->err = -e;
			return;
		}
		/* Unknown trailing fields must be zero (as the kernel says). */
		for (size_t off = sizeof(how); off < size;) {
			size_t k = size - off < sizeof(extra) ? size - off
							      : sizeof(extra);

			if ((e = read_mem(t->tid, arg[2] + off, extra, k))) {
				a->err = -e;
				return;
			}
			for (size_t i = 0; i < k; i++)
				if (extra[i]) {
					a->err = E2BIG;
					return;
				}
			off += k;
		}
		flags = how.flags;
		mode = how.mode;
		resolve = how.resolve;
		/* Lookups anchored at the dirfd cannot be honoured on an
		 * absolute, decided path: refused, never widened. */
		if (resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)) {
			a->err = EACCES;
			return;
		}
		j.rq.call = HX_CALL_OPENAT;
		break;
	}
	}
	if ((e = read_str(t->tid, paddr, raw, sizeof(raw)))) {
		a->err = -e;
		return;
	}
	if (!id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	if ((e = abs_path(t, dirfd, raw, full, sizeof(full)))) {
		a->err = -e;
		return;
	}
	j.peer = t->peer;
	/* Read-only opens arrive with --trace-reads, and openat2 always. */
	j.rq.op = (flags & O_ACCMODE) != O_RDONLY ||
			  (flags & (O_CREAT | O_TRUNC | O_APPEND | __O_TMPFILE))
		      ? HX_OP_WRITE
		      : HX_OP_READ;
	j.rq.path = full;
	j.rq.has_flags = true;
	j.rq.flags = (uint32_t)flags;
	if (flags & (O_CREAT | __O_TMPFILE)) {
		j.rq.has_mode = true;
		j.rq.mode = (uint32_t)mode;
	}
	if (!decide(u, &j)) {
		a->err = EACCES;
		return;
	}
	if (j.out.reply != HX_VERDICT_ALLOW) {
		atomic_fetch_add(&u->n_denied, 1);
		a->err = j.out.err ? j.out.err : EACCES;
		return;
	}
	e = open_here(t, j.decided, flags, (mode_t)mode, resolve);
	if (e < 0) {
		a->err = -e;
		return;
	}
	memset(&add, 0, sizeof(add));
	add.id = n->id;
	add.flags = SECCOMP_ADDFD_FLAG_SEND;
	add.srcfd = (uint32_t)e;
	add.newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
	if (ioctl(u->lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0) {
		close(e);
		atomic_fetch_add(&u->n_emul, 1);
		a->kind = ANS_SENT;
		return;
	}
	/* A failed injection is a failed call (EMFILE...), never a pass. */
	a->err = errno == EINPROGRESS ? EACCES : errno;
	close(e);
}

/* ---- network ---- */

/* An abstract unix address ("\0name"). */
static bool is_abstract(const struct sockaddr_storage *ss, socklen_t len)
{
	return ss->ss_family == AF_UNIX &&
	       len > offsetof(struct sockaddr_un, sun_path) &&
	       ((const struct sockaddr_un *)(const void *)ss)->sun_path[0] ==
		   '\0';
}

static bool is_own_socket(const struct hx_unotify *u,
			  const struct sockaddr_storage *ss, socklen_t len)
{
	const struct sockaddr_un *sun = (const void *)ss;
	size_t n;

	if (ss->ss_family != AF_UNIX || !u->sock_path[0] ||
	    len <= offsetof(struct sockaddr_un, sun_path))
		return false;
	n = len - offsetof(struct sockaddr_un, sun_path);
	return strnlen(sun->sun_path, n) == strlen(u->sock_path) &&
	       !strncmp(sun->sun_path, u->sock_path, n);
}

/* Decides an address; false with a->err set when it may not be used.
 * For a unix socket path, *target is then an O_PATH fd of the socket
 * file as decided (symlinks resolved, none followed now), else -1. */
static bool decide_addr(struct hx_unotify *u, const struct target *t,
			uint32_t call, enum hx_op op,
			const struct sockaddr_storage *ss, socklen_t len,
			struct answer *a, int *target)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS};
	struct stat st;
	struct job j;
	int fd;

	*target = -1;
	memset(&j, 0, sizeof(j));
	j.peer = t->peer;
	j.rq.call = call;
	j.rq.op = op;
	j.rq.addr = ss;
	j.rq.addrlen = len;
	if (!decide(u, &j)) {
		a->err = EACCES;
		return false;
	}
	if (j.out.reply != HX_VERDICT_ALLOW) {
		atomic_fetch_add(&u->n_denied, 1);
		a->err = j.out.err ? j.out.err : EACCES;
		return false;
	}
	if (ss->ss_family != AF_UNIX || is_abstract(ss, len))
		return true;
	/* What connect would have found at the decided path. */
	fd = j.decided[0] ? (int)syscall(SYS_openat2, AT_FDCWD, j.decided,
					 &how, sizeof(how))
			  : -1;
	if (fd < 0) {
		a->err = !j.decided[0] ? EACCES
			 : errno == ELOOP || errno == EXDEV ? EACCES
							     : errno;
		return false;
	}
	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode)) {
		close(fd);
		a->err = ECONNREFUSED; /* as connect to a non-socket says */
		return false;
	}
	*target = fd;
	return true;
}

/* Whether the target's fd is close-on-exec (/proc/<pid>/fdinfo). */
static bool fd_cloexec(pid_t pid, int fd)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	if ((f = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return true;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	buf[n > 0 ? n : 0] = '\0';
	p = strstr(buf, "flags:");
	return !p || (strtoul(p + 6, NULL, 8) & O_CLOEXEC);
}

/* A connect to the session socket, the shim's channel: not left to the
 * kernel, whose second read of the address a racing thread could point
 * anywhere, but answered with one end of a fresh socketpair put in
 * place of the target's socket (ADDFD with SETFD), whose other end the
 * loop serves as a connection of the target's process. */
static void connect_own(struct hx_unotify *u, const struct seccomp_notif *n,
			const struct target *t, int fd, struct answer *a)
{
	struct seccomp_notif_addfd add;
	int sfd = take_fd(t->peer.pid, fd), type = 0, fl, sv[2];
	socklen_t tl = sizeof(type);
	struct job *j;

	if (sfd < 0) {
		a->err = sfd == -EBADF ? EBADF : EACCES;
		return;
	}
	fl = fcntl(sfd, F_GETFL);
	if (getsockopt(sfd, SOL_SOCKET, SO_TYPE, &type, &tl) ||
	    type != SOCK_SEQPACKET || fl < 0) {
		close(sfd);
		a->err = errno == ENOTSOCK ? ENOTSOCK : EPROTOTYPE;
		return;
	}
	close(sfd);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		a->err = errno;
		return;
	}
	if ((fl & O_NONBLOCK) && fcntl(sv[1], F_SETFL, O_NONBLOCK)) {
		a->err = errno;
		close(sv[0]);
		close(sv[1]);
		return;
	}
	/* Not waited for: what the target sends first waits in the
	 * socket until the loop serves it. */
	j = calloc(1, sizeof(*j));
	if (j) {
		j->peer = t->peer;
		j->adopt = true;
		j->adopt_fd = sv[0];
	}
	if (!j || !enqueue(u, j)) {
		free(j);
		close(sv[0]);
		close(sv[1]);
		a->err = ECONNREFUSED;
		return;
	}
	memset(&add, 0, sizeof(add));
	add.id = n->id;
	add.flags = SECCOMP_ADDFD_FLAG_SETFD;
	add.srcfd = (uint32_t)sv[1];
	add.newfd = (uint32_t)fd;
	add.newfd_flags = fd_cloexec(t->peer.pid, fd) ? O_CLOEXEC : 0;
	if (ioctl(u->lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0) {
		a->err = errno; /* the loop sees our end close */
		close(sv[1]);
		return;
	}
	close(sv[1]);
	a->kind = ANS_VALUE;
	a->val = 0;
}

static void do_connect(struct hx_unotify *u, const struct seccomp_notif *n,
		       const struct target *t, struct answer *a)
{
	struct sockaddr_storage ss;
	socklen_t len = (socklen_t)n->data.args[2];
	int fd = (int)n->data.args[0], sfd, e, target = -1;

	if (len < sizeof(sa_family_t) || len > sizeof(ss)) {
		a->err = EINVAL;
		return;
	}
	memset(&ss, 0, sizeof(ss));
	if ((e = read_mem(t->tid, n->data.args[1], &ss, len))) {
		a->err = -e;
		return;
	}
	if (!id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	if (is_own_socket(u, &ss, len)) {
		connect_own(u, n, t, fd, a);
		return;
	}
	if (is_abstract(&ss, len)) {
		/* CONTINUE: abstract sockets are held by Landlock's scope
		 * (ABI 6), checked by the kernel at the real call, so a
		 * swap after this read gains nothing. GAP (documented):
		 * below ABI 6 only the shim decides them. */
		atomic_fetch_add(&u->n_cont, 1);
		a->kind = ANS_CONTINUE;
		return;
	}
	if (ss.ss_family != AF_UNSPEC &&
	    !decide_addr(u, t, HX_CALL_CONNECT, HX_OP_CONNECT, &ss, len, a,
			 &target))
		return;
	sfd = take_fd(t->peer.pid, fd);
	if (sfd < 0) {
		if (target >= 0)
			close(target);
		a->err = sfd == -EBADF ? EBADF : EACCES;
		return;
	}
	/* The taken fd shares the file description: O_NONBLOCK holds, and
	 * EINPROGRESS is what the target gets. A path-unix connect is made
	 * by the connector, so that the server sees no capability. */
	if (target >= 0) {
		e = hx_connector_connect(worker_conn, sfd, target);
		close(target);
	} else if (ss.ss_family == AF_UNIX) {
		e = -EINVAL; /* unnamed: connect says so too */
	} else {
		e = connect(sfd, (struct sockaddr *)&ss, len) ? -errno : 0;
	}
	close(sfd);
	if (e) {
		a->err = e == -EINTR ? EINTR : -e;
		return;
	}
	atomic_fetch_add(&u->n_emul, 1);
	a->kind = ANS_VALUE;
	a->val = 0;
}

static void sigpipe(const struct target *t, int err, int flags)
{
	if (err == EPIPE && !(flags & MSG_NOSIGNAL))
		syscall(SYS_tgkill, t->peer.pid, t->tid, SIGPIPE);
}

#define RIGHTS_MAX 253 /* SCM_MAX_FD */

/* Ancillary data as the send made here needs it: the fds of SCM_RIGHTS
 * messages are taken from the target and their numbers replaced by
 * ours, in place (taken[], *ntaken: to close). SCM_CREDENTIALS is
 * refused (EPERM): whoever sends could only vouch for itself. Returns 0
 * or -errno. */
static int take_rights(const struct target *t, void *ctrl, size_t len,
		       int *taken, size_t *ntaken)
{
	struct msghdr m = {.msg_control = ctrl, .msg_controllen = len};

	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_CREDENTIALS)
			return -EPERM;
		if (c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < k; i++) {
			unsigned char *slot = CMSG_DATA(c) + i * sizeof(int);
			int num, mine;

			if (*ntaken >= RIGHTS_MAX)
				return -ETOOMANYREFS;
			memcpy(&num, slot, sizeof(num));
			if ((mine = take_fd(t->peer.pid, num)) < 0)
				return mine == -EBADF ? -EBADF : -EACCES;
			taken[(*ntaken)++] = mine;
			memcpy(slot, &mine, sizeof(mine));
		}
	}
	return 0;
}

static bool unix_socket(int sfd)
{
	int dom = 0;
	socklen_t dl = sizeof(dom);

	return getsockopt(sfd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) == 0 &&
	       dom == AF_UNIX;
}

/* Whether the target's fd is a stream or seqpacket socket and the call
 * is not a TCP Fast Open: then the kernel ignores any msg_name. */
static bool stream_socket(const struct target *t, int fd, int flags)
{
	int sfd = take_fd(t->peer.pid, fd), type = 0;
	socklen_t tl = sizeof(type);
	bool stream;

	if (sfd < 0)
		return false;
	stream = getsockopt(sfd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
		 (type == SOCK_STREAM || type == SOCK_SEQPACKET) &&
		 !(flags & MSG_FASTOPEN);
	close(sfd);
	return stream;
}

static void do_send(struct hx_unotify *u, const struct seccomp_notif *n,
		    const struct target *t, struct answer *a)
{
	const __u64 *arg = n->data.args;
	/* sendmmsg: only its first message is sent (emulated, with or
	 * without a destination), which sendmmsg may do: callers handle a
	 * short count, as glibc's resolver does. No CONTINUE: the rest of
	 * the vector could name any address. */
	bool is_mmsg = n->data.nr == SYS_sendmmsg;
	bool is_msg = n->data.nr == SYS_sendmsg || is_mmsg;
	bool to_peer = false;
	struct sockaddr_storage ss;
	struct msghdr mh, out;
	struct iovec *iov = NULL, one;
	unsigned char *data = NULL;
	union {
		struct cmsghdr h;
		unsigned char b[CTRL_MAX];
	} ctrl;
	int taken[RIGHTS_MAX];
	size_t ntaken = 0;
	uint64_t name, total = 0;
	socklen_t len;
	int flags, fd = (int)arg[0], sfd = -1, e, target = -1;
	ssize_t r;

	memset(&out, 0, sizeof(out));
	if (is_mmsg && arg[2] == 0) {
		a->kind = ANS_VALUE;
		a->val = 0;
		return;
	}
	if (is_msg) {
		/* For sendmmsg, arg[1] points at msgvec[0].msg_hdr. */
		if ((e = read_mem(t->tid, arg[1], &mh, sizeof(mh)))) {
			a->err = -e;
			return;
		}
		flags = (int)(is_mmsg ? arg[3] : arg[2]);
		name = (uint64_t)(uintptr_t)mh.msg_name;
		len = mh.msg_namelen;
		if ((!name || !len) && (is_mmsg || !stream_socket(t, (int)arg[0],
								 flags))) {
			/* A datagram socket would honour a msg_name that a
			 * second thread sets after this read: emulate, to the
			 * connected peer (decided at connect). */
			to_peer = true;
		} else if (!name || !len) {
			if (!id_valid(u, n->id)) {
				a->err = ESRCH;
				return;
			}
			/* CONTINUE after a pointer read: safe because the
			 * kernel ignores msg_name on a stream or seqpacket
			 * socket without MSG_FASTOPEN (a register argument,
			 * not swappable), so what a racing thread writes
			 * there changes nothing: the data goes to the peer
			 * decided at connect. */
			atomic_fetch_add(&u->n_cont, 1);
			a->kind = ANS_CONTINUE;
			return;
		}
	} else {
		flags = (int)arg[3];
		name = arg[4];
		len = (socklen_t)arg[5];
	}
	memset(&ss, 0, sizeof(ss));
	if (to_peer) {
		len = 0;
	} else if (len < sizeof(sa_family_t) || len > sizeof(ss)) {
		a->err = EINVAL;
		return;
	} else if ((e = read_mem(t->tid, name, &ss, len))) {
		a->err = -e;
		return;
	}
	if (!id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	if (!to_peer &&
	    !decide_addr(u, t, is_msg ? HX_CALL_SENDMSG : HX_CALL_SENDTO,
			 HX_OP_SEND, &ss, len, a, &target))
		return;
	/* Emulated: the data, the address and the control messages are our
	 * copies; to a unix socket, sent by the connector (connector.h). */
	if (is_msg) {
		e = mh.msg_iovlen > IOV_MAX_N		  ? -EMSGSIZE
		    : mh.msg_controllen > sizeof(ctrl.b) ? -ENOBUFS
							  : 0;
		if (e)
			goto fail;
		iov = calloc(mh.msg_iovlen ? mh.msg_iovlen : 1, sizeof(*iov));
		if (!iov) {
			e = -ENOMEM;
			goto fail;
		}
		if ((e = read_mem(t->tid, (uint64_t)(uintptr_t)mh.msg_iov, iov,
				  mh.msg_iovlen * sizeof(*iov))))
			goto fail;
		for (size_t i = 0; i < mh.msg_iovlen; i++)
			total += iov[i].iov_len;
		if (mh.msg_controllen &&
		    (e = read_mem(t->tid,
				  (uint64_t)(uintptr_t)mh.msg_control, ctrl.b,
				  mh.msg_controllen)))
			goto fail;
	} else
		total = arg[2];
	if (total > SEND_MAX) {
		e = -EMSGSIZE;
		goto fail;
	}
	data = malloc(total ? total : 1);
	if (!data) {
		e = -ENOMEM;
		goto fail;
	}
	if (is_msg) {
		size_t off = 0;

		for (size_t i = 0; i < mh.msg_iovlen; i++) {
			if ((e = read_mem(t->tid,
					  (uint64_t)(uintptr_t)iov[i].iov_base,
					  data + off, iov[i].iov_len)))
				goto fail;
			off += iov[i].iov_len;
		}
	} else if ((e = read_mem(t->tid, arg[1], data, total)))
		goto fail;
	if (!id_valid(u, n->id)) {
		e = -ESRCH;
		goto fail;
	}
	sfd = take_fd(t->peer.pid, fd);
	if (sfd < 0) {
		e = sfd == -EBADF ? -EBADF : -EACCES;
		sfd = -1;
		goto fail;
	}
	if (is_msg && mh.msg_controllen &&
	    (e = take_rights(t, ctrl.b, mh.msg_controllen, taken, &ntaken)))
		goto fail;
	one = (struct iovec){data, total};
	out.msg_name = to_peer ? NULL : &ss;
	out.msg_namelen = len;
	out.msg_iov = &one;
	out.msg_iovlen = 1;
	if (is_msg && mh.msg_controllen) {
		out.msg_control = ctrl.b;
		out.msg_controllen = mh.msg_controllen;
	}
	if (unix_socket(sfd))
		r = hx_connector_send(worker_conn, sfd, target, &out, flags);
	else if ((r = sendmsg(sfd, &out, flags | MSG_NOSIGNAL)) < 0)
		r = -errno;
	if (r < 0) {
		e = (int)r;
		sigpipe(t, -e, flags);
		goto fail;
	}
	atomic_fetch_add(&u->n_emul, 1);
	a->kind = ANS_VALUE;
	a->val = r;
	if (is_mmsg) {
		/* What the kernel would do: msgvec[0].msg_len = bytes sent,
		 * and the call returns the count of messages. */
		unsigned int sent = (unsigned int)r;
		struct iovec l = {&sent, sizeof(sent)};
		struct iovec rv = {(void *)(uintptr_t)(arg[1] +
				   offsetof(struct mmsghdr, msg_len)),
				   sizeof(sent)};

		if (process_vm_writev(t->tid, &l, 1, &rv, 1, 0) !=
		    (ssize_t)sizeof(sent)) {
			e = -EFAULT;
			goto fail;
		}
		a->val = 1;
	}
	goto done;
fail:
	a->kind = ANS_ERROR;
	a->err = -e;
done:
	if (sfd >= 0)
		close(sfd);
	for (size_t i = 0; i < ntaken; i++)
		close(taken[i]);
	if (target >= 0)
		close(target);
	free(iov);
	free(data);
}

/* ---- file mutations ----
 *
 * rename family, unlink family, rmdir, mkdir, link, symlink, truncate,
 * chmod and chown families. Each is decided on the path as the target
 * sees it (op write for chmod/chown) and done here, relative to an
 * O_PATH directory fd of the decided parent opened with
 * RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS: the decided path has its
 * symlinks resolved, so one swapped into a parent after the decision
 * fails the call (ELOOP) instead of redirecting it. Never CONTINUE.
 *
 * Credentials: the operation runs with the worker thread's, which are
 * the supervisor's uid and gids without capabilities but CAP_SYS_PTRACE
 * (drop_worker_caps), so the kernel checks modes, ownership and chown
 * as for the capability-less agent. When the target's uid is not the
 * supervisor's euid the call is refused with EACCES rather than done
 * with other rights. Created entries get the supervisor's gid and the
 * target's umask (a default ACL on the parent is not honoured). */

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE	 (1 << 1)
#define RENAME_WHITEOUT	 (1 << 2)
#endif

enum mut_kind {
	MUT_RENAME,
	MUT_UNLINK,
	MUT_RMDIR,
	MUT_MKDIR,
	MUT_LINK,
	MUT_SYMLINK,
	MUT_TRUNCATE,
	MUT_CHMOD,
	MUT_CHOWN,
};

/* The decided path's parent as an O_PATH|O_DIRECTORY fd, and its final
 * component in name ("/" appended when the target's path ended with
 * one, so the kernel keeps its trailing-slash rules). -errno. */
static int open_parent(const struct target *t, const char *decided,
		       bool slash, char *name, size_t nsize)
{
	char path[PATH_MAX + 32], *last;
	struct open_how how = {0};
	int fd;

	if (!decided[0] || decided[0] != '/')
		return -EACCES;
	if (!strncmp(decided, "/proc/self/", 11) ||
	    !strcmp(decided, "/proc/self"))
		snprintf(path, sizeof(path), "/proc/%d%s", (int)t->peer.pid,
			 decided + 10);
	else
		snprintf(path, sizeof(path), "%s", decided);
	last = strrchr(path, '/');
	if (!last[1] || !strcmp(last + 1, ".") || !strcmp(last + 1, ".."))
		return -EBUSY; /* "/": nothing to act on by name */
	if ((size_t)snprintf(name, nsize, "%s%s", last + 1, slash ? "/" : "") >=
	    nsize)
		return -ENAMETOOLONG;
	if (last == path)
		last[1] = '\0';
	else
		*last = '\0';
	how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

static bool ends_slash(const char *s)
{
	size_t n = strlen(s);

	return n > 1 && s[n - 1] == '/';
}

/* A second path argument resolved here (the pipeline only hands back
 * the first): normalized, symlinks resolved as the target sees them
 * (the last one only when follow). The request carries this form, so
 * what is decided is what is acted on. */
static int resolve2(const struct target *t, const char *full, bool follow,
		    char *out, size_t size)
{
	char norm[PATH_MAX];
	int e;

	if (hx_path_normalize(full, norm, sizeof(norm)))
		return -ENAMETOOLONG;
	e = hx_path_resolve(t->peer.pid, t->tid, norm, follow, out, size);
	return e < 0 ? e : 0;
}

/* The final component as an O_PATH fd that is not followed. */
static int open_leaf(int pfd, const char *name, struct stat *st)
{
	int fd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

static int reopen(int fd, int flags)
{
	char p[64];
	int r;

	snprintf(p, sizeof(p), "/proc/thread-self/fd/%d", fd);
	r = open(p, flags | O_CLOEXEC | O_NOCTTY);
	return r < 0 ? -errno : r;
}

/* Does the operation; 0 or -errno. */
static int mut_act(const struct target *t, enum mut_kind k, int pfd,
		   const char *name, int pfd2, const char *name2,
		   const char *text, unsigned flags, mode_t mode, uint64_t len,
		   uid_t ouid, gid_t ogid, bool nofollow)
{
	struct stat st;
	int fd, r = 0;

	switch (k) {
	case MUT_RENAME:
		r = (int)syscall(SYS_renameat2, pfd, name, pfd2, name2, flags);
		break;
	case MUT_UNLINK:
		r = unlinkat(pfd, name, 0);
		break;
	case MUT_RMDIR:
		r = unlinkat(pfd, name, AT_REMOVEDIR);
		break;
	case MUT_MKDIR:
		r = mkdirat(pfd, name, mode & 01777 & ~t->umask);
		break;
	case MUT_LINK:
		/* The existing file was resolved (AT_SYMLINK_FOLLOW done
		 * by resolve2): a symlink found there now is a swap, and is
		 * linked itself, never followed. */
		r = linkat(pfd2, name2, pfd, name, 0);
		break;
	case MUT_SYMLINK:
		r = symlinkat(text, pfd, name);
		break;
	case MUT_TRUNCATE:
	case MUT_CHMOD:
	case MUT_CHOWN:
		fd = open_leaf(pfd, name, &st);
		if (fd < 0)
			return fd;
		if (S_ISLNK(st.st_mode) && !nofollow) {
			/* Resolved before the decision: a swap. */
			close(fd);
			return -ELOOP;
		}
		if (k == MUT_TRUNCATE) {
			int w;

			if (!S_ISREG(st.st_mode)) {
				close(fd);
				return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
			}
			w = reopen(fd, O_WRONLY);
			close(fd);
			if (w < 0)
				return w;
			r = ftruncate(w, (off_t)len);
			if (r)
				r = -errno;
			close(w);
			return r;
		}
		if (k == MUT_CHOWN)
			r = fchownat(fd, "", ouid, ogid, AT_EMPTY_PATH);
		else if (S_ISLNK(st.st_mode)) {
			errno = EOPNOTSUPP; /* as fchmodat2 NOFOLLOW says */
			r = -1;
		} else {
			char p[64];

			snprintf(p, sizeof(p), "/proc/thread-self/fd/%d", fd);
			r = fchmodat(AT_FDCWD, p, mode & 07777, 0);
		}
		if (r)
			r = -errno;
		close(fd);
		return r;
	}
	return r ? -errno : 0;
}

static void do_mut(struct hx_unotify *u, const struct seccomp_notif *n,
		   const struct target *t, struct answer *a)
{
	const __u64 *arg = n->data.args;
	enum mut_kind k;
	enum hx_op op;
	uint32_t call;
	uint64_t p1, p2 = 0, len = 0;
	int dfd = AT_FDCWD, dfd2 = AT_FDCWD, pfd = -1, pfd2 = -1, e;
	unsigned flags = 0;
	mode_t mode = 0;
	uid_t ouid = (uid_t)-1;
	gid_t ogid = (gid_t)-1;
	bool nofollow = false, has_mode = false;
	struct job j;
	static __thread char raw[PATH_MAX], raw2[PATH_MAX], full[PATH_MAX],
	    full2[PATH_MAX], res2[PATH_MAX];
	char name[NAME_MAX + 2], name2[NAME_MAX + 2];

	switch (n->data.nr) {
	case SYS_rename:
	case SYS_renameat:
	case SYS_renameat2:
		k = MUT_RENAME;
		op = HX_OP_RENAME;
		if (n->data.nr == SYS_rename) {
			p1 = arg[0];
			p2 = arg[1];
			call = HX_CALL_RENAME;
		} else {
			dfd = (int)arg[0];
			p1 = arg[1];
			dfd2 = (int)arg[2];
			p2 = arg[3];
			call = HX_CALL_RENAMEAT;
			if (n->data.nr == SYS_renameat2) {
				flags = (unsigned)arg[4];
				call = HX_CALL_RENAMEAT2;
			}
		}
		if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE |
					RENAME_WHITEOUT)) {
			a->err = EINVAL;
			return;
		}
		break;
	case SYS_unlink:
	case SYS_rmdir:
		k = n->data.nr == SYS_unlink ? MUT_UNLINK : MUT_RMDIR;
		op = n->data.nr == SYS_unlink ? HX_OP_UNLINK : HX_OP_RMDIR;
		call = n->data.nr == SYS_unlink ? HX_CALL_UNLINK : HX_CALL_RMDIR;
		p1 = arg[0];
		break;
	case SYS_unlinkat:
		if ((unsigned)arg[2] & ~(unsigned)AT_REMOVEDIR) {
			a->err = EINVAL;
			return;
		}
		k = ((unsigned)arg[2] & AT_REMOVEDIR) ? MUT_RMDIR : MUT_UNLINK;
		op = k == MUT_RMDIR ? HX_OP_RMDIR : HX_OP_UNLINK;
		call = HX_CALL_UNLINKAT;
		dfd = (int)arg[0];
		p1 = arg[1];
		break;
	case SYS_mkdir:
	case SYS_mkdirat:
		k = MUT_MKDIR;
		op = HX_OP_MKDIR;
		if (n->data.nr == SYS_mkdir) {
			p1 = arg[0];
			mode = (mode_t)arg[1];
			call = HX_CALL_MKDIR;
		} else {
			dfd = (int)arg[0];
			p1 = arg[1];
			mode = (mode_t)arg[2];
			call = HX_CALL_MKDIRAT;
		}
		has_mode = true;
		break;
	case SYS_link:
	case SYS_linkat:
		k = MUT_LINK;
		op = HX_OP_LINK;
		if (n->data.nr == SYS_link) {
			p2 = arg[0];
			p1 = arg[1];
			call = HX_CALL_LINK;
		} else {
			dfd2 = (int)arg[0];
			p2 = arg[1];
			dfd = (int)arg[2];
			p1 = arg[3];
			flags = (unsigned)arg[4];
			call = HX_CALL_LINKAT;
			if (flags & ~(unsigned)(AT_SYMLINK_FOLLOW |
						AT_EMPTY_PATH)) {
				a->err = EINVAL;
				return;
			}
		}
		break;
	case SYS_symlink:
	case SYS_symlinkat:
		k = MUT_SYMLINK;
		op = HX_OP_SYMLINK;
		p2 = arg[0];
		if (n->data.nr == SYS_symlink) {
			p1 = arg[1];
			call = HX_CALL_SYMLINK;
		} else {
			dfd = (int)arg[1];
			p1 = arg[2];
			call = HX_CALL_SYMLINKAT;
		}
		break;
	case SYS_truncate:
		k = MUT_TRUNCATE;
		op = HX_OP_TRUNCATE;
		call = HX_CALL_TRUNCATE;
		p1 = arg[0];
		len = arg[1];
		if ((int64_t)len < 0) {
			a->err = EINVAL;
			return;
		}
		break;
	case SYS_chmod:
	case SYS_fchmodat:
	case SYS_fchmodat2:
		k = MUT_CHMOD;
		op = HX_OP_WRITE;
		call = HX_CALL_CHMOD;
		if (n->data.nr == SYS_chmod) {
			p1 = arg[0];
			mode = (mode_t)arg[1];
		} else {
			dfd = (int)arg[0];
			p1 = arg[1];
			mode = (mode_t)arg[2];
			if (n->data.nr == SYS_fchmodat2)
				flags = (unsigned)arg[3];
		}
		if (flags & ~(unsigned)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
			a->err = EINVAL;
			return;
		}
		nofollow = flags & AT_SYMLINK_NOFOLLOW;
		has_mode = true;
		break;
	default: /* chown, lchown, fchownat */
		k = MUT_CHOWN;
		op = HX_OP_WRITE;
		call = HX_CALL_CHOWN;
		if (n->data.nr == SYS_fchownat) {
			dfd = (int)arg[0];
			p1 = arg[1];
			ouid = (uid_t)arg[2];
			ogid = (gid_t)arg[3];
			flags = (unsigned)arg[4];
			if (flags & ~(unsigned)(AT_SYMLINK_NOFOLLOW |
						AT_EMPTY_PATH)) {
				a->err = EINVAL;
				return;
			}
			nofollow = flags & AT_SYMLINK_NOFOLLOW;
		} else {
			p1 = arg[0];
			ouid = (uid_t)arg[1];
			ogid = (gid_t)arg[2];
			nofollow = n->data.nr == SYS_lchown;
		}
		break;
	}
	/* Never with more rights than the target has. */
	if (t->peer.uid != geteuid()) {
		a->err = EACCES;
		return;
	}
	if ((e = read_str(t->tid, p1, raw, sizeof(raw))) ||
	    (p2 && (e = read_str(t->tid, p2, raw2, sizeof(raw2))))) {
		a->err = -e;
		return;
	}
	if (!id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	/* An empty path (AT_EMPTY_PATH: act on the dirfd itself) is not
	 * emulated: ENOENT, as without the flag. */
	if ((e = abs_path(t, dfd, raw, full, sizeof(full)))) {
		a->err = -e;
		return;
	}
	if (k == MUT_SYMLINK && !raw2[0]) {
		a->err = ENOENT;
		return;
	}
	if ((k == MUT_RENAME || k == MUT_LINK) &&
	    ((e = abs_path(t, dfd2, raw2, full2, sizeof(full2))) ||
	     (e = resolve2(t, full2,
			   k == MUT_LINK && (flags & AT_SYMLINK_FOLLOW), res2,
			   sizeof(res2))))) {
		a->err = -e;
		return;
	}
	memset(&j, 0, sizeof(j));
	j.peer = t->peer;
	j.rq.call = call;
	j.rq.op = op;
	j.rq.path = full;
	if (k == MUT_RENAME || k == MUT_LINK)
		j.rq.path2 = res2;
	else if (k == MUT_SYMLINK)
		j.rq.path2 = raw2;
	if (nofollow) {
		/* follows_last() in the pipeline: the link itself. */
		j.rq.has_flags = true;
		j.rq.flags = O_NOFOLLOW;
	} else if (flags && k != MUT_CHMOD && k != MUT_CHOWN) {
		j.rq.has_flags = true;
		j.rq.flags = flags;
	}
	if (has_mode) {
		j.rq.has_mode = true;
		j.rq.mode = (uint32_t)mode;
	}
	if (!decide(u, &j)) {
		a->err = EACCES;
		return;
	}
	if (j.out.reply != HX_VERDICT_ALLOW) {
		atomic_fetch_add(&u->n_denied, 1);
		a->err = j.out.err ? j.out.err : EACCES;
		return;
	}
	/* Not for a target that is gone (killed while this was decided). */
	if (!id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	pfd = open_parent(t, j.decided, ends_slash(raw), name, sizeof(name));
	if (pfd < 0) {
		a->err = -pfd;
		return;
	}
	if (k == MUT_RENAME || k == MUT_LINK) {
		pfd2 = open_parent(t, res2, ends_slash(raw2), name2,
				   sizeof(name2));
		if (pfd2 < 0) {
			a->err = -pfd2;
			close(pfd);
			return;
		}
	}
	e = mut_act(t, k, pfd, name, pfd2, name2, raw2, flags, mode, len, ouid,
		    ogid, nofollow);
	close(pfd);
	if (pfd2 >= 0)
		close(pfd2);
	if (e) {
		a->err = -e;
		return;
	}
	atomic_fetch_add(&u->n_emul, 1);
	a->kind = ANS_VALUE;
	a->val = 0;
}

/* ---- workers ---- */

/* ---- exec (with the exec gate) ---- */

#define EXEC_ARGS_MAX  4096	  /* argv entries read from the target */
#define EXEC_ARGV_MAX  (256u << 10) /* bytes of argv strings */
#define EXEC_DEPTH     5	  /* #! levels, as the kernel allows */
#define BINPRM_BUF     256

/* The path as the supervisor can reach what the target names:
 * /proc/self and /proc/thread-self are the target's. */
static void here_path(const struct target *t, const char *full, char *out,
		      size_t size)
{
	if (!strncmp(full, "/proc/self/", 11) || !strcmp(full, "/proc/self"))
		snprintf(out, size, "/proc/%d%s", (int)t->peer.pid, full + 10);
	else if (!strncmp(full, "/proc/thread-self/", 18) ||
		 !strcmp(full, "/proc/thread-self"))
		snprintf(out, size, "/proc/%d/task/%d%s", (int)t->peer.pid,
			 (int)t->tid, full + 17);
	else
		snprintf(out, size, "%s", full);
}

/* Reads argv (NULL-terminated pointer array at addr) into blob as
 * NUL-terminated strings back to back. 0, or -errno (-E2BIG over the
 * bounds: refused, never decided on a truncated argv). */
static int read_argv(pid_t tid, uint64_t addr, char *blob, size_t cap,
		     size_t *len, size_t *argc)
{
	uint64_t ptrs[64];
	size_t n = 0, used = 0;
	int e;

	*len = *argc = 0;
	if (!addr)
		return 0; /* the kernel runs it with argv [""] */
	for (;;) {
		size_t cnt = 64;

		/* The array may end near an unmapped page: then one by one. */
		if (read_mem(tid, addr + n * 8, ptrs, sizeof(ptrs))) {
			cnt = 1;
			if ((e = read_mem(tid, addr + n * 8, ptrs, 8)))
				return e;
		}
		for (size_t i = 0; i < cnt; i++) {
			if (!ptrs[i]) {
				*len = used;
				*argc = n;
				return 0;
			}
			if (n >= EXEC_ARGS_MAX || used >= cap)
				return -E2BIG;
			e = read_str(tid, ptrs[i], blob + used, cap - used);
			if (e)
				return e == -ENAMETOOLONG ? -E2BIG : e;
			used += strlen(blob + used) + 1;
			n++;
		}
	}
}

/* Appends s (with its NUL) to a growing buffer. */
static int put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t nc = (*len + n + 1) * 2;
		char *nb = realloc(*buf, nc);

		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = nc;
	}
	memcpy(*buf + *len, s, n);
	(*buf)[*len + n] = '\0';
	*len += n + 1;
	return 0;
}

static bool spacetab(char c)
{
	return c == ' ' || c == '\t';
}

/* A "#!" line as fs/binfmt_script.c reads it: 0 with the interpreter
 * (and its one optional argument) in buf, -ENOEXEC otherwise. */
static int parse_shebang(char *buf, size_t n, char **name, char **arg)
{
	char *end, *p, *sep;

	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return -ENOEXEC;
	buf[n < BINPRM_BUF ? n : BINPRM_BUF - 1] = '\0';
	end = memchr(buf, '\n', strlen(buf));
	if (!end)
		end = buf + strlen(buf); /* a truncated line: best effort */
	while (end > buf + 2 && spacetab(end[-1]))
		end--;
	*end = '\0';
	for (p = buf + 2; spacetab(*p); p++)
		;
	if (!*p)
		return -ENOEXEC;
	*name = p;
	*arg = NULL;
	for (sep = p; *sep && !spacetab(*sep); sep++)
		;
	if (*sep) {
		*sep++ = '\0';
		while (spacetab(*sep))
			sep++;
		if (*sep)
			*arg = sep;
	}
	return 0;
}

/* What the gate must see after the exec: the final image's device and
 * inode (through #! interpreters, as the kernel follows them) and the
 * argv the kernel builds (interpreter, its argument, the script's name,
 * then argv[1..]). argv: argc strings in blob. *out (malloc'd) gets the
 * expected cmdline. 0 or -errno (the errno exec would give, roughly). */
static int expect_exec(const struct target *t, const char *full,
		       const char *fname, bool nofollow, const char *blob,
		       size_t blen, size_t argc, struct stat *fin, char **out,
		       size_t *outlen)
{
	char here[PATH_MAX + 64], name[PATH_MAX + 32], abs[PATH_MAX];
	char buf[BINPRM_BUF + 1], *cur = NULL, *nb = NULL;
	size_t clen = 0, ccap = 0, nlen, ncap;
	int e = 0;

	/* argv as the kernel takes it: empty means [""] (5.18+). */
	if (!argc)
		e = put(&cur, &clen, &ccap, "", 0);
	else if (!(cur = malloc(blen)))
		e = -ENOMEM;
	else {
		memcpy(cur, blob, blen);
		clen = ccap = blen;
	}
	if (e)
		goto out;
	here_path(t, full, here, sizeof(here));
	snprintf(name, sizeof(name), "%s", fname);
	for (int depth = 0;; depth++) {
		int fd = open(here, O_RDONLY | O_NONBLOCK | O_CLOEXEC |
					(nofollow && !depth ? O_NOFOLLOW : 0));
		char *iname, *iarg;
		ssize_t n = 0;
		size_t first;

		if (fd < 0) {
			/* Execute-only (--x): no #! to read; the kernel may
			 * still run it. */
			if ((errno != EACCES && errno != EPERM) ||
			    stat(here, fin)) {
				e = -errno;
				goto out;
			}
		} else {
			if (fstat(fd, fin)) {
				e = -errno;
				close(fd);
				goto out;
			}
			if (S_ISREG(fin->st_mode))
				n = pread(fd, buf, BINPRM_BUF, 0);
			close(fd);
		}
		if (!S_ISREG(fin->st_mode)) {
			e = -EACCES;
			goto out;
		}
		/* A file with no name (a memfd, O_TMPFILE, a deleted file)
		 * reached through /proc/<pid>/fd: fileless exec, refused
		 * like execveat(AT_EMPTY_PATH) is in BPF. */
		if (fin->st_nlink == 0) {
			e = -EACCES;
			goto out;
		}
		if (n < 2 || parse_shebang(buf, (size_t)n, &iname, &iarg))
			break; /* ELF or anything else: this is the image */
		if (depth + 1 >= EXEC_DEPTH) {
			e = -ELOOP;
			goto out;
		}
		/* New argv: interpreter, [argument], script name, argv[1..]. */
		nb = NULL;
		nlen = ncap = 0;
		first = strlen(cur) + 1;
		if ((e = put(&nb, &nlen, &ncap, iname, strlen(iname))) ||
		    (iarg && (e = put(&nb, &nlen, &ncap, iarg, strlen(iarg)))) ||
		    (e = put(&nb, &nlen, &ncap, name, strlen(name))))
			goto out;
		if (clen > first &&
		    (e = put(&nb, &nlen, &ncap, cur + first, clen - first - 1)))
			goto out;
		free(cur);
		cur = nb;
		clen = nlen;
		ccap = ncap;
		nb = NULL;
		/* The interpreter is looked up from the target's cwd. */
		if ((e = abs_path(t, AT_FDCWD, iname, abs, sizeof(abs))))
			goto out;
		snprintf(name, sizeof(name), "%s", iname);
		here_path(t, abs, here, sizeof(here));
	}
	*out = cur;
	*outlen = clen;
	cur = NULL;
out:
	free(nb);
	free(cur);
	return e;
}

static void do_exec(struct hx_unotify *u, const struct seccomp_notif *n,
		    const struct target *t, struct answer *a)
{
	const __u64 *arg = n->data.args;
	bool at = n->data.nr == SYS_execveat;
	int dirfd = at ? (int)arg[0] : AT_FDCWD, flags = at ? (int)arg[4] : 0;
	char raw[PATH_MAX], full[PATH_MAX], fname[PATH_MAX + 32];
	char *blob = NULL, *expect = NULL;
	const char **argv = NULL;
	size_t blen = 0, argc = 0, elen = 0, k;
	struct stat fin;
	struct job j;
	int e;

	if (!u->gate) {
		a->err = EACCES; /* never CONTINUE without the gate */
		return;
	}
	/* AT_EMPTY_PATH is refused in BPF before it gets here. */
	if (flags & ~AT_SYMLINK_NOFOLLOW) {
		a->err = EINVAL;
		return;
	}
	if ((e = read_str(t->tid, at ? arg[1] : arg[0], raw, sizeof(raw)))) {
		a->err = -e;
		return;
	}
	if (!(blob = malloc(EXEC_ARGV_MAX))) {
		a->err = ENOMEM;
		return;
	}
	if ((e = read_argv(t->tid, at ? arg[2] : arg[1], blob, EXEC_ARGV_MAX,
			   &blen, &argc))) {
		a->err = -e;
		goto out;
	}
	if (!id_valid(u, n->id)) {
		a->err = ESRCH;
		goto out;
	}
	if ((e = abs_path(t, dirfd, raw, full, sizeof(full)))) {
		a->err = -e;
		goto out;
	}
	/* The name the kernel hands a #! interpreter (fs/exec.c). */
	if (raw[0] == '/' || dirfd == AT_FDCWD)
		snprintf(fname, sizeof(fname), "%s", raw);
	else
		snprintf(fname, sizeof(fname), "/dev/fd/%d/%s", dirfd, raw);
	/* A missing file fails as exec would, without a record (a shell
	 * or execvp tries every PATH directory). */
	if ((e = expect_exec(t, full, fname, flags & AT_SYMLINK_NOFOLLOW, blob,
			     blen, argc, &fin, &expect, &elen))) {
		a->err = -e;
		goto out;
	}
	/* harness-exec's own child, before its first exec: decided (and
	 * logged) by decide_command in run.c already. Once only: an agent
	 * that execs harness-exec again is decided like anything else. */
	if (!(t->peer.pid == u->root && t->peer.exe &&
	      !strcmp(t->peer.exe, u->self_exe) &&
	      atomic_exchange(&u->root_pending, false))) {
		argv = calloc(argc + 1, sizeof(*argv));
		if (!argv) {
			a->err = ENOMEM;
			goto out;
		}
		k = 0;
		for (size_t i = 0; i < argc; i++) {
			argv[i] = blob + k;
			k += strlen(blob + k) + 1;
		}
		memset(&j, 0, sizeof(j));
		j.peer = t->peer;
		j.rq.call = at ? HX_CALL_EXECVEAT : HX_CALL_EXECVE;
		j.rq.op = HX_OP_EXEC;
		j.rq.path = full;
		j.rq.argv = argv;
		j.rq.argc = argc;
		if (!decide(u, &j)) {
			a->err = EACCES;
			goto out;
		}
		if (j.out.reply != HX_VERDICT_ALLOW) {
			atomic_fetch_add(&u->n_denied, 1);
			a->err = j.out.err ? j.out.err : EACCES;
			goto out;
		}
	}
	/* The approval is in place before the kernel can run the exec. */
	if (hx_execgate_approve(u->gate, t->tid, fin.st_dev, fin.st_ino,
				expect, elen)) {
		a->err = ENOMEM;
		goto out;
	}
	/* CONTINUE after reading pointer arguments (path, argv): safe by
	 * DESIGN.md invariant 2 only because the exec gate is behind it.
	 * The kernel re-reads both from the target's memory, where another
	 * thread may have swapped them; at PTRACE_EVENT_EXEC, before the
	 * new image runs, execgate.c compares /proc/<pid>/exe (dev, inode)
	 * and the new argv with the approval just recorded, and kills on a
	 * mismatch. For a #! script that is the interpreter's inode and the
	 * script's name in its argv: a swap to another script changes the
	 * name. Note (README): the interpreter opens the script by name,
	 * under the read rules; a symlink in that name, swapped after the
	 * decision by an agent that may write its directory, changes which
	 * file that is. */
	atomic_fetch_add(&u->n_cont, 1);
	a->kind = ANS_CONTINUE;
out:
	free(argv);
	free(expect);
	free(blob);
}

static void handle(struct hx_unotify *u, const struct seccomp_notif *n)
{
	struct seccomp_notif_resp resp;
	struct answer a = {ANS_ERROR, EACCES, 0};
	struct target t;

	atomic_fetch_add(&u->n_notif, 1);
	if (n->data.arch != AUDIT_ARCH_X86_64 || atomic_load(&u->setup_err))
		goto reply; /* the deny filter kills foreign arches first */
	if (target_info((pid_t)n->pid, &t)) {
		a.err = ESRCH;
		goto reply;
	}
	switch (n->data.nr) {
	case SYS_open:
	case SYS_openat:
	case SYS_creat:
	case SYS_openat2:
		do_open(u, n, &t, &a);
		break;
	case SYS_connect:
		do_connect(u, n, &t, &a);
		break;
	case SYS_execve:
	case SYS_execveat:
		do_exec(u, n, &t, &a);
		break;
	case SYS_sendto:
	case SYS_sendmsg:
	case SYS_sendmmsg:
		do_send(u, n, &t, &a);
		break;
	case SYS_rename:
	case SYS_renameat:
	case SYS_renameat2:
	case SYS_unlink:
	case SYS_unlinkat:
	case SYS_rmdir:
	case SYS_mkdir:
	case SYS_mkdirat:
	case SYS_link:
	case SYS_linkat:
	case SYS_symlink:
	case SYS_symlinkat:
	case SYS_truncate:
	case SYS_chmod:
	case SYS_fchmodat:
	case SYS_fchmodat2:
	case SYS_chown:
	case SYS_lchown:
	case SYS_fchownat:
		do_mut(u, n, &t, &a);
		break;
	default:
		break; /* not on the list: denied */
	}
reply:
	if (a.kind == ANS_SENT)
		return;
	memset(&resp, 0, sizeof(resp));
	resp.id = n->id;
	switch (a.kind) {
	case ANS_CONTINUE:
		/* Every ANS_CONTINUE site says why (DESIGN.md invariant 2;
		 * tests/integration/test_continue_sites.py holds them to it):
		 * for execve/execveat (do_exec) the exec gate (execgate.c)
		 * checks the executed image and argv before the new image
		 * runs; abstract sockets have Landlock's scope behind them;
		 * a stream send without MSG_FASTOPEN ignores the address the
		 * kernel would read again. Every other unix connect or send
		 * is made by the connector (connector.h). */
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		break;
	case ANS_VALUE:
		resp.val = a.val;
		break;
	default:
		atomic_fetch_add(&u->n_err, 1);
		resp.error = -(a.err > 0 ? a.err : EACCES);
		break;
	}
	/* ENOENT: the target is gone or was interrupted; nothing to do. */
	ioctl(u->lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static void wake_handler(int sig)
{
	(void)sig;
}

/* What a worker does for a target it does with no more rights than the
 * target: of a root supervisor's capabilities it keeps CAP_SYS_PTRACE
 * only (to read the memory and fds of a target that made itself
 * non-dumpable), so the kernel checks file modes, ownership and chown
 * for the emulated call as for the capability-less agent. Capabilities
 * are per thread: the event loop and the exec gate keep theirs. */
static bool drop_worker_caps(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	uint32_t keep = CAP_TO_MASK(CAP_SYS_PTRACE);

	if (syscall(SYS_capget, &h, d))
		return false;
	for (int i = 0; i < 2; i++) {
		uint32_t k = i == CAP_TO_INDEX(CAP_SYS_PTRACE) ? keep : 0;

		d[i].permitted &= k;
		d[i].effective &= k;
		d[i].inheritable = 0;
	}
	return syscall(SYS_capset, &h, d) == 0;
}

static void *worker(void *arg)
{
	struct hx_unotify *u = arg;
	struct seccomp_notif n;
	struct pollfd p[2];

	/* Our own umask (0: the target's is applied by hand) and cwd. */
	if (unshare(CLONE_FS) == 0)
		umask(0);
	if (!drop_worker_caps() || hx_connector_new(&worker_conn))
		atomic_store(&u->setup_err, true); /* handle() refuses all */
	p[0] = (struct pollfd){.fd = u->lfd, .events = POLLIN};
	p[1] = (struct pollfd){.fd = u->stopfd, .events = POLLIN};
	while (!atomic_load(&u->stopping)) {
		p[0].revents = p[1].revents = 0;
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents || atomic_load(&u->stopping))
			break;
		if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
			if (!(p[0].revents & POLLIN))
				break; /* every filter user is gone */
		}
		memset(&n, 0, sizeof(n));
		/* Another worker may take it first: then this blocks until
		 * the next one, or WAKE_SIG at stop. */
		if (ioctl(u->lfd, SECCOMP_IOCTL_NOTIF_RECV, &n)) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			break;
		}
		handle(u, &n);
	}
	hx_connector_free(worker_conn);
	worker_conn = NULL;
	return NULL;
}

/* ---- lifecycle ---- */

int hx_unotify_receive(int sock, pid_t child, int timeout_ms)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	int num = -1, fd;
	ssize_t n;
	char ack = 'k';

	if (poll(&p, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	do
		n = read(sock, &num, sizeof(num));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(num) || num < 0)
		return n < 0 ? -errno : -EPIPE;
	fd = take_fd(child, num);
	if (fd < 0)
		return fd;
	if (write(sock, &ack, 1) != 1) {
		close(fd);
		return -EPIPE;
	}
	return fd;
}

int hx_unotify_start(int listener, struct hx_pipeline *pl,
		     struct hx_server *srv, const char *sock_path,
		     int nthreads, struct hx_execgate *gate, pid_t root,
		     struct hx_unotify **out)
{
	struct hx_unotify *u = calloc(1, sizeof(*u));
	struct sigaction sa;
	uint64_t fl = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	int e;

	*out = NULL;
	if (!u) {
		close(listener);
		return -ENOMEM;
	}
	u->lfd = listener;
	u->pl = pl;
	u->srv = srv;
	u->efd = u->stopfd = -1;
	u->gate = gate;
	u->root = root;
	atomic_store(&u->root_pending, root > 0);
	{
		ssize_t k = readlink("/proc/self/exe", u->self_exe,
				     sizeof(u->self_exe) - 1);

		u->self_exe[k > 0 ? k : 0] = '\0';
	}
	if (sock_path)
		snprintf(u->sock_path, sizeof(u->sock_path), "%s", sock_path);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	/* 6.6+: the target's thread is woken on the CPU that answers. Best
	 * effort: older kernels say EINVAL and work, slower. */
	ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, fl);
	if ((e = hx_pipeline_kernel_enable(pl)))
		goto fail;
	u->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	u->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (u->efd < 0 || u->stopfd < 0) {
		e = -errno;
		goto fail;
	}
	u->src.fd = u->efd;
	u->src.handle = on_jobs;
	u->src.arg = u;
	if (hx_server_add(srv, &u->src, EPOLLIN)) {
		e = -errno;
		goto fail;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake_handler; /* no SA_RESTART: RECV returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(WAKE_SIG, &sa, NULL);
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > MAX_THREADS)
		nthreads = MAX_THREADS;
	for (; u->nthreads < nthreads; u->nthreads++)
		if ((e = -pthread_create(&u->th[u->nthreads], NULL, worker,
					 u)))
			break;
	if (!u->nthreads)
		goto fail;
	*out = u;
	return 0;
fail:
	u->nthreads = 0;
	hx_unotify_stop(u);
	return e ? e : -EAGAIN;
}

void hx_unotify_stop(struct hx_unotify *u)
{
	uint64_t one = 1;

	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	atomic_store(&u->stopping, true);
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	if (u->stopfd >= 0 && write(u->stopfd, &one, sizeof(one)) < 0) {
		/* the signal below still wakes them */
	}
	for (int i = 0; i < u->nthreads; i++) {
		/* A worker blocked in NOTIF_RECV wakes on WAKE_SIG only. */
		while (pthread_tryjoin_np(u->th[i], NULL) == EBUSY) {
			pthread_kill(u->th[i], WAKE_SIG);
			usleep(1000);
		}
	}
	/* Left: adoptions the loop did not take (every decision's worker
	 * took its own back). */
	for (struct job *j = u->head, *next; j; j = next) {
		next = j->next;
		close(j->adopt_fd);
		free(j);
	}
	if (u->efd >= 0) {
		hx_server_del(u->srv, &u->src);
		close(u->efd);
	}
	if (u->stopfd >= 0)
		close(u->stopfd);
	/* From here the kernel answers ENOSYS to the tree (fail closed). */
	if (u->lfd >= 0)
		close(u->lfd);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->cond);
	free(u);
}

void hx_unotify_stats(const struct hx_unotify *u, struct hx_unotify_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!u)
		return;
	st->notifications = atomic_load(&u->n_notif);
	st->emulated = atomic_load(&u->n_emul);
	st->denied = atomic_load(&u->n_denied);
	st->continued = atomic_load(&u->n_cont);
	st->errors = atomic_load(&u->n_err);
}
