/* The user-notify handler: file mutations (unotify_int.h). */
#define _GNU_SOURCE
#include "unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <linux/limits.h>

#include "path.h"
#include "resolve.h"

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
	MUT_MKNOD,
	MUT_UTIME,
	MUT_SETXATTR,
	MUT_RMXATTR,
};

/* What some kinds carry beyond a path and a mode. */
struct mut_extra {
	dev_t dev;		/* mknod */
	struct timespec ts[2];	/* utime family; has_ts false: now */
	bool has_ts;
	char xname[XATTR_NAME_MAX + 1]; /* xattr */
	unsigned char *xval;
	size_t xsize;
	int xflags;
};

/* Each kind as kerrno.h names it. */
static const enum hx_kcall kcall[] = {
    [MUT_RENAME] = HX_KC_RENAME,     [MUT_UNLINK] = HX_KC_UNLINK,
    [MUT_RMDIR] = HX_KC_RMDIR,	     [MUT_MKDIR] = HX_KC_MKDIR,
    [MUT_LINK] = HX_KC_LINK,	     [MUT_SYMLINK] = HX_KC_SYMLINK,
    [MUT_TRUNCATE] = HX_KC_TRUNCATE, [MUT_CHMOD] = HX_KC_CHMOD,
    [MUT_CHOWN] = HX_KC_CHOWN,	     [MUT_MKNOD] = HX_KC_MKDIR,
    [MUT_UTIME] = HX_KC_CHMOD,	     [MUT_SETXATTR] = HX_KC_CHMOD,
    [MUT_RMXATTR] = HX_KC_CHMOD,
};

/* Whether name (relative to dirfd, not followed) is a directory. */
static bool is_dir_at(int dirfd, const char *name)
{
	struct stat st;

	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	       S_ISDIR(st.st_mode);
}

/* The decided path's parent as an O_PATH|O_DIRECTORY fd, and its final
 * component in name ("/" appended when the target's path ended with
 * one, so the kernel keeps its trailing-slash rules). -errno. */
static int open_parent(const struct target *t, const char *decided,
		       bool slash, char *name, size_t nsize)
{
	char path[PATH_MAX + 32], *last;
	struct open_how how = {0};
	int fd;

	if (!decided[0] || decided[0] != '/' ||
	    hx_un_proc_path(t, decided, path, sizeof(path)))
		return -EACCES;
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
		   uid_t ouid, gid_t ogid, bool nofollow,
		   const struct mut_extra *x)
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
	case MUT_MKNOD:
		r = mknodat(pfd, name,
			    (mode & S_IFMT) | (mode & 07777 & ~t->umask), x->dev);
		break;
	case MUT_TRUNCATE:
	case MUT_CHMOD:
	case MUT_CHOWN:
	case MUT_UTIME:
	case MUT_SETXATTR:
	case MUT_RMXATTR:
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
		if (k == MUT_UTIME)
			r = utimensat(fd, "", x->has_ts ? x->ts : NULL,
				      AT_EMPTY_PATH);
		else if ((k == MUT_SETXATTR || k == MUT_RMXATTR) &&
			 S_ISLNK(st.st_mode)) {
			errno = EPERM; /* no xattr a capability-less caller
					* may set on a symlink */
			r = -1;
		} else if (k == MUT_SETXATTR || k == MUT_RMXATTR) {
			char p[64];

			/* Our own fd's magic link: the inode decided. */
			snprintf(p, sizeof(p), "/proc/thread-self/fd/%d", fd);
			r = k == MUT_SETXATTR
				? setxattr(p, x->xname, x->xval, x->xsize,
					   x->xflags)
				: removexattr(p, x->xname);
		} else if (k == MUT_CHOWN)
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

static int read_times(const struct target *t, uint64_t addr, int kind,
		      struct mut_extra *x);

/* A setxattr's size and flags into x, checked as the kernel does:
 * 0, or the positive errno. */
static int xattr_args(struct mut_extra *x, uint64_t size, uint64_t flags)
{
	x->xsize = (size_t)size;
	x->xflags = (int)flags;
	if (x->xflags & ~(XATTR_CREATE | XATTR_REPLACE))
		return EINVAL;
	return x->xsize > XATTR_SIZE_MAX ? E2BIG : 0;
}

