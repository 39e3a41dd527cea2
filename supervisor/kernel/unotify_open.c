/* The user-notify handler: the open family (unotify_int.h). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/path.h"
#include "policy/policy.h"
#include "supervisor/path_resolve.h"
#include "supervisor/proc.h"
#include "supervisor/kernel/caps.h"
#include "supervisor/kernel/devbound.h"
#include "supervisor/kernel/ipool.h"
#include "supervisor/kernel/terminals.h"

/* ---- open family ---- */

/* O_TMPFILE is 020000000 | O_DIRECTORY, and glibc's __O_TMPFILE is the
 * same pair: a test of any of its bits takes every O_DIRECTORY open
 * (ls, find, readdir) for an anonymous file. Both bits, or none. */
static bool is_tmpfile(uint64_t flags)
{
	return (flags & O_TMPFILE) == O_TMPFILE;
}

/* An open that can change the file system: write access, a creation,
 * a truncation, an append, an anonymous file. */
static bool open_writes(uint64_t flags)
{
	return (flags & O_ACCMODE) != O_RDONLY ||
	       (flags & (O_CREAT | O_TRUNC | O_APPEND)) || is_tmpfile(flags);
}

/* The fd number of a decided "/proc/self/fd/N" (or thread-self, or
 * /proc/self/task/T), else -1. The pipeline resolves such a link when
 * it names a file; what stays in this form names no path (a pipe, a
 * socket, an anonymous inode). */
static int proc_fd_num(const char *decided, pid_t tid, bool *threads)
{
	const char *p = decided;
	char *end;
	long n;

	*threads = false;
	if (!strncmp(p, "/proc/self/", 11)) {
		p += 11;
		if (!strncmp(p, "task/", 5)) {
			n = strtol(p + 5, &end, 10);
			if (end == p + 5 || *end != '/')
				return -1;
			*threads = n == tid;
			p = end + 1;
		}
	} else if (!strncmp(p, "/proc/thread-self/", 18)) {
		p += 18;
		*threads = true;
	} else
		return -1;
	if (strncmp(p, "fd/", 3) || p[3] < '0' || p[3] > '9')
		return -1;
	n = strtol(p + 3, &end, 10);
	return *end || n > 1 << 30 ? -1 : (int)n;
}

/* Opens what was decided, as the target would have, here. */
/* A decided "/proc/self/ns/NAME" (or thread-self, task/T): the link
 * names the target's own namespace, which it cannot change (setns and
 * unshare are refused in BPF), so it may be followed, read-only. */
static bool proc_ns(const char *decided, uint64_t flags)
{
	const char *p = decided;

	if (open_writes(flags))
		return false;
	if (!strncmp(p, "/proc/self/", 11))
		p += 11;
	else if (!strncmp(p, "/proc/thread-self/", 18))
		p += 18;
	else
		return false;
	if (!strncmp(p, "task/", 5)) {
		p += 5 + strspn(p + 5, "0123456789");
		if (*p++ != '/')
			return false;
	}
	return !strncmp(p, "ns/", 3) && p[3] &&
	       strspn(p + 3, "abcdefghijklmnopqrstuvwxyz_") == strlen(p + 3);
}

/* What of the caller's resolve flags the emulated open keeps: its walk
 * limits are checked by hx_un_walk_named on its own walk, and would be
 * wrong on ours (the decided path from our root crosses mounts the
 * caller's walk from its dirfd does not: a false EXDEV). */
static uint64_t own_resolve(uint64_t resolve)
{
	return resolve & ~(uint64_t)HX_UN_WALK_LIMITS;
}

/* path's directory into dir (PATH_MAX + 32 bytes); false without one. */
static bool parent_of(const char *path, char *dir)
{
	char *slash;

	snprintf(dir, PATH_MAX + 32, "%s", path);
	if (!(slash = strrchr(dir, '/')))
		return false;
	slash[slash == dir] = '\0';
	return true;
}

/* Whether the last name of full (absolute) is a symbolic link whose
 * text, or that of one it leads to, ends with a slash ("dn -> new/"):
 * the kernel walks what it names as a directory, which the decided
 * path, normalized, no longer says. Read as the decision reads it. */
