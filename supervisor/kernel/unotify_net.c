/* The user-notify handler: connect and the sends, and a netlink
 * socket's making (unotify_int.h). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <dirent.h>
#include <poll.h>
#include <netinet/in.h>

#include "common/sockaddr.h"
#include "supervisor/kernel/connector.h"
#include "supervisor/kernel/execgate.h"
#include "supervisor/kernel/netsend.h"
#include "supervisor/path_resolve.h"

#define CTRL_MAX  4096 /* ancillary data of a sendmsg */
#define IOV_MAX_N 1024 /* UIO_MAXIOV: sendmmsg's messages at most */

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

/* What a denial of this address is checked against: a unix socket's
 * path, made absolute into full, so that the errno is what the kernel
 * would say of it (ENOENT, ECONNREFUSED; hx_un_denied). No path for
 * other addresses. */
static void addr_kargs(const struct target *t,
		       const struct sockaddr_storage *ss, socklen_t len,
		       char *full, size_t size, struct hx_kargs *k)
{
	const struct sockaddr_un *sun = (const void *)ss;
	size_t off = offsetof(struct sockaddr_un, sun_path), n;
	char raw[sizeof(sun->sun_path) + 1];

	*k = (struct hx_kargs){.call = HX_KC_CONNECT};
	if (ss->ss_family != AF_UNIX || len <= off || !sun->sun_path[0])
		return;
	n = strnlen(sun->sun_path, len - off);
	memcpy(raw, sun->sun_path, n);
	raw[n] = '\0';
	if (!hx_path_absolute(t->peer.pid, t->tid, AT_FDCWD, raw, full, size))
		k->path = full;
}

/* The socket's protocol (SO_PROTOCOL: NETLINK_ROUTE...), or -1. */
int hx_un_sock_proto(int sfd)
{
	int p = -1;
	socklen_t pl = sizeof(p);

	return getsockopt(sfd, SOL_SOCKET, SO_PROTOCOL, &p, &pl) ? -1 : p;
}

/* An IP address the kernel takes in forms hx_sockaddr_port does not
 * read: AF_UNSPEC with INADDR_ANY on an IPv4 socket (inet_bind's
 * "compatibility games": 0.0.0.0), a 24-byte sockaddr_in6
 * (SIN6_LEN_RFC2133: no scope id). Rewritten in place to the full
 * form, which is what is then judged and bound. */
void hx_un_canon_inet(int sfd, struct sockaddr_storage *ss, socklen_t *len)
{
	int dom = 0;
	socklen_t dl = sizeof(dom);

	if (getsockopt(sfd, SOL_SOCKET, SO_DOMAIN, &dom, &dl))
		return;
	if (dom == AF_INET && ss->ss_family == AF_UNSPEC &&
	    *len >= sizeof(struct sockaddr_in) &&
	    !((struct sockaddr_in *)(void *)ss)->sin_addr.s_addr) {
		ss->ss_family = AF_INET;
		*len = sizeof(struct sockaddr_in);
	} else if (dom == AF_INET6 && ss->ss_family == AF_INET6 && *len >= 24 &&
		   *len < sizeof(struct sockaddr_in6)) {
		/* read_addr zeroed the rest: sin6_scope_id 0 */
		*len = sizeof(struct sockaddr_in6);
	}
}

/* The destination the kernel makes of an unspecified one (0.0.0.0, ::,
 * ::ffff:0.0.0.0), made explicit so that what is connected is what the
 * pipeline judges (its loopback address): else the kernel takes the
 * socket's own bound address (IPv4: daddr = saddr, e.g. 192.0.2.2 or
 * 127.0.0.2) or ::ffff:127.0.0.1 for a socket bound to a v4-mapped
 * address, where the judged one is ::1. */
