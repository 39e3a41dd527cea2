/* The epoll loop and the shim connection handler; see server.h. */
#define _GNU_SOURCE
#include "supervisor/server.h"
#include "supervisor/hello_reply.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy/policy.h"
#include "common/sockaddr.h"
#include "common/wire.h"
#include "common/clock.h"
#include "supervisor/ask.h"
#include "supervisor/audit.h"
#include "supervisor/dnsmap.h"
#include "supervisor/fairlock.h"
#include "supervisor/fdrelease.h"
#include "supervisor/hello.h"
#include "supervisor/metrics.h"
#include "supervisor/pipeline.h"
#include "supervisor/path_resolve.h"
#include "supervisor/proc.h"
#include "supervisor/procstrv.h"
#include "supervisor/correlate.h"
#include "supervisor/record.h"
#include "supervisor/unixlisten.h"
#include "supervisor/wirereq.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* 6.5; newer than these headers */
#endif
#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76 /* 6.5 */
#define SCM_PIDFD    0x04
#endif

#define MSGS_PER_WAKEUP 64
/* SCM_MAX_FD: none cut off, which the kernel would let go here */
#define MAX_PASSED_FDS 253

struct conn {
	struct hx_source src; /* first: the handler gets &conn->src */
	struct conn *prev, *next;
	pid_t peer_pid; /* SO_PEERCRED at accept */
	uid_t peer_uid;
	int peer_pidfd; /* SO_PEERPIDFD (6.5), or -1 */
	/* cached for the last pid seen on this connection, and pinned:
	 * info_pidfd is the process that had that number when it was read
	 * (peer_pidfd for peer_pid), so that a process that takes the
	 * number once it is reaped is not shown with its facts */
	pid_t info_pid, ppid;
	int info_pidfd; /* pidfd_open(info_pid) but for peer_pid, or -1 */
	/* The sender of the message being read, by the kernel (SCM_PIDFD,
	 * 6.5): a pidfd, MSG_GONE (reaped before it was read, before 6.16)
	 * or MSG_UNPINNED (no SO_PASSPIDFD). */
	int msg_pidfd;
	char exe[PATH_MAX];
	bool has_exe;
	bool root_ours; /* hx_peer.root_ours, read with the rest */
	uint8_t *rbuf;
	/* Our end's name, bound at once (our first send would autobind
	 * it: SO_PASSCRED): the agent's socket whose peer it is, is ours
	 * (hx_server_conn_named). */
	struct sockaddr_un name;
	socklen_t namelen;
};

struct hx_server {
	struct hx_fair_lock lock; /* hx_server_lock: first come first served */
	int epfd;
	struct hx_pipeline *pl;
	struct hx_source listener, timer;
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct conn *conns;
	size_t nconns;
	/* Connections open or on their way (hx_server_reserve), at most
	 * max_conns: each is two or three of our fds (its socket, its
	 * pidfd, a pin of its last sender), and a table the agent's
	 * connections fill fails every open we make (a late mask's). */
	atomic_size_t held;
	size_t max_conns;
	/* Connections refused for the bound (a process whose shim then
	 * refuses its calls unrecorded): said each second
	 * (hx_server_say_refused) */
	atomic_ullong refused;
	uint64_t refused_said;
	uid_t uid;
	struct hx_msg *msg; /* one decode target, reused */
	uint8_t *wbuf;	    /* one reply buffer */
	uint8_t *hello;	    /* the HELLO_REPLY, built once */
	size_t hello_len;
	struct hx_request_storage rqs;
	struct hx_server_stats stats;
	void (*on_close)(void *arg, int pid);
	void *on_close_arg;
	uint64_t last_wait_ns; /* of the loop, for the next one's spin */
};

static void close_conn(struct hx_server *s, struct conn *c)
{
	/* Its questions no longer wait: nobody reads the answer. */
	hx_ask_forget(s->pl->ask, c);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->src.fd, NULL);
	/* Its queue may hold the agent's fds, whose release can wait. */
	hx_fd_release_sock(c->src.fd);
	if (c->peer_pidfd >= 0)
		close(c->peer_pidfd);
	if (c->info_pidfd >= 0)
		close(c->info_pidfd);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->nconns--;
	s->stats.conns_open = s->nconns;
	free(c->rbuf);
	hx_server_unreserve(s);
	if (s->on_close)
		s->on_close(s->on_close_arg, (int)c->peer_pid);
	free(c);
}

