/* The user-notify handler: bind and listen (unotify_int.h): a server's
 * address decided, a unix socket's file made where it was decided. */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sockaddr.h"
#include "supervisor/kernel/localaddr.h"
#include "supervisor/path_resolve.h"

/* Where the bind of raw walks to, checked under u->names: 0 when the
 * walk from here reaches pfd's directory (want) by names alone, 1 when
 * it passes a /proc magic link (/proc/<pid>/fd/N, a link to
 * /proc/<pid>/cwd): what that leads to changes with a dup2 or a chdir
 * of the agent, which no lock holds, between this look and the bind's
 * own walk. -ESTALE: another directory (a cwd or a name moved since
 * the decision). */
static int walk_to(const char *dir, const struct stat *want)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_MAGICLINKS};
	int dfd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));
	struct stat got;
	int e = 0;

	if (dfd < 0)
		return errno == ELOOP ? 1 : -ESTALE;
	if (fstat(dfd, &got) || got.st_dev != want->st_dev ||
	    got.st_ino != want->st_ino)
		e = -ESTALE;
	close(dfd);
	return e;
}

/* Binds sfd to the agent's own bytes raw, as the kernel would have
 * (getsockname, a client's getpeername and /proc/net/unix say what the
 * agent named: Python's multiprocessing hands its listener's address to
 * its clients), to the file name in the decided directory pfd only:
 * the bind walks raw again, from the agent's cwd for a relative one,
 * with every emulated change of a name held off (u->names), after the
 * directory raw names is checked to be pfd's by names alone (walk_to),
 * and its last name to be name. A path through a magic link is bound in
 * pfd by its last name (fchdir), which getsockname then says. On this
 * worker's own cwd and umask (unshare(CLONE_FS) in unotify.c: no other
 * thread's), the target's umask applied. -ESTALE: moved since the
 * decision. */
static int bind_named(struct hx_unotify *u, const struct target *t, int sfd,
		      const char *raw, int pfd, const char *name, mode_t umask_)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char dir[sizeof(sun.sun_path) + 1], cwd[PATH_MAX], link[64];
	size_t n = strlen(raw);
	struct stat want;
	const char *slash;
	ssize_t k;
	int e = 0;

	if (n >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, raw, n + 1);
	if (fstat(pfd, &want))
		return -errno;
	slash = strrchr(raw, '/');
	if (strcmp(slash ? slash + 1 : raw, name))
		return -EACCES; /* "x/." and the like: not a new name */
	snprintf(dir, sizeof(dir), "%.*s",
		 slash ? (int)(slash == raw ? 1 : slash - raw) : 1,
		 slash ? raw : ".");
	pthread_rwlock_wrlock(&u->names);
	if (raw[0] != '/') {
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)t->tid);
		k = readlink(link, cwd, sizeof(cwd) - 1);
		if (k <= 0 || (cwd[k] = '\0', chdir(cwd))) {
			e = -ESTALE;
			goto out;
		}
	}
	if ((e = walk_to(dir, &want)) == 1) {
		e = fchdir(pfd) ? -errno : 0;
		n = strlen(name);
		memcpy(sun.sun_path, name, n + 1);
	}
	if (!e) {
		umask(umask_);
		if (bind(sfd, (struct sockaddr *)&sun,
			 (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				     n + 1)))
			e = -errno;
		umask(0);
	}
out:
	pthread_rwlock_unlock(&u->names);
	if (chdir("/") && !e)
		e = -errno;
	return e;
}

/* Whether a bind of sfd to ss makes a server's address: an IP one, but
 * port 0 of a datagram socket (a client's, as musl's resolver binds). */
static bool serves(int sfd, const struct sockaddr_storage *ss, socklen_t len)
{
	int type = 0;
	socklen_t tl = sizeof(type);

	if (hx_sockaddr_port(ss, len) < 0)
		return false;
	if (getsockopt(sfd, SOL_SOCKET, SO_TYPE, &type, &tl))
		return true;
	return type != SOCK_DGRAM || hx_sockaddr_port(ss, len) != 0;
}

/* Decides a server's address (HX_OP_LISTEN, the rules' listen:
 * patterns): 0, or the errno to answer with. */
static int judge_listen(struct hx_unotify *u, const struct target *t,
			uint32_t call, const struct sockaddr_storage *ss,
			socklen_t len, int proto)
{
	struct job j;

	hx_un_job(&j, t, call, HX_OP_LISTEN);
	j.rq.addr = ss;
	j.rq.addrlen = len;
	j.rq.has_proto = proto >= 0;
	j.rq.proto = proto;
	return hx_un_judge(u, t, &j, NULL);
}

/* listen(2), emulated on the socket taken: one that no bind named takes
 * an address of every interface (0.0.0.0 or ::, an ephemeral port),
 * which is decided as that bind; the kernel would look the fd up again,
 * where a racing dup2 can have put another. */