static void explicit_dest(struct sockaddr_storage *ss, socklen_t len)
{
	struct sockaddr_storage j;

	if (hx_sockaddr_unspecified(ss, len, &j))
		memcpy(ss, &j, len);
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
			       .resolve =
				   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	struct stat st;
	struct job j;
	struct hx_kargs k;
	char full[PATH_MAX];
	int fd;

	*target = -1;
	hx_un_job(&j, t, call, op);
	j.rq.addr = ss;
	j.rq.addrlen = len;
	j.rq.has_proto = proto >= 0;
	j.rq.proto = proto;
	/* port 53: sealed (unotify_dns.c), which the record says */
	j.rq.sealed = u->dns && hx_un_dns_port(ss, len);
	addr_kargs(t, ss, len, full, sizeof(full), &k);
	if ((a->err = hx_un_judge(u, t, &j, &k)))
		return false;
	if (ss->ss_family != AF_UNIX || is_abstract(ss, len))
		return true;
	/* The target's own walk of the name (protected_symlinks: another
	 * user's symlink in /tmp to a socket). */
	if (k.path && (a->err = -hx_un_walk_named(t, AT_FDCWD, full, full,
						  j.decided, true, 0)))
		return false;
	/* What connect would have found at the decided path. */
	fd = j.decided[0] ? (int)syscall(SYS_openat2, AT_FDCWD, j.decided, &how,
					 sizeof(how))
			  : -1;
	if (fd < 0) {
		a->err = !j.decided[0]			    ? EACCES
			 : errno == ELOOP || errno == EXDEV ? EACCES
							    : errno;
		return false;
	}
	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode)) {
		close(fd);
		a->err = ECONNREFUSED; /* as connect to a non-socket says */
		return false;
	}
	/* Another socket than the one judged for its owner (pipeline.c,
	 * harness:neighbour): swapped in since the decision. */
	if (st.st_ino != j.out.sock_ino || st.st_dev != j.out.sock_dev) {
		close(fd);
		a->err = EACCES;
		return false;
	}
	*target = fd;
	return true;
}

/* A connection of t's process to the session socket, made here: one
 * end of a fresh socketpair (returned, or -1 with a->err set), whose
 * other end the loop serves as that process's connection. */
int hx_un_own_connection(struct hx_unotify *u, const struct target *t,
			 bool nonblock, struct answer *a)
{
	struct job *j;
	int sv[2], e;

	/* A place first: the agent's connections must not fill our fd
	 * table (server.h). Full: as a server's full backlog says. */
	if (!hx_server_reserve(u->srv)) {
		a->err = ECONNREFUSED;
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		a->err = errno;
		hx_server_unreserve(u->srv);
		return -1;
	}
	if (nonblock && fcntl(sv[1], F_SETFL, O_NONBLOCK)) {
		a->err = errno;
		hx_server_unreserve(u->srv);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	/* Not waited for: what the target sends first waits in the
	 * socket until the loop serves it. */
	j = calloc(1, sizeof(*j));
	if (j) {
		j->peer = t->peer;
		j->adopt_fd = sv[0];
		/* Taken while the target waits in its call: the fd handed
		 * over proves it was this process. None (our fd table
		 * full, which an agent's connections can make): no
		 * connection, as the server's facts of a HELLO on one
		 * would be read by a number nothing pins (server.c). */
		j->adopt_pidfd = (int)syscall(SYS_pidfd_open, t->peer.pid, 0);
	}
	if (!j || j->adopt_pidfd < 0 || !hx_un_adopt_later(u, j)) {
		e = j && j->adopt_pidfd < 0 ? errno : ECONNREFUSED;
		if (j && j->adopt_pidfd >= 0)
			close(j->adopt_pidfd);
		free(j);
		hx_server_unreserve(u->srv);
		close(sv[0]);
		close(sv[1]);
		a->err = e == EMFILE || e == ENFILE || e == ENOMEM
			     ? e
			     : ECONNREFUSED;
		return -1;
	}
	return sv[1];
}

/* A connect to the session socket, the shim's channel: not left to the
 * kernel, whose second read of the address a racing thread could point
 * anywhere, but answered with our connection put in place of the
 * target's socket (ADDFD with SETFD). If that fails, the loop sees our
 * end close. */
static void connect_own(struct hx_unotify *u, const struct seccomp_notif *n,
			const struct target *t, int fd, struct answer *a)
{
	int sfd = hx_un_call_fd(t, fd), type = 0, fl, end, e;
	socklen_t tl = sizeof(type);

	if (sfd < 0) {
		a->err = sfd == -EBADF ? EBADF : EACCES;
		return;
	}
	fl = fcntl(sfd, F_GETFL);
	if (getsockopt(sfd, SOL_SOCKET, SO_TYPE, &type, &tl) ||
	    type != SOCK_SEQPACKET || fl < 0) {
		hx_un_put_fd(sfd);
		a->err = errno == ENOTSOCK ? ENOTSOCK : EPROTOTYPE;
		return;
	}
	hx_un_put_fd(sfd);
	if ((end = hx_un_own_connection(u, t, fl & O_NONBLOCK, a)) < 0)
		return;
	e = hx_un_replace_fd(u, n->id, t, fd, end);
	close(end);
	if (e) {
		a->err = -e;
		return;
	}
	a->kind = ANS_VALUE;
	a->val = 0;
}

/* Whether process pid holds socket inode ino (/proc/<pid>/fd). */
static bool holds_inode(pid_t pid, unsigned long ino)
{
	char path[64], want[48], got[64];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	snprintf(want, sizeof(want), "socket:[%lu]", ino);
	if (!(d = opendir(path)))
		return false;
	while (!found && (de = readdir(d))) {
		char link[64 + 256];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, de->d_name);
		n = readlink(link, got, sizeof(got) - 1);
		if (n > 0) {
			got[n] = '\0';
			found = !strcmp(got, want);
		}
	}
	closedir(d);
	return found;
}

