/* The user-notify handler: file mutations (unotify_int.h). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <linux/limits.h>

#include "common/path.h"
#include "supervisor/gitconf.h"
#include "supervisor/path_resolve.h"

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
 * target's umask, or none under a default ACL, which the kernel applies
 * instead (hx_un_umask_in). */

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
static int open_parent(const struct target *t, const char *decided, bool slash,
		       char *name, size_t nsize)
{
	char path[PATH_MAX + 32], *last;
	struct open_how how = {0};
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
	return hx_un_openat2(t, path, &how);
}

static bool ends_slash(const char *s)
{
	size_t n = strlen(s);

	return n > 1 && s[n - 1] == '/';
}

/* 1 when path's last component is ".", 2 when "..", else 0. */
static int dot_last(const char *path)
{
	size_t n = strlen(path), k;

	while (n > 1 && path[n - 1] == '/')
		n--;
	for (k = 0; k < n && k < 3 && path[n - 1 - k] == '.'; k++)
		;
	if (!k || k > 2 || (k < n && path[n - 1 - k] != '/'))
		return 0;
	return (int)k;
}

int hx_un_dir_tail(const struct target *t, const char *raw, const char *full)
{
	char path[PATH_MAX + 32];
	struct stat st;
	bool dot = dot_last(raw);

	if (!dot && !ends_slash(raw))
		return 0;
	/* The kernel's own walk, as the target's: "file/." is ENOTDIR. */
	if (hx_un_proc_path(t, full, path, sizeof(path)))
		return -EACCES;
	if (stat(path, &st))
		return errno == ENOTDIR || dot ? -errno : 0;
	return 0;
}

/* The error the kernel gives a call whose path raw (full: made
 * absolute) ends in "." or ".." (a directory walked through, never a
 * name acted on: "link/." is link's target, "x/.." x's parent, which the
 * emulation below would otherwise remove, rename or replace), or 0. */
static int dot_errno(const struct target *t, enum mut_kind k, const char *raw,
		     const char *full)
{
	int d = dot_last(raw), e;

	if (!d)
		return 0;
	if ((e = hx_un_dir_tail(t, raw, full)))
		return e;
	switch (k) {
	case MUT_RENAME:
		return -EBUSY;
	case MUT_UNLINK:
		return -EISDIR;
	case MUT_RMDIR:
		return d == 1 ? -EINVAL : -ENOTEMPTY;
	case MUT_MKDIR:
	case MUT_SYMLINK:
	case MUT_MKNOD:
	case MUT_LINK:
		return -EEXIST;
	default:
		return 0; /* the directory's own metadata */
	}
}

/* A second path argument resolved here (the pipeline only hands back
 * the first): as the kernel walks it, symlinks resolved as the target
 * sees them (the last one only when follow), normalized. The request
 * carries this form, so what is decided is what is acted on. */
