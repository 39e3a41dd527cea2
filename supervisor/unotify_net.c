/* The user-notify handler: connect and the sends (unotify_int.h). */
#define _GNU_SOURCE
#include "unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "connector.h"
#include "resolve.h"

#define SEND_MAX  (64u << 10) /* bytes of a send emulated here */
#define CTRL_MAX  4096	      /* ancillary data of a sendmsg */
#define IOV_MAX_N 1024

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

/* The errno for a denied address: for a unix socket's path what the
 * kernel would say of it (ENOENT, ECONNREFUSED), see hx_un_denied. */
static int denied_unix(const struct target *t, const struct hx_outcome *o,
		       const struct sockaddr_storage *ss, socklen_t len)
{
	const struct sockaddr_un *sun = (const void *)ss;
	size_t off = offsetof(struct sockaddr_un, sun_path), n;
	char raw[sizeof(sun->sun_path) + 1], full[PATH_MAX];
	struct hx_kargs k = {.call = HX_KC_CONNECT, .path = full};

	if (ss->ss_family != AF_UNIX || len <= off || !sun->sun_path[0])
		return o->err ? o->err : EACCES;
	n = strnlen(sun->sun_path, len - off);
	memcpy(raw, sun->sun_path, n);
	raw[n] = '\0';
	if (hx_path_absolute(t->peer.pid, t->tid, AT_FDCWD, raw, full,
			     sizeof(full)))
		return o->err ? o->err : EACCES;
	return hx_un_denied(t, o, &k);
}

/* The socket's protocol (SO_PROTOCOL: NETLINK_ROUTE...), or -1. */
static int sock_proto(int sfd)
{
	int p = -1;
	socklen_t pl = sizeof(p);

	return getsockopt(sfd, SOL_SOCKET, SO_PROTOCOL, &p, &pl) ? -1 : p;
}

/* Decides an address; false with a->err set when it may not be used.
 * For a unix socket path, *target is then an O_PATH fd of the socket
 * file as decided (symlinks resolved, none followed now), else -1. */
static bool decide_addr(struct hx_unotify *u, const struct target *t,
			uint32_t call, enum hx_op op,
			const struct sockaddr_storage *ss, socklen_t len,
			int proto, struct answer *a, int *target)
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
	j.rq.has_proto = proto >= 0;
	j.rq.proto = proto;
	if (!hx_un_decide(u, &j)) {
		a->err = EACCES;
		return false;
	}
	if (j.out.reply != HX_VERDICT_ALLOW) {
		atomic_fetch_add(&u->n_denied, 1);
		a->err = denied_unix(t, &j.out, ss, len);
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
	int sfd = hx_un_take_fd(t->peer.pid, fd), type = 0, fl, sv[2];
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
	if (!j || !hx_un_enqueue(u, j)) {
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

void hx_un_connect(struct hx_unotify *u, const struct seccomp_notif *n,
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
	if ((e = hx_un_read_mem(t->tid, n->data.args[1], &ss, len))) {
		a->err = -e;
		return;
	}
	if (!hx_un_id_valid(u, n->id)) {
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
	/* Taken first, as the kernel looks the fd up first (EBADF), and
	 * for its protocol (a netlink address is judged with it). */
	sfd = hx_un_take_fd(t->peer.pid, fd);
	if (sfd < 0) {
		a->err = sfd == -EBADF ? EBADF : EACCES;
		return;
	}
	if (ss.ss_family != AF_UNSPEC &&
	    !decide_addr(u, t, HX_CALL_CONNECT, HX_OP_CONNECT, &ss, len,
			 sock_proto(sfd), a, &target)) {
		close(sfd);
		return;
	}
	/* The taken fd shares the file description: O_NONBLOCK holds, and
	 * EINPROGRESS is what the target gets. A path-unix connect is made
	 * by the connector, so that the server sees no capability. */
	if (target >= 0) {
		e = hx_connector_connect(hx_un_conn, sfd, target);
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
			if ((mine = hx_un_take_fd(t->peer.pid, num)) < 0)
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
static bool stream_socket(int sfd, int flags)
{
	int type = 0;
	socklen_t tl = sizeof(type);

	return getsockopt(sfd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
	       (type == SOCK_STREAM || type == SOCK_SEQPACKET) &&
	       !(flags & MSG_FASTOPEN);
}

/* The send on sfd, the target's socket taken once. */
static void send_on(struct hx_unotify *u, const struct seccomp_notif *n,
		    const struct target *t, int sfd, struct answer *a)
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
	int flags, e, target = -1;
	ssize_t r;

	memset(&out, 0, sizeof(out));
	if (is_mmsg && arg[2] == 0) {
		a->kind = ANS_VALUE;
		a->val = 0;
		return;
	}
	if (is_msg) {
		/* For sendmmsg, arg[1] points at msgvec[0].msg_hdr. */
		if ((e = hx_un_read_mem(t->tid, arg[1], &mh, sizeof(mh)))) {
			a->err = -e;
			return;
		}
		flags = (int)(is_mmsg ? arg[3] : arg[2]);
		name = (uint64_t)(uintptr_t)mh.msg_name;
		len = mh.msg_namelen;
		if ((!name || !len) && (is_mmsg || !stream_socket(sfd, flags))) {
			/* A datagram socket would honour a msg_name that a
			 * second thread sets after this read: emulate, to the
			 * connected peer (decided at connect). */
			to_peer = true;
		} else if (!name || !len) {
			if (!hx_un_id_valid(u, n->id)) {
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
	} else if ((e = hx_un_read_mem(t->tid, name, &ss, len))) {
		a->err = -e;
		return;
	}
	if (!hx_un_id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	if (!to_peer &&
	    !decide_addr(u, t, is_msg ? HX_CALL_SENDMSG : HX_CALL_SENDTO,
			 HX_OP_SEND, &ss, len, sock_proto(sfd), a, &target))
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
		if ((e = hx_un_read_mem(t->tid, (uint64_t)(uintptr_t)mh.msg_iov, iov,
				  mh.msg_iovlen * sizeof(*iov))))
			goto fail;
		for (size_t i = 0; i < mh.msg_iovlen; i++)
			total += iov[i].iov_len;
		if (mh.msg_controllen &&
		    (e = hx_un_read_mem(t->tid,
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
			if ((e = hx_un_read_mem(t->tid,
					  (uint64_t)(uintptr_t)iov[i].iov_base,
					  data + off, iov[i].iov_len)))
				goto fail;
			off += iov[i].iov_len;
		}
	} else if ((e = hx_un_read_mem(t->tid, arg[1], data, total)))
		goto fail;
	if (!hx_un_id_valid(u, n->id)) {
		e = -ESRCH;
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
		r = hx_connector_send(hx_un_conn, sfd, target, &out, flags);
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
	for (size_t i = 0; i < ntaken; i++)
		close(taken[i]);
	if (target >= 0)
		close(target);
	free(iov);
	free(data);
}

void hx_un_send(struct hx_unotify *u, const struct seccomp_notif *n,
		const struct target *t, struct answer *a)
{
	int sfd = hx_un_take_fd(t->peer.pid, (int)n->data.args[0]);

	if (sfd < 0) {
		a->err = sfd == -EBADF ? EBADF : EACCES;
		return;
	}
	send_on(u, n, t, sfd, a);
	close(sfd);
}
