/* The seccomp user-notify handler; see unotify.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

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

#include "common/clock.h"
#include "supervisor/kernel/caps.h"
#include "supervisor/kernel/connector.h"
#include "supervisor/kernel/execgate.h"
#include "supervisor/kernel/seccomp_uapi.h"
#include "supervisor/path_resolve.h"
#include "supervisor/correlate.h"
#include "supervisor/owned.h"
#include "supervisor/proc.h"

#define WAKE_SIG SIGUSR2
#define WAIT_MS	 50   /* the watchdog's round, and a wait it looks at */
#define BUSY_MS	 1000 /* a wait cut when no spare worker is left */

/* ---- waits on what the agent controls (unotify_int.h) ---- */

/* A signal tid will act on is pending for it: a handler's, or a
 * default that ends or stops the process (not one it ignores, nor one
 * it blocks). *own: pending for the thread itself, or for a process of
 * one thread; none other can take it first. */
static bool signalled(pid_t tid, bool *own)
{
	static const unsigned long long ignored =
	    1ull << (SIGCHLD - 1) | 1ull << (SIGCONT - 1) |
	    1ull << (SIGURG - 1) | 1ull << (SIGWINCH - 1);
	struct hx_procsignals sg;
	unsigned long long acts;

	*own = false;
	if (hx_proc_signals(tid, &sg))
		return false;
	acts = ~sg.blocked & ~sg.ignored & (sg.caught | ~ignored);
	*own = (sg.pending & acts) || (sg.threads == 1 && (sg.shared & acts));
	return (sg.pending | sg.shared) & acts;
}

/* Whether the wait in s is to be cut now (under s->lock). */
static bool to_cut(struct hx_unotify *u, struct un_slot *s, uint64_t now,
		   bool busy)
{
	bool own = false;

	if (!s->since_ms || now - s->since_ms < WAIT_MS)
		return false;
	if (!s->spared) { /* a long wait: another worker serves */
		s->spared = true;
		hx_un_spare(u, 1);
	}
	if (s->kind == HX_WAIT_RELEASE || atomic_load(&s->cut) ||
	    atomic_load(&u->stopping) || !hx_un_id_valid(u, s->id) ||
	    (busy && now - s->since_ms >= BUSY_MS))
		return true;
	if (!signalled(s->tid, &own)) {
		s->ticks = 0;
		return false;
	}
	/* Another thread of the process may take a process's signal: it
	 * is this one's if none has in two rounds (then EINTR). */
	if (own)
		atomic_store(&s->again, true);
	return own || ++s->ticks >= 2;
}

static void *watchdog(void *arg)
{
	struct hx_unotify *u = arg;
	struct pollfd p = {.fd = u->stopfd, .events = POLLIN};

	while (!atomic_load(&u->stopping)) {
		uint64_t now;
		bool busy;

		if (poll(&p, 1, WAIT_MS) > 0)
			break;
		now = hx_mono_ms();
		pthread_mutex_lock(&u->lock);
		busy = u->waiting >= MAX_THREADS - 2;
		pthread_mutex_unlock(&u->lock);
		for (int i = 0; i < atomic_load(&u->nslots) && i < MAX_THREADS;
		     i++) {
			struct un_slot *s = &u->slots[i];

			pthread_mutex_lock(&s->lock);
			if (to_cut(u, s, now, busy)) {
				/* A worker waiting for its connector's answer
				 * is not signalled: that ends the connector. */
				atomic_store(&s->cut, true);
				if (s->kind == HX_WAIT_CALL ||
				    s->kind == HX_WAIT_RELEASE)
					pthread_kill(s->th, WAKE_SIG);
				else if (s->kind == HX_WAIT_CONNECTOR)
					hx_connector_interrupt(s->conn);
			}
			pthread_mutex_unlock(&s->lock);
		}
	}
	return NULL;
}

/* ---- workers ---- */