/* What a metadata call points at, read into x: the xattr name, its
 * value (into buf, x->xsize bytes), the times (read_times' kind).
 * Returns 0 or the positive errno. */
static int read_meta(const struct target *t, uint64_t xname, uint64_t xval,
		     unsigned char *buf, uint64_t tsaddr, int tskind,
		     struct mut_extra *x)
{
	int e;

	if (xname &&
	    (e = hx_un_read_str(t->tid, xname, x->xname, sizeof(x->xname))))
		return e == -ENAMETOOLONG ? ERANGE : -e;
	if (xval && x->xsize && (e = hx_un_read_mem(t->tid, xval, buf, x->xsize)))
		return -e;
	x->xval = buf;
	if (tsaddr && (e = read_times(t, tsaddr, tskind, x)))
		return -e;
	return 0;
}

/* The times of the utime family as utimensat takes them; kind 1:
 * struct utimbuf, 2: struct timeval[2], 3: struct timespec[2]. */
static int read_times(const struct target *t, uint64_t addr, int kind,
		      struct mut_extra *x)
{
	int e;

	x->has_ts = true;
	if (kind == 1) {
		time_t tb[2];

		if ((e = hx_un_read_mem(t->tid, addr, tb, sizeof(tb))))
			return e;
		x->ts[0] = (struct timespec){tb[0], 0};
		x->ts[1] = (struct timespec){tb[1], 0};
	} else if (kind == 2) {
		struct timeval tv[2];

		if ((e = hx_un_read_mem(t->tid, addr, tv, sizeof(tv))))
			return e;
		for (int i = 0; i < 2; i++) {
			if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
				return -EINVAL;
			x->ts[i] = (struct timespec){tv[i].tv_sec,
						     tv[i].tv_usec * 1000};
		}
	} else if ((e = hx_un_read_mem(t->tid, addr, x->ts, sizeof(x->ts))))
		return e;
	return 0;
}

/* Metadata changes through an fd (fchmod, fchown, fsetxattr,
 * fremovexattr, futimens, the *at forms with an empty path and
 * AT_EMPTY_PATH, and chattr's FS_IOC_SETFLAGS and FS_IOC_FSSETXATTR,
 * which set nodump, noatime, nocow... on a read-only fd of a file the
 * agent owns): the fd acts on whatever file it names, which may be
 * one opened read-only that the agent may not write. The fd is taken
 * once (pidfd_getfd), the file it names decided as a write (its path,
 * or "/proc/self/fd/N" for one without), and the change made on the
 * taken fd: what was decided is what changes, whatever a racing dup2
 * does to the number. Never CONTINUE. */
