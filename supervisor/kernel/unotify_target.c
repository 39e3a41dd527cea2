/* The target of a notification: its memory, its identity and its fds,
 * read by a worker (unotify_int.h). Nothing here decides. */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/path.h"
#include "supervisor/kernel/caps.h"
#include "supervisor/kernel/execgate.h"
#include "supervisor/kernel/ipcns.h"
#include "supervisor/kernel/masks.h"
#include "supervisor/kernel/seccomp_uapi.h"
#include "supervisor/kernel/terminals.h"
#include "supervisor/path_resolve.h"
#include "supervisor/proc.h"

__thread struct hx_connector *hx_un_conn;
__thread uint64_t hx_un_notif_id;
__thread int hx_un_notif_lfd = -1;

bool hx_un_id_valid(struct hx_unotify *u, uint64_t id)
{
	return ioctl(u->lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

int hx_un_read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	return hx_proc_read_mem(tid, addr, buf, len);
}

/* A NUL-terminated string of at most size-1 bytes: the rest of one,
 * into a buffer that does not grow. */
int hx_un_read_str(pid_t tid, uint64_t addr, char *buf, size_t size)
{
	struct hx_strblob b = {buf, 0, size};
	int e;

	if (!addr)
		return -EFAULT;
	e = hx_proc_read_str(tid, addr, &b, size);
	return e == -E2BIG ? -ENAMETOOLONG : e;
}

bool hx_un_in_tree(const struct hx_unotify *u, pid_t pid)
{
	for (int depth = 0; pid > 1 && depth < 128; depth++) {
		struct hx_procstatus st;

		if (pid == u->root)
			return true;
		if (hx_proc_status(pid, &st))
			return false;
		if (u->gate && st.tracer &&
		    st.tracer == hx_execgate_tracer(u->gate))
			return true;
		pid = st.ppid;
	}
	return false;
}

/* fd of the process or thread pidfd pfd names (closed), or -errno. */
static int getfd_of(int pfd, int fd)
{
	int r;

	if (pfd < 0)
		return -errno;
	r = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	if (r < 0)
		r = -errno;
	close(pfd);
	return r;
}

int hx_un_take_fd(pid_t pid, int fd)
{
	return getfd_of((int)syscall(SYS_pidfd_open, pid, 0), fd);
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* linux/pidfd.h, Linux 6.9 */
#endif

int hx_un_call_fd(const struct target *t, int fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, t->tid, PIDFD_THREAD);

	if (pfd < 0 && errno == EINVAL) /* before 6.9 */
		return hx_un_take_fd(t->peer.pid, fd);
	return getfd_of(pfd, fd);
}

/* Whether tid's fd is close-on-exec (/proc/<tid>/fdinfo: a thread's
 * directory there shows its own table). */
bool hx_un_fd_cloexec(pid_t tid, int fd)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)tid, fd);
	if ((f = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return true;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	buf[n > 0 ? n : 0] = '\0';
	p = strstr(buf, "flags:");
	return !p || (strtoul(p + 6, NULL, 8) & O_CLOEXEC);
}

pid_t hx_un_proc_num(const char *path)
{
	char *end;
	long n;

	if (strncmp(path, "/proc/", 6) || path[6] < '1' || path[6] > '9')
		return 0;
	n = strtol(path + 6, &end, 10);
	return (*end && *end != '/') || n > 1 << 30 ? 0 : (pid_t)n;
}

/* The entries of /proc/<N> (and of /proc/<N>/task/<T>) the kernel lets
 * any process of the uid open and walk: what they show of another
 * process is checked, if at all, when read, against the reader (the
 * agent, whose read() it is). "fd" and "ns" as directories only (their
 * links are followed with a check of the opener). */
static const char *const proc_open_any[] = {
    "autogroup",     "cgroup",	    "cmdline",	  "comm",	   "cpuset",
    "gid_map",	     "io",	    "limits",	  "loginuid",	   "mountinfo",
    "mounts",	     "mountstats",  "net",	  "oom_adj",	   "oom_score",
    "oom_score_adj", "personality", "projid_map", "sched",	   "schedstat",
    "sessionid",     "setgroups",   "stack",	  "stat",	   "statm",
    "task",	     "status",	    "syscall",	  "timerslack_ns", "uid_map",
    "wchan",
};

/* The entry of a /proc/<N>/ path after that prefix (p), a task's
 * "task/<T>/" skipped: its length in *len, NULL for the directory. */
static const char *proc_entry(const char *p, size_t *len)
{
	if (!strncmp(p, "task/", 5) && p[5] >= '1' && p[5] <= '9') {
		p += 5;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p != '/' || !p[1])
			return NULL;
		p++;
	}
	*len = strcspn(p, "/");
	return *len ? p : NULL;
}