static bool link_slash(const struct target *t, const char *full)
{
	char cur[PATH_MAX + 32], here[PATH_MAX + 32], body[PATH_MAX];
	struct stat st;
	ssize_t n;

	snprintf(cur, sizeof(cur), "%s", full);
	for (int links = 0; links < 40; links++) {
		char *slash;

		if (hx_un_proc_path(t, cur, here, sizeof(here)) ||
		    lstat(here, &st) || !S_ISLNK(st.st_mode) ||
		    (n = readlink(here, body, sizeof(body) - 1)) <= 0)
			return false;
		body[n] = '\0';
		if (body[n - 1] == '/')
			return true;
		if (body[0] == '/') {
			snprintf(cur, sizeof(cur), "%s", body);
			continue;
		}
		if (!(slash = strrchr(cur, '/')) ||
		    (size_t)(slash + 1 - cur) + (size_t)n >= sizeof(cur))
			return false;
		memcpy(slash + 1, body, (size_t)n + 1);
	}
	return false;
}

/* O_CREAT of a name with a trailing slash ("new/"), or through a link
 * whose text has one: the kernel's EISDIR once it has walked to the
 * name's directory, whatever is there (the decided path has lost the
 * slash: a file "new" was made). 0, or -errno (the walk's own, first). */
static int creat_slash(const struct target *t, const char *raw,
		       const char *full, const char *decided, uint64_t flags)
{
	char path[PATH_MAX + 32], dir[PATH_MAX + 32];
	size_t n = strlen(raw);
	struct stat st;

	if (!(flags & O_CREAT) || is_tmpfile(flags) || n < 1)
		return 0;
	/* O_EXCL and O_NOFOLLOW do not follow the last name, and a name
	 * decided as itself (normalized) followed no link. */
	if ((n < 2 || raw[n - 1] != '/') &&
	    ((flags & (O_EXCL | O_NOFOLLOW)) ||
	     (hx_path_normalize(NULL, full, dir, sizeof(dir)) >= 0 &&
	      !strcmp(dir, decided)) ||
	     !link_slash(t, full)))
		return 0;
	if (hx_un_proc_path(t, full, path, sizeof(path)))
		return -EACCES;
	for (n = strlen(path); n > 1 && path[n - 1] == '/';)
		path[--n] = '\0';
	if (!parent_of(path, dir))
		return -EACCES;
	if (stat(dir, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? -EISDIR : -ENOTDIR;
}

/* Whether path's directory is sticky: there the kernel refuses an
 * O_CREAT open of a file that neither the opener nor the directory's
 * owner owns (protected_regular, protected_fifos), which an open
 * without O_CREAT is not asked. */
static bool in_sticky(const char *path)
{
	char dir[PATH_MAX + 32];
	struct stat st;

	return !parent_of(path, dir) || stat(dir, &st) ||
	       (st.st_mode & S_ISVTX);
}

/* An O_CREAT open of a file that is there creates nothing, and needs
 * no umask, which only /proc/<tid>/status says (14 us): opened without
 * O_CREAT first. Not for O_EXCL or O_DIRECTORY (whose answers O_CREAT
 * changes), nor a directory (EISDIR), nor in a sticky directory (above:
 * another user's file there was written by a root agent and a user's
 * alike): those, a missing file and any failure are opened as asked,
 * for the kernel's own answer. */
static int open_existing(const struct target *t, const char *path,
			 const struct open_how *how)
{
	struct open_how ex = *how;
	struct stat st;
	int fd;

	if (!(how->flags & O_CREAT) || (how->flags & (O_EXCL | O_DIRECTORY)) ||
	    is_tmpfile(how->flags) || t->status_read || in_sticky(path))
		return -1;
	ex.flags &= ~(uint64_t)O_CREAT;
	ex.mode = 0;
	fd = hx_un_openat2(t, path, &ex);
	if (fd < 0)
		return -1;
	if (!fstat(fd, &st) && !S_ISDIR(st.st_mode))
		return fd;
	close(fd);
	return -1;
}

/* What an emulated open did that the kernel does only once the caller
 * has a free descriptor (do_sys_openat2 takes one first: EMFILE makes
 * nothing): a file made, to be removed should the descriptor not go in,
 * and a truncation, left until it has. */
struct opened {
	bool made, trunc;
	char path[PATH_MAX + 32]; /* what was opened, here */
};

/* The umask of a file made at path (O_TMPFILE: in path), which a
 * default ACL on its directory replaces (hx_un_umask_in). */
static mode_t create_umask(const struct target *t, const char *path,
			   uint64_t flags)
{
	char dir[PATH_MAX + 32];

	if (is_tmpfile(flags) || !parent_of(path, dir))
		snprintf(dir, sizeof(dir), "%s", path);
	return hx_un_umask_in(t, dir, -1);
}

/* What refuses the truncation of an O_TRUNC open, which ours makes only
 * once the descriptor is in (install), where its failure can no longer
 * fail the call: an append-only file (may_open: EPERM, whatever its
 * size; an open of one with O_APPEND|O_TRUNC succeeded, the file
 * whole), a memfd sealed against shrinking (reopened through
 * /proc/self/fd: EPERM when it has bytes). 0 or -errno. */
static int trunc_refused(int fd)
{
	struct statx sx;
	int seals;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &sx))
		return -errno;
	if (sx.stx_attributes & sx.stx_attributes_mask & STATX_ATTR_APPEND)
		return -EPERM;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals > 0 && (seals & F_SEAL_SHRINK) && sx.stx_size > 0)
		return -EPERM;
	return 0;
}