static void handle(struct hx_unotify *u, const struct seccomp_notif *n)
{
	struct seccomp_notif_resp resp;
	struct answer a = {.kind = ANS_ERROR, .err = EACCES};
	struct target t;

	atomic_fetch_add(&u->n_notif, 1);
	hx_un_notif_id = n->id;
	hx_un_notif_lfd = u->lfd;
	hx_un_wait_serving((pid_t)n->pid);
	if (n->data.arch != AUDIT_ARCH_X86_64 || atomic_load(&u->setup_err))
		goto reply; /* the deny filter kills foreign arches first */
	if (hx_un_target_info(u, (pid_t)n->pid, &t)) {
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
	case SYS_listen:
		hx_un_listen(u, n, &t, &a);
		break;
	case SYS_inotify_add_watch:
		hx_un_watch(u, n, &t, &a);
		break;
	case SYS_socket:
		hx_un_socket(u, n, &t, &a);
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
		 * runs, for a thread it traces (checked there); for a netlink
		 * socket() (hx_un_socket, allowed in audit mode only) no
		 * pointer is read: its arguments are registers, which the
		 * kernel does not read again, so what was decided is what is
		 * made. Every other call is emulated: opens, mutations, binds
		 * and listens, and connects and sends (abstract ones and
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
		if (!a.took_effect)
			hx_un_failed(u, -resp.error);
		break;
	}
	/* ENOENT: the target is gone or was interrupted; nothing to do but
	 * for an exec's approval, which no exit of the thread may take now
	 * (reaped before it was made: an allow with no "failed" after). */
	if (ioctl(u->lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) && errno == ENOENT &&
	    a.kind == ANS_CONTINUE && a.gate_ref)
		hx_execgate_withdraw(u->gate, t.tid, a.gate_ref - 1);
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

	int i = atomic_fetch_add(&u->nslots, 1);

	if (i < MAX_THREADS)
		hx_un_wait_attach(u, &u->slots[i]);
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
	hx_un_mut_thread_end();
	hx_un_forget();
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
		     struct hx_server *srv, const char *sock_path, int nthreads,
		     struct hx_execgate *gate, pid_t root,
		     const struct hx_unotify_dns *dns, struct hx_unotify **out)
{
	struct hx_unotify *u = calloc(1, sizeof(*u));
	struct sigaction sa;
	uint64_t fl = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	int e;

	*out = NULL;
	if (!u) {
		close(listener);
		if (dns)
			hx_dnsns_listeners_close(&dns->l);
		return -ENOMEM;
	}
	u->lfd = listener;
	u->pl = pl;
	u->srv = srv;
	u->efd = u->stopfd = -1;
	u->gate = gate;
	u->worker = worker;
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
	for (int i = 0; i < MAX_THREADS; i++)
		pthread_mutex_init(&u->slots[i].lock, NULL);
	{
		pthread_rwlockattr_t at;

		/* A bind is not kept waiting by a stream of renames. */
		pthread_rwlockattr_init(&at);
		pthread_rwlockattr_setkind_np(
		    &at, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&u->names, &at);
		pthread_rwlockattr_destroy(&at);
	}
	/* 6.6+: the target's thread is woken on the CPU that answers. Best
	 * effort: older kernels say EINVAL and work, slower. */
	ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, fl);
	/* What only this layer sees: both views of a call, and what the
	 * session's processes bind and make (owned.h). */
	if ((e = hx_correlate_enable(pl)) ||
	    (!pl->owned && (e = hx_owned_new(&pl->owned))))
		goto fail;
	u->idents = hx_un_idents_new(); /* NULL: each call reads /proc */
	u->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	u->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (u->efd < 0 || u->stopfd < 0) {
		e = -errno;
		goto fail;
	}
	u->src.fd = u->efd;
	u->src.handle = hx_un_on_jobs;
	u->src.arg = u;
	if (hx_server_add(srv, &u->src, EPOLLIN)) {
		e = -errno;
		goto fail;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake_handler; /* no SA_RESTART: RECV returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(WAKE_SIG, &sa, NULL);
	/* Before the first notification is served: port 53 is let
	 * through for the sealed namespace to answer it. */
	if (dns && (e = hx_un_dns_start(u, dns))) {
		dns = NULL;
		goto fail;
	}
	dns = NULL;
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > MAX_THREADS)
		nthreads = MAX_THREADS;
	/* The workers first: the child is released and its exec waits for
	 * one (a thread costs 0.1 to 0.2 ms to make on a small VM). */
	for (; u->nthreads < nthreads; u->nthreads++)
		if ((e = -pthread_create(&u->th[u->nthreads], NULL, worker, u)))
			break;
	if (!u->nthreads)
		goto fail;
	u->has_watchdog = !pthread_create(&u->watchdog, NULL, watchdog, u);
	*out = u;
	return 0;
fail:
	if (dns) /* not started: its listeners are still ours to close */
		hx_dnsns_listeners_close(&dns->l);
	u->nthreads = 0;
	hx_unotify_stop(u);
	return e ? e : -EAGAIN;
}

void hx_unotify_stop(struct hx_unotify *u)
{
	bool joined[MAX_THREADS] = {false};
	uint64_t one = 1;

	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	atomic_store(&u->stopping, true);
	pthread_mutex_unlock(&u->lock);
	/* The loop's thread (ours) lets its lock go until the workers are
	 * joined: one that waits for it to decide then sees stopping. */
	hx_server_unlock(u->srv);
	if (u->stopfd >= 0 && write(u->stopfd, &one, sizeof(one)) < 0) {
		/* the signal below still wakes them */
	}
	/* A worker blocked in NOTIF_RECV wakes on WAKE_SIG only, and one
	 * about to block may miss the first: all are signalled until all
	 * are joined, first at short intervals (a millisecond per worker
	 * was a session's last 1 to 4 ms). */
	for (int round = 0, left = u->nthreads; left; round++) {
		left = 0;
		for (int i = 0; i < u->nthreads; i++) {
			if (joined[i] ||
			    (joined[i] =
				 pthread_tryjoin_np(u->th[i], NULL) != EBUSY))
				continue;
			pthread_kill(u->th[i], WAKE_SIG);
			left++;
		}
		if (left)
			usleep(round < 20 ? 50 : 1000);
	}
	if (u->has_watchdog)
		pthread_join(u->watchdog, NULL);
	hx_un_dns_stop(u);
	hx_server_lock(u->srv);
	/* Left: adoptions the loop did not take. */
	for (struct job *j = u->head, *next; j; j = next) {
		next = j->next;
		close(j->adopt_fd);
		if (j->adopt_pidfd >= 0)
			close(j->adopt_pidfd);
		hx_server_unreserve(u->srv);
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
	hx_un_idents_free(u->idents);
	pthread_mutex_destroy(&u->lock);
	for (int i = 0; i < MAX_THREADS; i++)
		pthread_mutex_destroy(&u->slots[i].lock);
	pthread_rwlock_destroy(&u->names);
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