enum { MSG_UNPINNED = -1, MSG_GONE = -2 };

/* Whether a process is reaped (exited: or a zombie), by its pidfd. */
static bool done(int pidfd, bool exited)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	if (pidfd < 0)
		return false;
	return exited ? poll(&p, 1, 0) > 0
		      : syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) &&
			    errno == ESRCH;
}

static void unpin_info(struct conn *c)
{
	if (c->info_pidfd >= 0)
		close(c->info_pidfd);
	c->info_pidfd = -1;
}

/* Whether pid runs the image c's facts were read of: an exec keeps the
 * number, and a program exec'd with the connection kept open had its
 * claims recorded with the exe before it (fifteenth attack review). */
static bool same_image(const struct conn *c, pid_t pid)
{
	char now[PATH_MAX];
	ssize_t n = hx_proc_exe(pid, now, sizeof(now));

	return c->has_exe ? n > 0 && !strcmp(now, c->exe) : n <= 0;
}

/* Reads what /proc shows of pid, unless it holds what was read for it,
 * that process is not reaped and runs the same image. Returns whether
 * it read anew. */
static bool refresh_info(struct conn *c, pid_t pid, bool force)
{
	if (!force && c->info_pid == pid &&
	    !done(pid == c->peer_pid ? c->peer_pidfd : c->info_pidfd, false) &&
	    same_image(c, pid))
		return false;
	unpin_info(c);
	c->info_pid = pid;
	/* Before the reads: the process that has the number now. */
	if (pid != c->peer_pid || c->peer_pidfd < 0)
		c->info_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	c->ppid = hx_proc_ppid(pid);
	c->has_exe = hx_proc_exe(pid, c->exe, sizeof(c->exe)) > 0;
	c->root_ours = hx_path_root_ours(pid);
	return true;
}

/* Whether the message's sender, pid, has been reaped (the shim waits
 * for no REPORT's reply): its number is free, and /proc under it may be
 * another process's (exited: or a zombie). Known by the message's own
 * pidfd (6.5), else for the connecting process by the connection's. */
static bool sender_reaped(const struct conn *c, pid_t pid, bool exited)
{
	if (c->msg_pidfd != MSG_UNPINNED)
		return c->msg_pidfd == MSG_GONE || done(c->msg_pidfd, exited);
	return pid == c->peer_pid && done(c->peer_pidfd, exited);
}

/* What refresh_info read, dropped: it may be another process's. */
static void forget_info(struct conn *c)
{
	c->info_pid = 0; /* read again for the next message */
	unpin_info(c);
	c->has_exe = false;
	c->ppid = 0;
	c->root_ours = false;
}

/* refresh_info for a message of pid, its facts kept only while its
 * sender is not reaped; returns whether it is (fill_peer's gone). */
static bool sender_info(struct conn *c, pid_t pid)
{
	bool gone;

	refresh_info(c, pid, false);
	if ((gone = sender_reaped(c, pid, false)))
		forget_info(c);
	return gone;
}

static void fill_peer(struct conn *c, pid_t pid, bool gone,
		      const struct hx_msg *m, struct hx_peer *peer)
{
	char path[64];

	memset(peer, 0, sizeof(*peer));
	peer->pid = pid;
	peer->uid = c->peer_uid;
	peer->ppid = c->ppid;
	peer->exe = c->has_exe ? c->exe : NULL;
	peer->root_ours = c->root_ours;
	peer->gone = gone;
	if (m && hx_msg_has(m, HX_TAG_PID))
		peer->claimed_pid = (pid_t)m->pid;
	/* A claimed tid is believed only when it is a thread of pid. */
	if (m && hx_msg_has(m, HX_TAG_TID) && m->tid && !peer->gone) {
		snprintf(path, sizeof(path), "/proc/%d/task/%u", (int)pid,
			 m->tid);
		if (!access(path, F_OK))
			peer->tid = (pid_t)m->tid;
	}
}