/* Whether some process of the agent's tree holds socket ino: the
 * caller's own process first, then every process /proc lists. */
static bool tree_holds(const struct hx_unotify *u, pid_t self,
		       unsigned long ino)
{
	struct dirent *de;
	bool found;
	DIR *d;

	if (holds_inode(self, ino))
		return true;
	if (!(d = opendir("/proc")))
		return false;
	found = false;
	while (!found && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 1 || pid == self)
			continue;
		found = hx_un_in_tree(u, (pid_t)pid) &&
			holds_inode((pid_t)pid, ino);
	}
	closedir(d);
	return found;
}

bool hx_unotify_tree_holds(const struct hx_unotify *u, pid_t self,
			   const unsigned long *inos, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!tree_holds(u, self, inos[i]))
			return false;
	return n > 0;
}

/* Landlock's abstract-socket scope (ABI 6), judged here: the abstract
 * name (sun_path[1..], n bytes) is bound in the target's network
 * namespace, and every socket bound to it (/proc/<pid>/net/unix prints
 * each NUL of a name as '@', so names that print alike all count) is
 * held by a process of the agent's tree. */
static bool abstract_in_scope(const struct hx_unotify *u,
			      const struct target *t, const char *name,
			      size_t n)
{
	char path[64], line[512],
	    want[sizeof(((struct sockaddr_un *)0)->sun_path) + 2];
	unsigned long inos[16];
	size_t nino = 0;
	bool over = false;
	FILE *f;

	want[0] = '@';
	for (size_t i = 0; i < n; i++)
		want[1 + i] = name[i] ? name[i] : '@';
	want[1 + n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/net/unix", (int)t->peer.pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long ino;
		int off = 0;
		char *nl;

		if (sscanf(line, "%*s %*x %*x %*x %*x %*x %lu %n", &ino, &off) <
			1 ||
		    !off)
			continue;
		if ((nl = strchr(line + off, '\n')))
			*nl = '\0';
		if (strcmp(line + off, want))
			continue;
		if (nino == sizeof(inos) / sizeof(*inos)) {
			over = true;
			break;
		}
		inos[nino++] = ino;
	}
	fclose(f);
	return !over && hx_unotify_tree_holds(u, t->peer.pid, inos, nino);
}

/* An abstract connect, made by the connector with our copy of the
 * address when the name is in scope; EPERM, as Landlock says, when it
 * is not. */
static void connect_abstract(struct hx_unotify *u, const struct target *t,
			     int fd, const struct sockaddr_storage *ss,
			     socklen_t len, struct answer *a)
{
	const struct sockaddr_un *sun = (const void *)ss;
	size_t n = len - offsetof(struct sockaddr_un, sun_path) - 1;
	int sfd = hx_un_call_fd(t, fd), e;

	if (sfd < 0) {
		a->err = sfd == -EBADF ? EBADF : EACCES;
		return;
	}
	if (!abstract_in_scope(u, t, sun->sun_path + 1, n)) {
		hx_un_put_fd(sfd);
		atomic_fetch_add(&u->n_denied, 1);
		a->err = EPERM;
		return;
	}
	hx_un_wait_begin(HX_WAIT_CONNECTOR);
	e = hx_connector_connect_addr(hx_un_conn, sfd, ss, len);
	e = hx_un_wait_end(u, e);
	hx_un_put_fd(sfd);
	hx_un_done(u, a, e);
}