/* Whether a /proc/<N>/ entry (e, len bytes) is one the kernel checks
 * against its opener's right to trace N, or a link walked so. */
static bool proc_traced_entry(const char *e, size_t len)
{
	if (len == 2 && (!strncmp(e, "fd", 2) || !strncmp(e, "ns", 2)))
		return e[len] == '/' && e[len + 1]; /* a link in it */
	for (size_t i = 0; i < sizeof(proc_open_any) / sizeof(*proc_open_any);
	     i++)
		if (strlen(proc_open_any[i]) == len &&
		    !strncmp(e, proc_open_any[i], len))
			return false;
	return true;
}

bool hx_un_proc_foreign(const struct hx_unotify *u, const struct target *t,
			const char *path)
{
	pid_t pid = hx_un_proc_num(path);
	const char *p, *e;
	size_t len;

	if (!pid || pid == t->peer.pid || pid == t->tid)
		return false;
	for (p = path + 6; *p >= '0' && *p <= '9'; p++)
		;
	if (!*p || !p[1] || !(e = proc_entry(p + 1, &len)))
		return false; /* the directory itself, or its task's */
	/* The tree's ancestry is read last: ps under --trace-reads opens
	 * every process's stat. */
	return proc_traced_entry(e, len) && !hx_un_in_tree(u, pid);
}