void hx_un_listen(struct hx_unotify *u, const struct seccomp_notif *n,
		  const struct target *t, struct answer *a)
{
	struct sockaddr_storage ss = {0};
	socklen_t len = sizeof(ss), tl = sizeof(int);
	int sfd = hx_un_call_fd(t, (int)n->data.args[0]), e = 0;
	int type = 0;

	if (sfd < 0) {
		a->err = sfd == -EBADF ? EBADF : EACCES;
		return;
	}
	/* (a datagram socket's listen is the kernel's EOPNOTSUPP) */
	if (!getsockopt(sfd, SOL_SOCKET, SO_TYPE, &type, &tl) &&
	    type != SOCK_DGRAM &&
	    !getsockname(sfd, (struct sockaddr *)&ss, &len) &&
	    hx_sockaddr_port(&ss, len) == 0)
		e = -judge_listen(u, t, HX_CALL_LISTEN, &ss, len,
				  hx_un_sock_proto(sfd));
	if (!e && listen(sfd, (int)n->data.args[1]))
		e = -errno;
	hx_un_put_fd(sfd);
	hx_un_done(u, a, e);
}

void hx_un_bind(struct hx_unotify *u, const struct seccomp_notif *n,
		const struct target *t, struct answer *a)
{
	struct sockaddr_storage ss;
	const struct sockaddr_un *sun = (const void *)&ss;
	socklen_t len = (socklen_t)n->data.args[2];
	size_t off = offsetof(struct sockaddr_un, sun_path), k;
	char raw[sizeof(sun->sun_path) + 1], full[PATH_MAX];
	char here[PATH_MAX + 32], *last;
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve =
				   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	int sfd, pfd, e;
	struct job j;

	if ((a->err = hx_un_read_addr(u, n, t, n->data.args[1], len, &ss)))
		return;
	sfd = hx_un_call_fd(t, (int)n->data.args[0]);
	if (sfd < 0) {
		a->err = sfd == -EBADF ? EBADF : EACCES;
		return;
	}
	hx_un_canon_inet(sfd, &ss, &len);
	if (hx_foreign_source(&ss, len)) {
		e = -EADDRNOTAVAIL; /* as where nonlocal binds are off */
		goto done;
	}
	/* An IP address a server may take: decided (listen), but a
	 * client's port-0 UDP bind. */
	if (serves(sfd, &ss, len) &&
	    (e = -judge_listen(u, t, HX_CALL_BIND, &ss, len,
			       hx_un_sock_proto(sfd))))
		goto done;
	/* Every other address (IP, abstract, netlink, autobind) makes no
	 * file: bound as given, from our copy, with the worker's rights,
	 * which are no more than the target's (no CAP_NET_BIND_SERVICE). */
	if (ss.ss_family != AF_UNIX || len <= off || !sun->sun_path[0]) {
		e = bind(sfd, (struct sockaddr *)&ss, len) ? -errno : 0;
		goto done;
	}
	/* A unix socket's path: a new file, decided as the write it is. */
	if (t->peer.uid != geteuid()) {
		e = -EACCES;
		goto done;
	}
	k = strnlen(sun->sun_path, len - off);
	memcpy(raw, sun->sun_path, k);
	raw[k] = '\0';
	if ((e = hx_path_absolute(t->peer.pid, t->tid, AT_FDCWD, raw, full,
				  sizeof(full))))
		goto done;
	hx_un_job(&j, t, HX_CALL_BIND, HX_OP_WRITE);
	j.rq.path = full;
	j.rq.has_flags = true;
	j.rq.flags = O_WRONLY | O_CREAT | O_EXCL; /* no final symlink */
	if ((e = -hx_un_judge(u, t, &j, NULL)))
		goto done;
	/* The target's own walk of its name: "file/../s.sock" is the
	 * kernel's ENOTDIR, not a directory moved since the decision. */
	if ((e = hx_un_walk_named(t, AT_FDCWD, full, full, j.decided, false,
				  0)))
		goto done;
	if (!j.decided[0] || j.decided[0] != '/' ||
	    hx_un_proc_path(t, j.decided, here, sizeof(here))) {
		e = -EACCES;
		goto done;
	}
	last = strrchr(here, '/');
	if (!last[1]) {
		e = -EINVAL;
		goto done;
	}
	{
		char name[NAME_MAX + 1];

		snprintf(name, sizeof(name), "%s", last + 1);
		if (last == here)
			last[1] = '\0';
		else
			*last = '\0';
		pfd = (int)syscall(SYS_openat2, AT_FDCWD, here, &how,
				   sizeof(how));
		if (pfd < 0) {
			e = errno == ELOOP || errno == EXDEV ? -ESTALE : -errno;
			goto moved;
		}
		e = bind_named(u, t, sfd, raw, pfd, name, hx_un_umask(t));
		/* The session's own: its connects are no neighbour's. */
		if (!e)
			hx_pipeline_own(u->pl, pfd, name);
		close(pfd);
	}
moved:
	/* A directory swapped since the decision: the harness's refusal,
	 * recorded as such (not as the kernel's, "failed"). */
	if (e == -ESTALE) {
		e = -EACCES;
		hx_un_revoke(u, &j, "harness:changed",
			     "the directory the bind walks to is not the "
			     "decided one");
	}
done:
	hx_un_put_fd(sfd);
	hx_un_done(u, a, e);
}