/* The address an agent's call points at (len bytes), copied into ss:
 * 0, or the positive errno (EINVAL for a length no sockaddr has). */
int hx_un_read_addr(struct hx_unotify *u, const struct seccomp_notif *n,
		    const struct target *t, uint64_t addr, socklen_t len,
		    struct sockaddr_storage *ss)
{
	int e;

	if (len < sizeof(sa_family_t) || len > sizeof(*ss))
		return EINVAL;
	memset(ss, 0, sizeof(*ss));
	if ((e = hx_un_read_mem(t->tid, addr, ss, len)))
		return -e;
	if (!hx_sockaddr_len_ok(ss, len))
		return EINVAL; /* the kernel's answer: a unix one too long */
	return hx_un_id_valid(u, n->id) ? 0 : ESRCH;
}

void hx_un_connect(struct hx_unotify *u, const struct seccomp_notif *n,
		   const struct target *t, struct answer *a)
{
	struct sockaddr_storage ss;
	socklen_t len = (socklen_t)n->data.args[2];
	int fd = (int)n->data.args[0], sfd, e, target = -1, proto;

	if ((a->err = hx_un_read_addr(u, n, t, n->data.args[1], len, &ss)))
		return;
	if (is_own_socket(u, &ss, len)) {
		connect_own(u, n, t, fd, a);
		return;
	}
	if (is_abstract(&ss, len)) {
		/* Emulated, never CONTINUE: the kernel would read the
		 * address again, where a racing thread can have put an IP
		 * address or a path (Landlock's scope holds abstract names
		 * only). What that scope lets through, this lets through:
		 * a name bound by a socket of the agent's own tree. */
		connect_abstract(u, t, fd, &ss, len, a);
		return;
	}
	/* Taken first, as the kernel looks the fd up first (EBADF), and
	 * for its protocol (a netlink address is judged with it). */
	sfd = hx_un_call_fd(t, fd);
	if (sfd < 0) {
		a->err = sfd == -EBADF ? EBADF : EACCES;
		return;
	}
	/* A file is the kernel's ENOTSOCK, before any decision. */
	if ((proto = hx_un_sock_proto(sfd)) < 0 && errno == ENOTSOCK) {
		hx_un_put_fd(sfd);
		a->err = ENOTSOCK;
		return;
	}
	explicit_dest(&ss, len);
	if (ss.ss_family != AF_UNSPEC &&
	    !decide_addr(u, t, HX_CALL_CONNECT, HX_OP_CONNECT, &ss, len, proto,
			 a, &target)) {
		hx_un_put_fd(sfd);
		return;
	}
	/* Port 53: connected in the sealed namespace, to our resolver. */
	if (u->dns && hx_un_dns_port(&ss, len) &&
	    (e = hx_un_dns_seal(u, n->id, t, fd, &sfd))) {
		hx_un_put_fd(sfd);
		hx_un_done(u, a, e);
		return;
	}
	/* The taken fd shares the file description: O_NONBLOCK holds, and
	 * EINPROGRESS is what the target gets. A path-unix connect is made
	 * by the connector, so that the server sees no capability. */
	if (target >= 0) {
		hx_un_wait_begin(HX_WAIT_CONNECTOR);
		e = hx_connector_connect(hx_un_conn, sfd, target);
		e = hx_un_wait_end(u, e);
		close(target);
	} else if (ss.ss_family == AF_UNIX) {
		e = -EINVAL; /* unnamed: connect says so too */
	} else {
		hx_un_wait_begin(HX_WAIT_CALL);
		e = connect(sfd, (struct sockaddr *)&ss, len) ? -errno : 0;
		e = hx_un_wait_end(u, e);
		/* Broken off (the watchdog): the handshake goes on, as
		 * natively; no more a failure than EINPROGRESS. */
		a->took_effect = e == -EINTR;
	}
	hx_un_put_fd(sfd);
	hx_un_done(u, a, e);
}

static void sigpipe(const struct target *t, int err, int flags)
{
	if (err == EPIPE && !(flags & MSG_NOSIGNAL))
		hx_un_signal_caller(t, SIGPIPE);
}

#define RIGHTS_MAX 253 /* SCM_MAX_FD */

/* A control message that routes the datagram past its decided address:
 * an IPv6 routing header, an IPv4 source route (IP_RETOPTS; the kernel
 * wants CAP_NET_RAW for one, refused here whatever the kernel), an
 * interface other than the route's. */