/* Whether the policy lets the agent look name up: a forged report of
 * one it may not would have the supervisor send the query for it (a
 * channel out, unrecorded, under a policy denying the lookup). */
static bool may_resolve(const struct hx_policy *p, const char *name)
{
	struct hx_event ev = {.op = HX_OP_RESOLVE, .host = name};
	struct hx_decision d;

	hx_policy_decide(p, &ev, &d);
	return d.verdict == HX_VERDICT_ALLOW;
}

static void protocol_error(struct hx_server *s, struct conn *c, pid_t pid,
			   const char *error, size_t size)
{
	struct hx_peer peer;
	json_t *rec;

	s->stats.protocol_errors++;
	fill_peer(c, pid, sender_info(c, pid), NULL, &peer);
	rec = hx_record_new(s->pl, &peer, "protocol_error", NULL);
	if (rec) {
		json_object_set_new(rec, "category", json_string("process"));
		json_object_set_new(rec, "risk", json_string("high"));
		json_object_set_new(rec, "verdict", json_string("deny"));
		json_object_set_new(rec, "enforced", json_true());
		json_object_set_new(rec, "rule",
				    json_string("harness:protocol"));
		json_object_set_new(rec, "layer", json_string("shim"));
		json_object_set_new(rec, "error", json_string(error));
		if (size)
			json_object_set_new(rec, "size",
					    json_integer((json_int_t)size));
	}
	hx_record_append_event(s->pl, rec, NULL, NULL);
	json_decref(rec);
}