static int open_here(const struct target *t, const char *decided,
		     uint64_t flags, mode_t mode, uint64_t resolve,
		     struct opened *o)
{
	char *path = o->path;
	struct open_how how = {0};
	struct stat st;
	int fd, num, e, mine = -1;
	bool threads;

	if (!decided[0] || decided[0] != '/' ||
	    hx_un_proc_path(t, decided, path, sizeof(o->path)))
		return -EACCES;
	how.flags = (flags | O_CLOEXEC | O_NOCTTY);
	/* The truncation after the descriptor is in (install); an fd that
	 * cannot write (O_RDONLY, or O_ACCMODE's 3, which the kernel lets
	 * truncate) could not make it, and O_TRUNC then stays. */
	if ((flags & O_TRUNC) &&
	    ((flags & O_ACCMODE) == O_WRONLY ||
	     (flags & O_ACCMODE) == O_RDWR) &&
	    !is_tmpfile(flags)) {
		how.flags &= ~(uint64_t)O_TRUNC;
		o->trunc = true;
	}
	/* The decided path has every existing symlink resolved: one that
	 * appears now is a swap after the decision. */
	how.resolve =
	    own_resolve(resolve) | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS;
	if ((num = proc_fd_num(decided, t->tid, &threads)) >= 0) {
		/* Decided on "/proc/self/fd/N" (often /dev/stdout): never
		 * that link again, which a racing dup2 can point at any
		 * file the agent holds open, read-only ones too. The fd is
		 * taken once; it must still name no path (what was decided)
		 * or a terminal (a tty's /dev/stdout: a pty the agent holds,
		 * which no name of its view reaches, terminals.h) and is
		 * reopened through our own fd table. */
		char link[64], target[PATH_MAX];
		ssize_t n;

		/* /proc/self/fd is the process's table; thread-self the
		 * thread's own (unshare(CLONE_FILES)). */
		mine = threads ? hx_un_call_fd(t, num)
			       : hx_un_take_fd(t->peer.pid, num);
		if (mine < 0)
			return mine == -EBADF ? -ENOENT : -EACCES;
		snprintf(link, sizeof(link), "/proc/thread-self/fd/%d", mine);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0)
			target[n] = '\0';
		if (n <= 0 ||
		    (target[0] == '/' && !hx_terminals_path(target))) {
			hx_un_put_fd(mine);
			return -EACCES;
		}
		snprintf(path, sizeof(o->path), "%s", link);
		how.resolve = own_resolve(resolve);
	} else if (proc_ns(decided, flags)) {
		how.resolve = own_resolve(resolve);
	} else if ((fd = open_existing(t, path, &how)) >= 0) {
		goto opened;
	}
	if ((flags & O_CREAT) || is_tmpfile(flags))
		how.mode = mode & 07777 & ~create_umask(t, path, flags);
	if (mine >= 0) {
		fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how,
				  sizeof(how));
		fd = fd < 0 ? -errno : fd;
		hx_un_put_fd(mine);
	} else if ((flags & O_CREAT) && !is_tmpfile(flags)) {
		/* Made here or found: O_EXCL says which. */
		how.flags |= O_EXCL;
		fd = hx_un_openat2(t, path, &how);
		o->made = fd >= 0;
		if (fd == -EEXIST && !(flags & O_EXCL)) {
			how.flags &= ~(uint64_t)O_EXCL;
			fd = hx_un_openat2(t, path, &how);
		}
	} else {
		fd = hx_un_openat2(t, path, &how);
	}