static bool routes(const struct cmsghdr *c)
{
	return (c->cmsg_level == IPPROTO_IPV6 &&
		(c->cmsg_type == IPV6_RTHDR ||
		 c->cmsg_type == IPV6_2292RTHDR)) ||
	       (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RETOPTS) ||
	       hx_send_forces_interface(c);
}

/* Ancillary data as the send made here needs it: the fds of SCM_RIGHTS
 * messages are taken from the target and their numbers replaced by
 * ours, in place (taken[], *ntaken: to close). SCM_CREDENTIALS is
 * refused (EPERM): whoever sends could only vouch for itself; so is a
 * route (routes()). Returns 0 or -errno. */
static int take_rights(const struct target *t, void *ctrl, size_t len,
		       int *taken, size_t *ntaken)
{
	struct msghdr m = {.msg_control = ctrl, .msg_controllen = len};

	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (routes(c))
			return -EPERM;
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
			if ((mine = hx_un_call_fd(t, num)) < 0)
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

/* Whether the target's socket is a byte stream (a send may then take
 * part of the data) and the call is not a TCP Fast Open. */
static bool stream_socket(int sfd, int flags)
{
	int type = 0;
	socklen_t tl = sizeof(type);

	return getsockopt(sfd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
	       type == SOCK_STREAM && !(flags & MSG_FASTOPEN);
}

/* What the kernel does after sendmmsg sent a message, its mmsghdr at
 * entry: entry->msg_len = the bytes sent. 0 or -EFAULT. */
static int mmsg_sent(const struct target *t, uint64_t entry, unsigned int sent)
{
	struct iovec l = {&sent, sizeof(sent)};
	struct iovec rv = {
	    (void *)(uintptr_t)(entry + offsetof(struct mmsghdr, msg_len)),
	    sizeof(sent)};

	return process_vm_writev(t->tid, &l, 1, &rv, 1, 0) ==
		       (ssize_t)sizeof(sent)
		   ? 0
		   : -EFAULT;
}

/* A send into harness-exec's own server (the session socket's
 * connection, one end of a socketpair the kernel layer made: its peer
 * is this process and has no name), which names each message's sender
 * by the kernel's per-message credentials: emulated, the send would be
 * the connector's, a process of harness-exec's, and the server would
 * record the request as that process's, not the agent's (the
 * fourteenth attack review). The shim sends without sendmsg (never
 * emulated); such a send is refused, decided as a send to the session
 * socket (harness:protect), its record the agent's. A client of the
 * agent's own server has this process for its peer too (the listen was
 * a worker's), but that peer has the server's name. (harness-mcp's
 * worker's channel is such a pair too, written with send, never
 * emulated: a sendmsg on it is refused alike, recorded as to the
 * session socket.) True when refused (a->err set). */
static bool to_harness(struct hx_unotify *u, const struct target *t, int sfd,
		       uint32_t call, struct answer *a)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	struct sockaddr_storage ss = {.ss_family = AF_UNIX};
	struct sockaddr_un *sun = (void *)&ss;
	socklen_t pl = sizeof(ss);
	struct job j;

	if (!unix_socket(sfd) ||
	    getsockopt(sfd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) ||
	    cr.pid != getpid() || getpeername(sfd, (struct sockaddr *)&ss, &pl))
		return false;
	/* Named: our end of a connection has one once it has sent (its
	 * SO_PASSCRED autobinds it; the server binds it at once now), and
	 * the twenty-ninth review's sendmsg after a first verdict was
	 * recorded as the connector's again. */
	if (pl > offsetof(struct sockaddr_un, sun_path) &&
	    !hx_server_conn_named(u->srv, &ss, pl))
		return false;
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	snprintf(sun->sun_path, sizeof(sun->sun_path), "%s", u->sock_path);
	hx_un_job(&j, t, call, HX_OP_SEND);
	j.rq.addr = &ss;
	j.rq.addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				   strlen(sun->sun_path) + 1);
	a->err = u->sock_path[0] ? hx_un_judge(u, t, &j, NULL) : 0;
	if (!a->err)
		a->err = EPERM;
	return true;
}

/* The kernel's errno for a sendmsg whose msghdr it could not read: it
 * looks the socket up first (ENOTSOCK for a file). Asked on that
 * failure only. */
