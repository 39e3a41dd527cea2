/* The user-notify handler: metadata changes through an fd
 * (unotify_int.h). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/limits.h>

/* The fd an fd-form call acts on, taken once (the thread's cwd for an
 * at-form on AT_FDCWD), and in path (PATH_MAX) the name its link reads,
 * or "/proc/self/fd/N" for one of no path (a pipe, a socket), as the
 * agent names it. *misnamed: the file is not at that name (its name
 * removed since, "x (deleted)"; replaced; cut at PATH_MAX): a file made
 * before the session may have other names, a pnpm store's, that no
 * decision saw (twenty-fourth attack review). The fd, or -errno. */
static int take_named(const struct target *t, int fd, bool at_form, char *path,
		      bool *misnamed)
{
	char link[64], text[PATH_MAX];
	ssize_t len;
	int mine;

	if (fd == AT_FDCWD && at_form) {
		/* The thread's cwd itself, taken once. */
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)t->tid);
		mine = open(link, O_PATH | O_CLOEXEC);
		mine = mine < 0 ? -errno : mine;
	} else if (fd == AT_FDCWD) {
		mine = -EFAULT; /* futimens(AT_FDCWD): no path to read */
	} else
		mine = hx_un_call_fd(t, fd);
	if (mine < 0)
		return mine;
	snprintf(link, sizeof(link), "/proc/thread-self/fd/%d", mine);
	len = readlink(link, text, sizeof(text) - 1);
	text[len > 0 ? len : 0] = '\0';
	*misnamed = text[0] == '/' && (len >= (ssize_t)sizeof(text) - 1 ||
				       !hx_un_fd_at_name(t, mine, text));
	if (text[0] == '/')
		snprintf(path, PATH_MAX, "%s", text);
	else
		snprintf(path, PATH_MAX, "/proc/self/fd/%d", fd);
	return mine;
}

/* The errno (or 0) that refuses an fd-form change decided on the name
 * the fd's link read, with a revoked record: the file acted on, looked
 * at again, is not at that name and has names elsewhere, or has other
 * names of before the session (the decision's look was at the name,
 * which a rename may have given another file since); or chattr makes a
 * directory case-insensitive (cmd FS_IOC_SETFLAGS, flags adding
 * FS_CASEFOLD_FL), where every rule, which compares names as bytes,
 * misses the ".GIT/hooks/pre-commit" git opens as ".git/hooks/...". */
static int fd_refused(struct hx_unotify *u, const struct job *j, int mine,
		      bool misnamed, uint32_t cmd, const unsigned char *flags)
{
	int now = 0, want;

	if ((misnamed && hx_pipeline_named_fd(u->pl, mine)) ||
	    hx_pipeline_shared_fd(u->pl, mine)) {
		hx_un_revoke(u, j, "harness:shared-file",
			     misnamed
				 ? "the fd's file is no longer at the name "
				   "decided, and has names elsewhere"
				 : "a file with other names");
		return EACCES;
	}
	if (cmd != FS_IOC_SETFLAGS || u->pl->mode == HX_MODE_AUDIT)
		return 0; /* audit mode enforces no rule */
	memcpy(&want, flags, sizeof(want));
	if (!(want & FS_CASEFOLD_FL) ||
	    (!ioctl(mine, FS_IOC_GETFLAGS, &now) && (now & FS_CASEFOLD_FL)))
		return 0;
	hx_un_revoke(u, j, "harness:casefold",
		     "a directory whose names match whatever their case: the "
		     "rules compare names as bytes");
	return EPERM;
}

/* What the change does, for its record: the attribute, the owner. */
static void effect(struct job *j, uint32_t call, const struct mut_extra *x,
		   uid_t ouid, gid_t ogid)
{
	if (call == HX_CALL_SETXATTR || call == HX_CALL_REMOVEXATTR)
		j->rq.xattr = x->xname;
	if (call == HX_CALL_FCHOWN) {
		j->rq.has_owner = true;
		j->rq.uid = ouid == (uid_t)-1 ? -1 : (long long)ouid;
		j->rq.gid = ogid == (gid_t)-1 ? -1 : (long long)ogid;
	}
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
void hx_un_fdmeta(struct hx_unotify *u, const struct seccomp_notif *n,
		  const struct target *t, struct answer *a)
{
	const __u64 *arg = n->data.args;
	int nr = n->data.nr, fd = (int)arg[0], mine, e, r;
	uint64_t xname = 0, xval = 0, tsaddr = 0;
	uid_t ouid = (uid_t)-1;
	gid_t ogid = (gid_t)-1;
	bool has_mode = false, at_form = false, misnamed = false;
	char path[PATH_MAX];
	struct mut_extra x;
	unsigned flags = 0;
	mode_t mode = 0;
	uint32_t call;
	struct job j;
	struct stat st;
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
		if ((a->err = hx_un_xattr_args(&x, arg[3], arg[4])))
			return;
		break;
	case SYS_fremovexattr:
		call = HX_CALL_REMOVEXATTR;
		xname = arg[1];
		break;
	case SYS_ioctl: /* FS_IOC_SETFLAGS (an int), FS_IOC_FSSETXATTR */
		call = HX_CALL_IOCTL;
		iolen = (uint32_t)arg[1] == FS_IOC_SETFLAGS
			    ? sizeof(int)
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
	if ((e = hx_un_read_meta(t, xname, xval, tsaddr, 3, &x))) {
		a->err = e;
		return;
	}
	if (!hx_un_id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	if ((mine = take_named(t, fd, at_form, path, &misnamed)) < 0) {
		a->err = mine == -EBADF || mine == -EFAULT ? -mine : EACCES;
		return;
	}
	hx_un_job(&j, t, call, HX_OP_WRITE);
	j.rq.path = path;
	j.rq.has_flags = true;
	j.rq.flags = O_NOFOLLOW; /* the file itself, as the fd names it */
	j.rq.device = fstat(mine, &st)
			  ? HX_DEV_NONE
			  : hx_pipeline_device_kind(t->peer.pid, &st);
	j.rq.has_mode = has_mode;
	j.rq.mode = (uint32_t)mode;
	effect(&j, call, &x, ouid, ogid);
	if ((a->err = hx_un_judge(u, t, &j, NULL)) ||
	    /* Not for a target that is gone (killed while this was decided). */
	    (a->err = hx_un_id_valid(u, n->id) ? 0 : ESRCH)) {
		hx_un_put_fd(mine);
		return;
	}
	if ((a->err =
		 fd_refused(u, &j, mine, misnamed,
			    nr == SYS_ioctl ? (uint32_t)arg[1] : 0, iobuf))) {
		hx_un_put_fd(mine);
		return;
	}
	/* A chown's ids as the agent's namespace names them. */
	if ((e = hx_un_map_ids(t, &ouid, &ogid))) {
		hx_un_put_fd(mine);
		hx_un_done(u, a, e);
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
	hx_un_put_fd(mine);
	hx_un_done(u, a, -e);
}