static void hx_un_fdmeta(struct hx_unotify *u, const struct seccomp_notif *n,
			 const struct target *t, struct answer *a)
{
	const __u64 *arg = n->data.args;
	int nr = n->data.nr, fd = (int)arg[0], mine, e, r;
	uint64_t xname = 0, xval = 0, tsaddr = 0;
	uid_t ouid = (uid_t)-1;
	gid_t ogid = (gid_t)-1;
	bool has_mode = false, at_form = false;
	char link[64], text[PATH_MAX], path[PATH_MAX];
	static __thread unsigned char fbuf[XATTR_SIZE_MAX];
	struct mut_extra x;
	unsigned flags = 0;
	mode_t mode = 0;
	uint32_t call;
	struct job j;
	ssize_t len;
	unsigned char iobuf[sizeof(struct fsxattr)];
	size_t iolen = 0;

	memset(&x, 0, sizeof(x));
	switch (nr) {
	case SYS_fchmod:
	case SYS_fchmodat2:
		call = HX_CALL_FCHMOD;
		has_mode = true;
		mode = (mode_t)(nr == SYS_fchmod ? arg[1] : arg[2]);
		if (nr == SYS_fchmodat2) {
			flags = (unsigned)arg[3];
			at_form = true;
		}
		break;
	case SYS_fchown:
	case SYS_fchownat:
		call = HX_CALL_FCHOWN;
		if (nr == SYS_fchown) {
			ouid = (uid_t)arg[1];
			ogid = (gid_t)arg[2];
		} else {
			ouid = (uid_t)arg[2];
			ogid = (gid_t)arg[3];
			flags = (unsigned)arg[4];
			at_form = true;
		}
		break;
	case SYS_fsetxattr:
		call = HX_CALL_SETXATTR;
		xname = arg[1];
		xval = arg[2];
		if ((a->err = xattr_args(&x, arg[3], arg[4])))
			return;
		break;
	case SYS_fremovexattr:
		call = HX_CALL_REMOVEXATTR;
		xname = arg[1];
		break;
	case SYS_ioctl: /* FS_IOC_SETFLAGS (an int), FS_IOC_FSSETXATTR */
		call = HX_CALL_IOCTL;
		iolen = (uint32_t)arg[1] == FS_IOC_SETFLAGS ? sizeof(int)
							     : sizeof(struct fsxattr);
		if ((e = hx_un_read_mem(t->tid, arg[2], iobuf, iolen))) {
			a->err = -e;
			return;
		}
		break;
	default: /* utimensat, path NULL or "" with AT_EMPTY_PATH */
		call = HX_CALL_UTIMES;
		tsaddr = arg[2];
		flags = (unsigned)arg[3];
		at_form = arg[1] != 0;
		break;
	}
	if (t->peer.uid != geteuid()) {
		a->err = EACCES; /* never with more rights than the target */
		return;
	}
	if ((e = read_meta(t, xname, xval, fbuf, tsaddr, 3, &x))) {
		a->err = e;
		return;
	}
	if (!hx_un_id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	if (fd == AT_FDCWD && at_form) {
		/* The thread's cwd itself, taken once. */
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)t->tid);
		mine = open(link, O_PATH | O_CLOEXEC);
		mine = mine < 0 ? -errno : mine;
	} else if (fd == AT_FDCWD) {
		mine = -EFAULT; /* futimens(AT_FDCWD): no path to read */
	} else
		mine = hx_un_take_fd(t->peer.pid, fd);
	if (mine < 0) {
		a->err = mine == -EBADF || mine == -EFAULT ? -mine : EACCES;
		return;
	}
	snprintf(link, sizeof(link), "/proc/thread-self/fd/%d", mine);
	len = readlink(link, text, sizeof(text) - 1);
	text[len > 0 ? len : 0] = '\0';
	if (text[0] == '/')
		snprintf(path, sizeof(path), "%s", text);
	else /* a pipe, a socket: no path, named as the agent names it */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&j, 0, sizeof(j));
	j.peer = t->peer;
	j.rq.call = call;
	j.rq.op = HX_OP_WRITE;
	j.rq.path = path;
	j.rq.has_flags = true;
	j.rq.flags = O_NOFOLLOW; /* the file itself, as the fd names it */
	j.rq.has_mode = has_mode;
	j.rq.mode = (uint32_t)mode;
	if (!hx_un_decide(u, &j)) {
		close(mine);
		a->err = EACCES;
		return;
	}
	if (j.out.reply != HX_VERDICT_ALLOW) {
		close(mine);
		atomic_fetch_add(&u->n_denied, 1);
		a->err = j.out.err ? j.out.err : EACCES;
		if (j.out.tell)
			hx_pipeline_notice(&j.out, a->err);
		return;
	}
	switch (nr) {
	case SYS_fchmod:
		r = fchmod(mine, mode);
		break;
	case SYS_fchmodat2:
		r = (int)syscall(SYS_fchmodat2, mine, "", mode, flags);
		break;
	case SYS_fchown:
		r = fchown(mine, ouid, ogid);
		break;
	case SYS_fchownat:
		r = fchownat(mine, "", ouid, ogid, (int)flags);
		break;
	case SYS_fsetxattr:
		r = fsetxattr(mine, x.xname, x.xval, x.xsize, x.xflags);
		break;
	case SYS_fremovexattr:
		r = fremovexattr(mine, x.xname);
		break;
	case SYS_ioctl:
		r = ioctl(mine, (unsigned long)(uint32_t)arg[1], iobuf);
		break;
	default:
		r = (int)syscall(SYS_utimensat, mine, at_form ? "" : NULL,
				 tsaddr ? x.ts : NULL, flags);
		break;
	}
	e = r ? errno : 0;
	close(mine);
	hx_un_done(u, a, -e);
}

