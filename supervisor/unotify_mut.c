/* The user-notify handler: file mutations (unotify_int.h). */
#define _GNU_SOURCE
#include "unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>

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
};

/* Each kind as kerrno.h names it. */
static const enum hx_kcall kcall[] = {
    [MUT_RENAME] = HX_KC_RENAME,     [MUT_UNLINK] = HX_KC_UNLINK,
    [MUT_RMDIR] = HX_KC_RMDIR,	     [MUT_MKDIR] = HX_KC_MKDIR,
    [MUT_LINK] = HX_KC_LINK,	     [MUT_SYMLINK] = HX_KC_SYMLINK,
    [MUT_TRUNCATE] = HX_KC_TRUNCATE, [MUT_CHMOD] = HX_KC_CHMOD,
    [MUT_CHOWN] = HX_KC_CHOWN,
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
	if ((e = hx_un_read_str(t->tid, p1, raw, sizeof(raw))) ||
	    (p2 && (e = hx_un_read_str(t->tid, p2, raw2, sizeof(raw2))))) {
		a->err = -e;
		return;
	}
	if (!hx_un_id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	/* An empty path (AT_EMPTY_PATH: act on the dirfd itself) is not
	 * emulated: ENOENT, as without the flag. */
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
		    ogid, nofollow);
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
	if (e) {
		a->err = -e;
		return;
	}
	atomic_fetch_add(&u->n_emul, 1);
	a->kind = ANS_VALUE;
	a->val = 0;
}