static int unread_msghdr(int sfd, int e)
{
	int type;
	socklen_t tl = sizeof(type);

	if (getsockopt(sfd, SOL_SOCKET, SO_TYPE, &type, &tl) &&
	    errno == ENOTSOCK)
		return ENOTSOCK;
	return -e;
}

/* One send (sendto, sendmsg, or one message of a sendmmsg: its msghdr
 * at mh_addr) on the socket taken once, *sfdp. */
static void send_on(struct hx_unotify *u, const struct seccomp_notif *n,
		    const struct target *t, int *sfdp, uint64_t mh_addr,
		    struct answer *a)
{
	int sfd = *sfdp;
	const __u64 *arg = n->data.args;
	bool is_mmsg = n->data.nr == SYS_sendmmsg;
	bool is_msg = n->data.nr == SYS_sendmsg || is_mmsg;
	bool to_peer = false, stream = false;
	struct sockaddr_storage ss;
	struct msghdr mh, out;
	struct hx_un_payload pay = {.iov = NULL};
	union {
		struct cmsghdr h;
		unsigned char b[CTRL_MAX];
	} ctrl;
	int taken[RIGHTS_MAX];
	size_t ntaken = 0;
	uint64_t name;
	socklen_t len;
	int flags = 0, e, target = -1, proto = -1;
	ssize_t r;