static int resolve2(const struct target *t, const char *full, bool follow,
		    char *out, size_t size)
{
	int e = hx_path_resolve_root(t->peer.pid, t->tid, t->peer.root_ours,
				     full, follow, out, size);

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
		r = mkdirat(pfd, name,
			    mode & 01777 & ~hx_un_umask_in(t, "", pfd));
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
			    (mode & S_IFMT) |
				(mode & 07777 & ~hx_un_umask_in(t, "", pfd)),
			    x->dev);
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
		if (x->pl && hx_pipeline_shared_fd(x->pl, fd)) {
			close(fd); /* a file with other names renamed onto
				    * the name since the decision */
			return -EACCES;
		}
		if (k != MUT_TRUNCATE &&
		    hx_pipeline_device_kind(t->peer.pid, &st) == HX_DEV_HOST) {
			close(fd); /* the host's node (pipeline_device.c) */
			return -EPERM;
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
			if (!(r = hx_un_fsize_ok(t, w, len)) &&
			    (r = ftruncate(w, (off_t)len)))
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
			r = k == MUT_SETXATTR ? setxattr(p, x->xname, x->xval,
							 x->xsize, x->xflags)
					      : removexattr(p, x->xname);
		} else if (k == MUT_CHOWN) {
			/* The ids the agent named, in its namespace. */
			if ((r = hx_un_map_ids(t, &ouid, &ogid))) {
				close(fd);
				return r;
			}
			r = fchownat(fd, "", ouid, ogid, AT_EMPTY_PATH);
		} else if (S_ISLNK(st.st_mode)) {
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

/* ---- the calls, as data ---- */

/* An argument's slot, plus one: 0 is "not in this call". */
#define A(i) ((i) + 1)

enum {
	MUTF_ATFLAGS = 1,   /* AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH in flags */
	MUTF_NOFOLLOW = 2,  /* the l- form: the final symlink itself */
	MUTF_REMOVEDIR = 4, /* unlinkat: AT_REMOVEDIR makes it an rmdir */
	MUTF_FD = 8,	    /* acts on an fd: hx_un_fdmeta */
};

#define AT_META (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)

/* Where each call keeps its arguments, and what it is. */
struct mut_layout {
	long nr;
	enum mut_kind kind;
	enum hx_op op;
	uint32_t call;
	unsigned char dfd, path, dfd2, path2, flags, mode, dev, len, uid, gid,
	    ts, xname, xval, xsize, xflags;
	unsigned char tskind; /* 1 utimbuf, 2 timeval[2], 3 timespec[2] */
	unsigned flags_ok;    /* other bits: EINVAL, as the kernel says */
	unsigned how;	      /* MUTF_* */
};

static const struct mut_layout layouts[] = {
    {SYS_rename, MUT_RENAME, HX_OP_RENAME, HX_CALL_RENAME, .path = A(0),
     .path2 = A(1)},
    {SYS_renameat, MUT_RENAME, HX_OP_RENAME, HX_CALL_RENAMEAT, .dfd = A(0),
     .path = A(1), .dfd2 = A(2), .path2 = A(3)},
    {SYS_renameat2, MUT_RENAME, HX_OP_RENAME, HX_CALL_RENAMEAT2, .dfd = A(0),
     .path = A(1), .dfd2 = A(2), .path2 = A(3), .flags = A(4),
     .flags_ok = RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT},
    {SYS_unlink, MUT_UNLINK, HX_OP_UNLINK, HX_CALL_UNLINK, .path = A(0)},
    {SYS_rmdir, MUT_RMDIR, HX_OP_RMDIR, HX_CALL_RMDIR, .path = A(0)},
    {SYS_unlinkat, MUT_UNLINK, HX_OP_UNLINK, HX_CALL_UNLINKAT, .dfd = A(0),
     .path = A(1), .flags = A(2), .flags_ok = AT_REMOVEDIR,
     .how = MUTF_REMOVEDIR},
    {SYS_mkdir, MUT_MKDIR, HX_OP_MKDIR, HX_CALL_MKDIR, .path = A(0),
     .mode = A(1)},
    {SYS_mkdirat, MUT_MKDIR, HX_OP_MKDIR, HX_CALL_MKDIRAT, .dfd = A(0),
     .path = A(1), .mode = A(2)},
    /* A link's new name is the path decided first; the existing file
     * is path2. */
    {SYS_link, MUT_LINK, HX_OP_LINK, HX_CALL_LINK, .path2 = A(0), .path = A(1)},
    {SYS_linkat, MUT_LINK, HX_OP_LINK, HX_CALL_LINKAT, .dfd2 = A(0),
     .path2 = A(1), .dfd = A(2), .path = A(3), .flags = A(4),
     .flags_ok = AT_SYMLINK_FOLLOW | AT_EMPTY_PATH},
    {SYS_symlink, MUT_SYMLINK, HX_OP_SYMLINK, HX_CALL_SYMLINK, .path2 = A(0),
     .path = A(1)},
    {SYS_symlinkat, MUT_SYMLINK, HX_OP_SYMLINK, HX_CALL_SYMLINKAT,
     .path2 = A(0), .dfd = A(1), .path = A(2)},
    {SYS_truncate, MUT_TRUNCATE, HX_OP_TRUNCATE, HX_CALL_TRUNCATE, .path = A(0),
     .len = A(1)},
    {SYS_chmod, MUT_CHMOD, HX_OP_WRITE, HX_CALL_CHMOD, .path = A(0),
     .mode = A(1), .how = MUTF_ATFLAGS},
    {SYS_fchmodat, MUT_CHMOD, HX_OP_WRITE, HX_CALL_CHMOD, .dfd = A(0),
     .path = A(1), .mode = A(2), .how = MUTF_ATFLAGS},
    {SYS_fchmodat2, MUT_CHMOD, HX_OP_WRITE, HX_CALL_CHMOD, .dfd = A(0),
     .path = A(1), .mode = A(2), .flags = A(3), .flags_ok = AT_META,
     .how = MUTF_ATFLAGS},
    {SYS_mknod, MUT_MKNOD, HX_OP_WRITE, HX_CALL_MKNOD, .path = A(0),
     .mode = A(1), .dev = A(2)},
    {SYS_mknodat, MUT_MKNOD, HX_OP_WRITE, HX_CALL_MKNOD, .dfd = A(0),
     .path = A(1), .mode = A(2), .dev = A(3)},
    {SYS_utime, MUT_UTIME, HX_OP_WRITE, HX_CALL_UTIMES, .path = A(0),
     .ts = A(1), .tskind = 1},
    {SYS_utimes, MUT_UTIME, HX_OP_WRITE, HX_CALL_UTIMES, .path = A(0),
     .ts = A(1), .tskind = 2},
    {SYS_futimesat, MUT_UTIME, HX_OP_WRITE, HX_CALL_UTIMES, .dfd = A(0),
     .path = A(1), .ts = A(2), .tskind = 2},
    {SYS_utimensat, MUT_UTIME, HX_OP_WRITE, HX_CALL_UTIMES, .dfd = A(0),
     .path = A(1), .ts = A(2), .tskind = 3, .flags = A(3), .flags_ok = AT_META,
     .how = MUTF_ATFLAGS},
    {SYS_setxattr, MUT_SETXATTR, HX_OP_WRITE, HX_CALL_SETXATTR, .path = A(0),
     .xname = A(1), .xval = A(2), .xsize = A(3), .xflags = A(4)},
    {SYS_lsetxattr, MUT_SETXATTR, HX_OP_WRITE, HX_CALL_SETXATTR, .path = A(0),
     .xname = A(1), .xval = A(2), .xsize = A(3), .xflags = A(4),
     .how = MUTF_NOFOLLOW},
    {SYS_removexattr, MUT_RMXATTR, HX_OP_WRITE, HX_CALL_REMOVEXATTR,
     .path = A(0), .xname = A(1)},
    {SYS_lremovexattr, MUT_RMXATTR, HX_OP_WRITE, HX_CALL_REMOVEXATTR,
     .path = A(0), .xname = A(1), .how = MUTF_NOFOLLOW},
    {SYS_chown, MUT_CHOWN, HX_OP_WRITE, HX_CALL_CHOWN, .path = A(0),
     .uid = A(1), .gid = A(2)},
    {SYS_lchown, MUT_CHOWN, HX_OP_WRITE, HX_CALL_CHOWN, .path = A(0),
     .uid = A(1), .gid = A(2), .how = MUTF_NOFOLLOW},
    {SYS_fchownat, MUT_CHOWN, HX_OP_WRITE, HX_CALL_CHOWN, .dfd = A(0),
     .path = A(1), .uid = A(2), .gid = A(3), .flags = A(4), .flags_ok = AT_META,
     .how = MUTF_ATFLAGS},
    {SYS_fchmod, .how = MUTF_FD},
    {SYS_fchown, .how = MUTF_FD},
    {SYS_fsetxattr, .how = MUTF_FD},
    {SYS_fremovexattr, .how = MUTF_FD},
    {SYS_ioctl, .how = MUTF_FD}, /* chattr: FS_IOC_SETFLAGS, FSSETXATTR */
};

/* One call's arguments, as its layout says where they are. */
struct mut_call {
	enum mut_kind k;
	enum hx_op op;
	uint32_t call;
	uint64_t p1, p2, len, tsaddr, xname, xval;
	int dfd, dfd2, tskind;
	unsigned flags;
	mode_t mode;
	uid_t ouid;
	gid_t ogid;
	bool nofollow, has_mode, empty_ok;
	struct mut_extra x;
};

#define MUT_ON_FD (-1) /* mut_parse: an fd's metadata, hx_un_fdmeta */

static uint64_t slot(const struct seccomp_notif *n, unsigned char at,
		     uint64_t none)
{
	return at ? n->data.args[at - 1] : none;
}

/* The call's arguments into c by its layout: 0, MUT_ON_FD, or the
 * errno the kernel gives for the flags it refuses. */
static int mut_parse(const struct seccomp_notif *n, struct mut_call *c)
{
	const struct mut_layout *l = NULL;

	for (size_t i = 0; i < sizeof(layouts) / sizeof(*layouts) && !l; i++)
		if (layouts[i].nr == n->data.nr)
			l = &layouts[i];
	if (!l)
		return ENOSYS;
	if (l->how & MUTF_FD)
		return MUT_ON_FD;
	*c = (struct mut_call){
	    .k = l->kind,
	    .op = l->op,
	    .call = l->call,
	    .p1 = slot(n, l->path, 0),
	    .p2 = slot(n, l->path2, 0),
	    .len = slot(n, l->len, 0),
	    .tsaddr = slot(n, l->ts, 0),
	    .xname = slot(n, l->xname, 0),
	    .xval = slot(n, l->xval, 0),
	    .dfd = (int)slot(n, l->dfd, (uint64_t)AT_FDCWD),
	    .dfd2 = (int)slot(n, l->dfd2, (uint64_t)AT_FDCWD),
	    .tskind = l->tskind,
	    .flags = (unsigned)slot(n, l->flags, 0),
	    .mode = (mode_t)slot(n, l->mode, 0),
	    .ouid = (uid_t)slot(n, l->uid, (uint64_t)-1),
	    .ogid = (gid_t)slot(n, l->gid, (uint64_t)-1),
	    .nofollow = l->how & MUTF_NOFOLLOW,
	    .has_mode = l->mode != 0,
	};
	if (c->flags & ~l->flags_ok)
		return EINVAL;
	if (l->path2 && !c->p2)
		return EFAULT;
	if (l->how & MUTF_ATFLAGS) {
		c->nofollow = c->flags & AT_SYMLINK_NOFOLLOW;
		c->empty_ok = c->flags & AT_EMPTY_PATH;
	}
	if (l->how & MUTF_REMOVEDIR) {
		if (c->flags & AT_REMOVEDIR) {
			c->k = MUT_RMDIR;
			c->op = HX_OP_RMDIR;
		}
		c->flags = 0;
	}
	if (l->len && (int64_t)c->len < 0)
		return EINVAL;
	if (l->dev)
		c->x.dev = (dev_t)(unsigned)slot(n, l->dev, 0);
	if (c->tskind == 3 && !c->p1)
		return MUT_ON_FD; /* futimens: the fd itself */
	if (l->xsize)
		return hx_un_xattr_args(&c->x, slot(n, l->xsize, 0),
					slot(n, l->xflags, 0));
	return 0;
}

/* The request the pipeline decides for c, on full (and path2). */
static void mut_request(const struct target *t, const struct mut_call *c,
			const char *full, const char *path2, const char *res2,
			struct job *j)
{
	hx_un_job(j, t, c->call, c->op);
	j->rq.path = full;
	j->rq.path2 = path2;
	if (c->k == MUT_MKNOD) {
		/* A new file: like O_CREAT|O_EXCL, never through a final
		 * symlink (follows_last() in the pipeline). */
		j->rq.has_flags = true;
		j->rq.flags = O_WRONLY | O_CREAT | O_EXCL;
	} else if (c->nofollow) {
		/* follows_last() in the pipeline: the link itself. */
		j->rq.has_flags = true;
		j->rq.flags = O_NOFOLLOW;
	} else if (c->flags && c->k != MUT_CHMOD && c->k != MUT_CHOWN &&
		   c->k != MUT_UTIME) {
		j->rq.has_flags = true;
		j->rq.flags = c->flags;
	}
	if (c->has_mode) {
		j->rq.has_mode = true;
		j->rq.mode = (uint32_t)c->mode;
	}
	if (c->k == MUT_SETXATTR || c->k == MUT_RMXATTR)
		j->rq.xattr = c->x.xname;
	if (c->k == MUT_CHOWN) {
		j->rq.has_owner = true;
		j->rq.uid = c->ouid == (uid_t)-1 ? -1 : (long long)c->ouid;
		j->rq.gid = c->ogid == (gid_t)-1 ? -1 : (long long)c->ogid;
	}
	if (c->k == MUT_RENAME) {
		j->rq.tree_known = true;
		j->rq.moves_tree =
		    is_dir_at(AT_FDCWD, full) ||
		    ((c->flags & RENAME_EXCHANGE) && is_dir_at(AT_FDCWD, res2));
	}
}

/* Whether a directory is at the first name, or, for an exchange, at
 * the second: what a rename decided for a file would move as a tree. */
static bool dir_in_play(int pfd, const char *name, int pfd2, const char *name2,
			bool xchg)
{
	return is_dir_at(pfd, name) || (xchg && is_dir_at(pfd2, name2));
}

/* Whether the rename or link c leaves (after: has left) a file git must
 * not meet where it lands (hx_pl_foreign: a symbolic link beneath a
 * .git, a FIFO there or at a .gitignore): before, what is at the names
 * that will land there; after, what landed. */
static bool link_beneath_git(const struct hx_pipeline *pl,
			     const struct mut_call *c, const struct job *j,
			     int pfd, const char *name, int pfd2,
			     const char *name2, const char *res2, bool before)
{
	bool xchg = c->flags & RENAME_EXCHANGE;

	if (c->k == MUT_LINK)
		return before ? hx_pl_foreign_at(pl, pfd2, name2, j->decided)
			      : hx_pl_foreign_at(pl, pfd, name, j->decided);
	if (before)
		return hx_pl_foreign_at(pl, pfd, name, res2) ||
		       (xchg && hx_pl_foreign_at(pl, pfd2, name2, j->decided));
	return hx_pl_foreign_at(pl, pfd2, name2, res2) ||
	       (xchg && hx_pl_foreign_at(pl, pfd, name, j->decided));
}

/* Takes back the rename or link c just done; nonzero when it could not
 * be (the record says so). */
static int undo(const struct mut_call *c, int pfd, const char *name, int pfd2,
		const char *name2)
{
	if (c->k == MUT_LINK)
		return unlinkat(pfd, name, 0);
	return (int)syscall(SYS_renameat2, pfd2, name2, pfd, name,
			    (c->flags & RENAME_EXCHANGE) ? RENAME_EXCHANGE
							 : RENAME_NOREPLACE);
}

/* u->names for a call that changes names (names): exclusively for one
 * that moves or links what it looked at (two), else shared. */
static void names_lock(struct hx_unotify *u, bool names, bool two)
{
	if (names && two)
		pthread_rwlock_wrlock(&u->names);
	else if (names)
		pthread_rwlock_rdlock(&u->names);
}

static void names_unlock(struct hx_unotify *u, bool names)
{
	if (names)
		pthread_rwlock_unlock(&u->names);
}

/* Does the allowed call c, relative to the decided parents; answers a. */
static void mut_apply(struct hx_unotify *u, const struct seccomp_notif *n,
		      const struct target *t, const struct mut_call *c,
		      struct job *j, const char *raw, const char *raw2,
		      const char *full, const char *full2, const char *res2,
		      struct answer *a)
{
	char name[NAME_MAX + 2], name2[NAME_MAX + 2];
	bool two = c->k == MUT_RENAME || c->k == MUT_LINK;
	bool xchg = c->flags & RENAME_EXCHANGE;
	/* What changes where a name leads (not a file's data or mode). */
	bool names = two || c->k == MUT_UNLINK || c->k == MUT_RMDIR ||
		     c->k == MUT_MKDIR || c->k == MUT_SYMLINK ||
		     c->k == MUT_MKNOD;
	int pfd, pfd2 = -1, e;

	/* Not for a target that is gone (killed while this was decided). */
	if (!hx_un_id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	pfd = open_parent(t, j->decided, ends_slash(raw), name, sizeof(name));
	if (pfd < 0) {
		a->err = -pfd;
		return;
	}
	if (two) {
		pfd2 = open_parent(t, res2, ends_slash(raw2), name2,
				   sizeof(name2));
		if (pfd2 < 0) {
			a->err = -pfd2;
			close(pfd);
			return;
		}
	}
	/* "x/." and "x/..": what the kernel answers (rename's second
	 * path too; link's existing file is followed like any other). */
	if ((e = dot_errno(t, c->k, raw, full)) ||
	    (c->k == MUT_RENAME && (e = dot_errno(t, c->k, raw2, full2))))
		goto out;
	/* A rename or link looks at what it moves, moves it and looks
	 * again with every other emulated change of a name held off: what
	 * the session swaps in, it swaps in before the look, never between
	 * the move and the look after, whose undo a new file at the old
	 * name (an O_CREAT open takes no lock) would block. The look after
	 * is for processes outside the session. */
	names_lock(u, names, two);
	if (c->k == MUT_RENAME && !j->rq.moves_tree &&
	    dir_in_play(pfd, name, pfd2, name2, xchg)) {
		/* A directory in place of the file this was decided for:
		 * decided again as what it is, unlocked (it may ask). */
		names_unlock(u, names);
		j->rq.moves_tree = true;
		if ((e = -hx_un_judge(u, t, j, NULL)))
			goto out;
		names_lock(u, names, two);
	}
	if (two &&
	    link_beneath_git(u->pl, c, j, pfd, name, pfd2, name2, res2, true)) {
		e = -EACCES;
		hx_un_revoke(u, j, "harness:git-config",
			     "a link took its place after the decision");
		goto unlock;
	}
	if (c->k == MUT_RENAME && (j->out.git_copy || j->out.agent_copy)) {
		e = hx_un_git_copy(u->pl->pool, pfd, name, pfd2, name2,
				   c->flags, j->out.agent_copy);
		if (e == -EACCES)
			hx_un_revoke(u, j,
				     j->out.agent_copy ? "harness:agent-config"
						       : "harness:git-config",
				     "what is renamed changed since the "
				     "decision");
	} else {
		struct mut_extra x = c->x;

		x.pl = u->pl;
		e = mut_act(t, c->k, pfd, name, pfd2, name2, raw2, c->flags,
			    c->mode, c->len, c->ouid, c->ogid, c->nofollow, &x);
	}
	if (!e && c->k == MUT_RENAME && !j->rq.moves_tree &&
	    dir_in_play(pfd2, name2, pfd, name, xchg)) {
		e = -EACCES;
		hx_un_revoke(u, j, "harness:changed",
			     undo(c, pfd, name, pfd2, name2)
				 ? "a directory took its place after the "
				   "decision, and it was not moved back"
				 : "a directory took its place after the "
				   "decision");
	} else if (!e && two &&
		   link_beneath_git(u->pl, c, j, pfd, name, pfd2, name2, res2,
				    false)) {
		e = -EACCES;
		hx_un_revoke(u, j, "harness:git-config",
			     undo(c, pfd, name, pfd2, name2)
				 ? "a link took its place after the decision, "
				   "and it was not taken back"
				 : "a link took its place after the decision");
	}
unlock:
	names_unlock(u, names);
out:
	close(pfd);
	if (pfd2 >= 0)
		close(pfd2);
	hx_un_done(u, a, e);
}

void hx_un_mut(struct hx_unotify *u, const struct seccomp_notif *n,
	       const struct target *t, struct answer *a)
{
	char raw[PATH_MAX], raw2[PATH_MAX], full[PATH_MAX], full2[PATH_MAX],
	    res2[PATH_MAX];
	struct mut_call c;
	bool two;
	struct job j;
	struct hx_kargs kk;
	int e = mut_parse(n, &c);

	if (e == MUT_ON_FD) {
		hx_un_fdmeta(u, n, t, a);
		return;
	}
	/* Never with more rights than the target has. */
	if ((a->err = e ? e : t->peer.uid != geteuid() ? EACCES : 0))
		return;
	raw2[0] = '\0';
	if ((e = hx_un_read_str(t->tid, c.p1, raw, sizeof(raw))) ||
	    (c.p2 && (e = hx_un_read_str(t->tid, c.p2, raw2, sizeof(raw2))))) {
		a->err = -e;
		return;
	}
	/* An empty path with AT_EMPTY_PATH acts on the dirfd itself: the
	 * file that fd names is decided (hx_un_fdmeta). Without the flag,
	 * ENOENT, as the kernel says. */
	if (!raw[0] && c.empty_ok && c.k != MUT_MKNOD) {
		hx_un_fdmeta(u, n, t, a);
		return;
	}
	if ((a->err = hx_un_read_meta(t, c.xname, c.xval, c.tsaddr, c.tskind,
				      &c.x)) ||
	    (a->err =
		 hx_un_path_arg(u, n->id, t, c.dfd, raw, full, sizeof(full))))
		return;
	if (c.k == MUT_SYMLINK && !raw2[0]) {
		a->err = ENOENT;
		return;
	}
	two = c.k == MUT_RENAME || c.k == MUT_LINK;
	if (two &&
	    ((e = hx_path_absolute(t->peer.pid, t->tid, c.dfd2, raw2, full2,
				   sizeof(full2))) ||
	     (e = resolve2(t, full2,
			   c.k == MUT_LINK && (c.flags & AT_SYMLINK_FOLLOW),
			   res2, sizeof(res2))))) {
		a->err = -e;
		return;
	}
	mut_request(t, &c, full,
		    two			 ? res2
		    : c.k == MUT_SYMLINK ? raw2
					 : NULL,
		    res2, &j);
	kk = (struct hx_kargs){.call = kcall[c.k],
			       .path = full,
			       .path2 = two ? full2 : NULL,
			       .flags =
				   c.nofollow ? AT_SYMLINK_NOFOLLOW : c.flags,
			       .uid = c.ouid,
			       .gid = c.ogid};
	/* The target's own walk of each name (protected_symlinks): the
	 * metadata kinds follow their last name, as AT_SYMLINK_FOLLOW. */
	if ((a->err = hx_un_judge(u, t, &j, &kk)) ||
	    (a->err = -hx_un_walk_named(
		 t, c.dfd, raw, full, j.decided,
		 c.k >= MUT_TRUNCATE && !c.nofollow && c.k != MUT_MKNOD, 0)) ||
	    (two && (a->err = -hx_un_walk_named(
			 t, c.dfd2, raw2, full2, res2,
			 c.k == MUT_LINK && (c.flags & AT_SYMLINK_FOLLOW), 0))))
		return;
	mut_apply(u, n, t, &c, &j, raw, raw2, full, two ? full2 : NULL, res2,
		  a);
}