bool hx_un_fd_at_name(const struct target *t, int fd, const char *name)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT};
	char root[64];
	struct stat a, b;
	int rfd, nfd;
	bool same;

	if (name[0] != '/' || fstat(fd, &a))
		return false;
	/* The target's view: its masks and its /dev/pts are not ours. Ours
	 * where its root is not ours to open (a process that made itself
	 * non-dumpable, to a user's harness-exec): the same names but the
	 * masks'. */
	snprintf(root, sizeof(root), "/proc/%d/root", (int)t->peer.pid);
	if ((rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 &&
	    (rfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return false;
	nfd = (int)syscall(SYS_openat2, rfd, name, &how, sizeof(how));
	close(rfd);
	if (nfd < 0)
		return false;
	same = !fstat(nfd, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	close(nfd);
	return same;
}

mode_t hx_un_umask_in(const struct target *t, const char *dir, int dirfd)
{
	char self[64];

	if (!dir[0]) {
		snprintf(self, sizeof(self), "/proc/thread-self/fd/%d", dirfd);
		dir = self;
	}
	/* The target's umask was applied by hand before a default ACL's
	 * mode: a directory made under one lost its group's write (0755
	 * for the kernel's 0777). */
	if (getxattr(dir, "system.posix_acl_default", NULL, 0) > 0)
		return 0;
	return hx_un_umask(t);
}

int hx_un_fsize_ok(const struct target *t, int fd, uint64_t len)
{
	struct rlimit rl;
	struct stat st;

	/* The worker's own limit is the supervisor's, not the target's:
	 * truncate(2) done here grew a file past the policy's file size
	 * limit (or the agent's own) that the kernel refuses it. */
	if (fstat(fd, &st))
		return -errno;
	if (len <= (uint64_t)st.st_size)
		return 0; /* a shrink: no limit */
	if (prlimit(t->peer.pid, RLIMIT_FSIZE, NULL, &rl))
		return -EACCES; /* unknown: refused, never done past it */
	if (rl.rlim_cur == RLIM_INFINITY || len <= rl.rlim_cur)
		return 0;
	hx_un_signal_caller(t, SIGXFSZ);
	return -EFBIG;
}

void hx_un_signal_caller(const struct target *t, int sig)
{
	uint64_t id = hx_un_notif_id;

	/* By number: the thread may have been killed during the call (a
	 * blocking send waited on, a question) and its number given to a
	 * process outside the session, which the signal would end. A
	 * living notification is a living caller; the number is not freed
	 * again faster than the tgkill follows. */
	if (hx_un_notif_lfd >= 0 &&
	    !ioctl(hx_un_notif_lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id))
		syscall(SYS_tgkill, t->peer.pid, t->tid, sig);
}

int hx_un_replace_fd(struct hx_unotify *u, uint64_t id, const struct target *t,
		     int fd, int newfd)
{
	struct seccomp_notif_addfd add = {
	    .id = id,
	    .flags = SECCOMP_ADDFD_FLAG_SETFD,
	    .srcfd = (uint32_t)newfd,
	    .newfd = (uint32_t)fd,
	    .newfd_flags = hx_un_fd_cloexec(t->tid, fd) ? O_CLOEXEC : 0};

	return ioctl(u->lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 ? -errno : 0;
}

int hx_un_proc_path(const struct target *t, const char *in, char *out,
		    size_t size)
{
	static const char self[] = "/proc/self", thr[] = "/proc/thread-self";
	static const char *const std[] = {"/dev/stdin", "/dev/stdout",
					  "/dev/stderr"};
	int n = -1;

	/* Links into /proc/self/fd: ours are harness-exec's fds. */
	for (int i = 0; i < 3 && n < 0; i++)
		if (!strcmp(in, std[i]))
			n = snprintf(out, size, "/proc/%d/fd/%d",
				     (int)t->peer.pid, i);
	if (n >= 0)
		;
	else if (!strncmp(in, "/dev/fd", 7) && (!in[7] || in[7] == '/'))
		n = snprintf(out, size, "/proc/%d/fd%s", (int)t->peer.pid,
			     in + 7);
	else if (!strncmp(in, self, 10) && (!in[10] || in[10] == '/'))
		n = snprintf(out, size, "/proc/%d%s", (int)t->peer.pid,
			     in + 10);
	else if (!strncmp(in, thr, 17) && (!in[17] || in[17] == '/'))
		n = snprintf(out, size, "/proc/%d/task/%d%s", (int)t->peer.pid,
			     (int)t->tid, in + 17);
	else
		n = snprintf(out, size, "%s", in);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int hx_un_path_arg(struct hx_unotify *u, uint64_t id, const struct target *t,
		   int dirfd, const char *raw, char *full, size_t size)
{
	if (!hx_un_id_valid(u, id))
		return ESRCH;
	return -hx_path_absolute(t->peer.pid, t->tid, dirfd, raw, full, size);
}

/* Whether the message queue mount path lies on in the agent's view
 * (rfd its root) is another than ours: its own IPC namespace's. Where
 * it has none (audit mode as an ordinary user: no mount namespace of
 * its own) its view's is ours, the user's queues. */
static bool own_queues(int rfd, const char *path, const struct open_how *h)
{
	struct open_how dh = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			      .resolve = h->resolve};
	char dir[PATH_MAX], *slash;
	struct stat ours, theirs;
	int dfd;
	bool own;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) ||
	    !(slash = strrchr(dir, '/')))
		return false;
	slash[slash == dir] = '\0';
	if (stat(dir, &ours))
		return false;
	dfd = (int)syscall(SYS_openat2, rfd, dir[1] ? dir + 1 : ".", &dh,
			   sizeof(dh));
	if (dfd < 0)
		return false;
	own = !fstat(dfd, &theirs) && theirs.st_dev != ours.st_dev;
	close(dfd);
	return own;
}

int hx_un_openat2(const struct target *t, const char *path,
		  const struct open_how *how)
{
	/* /proc/<pid>/fd/N: a file the agent holds, its own queue too. */
	bool proc = !strncmp(path, "/proc/", 6);
	bool tty = hx_terminals_path(path);
	bool queue = !proc && hx_ipcns_path(path);
	/* A session that masks a directory whose files the policy lets be
	 * read (masks.h): hx_un_masked_way looked at the path in the
	 * agent's view, but a rename of a directory above it between that
	 * look and this open (sub, holding a masked .env/, renamed to x
	 * after x/.env/key was looked at and found in neither view) had
	 * ours open the secret the mask hides, or link or move it out
	 * (thirty-third attack review, part a). There, every path is
	 * opened in the agent's view, the masks on its way. */
	bool masked = !proc && hx_masks_dir_noted();
	struct open_how h = *how;
	char root[64];
	int rfd, fd;

	if (!tty && !queue && !masked) {
		fd = (int)syscall(SYS_openat2, AT_FDCWD, path, how,
				  sizeof(*how));
		if (fd >= 0 && !proc && hx_ipcns_fd(fd)) {
			close(fd); /* a queue mount come since the look */
			return -EACCES;
		}
		return fd < 0 ? -errno : fd;
	}
	/* The agent's /dev/pts is its own instance (terminals.h): the same
	 * name is another pty, perhaps another terminal, in ours; and so
	 * are its message queues (ipcns.h): the user's in ours. */
	snprintf(root, sizeof(root), "/proc/%d/root", (int)t->peer.pid);
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -EACCES;
	h.resolve |= RESOLVE_IN_ROOT;
	if (queue && !tty && !own_queues(rfd, path, &h))
		fd = -EPERM; /* as its mq_open is (seccomp_deny.c) */
	else if ((fd = (int)syscall(SYS_openat2, rfd, path[1] ? path + 1 : ".",
				    &h, sizeof(h))) < 0)
		fd = -errno;
	close(rfd);
	return fd;
}