opened:
	/* O_TRUNC changes only a regular file. */
	if (fd >= 0 && o->trunc && (fstat(fd, &st) || !S_ISREG(st.st_mode)))
		o->trunc = false;
	if (fd >= 0 && o->trunc && !o->made && (e = trunc_refused(fd))) {
		close(fd);
		return e;
	}
	return fd;
}

/* Removes the file this open made, by its name if that is still it:
 * from its directory opened as the open walked (no symlink), for a
 * path's own walk would follow a directory the agent swaps for a
 * symlink after the check, and remove that name in the directory it
 * names (one the policy keeps the agent from writing). */
static void unmake(int fd, const char *path)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve =
				   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	char dir[PATH_MAX + 32], *name;
	struct stat a, b;
	int dfd;

	snprintf(dir, sizeof(dir), "%s", path);
	name = strrchr(dir, '/');
	if (!name || !name[1] || dir[0] != '/')
		return;
	*name++ = '\0';
	dfd = (int)syscall(SYS_openat2, AT_FDCWD, dir[0] ? dir : "/", &how,
			   sizeof(how));
	if (dfd < 0)
		return;
	if (!fstat(fd, &a) && !fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		unlinkat(dfd, name, 0);
	close(dfd);
}

/* The descriptor fd into the caller, then what waited for it (the
 * truncation) and the answer; or, when it cannot go in (EMFILE), the
 * file this open made removed and the call refused as the kernel
 * refuses it, with a "revoked" record for the allow before it. */