/* Returns 0, or -1 when the connection must be closed. */
static int send_reply(struct hx_server *s, struct conn *c, pid_t pid,
		      const void *buf, size_t len)
{
	ssize_t n;

	do
		n = send(c->src.fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		protocol_error(s, c, pid, "client does not read its replies",
			       0);
	return -1;
}

static int on_hello(struct hx_server *s, struct conn *c, pid_t pid,
		    const struct hx_msg *m)
{
	struct hx_peer peer;
	const char *argv[HX_WIRE_MAX_ARGS];
	json_t *rec, *args;
	uint32_t id = m->hdr.id;
	size_t i, len = 0;
	char *cmd;
	bool gone;

	refresh_info(c, pid, true); /* a new image: exe changed */
	cmd = hx_proc_cmdline(pid, HX_HELLO_CMD_MAX, &len);
	/* What /proc showed is the sender's only while it is not reaped; a
	 * HELLO of another process than the connecting one is no shim's. */
	gone = sender_reaped(c, pid, false);
	if (gone || (c->peer_pidfd >= 0 && pid != c->peer_pid)) {
		free(cmd);
		cmd = NULL;
		forget_info(c);
	}
	fill_peer(c, pid, gone, m, &peer);
	rec = hx_record_new(s->pl, &peer, "process_start", NULL);
	if (rec) {
		for (i = 0; i < m->nargs; i++)
			argv[i] = m->args[i].s;
		args = json_object();
		hx_hello_args(rec, args, cmd, len, peer.exe, m, argv);
		cmd = NULL;
		json_object_set_new(rec, "args", args);
		json_object_set_new(rec, "category", json_string("process"));
		json_object_set_new(rec, "risk", json_string("low"));
		json_object_set_new(rec, "verdict", json_string("allow"));
		json_object_set_new(
		    rec, "enforced",
		    json_boolean(s->pl->mode == HX_MODE_ENFORCE));
		json_object_set_new(rec, "rule", json_string("harness:hello"));
		json_object_set_new(rec, "layer", json_string("shim"));
	}
	free(cmd);
	/* One that exited before its HELLO was read marks nothing: its
	 * number may be another's. */
	if (!hx_record_append_event(s->pl, rec, NULL, NULL) && !peer.gone &&
	    !peer.exited)
		hx_correlate_hello(s->pl, peer.pid, peer.exe);
	json_decref(rec);
	memcpy(s->wbuf, s->hello, s->hello_len);
	memcpy(s->wbuf + offsetof(struct hx_wire_hdr, id), &id, sizeof(id));
	return send_reply(s, c, pid, s->wbuf, s->hello_len);
}

static int send_verdict(struct hx_server *s, struct conn *c, pid_t pid,
			uint32_t id, const struct hx_outcome *out)
{
	struct hx_wbuf w;
	size_t len;

	hx_wire_begin(&w, s->wbuf, HX_WIRE_MAX, HX_MSG_VERDICT, id);
	hx_wire_put_u32(&w, HX_TAG_VERDICT, out->reply);
	hx_wire_put_u32(&w, HX_TAG_ERRNO, (uint32_t)out->err);
	if (out->tell)
		hx_wire_put_u32(&w, HX_TAG_FLAGS, HX_VERDICT_TELL);
	if (out->rule)
		hx_wire_put_str(&w, HX_TAG_RULE, out->rule);
	if (out->origin && out->reply != HX_VERDICT_ALLOW)
		hx_wire_put_str(&w, HX_TAG_ORIGIN, out->origin);
	hx_wire_put_u64(&w, HX_TAG_SEQ, out->seq);
	len = hx_wire_finish(&w);
	if (!len)
		return -1;
	return send_reply(s, c, pid, s->wbuf, len);
}

/* A verdict the shim waits for while a person is asked (ask.h): the
 * process's thread stays in its call; the connection is served on. */
struct deferred {
	struct hx_server *s;
	struct conn *c;
	pid_t pid;
	uint32_t id;
	struct hx_outcome out;
};

static void answered(void *arg, const struct hx_ask_result *r)
{
	struct deferred *d = arg;

	if (!strcmp(r->why, "gone")) { /* the connection is closing */
		free(d);
		return;
	}
	/* Refused: the notice says it was not approved (ask). */
	d->out.reply = r->verdict == HX_VERDICT_ALLOW	  ? r->verdict
		       : d->out.verdict == HX_VERDICT_ASK ? HX_VERDICT_ASK
							  : r->verdict;
	d->out.err = r->verdict == HX_VERDICT_ALLOW ? 0 : EACCES;
	d->out.tell = false;
	if (r->seq)
		d->out.seq = r->seq;
	if (send_verdict(d->s, d->c, d->pid, d->id, &d->out))
		shutdown(d->c->src.fd, SHUT_RDWR); /* the loop closes it */
	free(d);
}

static int defer_reply(struct hx_server *s, struct conn *c, pid_t pid,
		       uint32_t id, const struct hx_outcome *out)
{
	struct deferred *d = malloc(sizeof(*d));

	if (!d) {
		struct hx_outcome no = *out;

		hx_ask_drop(s->pl->ask, out->ask);
		no.reply = HX_VERDICT_DENY;
		return send_verdict(s, c, pid, id, &no);
	}
	*d = (struct deferred){s, c, pid, id, *out};
	hx_ask_defer(s->pl->ask, out->ask, c, answered, d);
	return 0;
}

static int on_request(struct hx_server *s, struct conn *c, pid_t pid,
		      const struct hx_msg *m, bool reply)
{
	struct hx_peer peer;
	struct hx_request rq;
	struct hx_outcome out;

	fill_peer(c, pid, sender_info(c, pid), m, &peer);
	peer.exited = peer.gone || sender_reaped(c, pid, true);
	hx_wirereq_from_msg(m, &rq, &s->rqs);
	rq.report = !reply;
	/* port 53 reaches the supervisor's resolver (unotify_dns.c) */
	rq.sealed = s->pl->dns_sealed && rq.addr &&
		    hx_sockaddr_port(rq.addr, rq.addrlen) == 53;
	if (!reply && rq.op == HX_OP_RESOLVE) {
		/* What the shim's getaddrinfo returned is a claim from the
		 * agent's side: the name is looked up again by the
		 * supervisor, whose answers alone are mapped (dnsmap.h). */
		if (s->pl->dns && m->host.s && m->naddrs &&
		    may_resolve(s->pl->policy, m->host.s))
			hx_dnsmap_claim(s->pl->dns, m->host.s);
		return 0;
	}
	hx_wirereq_env(m, &peer, &rq, &s->rqs);
	hx_pipeline_decide(s->pl, &peer, &rq, "shim", &out);
	free(s->rqs.env);
	free(s->rqs.envp);
	s->rqs.env = NULL;
	s->rqs.envp = NULL;
	if (!reply)
		return 0;
	if (out.ask)
		return defer_reply(s, c, pid, m->hdr.id, &out);
	return send_verdict(s, c, pid, m->hdr.id, &out);
}

/* Handles one datagram; returns -1 when the connection must close. */
static int on_message(struct hx_server *s, struct conn *c, pid_t pid, size_t n)
{
	enum hx_wire_error e = hx_wire_decode(c->rbuf, n, s->msg);

	if (e) {
		protocol_error(s, c, pid, hx_wire_error_name(e), n);
		return -1;
	}
	s->stats.messages++;
	switch (s->msg->hdr.type) {
	case HX_MSG_HELLO:
		return on_hello(s, c, pid, s->msg);
	case HX_MSG_REQUEST:
		return on_request(s, c, pid, s->msg, true);
	case HX_MSG_REPORT:
		return on_request(s, c, pid, s->msg, false);
	default:
		protocol_error(s, c, pid, "unexpected message type", n);
		return -1;
	}
}

/* Reads up to MSGS_PER_WAKEUP datagrams; returns how many were handled,
 * or -1 when the connection was closed. */
static int read_conn(struct hx_server *s, struct conn *c)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred)) +
			 CMSG_SPACE(sizeof(int)) +
			 CMSG_SPACE(MAX_PASSED_FDS * sizeof(int))];
	} cbuf;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	struct ucred cred;
	bool got_cred, got_fds;
	ssize_t n;
	int handled = 0, mpfd, r;

	while (handled < MSGS_PER_WAKEUP) {
		iov.iov_base = c->rbuf;
		iov.iov_len = HX_WIRE_MAX;
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = sizeof(cbuf.buf);
		n = recvmsg(c->src.fd, &mh,
			    MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return handled;
			close_conn(s, c);
			return -1;
		}
		if (n == 0) { /* orderly shutdown */
			close_conn(s, c);
			return -1;
		}
		got_cred = got_fds = false;
		mpfd = MSG_UNPINNED;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_SOCKET)
				continue;
			if (cm->cmsg_type == SCM_CREDENTIALS &&
			    cm->cmsg_len >= CMSG_LEN(sizeof(cred))) {
				memcpy(&cred, CMSG_DATA(cm), sizeof(cred));
				got_cred = cred.pid > 0;
			} else if (cm->cmsg_type == SCM_PIDFD &&
				   cm->cmsg_len >= CMSG_LEN(sizeof(int)) &&
				   mpfd == MSG_UNPINNED) {
				/* Negative: the kernel had no pidfd to give
				 * (the sender reaped, before 6.16). */
				memcpy(&mpfd, CMSG_DATA(cm), sizeof(int));
				if (mpfd < 0)
					mpfd = MSG_GONE;
			} else if (cm->cmsg_type == SCM_RIGHTS) {
				/* Never keep what a hostile client
				 * passes, nor wait on its release (a
				 * lingering socket held the loop). */
				size_t k =
				    (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				int fds[MAX_PASSED_FDS];

				if (k > MAX_PASSED_FDS)
					k = MAX_PASSED_FDS;
				memcpy(fds, CMSG_DATA(cm), k * sizeof(int));
				hx_fd_release(fds, k);
				got_fds = true;
			}
		}
		/* The kernel's per-message credentials name the process
		 * that sent it (a forked child sharing the connection);
		 * without them, the connecting process. */
		if (!got_cred) {
			cred.pid = c->peer_pid;
			cred.uid = c->peer_uid;
		}
		handled++;
		c->msg_pidfd = mpfd;
		r = -1;
		if (cred.uid != s->uid || c->peer_uid != s->uid) {
			protocol_error(s, c, cred.pid, "peer uid mismatch",
				       (size_t)n);
		} else if (got_fds || (mh.msg_flags & MSG_CTRUNC)) {
			protocol_error(s, c, cred.pid,
				       "unexpected control message", (size_t)n);
		} else if ((size_t)n > HX_WIRE_MAX ||
			   (mh.msg_flags & MSG_TRUNC)) {
			protocol_error(s, c, cred.pid, "oversized message",
				       (size_t)n);
		} else {
			r = on_message(s, c, cred.pid, (size_t)n);
		}
		if (mpfd >= 0)
			close(mpfd);
		c->msg_pidfd = MSG_UNPINNED;
		if (r == 0)
			continue;
		close_conn(s, c);
		return -1;
	}
	return handled;
}