	memset(&out, 0, sizeof(out));
	if (is_msg) {
		if ((e = hx_un_read_mem(t->tid, mh_addr, &mh, sizeof(mh)))) {
			a->err = unread_msghdr(sfd, e);
			return;
		}
		flags = (int)(is_mmsg ? arg[3] : arg[2]);
		name = (uint64_t)(uintptr_t)mh.msg_name;
		len = mh.msg_namelen;
		if (!name || !len) {
			/* No destination: emulated to the connected peer
			 * (decided at connect), never CONTINUE. The kernel
			 * would look fd up again and read msg_name again: a
			 * racing thread can dup2 a datagram socket onto this
			 * number and point msg_name anywhere. */
			to_peer = true;
			stream = stream_socket(sfd, flags);
		}
	} else {
		flags = (int)arg[3];
		name = arg[4];
		len = (socklen_t)arg[5];
	}
	/* A name the kernel would not use: sent to the peer, as it would
	 * (a peer decided at its connect). */
	if (!to_peer && hx_sock_name_ignored(sfd)) {
		to_peer = true;
		stream = stream_socket(sfd, flags);
	}
	/* The kernel looks the socket up before it reads the name: a file
	 * is ENOTSOCK, never a decision. (The protocol judges a netlink
	 * address.) */
	if (!to_peer && (proto = hx_un_sock_proto(sfd)) < 0 &&
	    errno == ENOTSOCK) {
		a->err = ENOTSOCK;
		return;
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
	} else if (!hx_sockaddr_len_ok(&ss, len)) {
		a->err = EINVAL;
		return;
	}
	if (!hx_un_id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	if (to_harness(u, t, sfd, is_msg ? HX_CALL_SENDMSG : HX_CALL_SENDTO, a))
		return;
	if (!to_peer)
		explicit_dest(&ss, len);
	if (!to_peer &&
	    !decide_addr(u, t, is_msg ? HX_CALL_SENDMSG : HX_CALL_SENDTO,
			 HX_OP_SEND, &ss, len, proto, a, &target))
		return;
	/* Port 53: sent from the sealed namespace, to our resolver. */
	if (!to_peer && u->dns && hx_un_dns_port(&ss, len) &&
	    (e = hx_un_dns_seal(u, n->id, t, (int)arg[0], sfdp)))
		goto fail;
	sfd = *sfdp;
	/* Emulated: the data, the address and the control messages are our
	 * copies; to a unix socket, sent by the connector (connector.h). */
	if ((e = hx_un_payload_read(t, is_msg ? &mh : NULL, arg[1], arg[2],
				    ctrl.b, sizeof(ctrl.b), &pay)))
		goto fail;
	if (!hx_un_id_valid(u, n->id)) {
		e = -ESRCH;
		goto fail;
	}
	if (is_msg && mh.msg_controllen &&
	    (e = take_rights(t, ctrl.b, mh.msg_controllen, taken, &ntaken)))
		goto fail;
	out.msg_name = to_peer ? NULL : &ss;
	out.msg_namelen = len;
	if (is_msg && mh.msg_controllen) {
		out.msg_control = ctrl.b;
		out.msg_controllen = mh.msg_controllen;
	}
	if (!to_peer)
		hx_send_push_pending(sfd);
	hx_un_wait_begin(HX_WAIT_POLL);
	r = hx_un_send_all(u, n->id, sfd, to_peer ? -1 : target, &out, flags,
			   &pay, stream, unix_socket(sfd));
	e = hx_un_wait_end(u, r < 0 ? (int)r : 0);
	if (r < 0)
		r = e;
	if (r < 0) {
		e = (int)r;
		sigpipe(t, -e, flags);
		goto fail;
	}
	atomic_fetch_add(&u->n_emul, 1);
	a->kind = ANS_VALUE;
	a->val = r;
	goto done;
fail:
	a->kind = ANS_ERROR;
	a->err = -e;
done:
	for (size_t i = 0; i < ntaken; i++)
		hx_un_put_fd(taken[i]);
	if (target >= 0)
		close(target);
	hx_un_payload_free(&pay);
}

/* sendmmsg: each message in turn, decided, recorded and sent as one
 * sendmsg is (no CONTINUE: any message may name any address), until
 * vlen (at most UIO_MAXIOV, as the kernel's) or the first that fails:
 * its error if it was the first, else the count sent, as the kernel
 * answers. Each one's msg_len is written as it is sent. */
static void send_mmsg(struct hx_unotify *u, const struct seccomp_notif *n,
		      const struct target *t, int *sfdp, struct answer *a)
{
	unsigned int vlen = (unsigned int)n->data.args[2], i;
	uint64_t vec = n->data.args[1];

	if (vlen > IOV_MAX_N)
		vlen = IOV_MAX_N;
	for (i = 0; i < vlen; i++) {
		uint64_t at = vec + (uint64_t)i * sizeof(struct mmsghdr);
		struct answer one = {.kind = ANS_ERROR, .err = EACCES};

		send_on(u, n, t, sfdp, at, &one);
		if (one.kind != ANS_VALUE) {
			if (!i)
				*a = one;
			break;
		}
		if (mmsg_sent(t, at, (unsigned int)one.val)) {
			/* EFAULT as the kernel's, the datagram gone all
			 * the same. */
			if (!i)
				*a = (struct answer){.kind = ANS_ERROR,
						     .err = EFAULT,
						     .took_effect = true};
			break;
		}
	}
	if (i || !vlen) {
		a->kind = ANS_VALUE;
		a->val = i;
	}
}

void hx_un_send(struct hx_unotify *u, const struct seccomp_notif *n,
		const struct target *t, struct answer *a)
{
	int sfd = hx_un_call_fd(t, (int)n->data.args[0]);

	if (sfd < 0) {
		a->err = sfd == -EBADF ? EBADF : EACCES;
		return;
	}
	if (n->data.nr == SYS_sendmmsg)
		send_mmsg(u, n, t, &sfd, a);
	else
		send_on(u, n, t, &sfd, n->data.args[1], a);
	hx_un_put_fd(sfd);
}

void hx_un_socket(struct hx_unotify *u, const struct seccomp_notif *n,
		  const struct target *t, struct answer *a)
{
	struct sockaddr_storage ss = {.ss_family = AF_NETLINK};
	struct job j;

	/* What every send of it without an address (write, send, never
	 * notified) goes to: the kernel, nl_pid 0, no group. */
	hx_un_job(&j, t, HX_CALL_SOCKET, HX_OP_SEND);
	j.rq.addr = &ss;
	j.rq.addrlen = sizeof(struct sockaddr_nl);
	j.rq.has_proto = true;
	j.rq.proto = (int)(uint32_t)n->data.args[2];
	/* Refused as by a kernel without the protocol: libaudit's callers
	 * (useradd, passwd...) go on without audit then, and abort on any
	 * other errno. */
	if (hx_un_judge(u, t, &j, NULL)) {
		a->err = EPROTONOSUPPORT;
		return;
	}
	/* CONTINUE with no pointer argument: socket(2) takes registers
	 * only, which the kernel does not read again from memory a racing
	 * thread could change; what was decided is what is made (allowed:
	 * audit mode only, netfamily.c refuses these protocols). */
	atomic_fetch_add(&u->n_cont, 1);
	a->kind = ANS_CONTINUE;
}