static void install(struct hx_unotify *u, const struct seccomp_notif *n,
		    const struct job *j, int fd, uint64_t flags,
		    const struct opened *o, struct answer *a)
{
	struct seccomp_notif_addfd add = {
	    .id = n->id,
	    .flags = o->trunc ? 0 : SECCOMP_ADDFD_FLAG_SEND,
	    .srcfd = (uint32_t)fd,
	    .newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0};
	char why[96];
	int r;

	/* Made by this open in /dev/shm: the session's (pipeline.c); before
	 * the answer, which lets the agent's next call come. */
	if (j->out.fresh && (flags & O_CREAT))
		hx_pipeline_own(u->pl, fd, "");
	r = ioctl(u->lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	if (r >= 0) {
		/* Before the answer: the caller cannot write it yet. A
		 * failure is left as O_TRUNC's would be after the open: the
		 * descriptor is in and cannot be taken back. */
		if (o->trunc && ftruncate(fd, 0)) {
			/* left, as above */
		}
		close(fd);
		atomic_fetch_add(&u->n_emul, 1);
		if (o->trunc) {
			a->kind = ANS_VALUE;
			a->val = r;
		} else {
			a->kind = ANS_SENT;
		}
		return;
	}
	/* A failed injection is a failed call (EMFILE...), never a pass. */
	a->err = errno == EINPROGRESS ? EACCES : errno;
	if (o->made)
		unmake(fd, o->path);
	close(fd);
	snprintf(why, sizeof(why), "the call failed (%s): nothing was made",
		 strerrorname_np(a->err) ? strerrorname_np(a->err) : "?");
	hx_un_revoke(u, j, "harness:no-descriptor", why);
}

/* A new file in a directory Landlock carves ($HOME): one of its pooled
 * inodes, granted for reading (ipool.h), so that what the agent makes
 * there it can read back (Claude Code's ~/.claude.json, rewritten by a
 * rename). Only where the policy lets the new path be read. -ENOENT:
 * not such a creation (or any failure): the caller opens as usual,
 * which also gives the kernel's own answer. */
static int open_pooled(struct hx_unotify *u, const struct target *t,
		       const char *decided, uint64_t flags, mode_t mode,
		       uint64_t resolve, struct opened *o)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = own_resolve(resolve) |
					  RESOLVE_NO_MAGICLINKS |
					  RESOLVE_NO_SYMLINKS};
	struct hx_event ev = {.op = HX_OP_READ, .path = decided};
	struct hx_decision d;
	char parent[PATH_MAX];
	const char *name = strrchr(decided, '/');
	int pfd, fd;

	if (!(flags & O_CREAT) || (flags & O_DIRECTORY) || !name ||
	    !hx_ipool_left(u->pl->pool) || !strncmp(decided, "/proc/", 6))
		return -ENOENT;
	name++;
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") ||
	    (size_t)(name - decided) >= sizeof(parent))
		return -ENOENT;
	memcpy(parent, decided, (size_t)(name - decided));
	parent[name - decided] = '\0';
	hx_policy_decide(u->pl->policy, &ev, &d);
	if (d.verdict != HX_VERDICT_ALLOW)
		return -ENOENT;
	pfd = (int)syscall(SYS_openat2, AT_FDCWD, parent, &how, sizeof(how));
	if (pfd < 0)
		return -ENOENT;
	fd = hx_ipool_create(u->pl->pool, pfd, name, (int)flags,
			     mode & 07777 & ~hx_un_umask(t));
	close(pfd);
	if (fd < 0)
		return -ENOENT;
	o->made = true;
	snprintf(o->path, sizeof(o->path), "%s", decided);
	return fd;
}

/* /dev/tty is the opener's controlling terminal, and ours is
 * harness-exec's: a process of the agent in a session of its own on a
 * pty it made (script, a terminal tool, Python's pty) that opened it
 * was handed the user's terminal, its prompt drawn there and the user's
 * keys read, where the kernel gives it that pty; one without a terminal
 * (setsid) got the user's where the kernel says ENXIO. The target's own
 * (/proc/<pid>/stat): none is ENXIO; harness-exec's (in its session)
 * is opened here; a pty of the agent's devpts instance by its name there
 * (terminals.h), checked to be that device; anything else is refused. */
static int open_ctty(const struct target *t, uint64_t flags, uint64_t resolve)
{
	struct open_how how = {
	    .flags = (flags | O_CLOEXEC | O_NOCTTY) & ~(uint64_t)O_CREAT,
	    .resolve = own_resolve(resolve) | RESOLVE_NO_MAGICLINKS |
		       RESOLVE_NO_SYMLINKS};
	struct hx_procstat st, me;
	unsigned maj, min;
	char path[64];
	struct stat ds;
	int fd;

	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return -EEXIST;
	if (hx_proc_stat(t->peer.pid, &st) || hx_proc_stat(getpid(), &me))
		return -EACCES;
	if (!st.tty_nr)
		return -ENXIO;
	if (st.session == me.session && st.tty_nr == me.tty_nr)
		return hx_un_openat2(t, "/dev/tty", &how);
	/* new_encode_dev: 12 bits of major, 20 of minor */
	maj = (st.tty_nr >> 8) & 0xfff;
	min = (st.tty_nr & 0xff) | ((st.tty_nr >> 12) & 0xfff00);
	if (maj != 136) /* UNIX98_PTY_SLAVE_MAJOR */
		return -EACCES;
	snprintf(path, sizeof(path), "/dev/pts/%u", min);
	if ((fd = hx_un_openat2(t, path, &how)) < 0)
		return fd;
	if (fstat(fd, &ds) || !S_ISCHR(ds.st_mode) ||
	    ds.st_rdev != makedev(maj, min)) {
		close(fd);
		return -EACCES;
	}
	return fd;
}