static void handle_conn(struct hx_server *s, struct hx_source *src,
			uint32_t events)
{
	struct conn *c = (struct conn *)src;

	if ((events & EPOLLIN) && read_conn(s, c) < 0)
		return;
	/* Hang-up with nothing left to read. */
	if ((events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN))
		close_conn(s, c);
}

/* A connection that is not served after all: its place, its fds. */
static int refuse_conn(struct hx_server *s, int fd, int pidfd, int e)
{
	hx_server_unreserve(s);
	hx_fd_release_sock(fd); /* the agent may have sent on it */
	if (pidfd >= 0)
		close(pidfd);
	return e;
}

/* Names our end of c now (an abstract name of the kernel's: none
 * other can take it while it lives), as its first send would. */
static void name_end(int fd, struct conn *c)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};

	if (bind(fd, (struct sockaddr *)&a, sizeof(sa_family_t)) &&
	    errno != EINVAL) /* EINVAL: named already (accepted) */
		return;
	c->namelen = sizeof(c->name);
	if (getsockname(fd, (struct sockaddr *)&c->name, &c->namelen) ||
	    c->namelen > sizeof(c->name))
		c->namelen = 0;
}

bool hx_server_conn_named(struct hx_server *s, const void *name, socklen_t len)
{
	bool found = false;

	hx_server_lock(s);
	for (struct conn *c = s->conns; c && !found; c = c->next)
		found = c->namelen == len && !memcmp(&c->name, name, len);
	hx_server_unlock(s);
	return found;
}

