/* The seccomp user-notify handler; see unotify.h. */
#define _GNU_SOURCE
#include "unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "caps.h"
#include "connector.h"
#include "seccomp_uapi.h"

#define WAKE_SIG SIGUSR2

__thread struct hx_connector *hx_un_conn;

/* ---- target memory and identity ---- */

bool hx_un_id_valid(struct hx_unotify *u, uint64_t id)
{
	return ioctl(u->lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* Exactly len bytes at addr in tid, or -errno. */
int hx_un_read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
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
int hx_un_read_str(pid_t tid, uint64_t addr, char *buf, size_t size)
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
		       mode_t *umask_out, pid_t *tracer)
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
	*tracer = 0;
	if ((p = strstr(buf, "\nTracerPid:")))
		*tracer = (pid_t)strtol(p + 11, NULL, 10);
	if ((p = strstr(buf, "\nUid:")))
		*uid = (uid_t)strtoul(p + 5, NULL, 10);
	if ((p = strstr(buf, "\nUmask:")))
		um = (unsigned)strtoul(p + 7, NULL, 8);
	*umask_out = (mode_t)(um & 0777);
	return *tgid > 0 ? 0 : -EIO;
}

static int target_info(pid_t tid, struct target *t)
{
	char path[64];
	ssize_t n;
	int e;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	e = read_status(tid, &t->peer.pid, &t->peer.ppid, &t->peer.uid,
			&t->umask, &t->tracer);
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
void hx_un_done(struct hx_unotify *u, struct answer *a, int e)
{
	if (e) {
		a->err = -e;
		return;
	}
	atomic_fetch_add(&u->n_emul, 1);
	a->kind = ANS_VALUE;
	a->val = 0;
}

int hx_un_take_fd(pid_t pid, int fd)
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

int hx_un_proc_path(const struct target *t, const char *in, char *out,
		    size_t size)
{
	static const char self[] = "/proc/self", thr[] = "/proc/thread-self";
	int n;

	if (!strncmp(in, self, 10) && (!in[10] || in[10] == '/'))
		n = snprintf(out, size, "/proc/%d%s", (int)t->peer.pid,
			     in + 10);
	else if (!strncmp(in, thr, 17) && (!in[17] || in[17] == '/'))
		n = snprintf(out, size, "/proc/%d/task/%d%s", (int)t->peer.pid,
			     (int)t->tid, in + 17);
	else
		n = snprintf(out, size, "%s", in);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int hx_un_denied(const struct target *t, const struct hx_outcome *o,
		 struct hx_kargs *k)
{
	char p1[PATH_MAX + 32], p2[PATH_MAX + 32];
	int e = o->err ? o->err : EACCES;

	/* The probe runs with this worker's rights, which are the
	 * target's only when their uids agree (drop_worker_caps). */
	if (o->tell && t->peer.uid == geteuid() && k->path &&
	    !hx_un_proc_path(t, k->path, p1, sizeof(p1)) &&
	    (!k->path2 || !hx_un_proc_path(t, k->path2, p2, sizeof(p2)))) {
		k->dirfd = k->dirfd2 = AT_FDCWD;
		k->path = p1;
		if (k->path2)
			k->path2 = p2;
		e = hx_kerrno(k);
	}
	if (o->tell)
		hx_pipeline_notice(o, e);
	return e;
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
bool hx_un_enqueue(struct hx_unotify *u, struct job *j)
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
bool hx_un_decide(struct hx_unotify *u, struct job *j)
{
	bool ok;

	if (!hx_un_enqueue(u, j))
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

/* ---- workers ---- */

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
		hx_un_open(u, n, &t, &a);
		break;
	case SYS_connect:
		hx_un_connect(u, n, &t, &a);
		break;
	case SYS_execve:
	case SYS_execveat:
		hx_un_exec(u, n, &t, &a);
		break;
	case SYS_sendto:
	case SYS_sendmsg:
	case SYS_sendmmsg:
		hx_un_send(u, n, &t, &a);
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
	case SYS_fchmod:
	case SYS_fchown:
	case SYS_mknod:
	case SYS_mknodat:
	case SYS_utime:
	case SYS_utimes:
	case SYS_futimesat:
	case SYS_utimensat:
	case SYS_setxattr:
	case SYS_lsetxattr:
	case SYS_fsetxattr:
	case SYS_removexattr:
	case SYS_lremovexattr:
	case SYS_fremovexattr:
	case SYS_ioctl:
		hx_un_mut(u, n, &t, &a);
		break;
	case SYS_bind:
		hx_un_bind(u, n, &t, &a);
		break;
	case SYS_setpriority:
	case SYS_ioprio_set:
	case SYS_sched_setaffinity:
	case SYS_sched_setscheduler:
	case SYS_sched_setparam:
	case SYS_sched_setattr:
		hx_un_sched(u, n, &t, &a);
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
		 * for execve/execveat (hx_un_exec) the exec gate (execgate.c)
		 * checks the executed image and argv before the new image
		 * runs, for a thread it traces (checked there). Every other
		 * call is emulated: connects and sends (abstract ones and
		 * stream sends too: a racing thread could change the address
		 * or the fd) on the taken socket, unix ones by the connector
		 * (connector.h). */
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
	return hx_caps_limit(CAP_TO_MASK(CAP_SYS_PTRACE)) == 0;
}

static void *worker(void *arg)
{
	struct hx_unotify *u = arg;
	struct seccomp_notif n;
	struct pollfd p[2];

	/* Our own umask (0: the target's is applied by hand) and cwd. */
	if (unshare(CLONE_FS) == 0)
		umask(0);
	if (!drop_worker_caps() || hx_connector_new(&hx_un_conn))
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
	hx_connector_free(hx_un_conn);
	hx_un_conn = NULL;
	return NULL;
}

/* ---- lifecycle ---- */

int hx_unotify_receive(int sock, pid_t child, int timeout_ms)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	int num = -1;
	ssize_t n;

	if (poll(&p, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	do
		n = read(sock, &num, sizeof(num));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(num) || num < 0)
		return n < 0 ? -errno : -EPIPE;
	return hx_un_take_fd(child, num);
}

int hx_unotify_release_child(int sock)
{
	char ack = 'k';

	return write(sock, &ack, 1) == 1 ? 0 : -EPIPE;
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