/* An O_PATH open, emulated (DESIGN.md invariant 2: no CONTINUE after
 * reading the path): ADDFD refuses an O_PATH file, so the decided
 * directory or regular file, which the policy let be read, is handed
 * over opened read-only instead (found as decided, then reopened through
 * our own fd). What else O_PATH can name (a FIFO, a socket, a device, a
 * symlink itself) is refused. */
static int open_path_fd(const struct target *t, const char *decided,
			uint64_t flags, uint64_t resolve)
{
	struct open_how how = {
	    .flags = O_PATH | O_CLOEXEC | (flags & (O_NOFOLLOW | O_DIRECTORY)),
	    .resolve = own_resolve(resolve) | RESOLVE_NO_MAGICLINKS |
		       RESOLVE_NO_SYMLINKS};
	char path[PATH_MAX + 32], self[64];
	struct stat st;
	int p, fd;

	if (!decided[0] || hx_un_proc_path(t, decided, path, sizeof(path)))
		return -EACCES;
	if (proc_ns(decided, flags))
		how.resolve = own_resolve(resolve);
	p = hx_un_openat2(t, path, &how);
	if (p < 0)
		return p;
	if (fstat(p, &st) || (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))) {
		close(p);
		return -EACCES;
	}
	snprintf(self, sizeof(self), "/proc/thread-self/fd/%d", p);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY |
			    (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	fd = fd < 0 ? -errno : fd;
	close(p);
	return fd;
}

/* The kernel checks a /proc/<pid> file of mem, environ, auxv, maps and
 * their kin against its opener when it is opened (ptrace_may_access),
 * and the opener here is a worker: a thread of harness-exec, which
 * passes for harness-exec's own files whatever their owner (the same
 * thread group), and as root holds CAP_SYS_PTRACE, which passes for any
 * process. Through openat2 (always emulated) a root agent read root's
 * processes' environments and memory and harness-exec's own, and a
 * user's agent harness-exec's maps. harness-exec's own are refused;
 * another process's are opened without CAP_SYS_PTRACE, as the agent
 * would (*restore set), and those of a process outside the agent's
 * tree not at all where the check is made (hx_un_proc_foreign): the
 * worker is in no Landlock domain, so the uid alone passed. 0, or
 * -EACCES with the rule and the reason in *rule and *why. */
static int proc_rights(const struct hx_unotify *u, const struct target *t,
		       const struct job *j, bool *restore, const char **rule,
		       const char **why)
{
	pid_t pid = hx_un_proc_num(j->decided);
	char named[PATH_MAX];
	struct hx_procstatus st;

	*restore = false;
	if (pid && hx_proc_status(pid, &st))
		return 0; /* none there: the open says so */
	if (pid && st.tgid == getpid()) {
		*rule = "harness:protect";
		*why = "harness-exec's own /proc files: the agent may not "
		       "open them";
		return -EACCES;
	}
	/* As decided, and as named: a walk through another process's
	 * fd/N, cwd or root link is checked by the kernel too. */
	if (hx_un_proc_foreign(u, t, j->decided) ||
	    (j->rq.path &&
	     hx_path_normalize(NULL, j->rq.path, named, sizeof(named)) >= 0 &&
	     hx_un_proc_foreign(u, t, named))) {
		*rule = "harness:outside-process";
		*why = "what the kernel shows only to a process that may trace "
		       "it, of a process outside the session: the agent may "
		       "not open it";
		return -EACCES;
	}
	if (!pid)
		return 0;
	*restore = !hx_caps_effective(CAP_TO_MASK(CAP_SYS_PTRACE), 0);
	return 0;
}

/* Opens what j decided, with the agent's rights (proc_rights), and
 * hands it over (install), or answers the error. */