/* Serves fd (taken over, with pidfd: pid's, or -1) as a connection of
 * pid. Returns 0 or -errno. */
static int add_conn(struct hx_server *s, int fd, pid_t pid, uid_t uid,
		    int pidfd)
{
	struct epoll_event ev;
	struct conn *c;
	int one = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)))
		return refuse_conn(s, fd, pidfd, -ECONNREFUSED);
	setsockopt(fd, SOL_SOCKET, SO_PASSPIDFD, &one, sizeof(one)); /* 6.5 */
	c = calloc(1, sizeof(*c));
	if (c)
		c->rbuf = malloc(HX_WIRE_MAX);
	if (!c || !c->rbuf) {
		free(c);
		return refuse_conn(s, fd, pidfd, -ENOMEM);
	}
	name_end(fd, c);
	c->src.fd = fd;
	c->src.handle = handle_conn;
	c->peer_pid = pid;
	c->peer_uid = uid;
	c->peer_pidfd = pidfd;
	c->info_pidfd = -1;
	c->msg_pidfd = MSG_UNPINNED;
	ev.events = EPOLLIN | EPOLLRDHUP;
	ev.data.ptr = &c->src;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		int e = -errno;

		free(c->rbuf);
		free(c);
		return refuse_conn(s, fd, pidfd, e);
	}
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->nconns++;
	s->stats.conns_accepted++;
	s->stats.conns_open = s->nconns;
	if (uid != s->uid) {
		protocol_error(s, c, pid, "peer uid mismatch", 0);
		close_conn(s, c);
		return -EACCES;
	}
	return 0;
}

static void handle_listener(struct hx_server *s, struct hx_source *src,
			    uint32_t events)
{
	struct ucred cred;
	socklen_t len;
	int fd, pidfd;

	(void)events;
	while ((fd = hx_server_accept(src->fd)) >= 0) {
		len = sizeof(cred);
		if (!hx_server_reserve(s)) {
			close(fd);
			continue;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
			refuse_conn(s, fd, -1, 0);
			continue;
		}
		len = sizeof(pidfd);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len)) {
			/* Before 6.5 nothing is pinned; a kernel that has
			 * it and gives none (our fd table full, or EINVAL:
			 * the process that connected is reaped) gets no
			 * connection: a HELLO on it would be read by a
			 * number nothing pins. */
			if (errno != ENOPROTOOPT) {
				refuse_conn(s, fd, -1, 0);
				continue;
			}
			pidfd = -1;
		}
		/* A process of another session (the socket of one in
		 * /tmp/harness-<uid>) or of the user's: none of ours. */
		if (!hx_proc_descends_pinned(cred.pid, pidfd, getpid())) {
			refuse_conn(s, fd, pidfd, 0);
			continue;
		}
		add_conn(s, fd, cred.pid, cred.uid, pidfd);
	}
}