void hx_un_mut(struct hx_unotify *u, const struct seccomp_notif *n,
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
	bool nofollow = false, has_mode = false, empty_ok = false;
	uint64_t tsaddr = 0, xname = 0, xval = 0;
	int tskind = 0; /* 1 utimbuf, 2 timeval[2], 3 timespec[2] */
	struct mut_extra x;
	struct job j;
	static __thread unsigned char xbuf[XATTR_SIZE_MAX];
	static __thread char raw[PATH_MAX], raw2[PATH_MAX], full[PATH_MAX],
	    full2[PATH_MAX], res2[PATH_MAX];
	char name[NAME_MAX + 2], name2[NAME_MAX + 2];

	memset(&x, 0, sizeof(x));
	switch (n->data.nr) {
	case SYS_fchmod:
	case SYS_fchown:
	case SYS_fsetxattr:
	case SYS_fremovexattr:
	case SYS_ioctl:
		hx_un_fdmeta(u, n, t, a);
		return;
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
		empty_ok = flags & AT_EMPTY_PATH;
		has_mode = true;
		break;
	case SYS_mknod:
	case SYS_mknodat:
		k = MUT_MKNOD;
		op = HX_OP_WRITE;
		call = HX_CALL_MKNOD;
		if (n->data.nr == SYS_mknod) {
			p1 = arg[0];
			mode = (mode_t)arg[1];
			x.dev = (dev_t)(unsigned)arg[2];
		} else {
			dfd = (int)arg[0];
			p1 = arg[1];
			mode = (mode_t)arg[2];
			x.dev = (dev_t)(unsigned)arg[3];
		}
		has_mode = true;
		break;
	case SYS_utime:
	case SYS_utimes:
	case SYS_futimesat:
	case SYS_utimensat:
		k = MUT_UTIME;
		op = HX_OP_WRITE;
		call = HX_CALL_UTIMES;
		if (n->data.nr == SYS_utime || n->data.nr == SYS_utimes) {
			p1 = arg[0];
			tsaddr = arg[1];
			tskind = n->data.nr == SYS_utime ? 1 : 2;
		} else {
			dfd = (int)arg[0];
			p1 = arg[1];
			tsaddr = arg[2];
			tskind = n->data.nr == SYS_futimesat ? 2 : 3;
		}
		if (n->data.nr == SYS_utimensat) {
			flags = (unsigned)arg[3];
			if (flags & ~(unsigned)(AT_SYMLINK_NOFOLLOW |
						AT_EMPTY_PATH)) {
				a->err = EINVAL;
				return;
			}
			nofollow = flags & AT_SYMLINK_NOFOLLOW;
			empty_ok = flags & AT_EMPTY_PATH;
			if (!p1) { /* futimens: the fd itself */
				hx_un_fdmeta(u, n, t, a);
				return;
			}
		}
		break;
	case SYS_setxattr:
	case SYS_lsetxattr:
	case SYS_removexattr:
	case SYS_lremovexattr:
		k = n->data.nr == SYS_setxattr || n->data.nr == SYS_lsetxattr
			? MUT_SETXATTR
			: MUT_RMXATTR;
		op = HX_OP_WRITE;
		call = k == MUT_SETXATTR ? HX_CALL_SETXATTR
					 : HX_CALL_REMOVEXATTR;
		p1 = arg[0];
		xname = arg[1];
		nofollow = n->data.nr == SYS_lsetxattr ||
			   n->data.nr == SYS_lremovexattr;
		if (k == MUT_SETXATTR) {
			xval = arg[2];
			if ((a->err = xattr_args(&x, arg[3], arg[4])))
				return;
		}
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
			empty_ok = flags & AT_EMPTY_PATH;
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
	if ((e = hx_un_read_str(t->tid, p1, raw, sizeof(raw))) ||
	    (p2 && (e = hx_un_read_str(t->tid, p2, raw2, sizeof(raw2))))) {
		a->err = -e;
		return;
	}
	/* An empty path with AT_EMPTY_PATH acts on the dirfd itself: the
	 * file that fd names is decided (hx_un_fdmeta). Without the flag,
	 * ENOENT, as the kernel says. */
	if (!raw[0] && empty_ok && k != MUT_MKNOD) {
		hx_un_fdmeta(u, n, t, a);
		return;
	}
	if ((e = read_meta(t, xname, xval, xbuf, tsaddr, tskind, &x))) {
		a->err = e;
		return;
	}
	if (!hx_un_id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	if ((e = hx_path_absolute(t->peer.pid, t->tid, dfd, raw, full,
				     sizeof(full)))) {
		a->err = -e;
		return;
	}
	if (k == MUT_SYMLINK && !raw2[0]) {
		a->err = ENOENT;
		return;
	}
	if ((k == MUT_RENAME || k == MUT_LINK) &&
	    ((e = hx_path_absolute(t->peer.pid, t->tid, dfd2, raw2, full2,
				      sizeof(full2))) ||
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
	if (k == MUT_MKNOD) {
		/* A new file: like O_CREAT|O_EXCL, never through a final
		 * symlink (follows_last() in the pipeline). */
		j.rq.has_flags = true;
		j.rq.flags = O_WRONLY | O_CREAT | O_EXCL;
	} else if (nofollow) {
		/* follows_last() in the pipeline: the link itself. */
		j.rq.has_flags = true;
		j.rq.flags = O_NOFOLLOW;
	} else if (flags && k != MUT_CHMOD && k != MUT_CHOWN &&
		   k != MUT_UTIME) {
		j.rq.has_flags = true;
		j.rq.flags = flags;
	}
	if (has_mode) {
		j.rq.has_mode = true;
		j.rq.mode = (uint32_t)mode;
	}
	if (k == MUT_RENAME) {
		j.rq.tree_known = true;
		j.rq.moves_tree = is_dir_at(AT_FDCWD, full) ||
				  ((flags & RENAME_EXCHANGE) &&
				   is_dir_at(AT_FDCWD, res2));
	}
	if (!hx_un_decide(u, &j)) {
		a->err = EACCES;
		return;
	}
	if (j.out.reply != HX_VERDICT_ALLOW) {
		struct hx_kargs kk = {
		    .call = kcall[k],
		    .path = full,
		    .path2 = k == MUT_RENAME || k == MUT_LINK ? full2 : NULL,
		    .flags = nofollow ? AT_SYMLINK_NOFOLLOW : flags,
		    .uid = ouid,
		    .gid = ogid};

		atomic_fetch_add(&u->n_denied, 1);
		a->err = hx_un_denied(t, &j.out, &kk);
		return;
	}
	/* Not for a target that is gone (killed while this was decided). */
	if (!hx_un_id_valid(u, n->id)) {
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
	/* A directory put in place of the file this was decided for: it
	 * is decided again as what it is, and, should one be swapped in
	 * after this look, moved back below. */
	if (k == MUT_RENAME && !j.rq.moves_tree &&
	    (is_dir_at(pfd, name) ||
	     ((flags & RENAME_EXCHANGE) && is_dir_at(pfd2, name2)))) {
		j.rq.moves_tree = true;
		if (!hx_un_decide(u, &j) || j.out.reply != HX_VERDICT_ALLOW) {
			e = -EACCES;
			goto out;
		}
	}
	e = mut_act(t, k, pfd, name, pfd2, name2, raw2, flags, mode, len, ouid,
		    ogid, nofollow, &x);
	if (!e && k == MUT_RENAME && !j.rq.moves_tree &&
	    (is_dir_at(pfd2, name2) ||
	     ((flags & RENAME_EXCHANGE) && is_dir_at(pfd, name)))) {
		/* Swapped in the last instant: undo (never over anything
		 * that took the old name meanwhile) and refuse. */
		syscall(SYS_renameat2, pfd2, name2, pfd, name,
			(flags & RENAME_EXCHANGE) ? RENAME_EXCHANGE
						  : RENAME_NOREPLACE);
		e = -EACCES;
	}
out:
	close(pfd);
	if (pfd2 >= 0)
		close(pfd2);
	hx_un_done(u, a, e);
}