static void open_decided(struct hx_unotify *u, const struct seccomp_notif *n,
			 const struct target *t, struct job *j, uint64_t flags,
			 mode_t mode, uint64_t resolve, struct answer *a)
{
	struct opened o; /* its path is written before it is read */
	const char *rule = NULL, *why = NULL;
	bool restore, ctty = false;
	int e;

	o.made = o.trunc = false;
	if ((e = proc_rights(u, t, j, &restore, &rule, &why))) {
		hx_un_revoke(u, j, rule, why);
		a->err = -e;
		return;
	}
	/* A FIFO's open waits for its other end (hx_un_wait_begin). */
	hx_un_wait_begin(HX_WAIT_CALL);
	if (flags & O_PATH)
		e = open_path_fd(t, j->decided, flags, resolve);
	else if ((ctty = !strcmp(j->decided, "/dev/tty")))
		e = open_ctty(t, flags, resolve);
	else if ((e = open_pooled(u, t, j->decided, flags, mode, resolve,
				  &o)) == -ENOENT)
		e = open_here(t, j->decided, flags, mode, resolve, &o);
	e = hx_un_wait_end(u, e);
	if (restore)
		hx_caps_effective(CAP_TO_MASK(CAP_SYS_PTRACE), 1);
	if (e >= 0 && !ctty && u->pl->devbound && hx_devbound_wants(e)) {
		/* A worker's file takes every ioctl: the agent's own open of
		 * the device would take those of its Landlock rules only.
		 * (Its /dev/tty is granted them whatever terminal it is.) */
		int fd = hx_devbound_reopen(u->pl->devbound, e, (int)flags);

		close(e);
		e = fd;
	}
	if (e < 0) {
		a->err = -e;
		return;
	}
	/* The decided name swapped since for a file with other names, made
	 * before the session (a rename of one onto it): not written. */
	if (!o.made && (flags & O_ACCMODE) != O_RDONLY &&
	    hx_pipeline_shared_fd(u->pl, e)) {
		close(e);
		hx_un_revoke(u, j, "harness:shared-file",
			     "a file with other names");
		a->err = EACCES;
		return;
	}
	install(u, n, j, e, flags, &o, a);
}

/* The shim's connection to the session socket, asked as an open of
 * its path with O_PATH|O_RDWR (shim/client.c): made here and put in
 * with the answer (ADDFD_FLAG_SEND), one wake-up of the caller where a
 * connect emulated in place of its socket takes two. The kernel's own
 * answer is an O_PATH fd; any process of the session may connect to
 * this socket, so a program that opens it so gets nothing more. */
static bool open_own(struct hx_unotify *u, const struct seccomp_notif *n,
		     const struct target *t, const char *raw, uint64_t flags,
		     struct answer *a)
{
	struct seccomp_notif_addfd add = {
	    .id = n->id,
	    .flags = SECCOMP_ADDFD_FLAG_SEND,
	    .newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0};
	int end;