int hx_server_adopt(struct hx_server *s, int fd, pid_t pid, uid_t uid,
		    int pidfd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return refuse_conn(s, fd, pidfd, -EBADF);
	return add_conn(s, fd, pid, uid, pidfd);
}

/* Of the fds RLIMIT_NOFILE gives us, those kept from connections: the
 * log, the masks, the workers' and the resolver's, the ident cache. */
#define FD_RESERVE 256

bool hx_server_reserve(struct hx_server *s)
{
	if (atomic_fetch_add(&s->held, 1) < s->max_conns)
		return true;
	atomic_fetch_sub(&s->held, 1);
	atomic_fetch_add(&s->refused, 1);
	return false;
}

void hx_server_unreserve(struct hx_server *s)
{
	atomic_fetch_sub(&s->held, 1);
}

int hx_server_accept(int lfd)
{
	int fd;

	do
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	while (fd < 0 && (errno == EINTR || errno == ECONNABORTED));
	return fd;
}

void hx_server_say_refused(struct hx_server *s)
{
	uint64_t n = atomic_load(&s->refused);
	json_t *rec;

	if (n == s->refused_said)
		return;
	rec = hx_record_new(s->pl, NULL, "connection_refused", NULL);
	if (rec) {
		json_object_set_new(rec, "category", json_string("process"));
		json_object_set_new(rec, "verdict", json_string("deny"));
		json_object_set_new(rec, "enforced", json_true());
		json_object_set_new(rec, "rule",
				    json_string("harness:connections"));
		json_object_set_new(rec, "error",
				    json_string("too many connections"));
		json_object_set_new(
		    rec, "count",
		    json_integer((json_int_t)(n - s->refused_said)));
	}
	hx_record_append_event(s->pl, rec, NULL, NULL);
	json_decref(rec);
	s->refused_said = n;
}

static void handle_timer(struct hx_server *s, struct hx_source *src,
			 uint32_t events)
{
	uint64_t ticks, ns;

	(void)events;
	if (read(src->fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	hx_pipeline_tick(s->pl, false);
	hx_server_say_refused(s);
	if (s->pl->audit && !hx_audit_sync_timed(s->pl->audit, &ns) && ns)
		hx_metrics_sync(s->pl->metrics, ns);
}

int hx_server_new(struct hx_pipeline *pl, struct hx_server **out)
{
	struct hx_server *s;
	struct itimerspec its = {{1, 0}, {1, 0}};
	struct rlimit nofile;
	int r = -ENOMEM;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	hx_fair_init(&s->lock);
	hx_server_lock(s);
	s->epfd = -1;
	s->listener.fd = s->timer.fd = -1;
	s->pl = pl;
	s->uid = getuid();
	s->max_conns = HX_SERVER_MAX_CONNS;
	if (!getrlimit(RLIMIT_NOFILE, &nofile) &&
	    nofile.rlim_cur < FD_RESERVE + 3 * HX_SERVER_MAX_CONNS)
		s->max_conns = nofile.rlim_cur > FD_RESERVE + 3
				   ? (nofile.rlim_cur - FD_RESERVE) / 3
				   : 1;
	s->msg = malloc(sizeof(*s->msg));
	s->wbuf = malloc(HX_WIRE_MAX);
	s->hello = malloc(HX_WIRE_MAX);
	if (!s->msg || !s->wbuf || !s->hello)
		goto fail;
	s->hello_len = hx_hello_reply_build(pl, s->hello, HX_WIRE_MAX, &r);
	if (!s->hello_len)
		goto fail;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		goto fail_errno;
	s->timer.fd =
	    timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->timer.fd < 0 || timerfd_settime(s->timer.fd, 0, &its, NULL))
		goto fail_errno;
	s->timer.handle = handle_timer;
	r = hx_server_add(s, &s->timer, EPOLLIN);
	if (r)
		goto fail;
	*out = s;
	return 0;
fail_errno:
	r = -errno;
fail:
	hx_server_free(s);
	return r;
}

int hx_server_listen_unix(const char *path, int type, int backlog)
{
	return hx_unix_listen(path, type, backlog, false, NULL);
}

int hx_server_listen(struct hx_server *s, const char *path)
{
	struct stat st;
	int fd, r;

	if (s->listener.fd >= 0)
		return -EBUSY;
	fd = hx_server_listen_unix(path, SOCK_SEQPACKET | SOCK_NONBLOCK, 128);
	if (fd < 0)
		return fd;
	/* Reached by the kernel layer's own connection only (connect and
	 * open of its path, answered with a socketpair): a send to it by
	 * its path, or one emulated on such a connection, is
	 * harness:protect (the connector would send it, and the
	 * per-message credentials name the connector, not the agent). */
	r = stat(path, &st)
		? -errno
		: hx_pipeline_protect_ino(s->pl, st.st_dev, st.st_ino);
	if (r) {
		close(fd);
		return r;
	}
	s->listener.fd = fd;
	s->listener.handle = handle_listener;
	snprintf(s->sock_path, sizeof(s->sock_path), "%s", path);
	r = hx_server_add(s, &s->listener, EPOLLIN);
	if (r) {
		close(fd);
		s->listener.fd = -1;
	}
	return r;
}

int hx_server_add(struct hx_server *s, struct hx_source *src, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = src};

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, src->fd, &ev) ? -errno : 0;
}

int hx_server_del(struct hx_server *s, struct hx_source *src)
{
	return epoll_ctl(s->epfd, EPOLL_CTL_DEL, src->fd, NULL) ? -errno : 0;
}

#define HX_SPIN_NS 100000

int hx_server_run_once(struct hx_server *s, int timeout_ms)
{
	struct epoll_event evs[64];
	uint64_t t0 = hx_mono_ns(), until = t0 + 2 * s->last_wait_ns;
	int n, i, e;

	/* Before sleeping, poll a little: the next request of a busy agent
	 * usually comes within microseconds, and a wake-up from sleep costs
	 * tens of them on a VM. For twice as long as the last wait, and not
	 * at all after one longer than HX_SPIN_NS: a shell starting one
	 * program after another leaves gaps a spin misses, each miss CPU
	 * taken from the agent (a fixed 100 us spin cost 0.4 ms of CPU a
	 * program started). The lock is let go once for the whole wait: a
	 * thread that waits for it gets it now, not between two polls. */
	n = 0;
	hx_server_unlock(s);
	if (timeout_ms < 0 && s->last_wait_ns <= HX_SPIN_NS)
		do
			n = epoll_wait(s->epfd, evs, 64, 0);
		while (n == 0 && hx_mono_ns() < until);
	if (n == 0)
		n = epoll_wait(s->epfd, evs, 64, timeout_ms);
	if (timeout_ms < 0)
		s->last_wait_ns = hx_mono_ns() - t0;
	e = n < 0 ? errno : 0;
	hx_server_lock(s);
	if (n < 0)
		return e == EINTR ? 0 : -e;
	for (i = 0; i < n; i++) {
		struct hx_source *src = evs[i].data.ptr;

		src->handle(s, src, evs[i].events);
	}
	return n;
}

void hx_server_free(struct hx_server *s)
{
	if (!s)
		return;
	s->on_close = NULL;
	while (s->conns)
		close_conn(s, s->conns);
	if (s->listener.fd >= 0)
		close(s->listener.fd);
	if (s->timer.fd >= 0)
		close(s->timer.fd);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s->msg);
	free(s->wbuf);
	free(s->hello);
	hx_server_unlock(s);
	hx_fair_destroy(&s->lock);
	free(s);
}

void hx_server_lock(struct hx_server *s)
{
	hx_fair_lock(&s->lock);
}

void hx_server_unlock(struct hx_server *s)
{
	hx_fair_unlock(&s->lock);
}

void hx_server_on_close(struct hx_server *s, void (*fn)(void *arg, int pid),
			void *arg)
{
	s->on_close = fn;
	s->on_close_arg = arg;
}

void hx_server_stats(const struct hx_server *s, struct hx_server_stats *st)
{
	*st = s->stats;
	st->conns_refused = atomic_load(&s->refused);
}