	if (!u->sock_path[0] || strcmp(raw, u->sock_path) ||
	    (flags & ~(uint64_t)(O_CLOEXEC | O_NONBLOCK)) != (O_PATH | O_RDWR))
		return false;
	if ((end = hx_un_own_connection(u, t, flags & O_NONBLOCK, a)) < 0)
		return true;
	add.srcfd = (uint32_t)end;
	if (ioctl(u->lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0)
		a->kind = ANS_SENT;
	else
		a->err = errno; /* the loop sees our end close */
	close(end);
	return true;
}

void hx_un_open(struct hx_unotify *u, const struct seccomp_notif *n,
		const struct target *t, struct answer *a)
{
	const __u64 *arg = n->data.args;
	uint64_t paddr, flags, mode = 0, resolve = 0;
	int dirfd = AT_FDCWD, e;
	struct job j;
	char raw[PATH_MAX], full[PATH_MAX];
	struct hx_kargs k = {.call = HX_KC_OPEN, .path = full};

	hx_un_job(&j, t, 0, HX_OP_READ); /* the call and op as read below */
	switch (n->data.nr) {
	case SYS_open:
		paddr = arg[0];
		flags = (uint32_t)arg[1];
		mode = (uint32_t)arg[2];
		j.rq.call = HX_CALL_OPEN;
		break;
	case SYS_creat:
		paddr = arg[0];
		flags = O_CREAT | O_WRONLY | O_TRUNC;
		mode = (uint32_t)arg[1];
		j.rq.call = HX_CALL_CREAT;
		break;
	case SYS_openat:
		dirfd = (int)arg[0];
		paddr = arg[1];
		flags = (uint32_t)arg[2];
		mode = (uint32_t)arg[3];
		j.rq.call = HX_CALL_OPENAT;
		break;
	default: { /* openat2 */
		struct open_how how;
		unsigned char extra[64];
		size_t size = (size_t)arg[3];

		dirfd = (int)arg[0];
		paddr = arg[1];
		if (size < sizeof(how) || size > 4096) {
			a->err = size < sizeof(how) ? EINVAL : E2BIG;
			return;
		}
		if ((e = hx_un_read_mem(t->tid, arg[2], &how, sizeof(how)))) {
			a->err = -e;
			return;
		}
		/* Unknown trailing fields must be zero (as the kernel says). */
		for (size_t off = sizeof(how); off < size;) {
			size_t chunk = size - off < sizeof(extra)
					   ? size - off
					   : sizeof(extra);

			if ((e = hx_un_read_mem(t->tid, arg[2] + off, extra,
						chunk))) {
				a->err = -e;
				return;
			}
			for (size_t i = 0; i < chunk; i++)
				if (extra[i]) {
					a->err = E2BIG;
					return;
				}
			off += chunk;
		}
		flags = how.flags;
		mode = how.mode;
		resolve = how.resolve;
		/* build_open_flags(): openat2 checks what open ignores. */
		if ((mode && !(flags & O_CREAT) && !is_tmpfile(flags)) ||
		    (mode & ~(uint64_t)07777)) {
			a->err = EINVAL;
			return;
		}
		/* The BPF filter refuses these bits on every other call
		 * that sets a mode (seccomp_deny.c); openat2's mode is
		 * behind its pointer, so here. */
		if ((flags & O_CREAT) && (mode & (S_ISUID | S_ISGID))) {
			a->err = EPERM;
			return;
		}
		/* Lookups anchored at the dirfd cannot be honoured on an
		 * absolute, decided path: refused, never widened. */
		if (resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)) {
			a->err = EACCES;
			return;
		}
		j.rq.call = HX_CALL_OPENAT;
		break;
	}
	}
	if ((e = hx_un_read_str(t->tid, paddr, raw, sizeof(raw)))) {
		a->err = -e;
		return;
	}
	if (n->data.nr == SYS_openat && open_own(u, n, t, raw, flags, a))
		return;
	if ((a->err =
		 hx_un_path_arg(u, n->id, t, dirfd, raw, full, sizeof(full))))
		return;
	/* Read-only opens arrive with --trace-reads, and openat2 always. */
	j.rq.op = open_writes(flags) ? HX_OP_WRITE : HX_OP_READ;
	j.rq.path = full;
	j.rq.has_flags = true;
	j.rq.flags = (uint32_t)flags;
	if ((flags & O_CREAT) || is_tmpfile(flags)) {
		j.rq.has_mode = true;
		j.rq.mode = (uint32_t)mode;
	}
	k.flags = (unsigned)flags;
	if ((a->err = hx_un_judge(u, t, &j, &k)))
		return;
	/* "file/", "file/." and "x/..": the decided path lost what makes
	 * the kernel refuse them (a truncate of file was made instead). */
	if ((e = hx_un_dir_tail(t, raw, full)) ||
	    (e = creat_slash(t, raw, full, j.decided, flags))) {
		a->err = -e;
		return;
	}
	/* The caller's own walk of its name (hx_un_walk_named): openat2's
	 * limits, protected_symlinks. O_CREAT|O_EXCL never follows its
	 * last name (EEXIST). */
	if ((e = hx_un_walk_named(t, dirfd, raw, full, j.decided,
				  !(flags & O_NOFOLLOW) &&
				      (flags & (O_CREAT | O_EXCL)) !=
					  (O_CREAT | O_EXCL),
				  resolve & HX_UN_WALK_LIMITS))) {
		a->err = -e;
		return;
	}
	open_decided(u, n, t, &j, flags, (mode_t)mode, resolve, a);
}
