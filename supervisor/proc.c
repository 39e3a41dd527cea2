/* Processes in /proc; see proc.h. */
#define _GNU_SOURCE
#include "supervisor/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int hx_proc_stat(pid_t pid, struct hx_procstat *st)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ESRCH;
	buf[n] = '\0';
	return hx_proc_stat_parse(buf, st);
}

int hx_proc_stat_parse(const char *buf, struct hx_procstat *st)
{
	int ppid = 0, pgrp = 0, session = 0, tty = 0;
	const char *p;

	/* The command name (field 2) may hold spaces and parentheses:
	 * fields 3 on follow the last ')', and a space after it (p + 2
	 * is past the end of a line cut there). starttime is field 22. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' ||
	    sscanf(p + 2,
		   "%c %d %d %d %d %*d %*u %*u %*u %*u %*u %llu %llu "
		   "%llu %llu %*d %*d %d %*d %llu %*u %ld",
		   &st->state, &ppid, &pgrp, &session, &tty, &st->utime,
		   &st->stime, &st->cutime, &st->cstime, &st->threads,
		   &st->starttime, &st->rss) != 12)
		return -EBADMSG;
	st->ppid = ppid;
	st->pgrp = pgrp;
	st->session = session;
	st->tty_nr = (unsigned)tty;
	return 0;
}

pid_t hx_proc_ppid(pid_t pid)
{
	struct hx_procstat st;

	return hx_proc_stat(pid, &st) ? 0 : st.ppid;
}

bool hx_proc_descends(pid_t pid, pid_t ancestor)
{
	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		if (pid == ancestor)
			return true;
		pid = hx_proc_ppid(pid);
	}
	return false;
}

bool hx_proc_descends_pinned(pid_t pid, int pidfd, pid_t ancestor)
{
	return hx_proc_descends(pid, ancestor) &&
	       (pidfd < 0 ||
		!syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0));
}

/* /proc/<tid>/status into buf (NUL-terminated): 0 or -errno. */
static int read_status(pid_t tid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return 0;
}

/* The number after key ("\nName:") in buf, in base; dflt when the line
 * is absent. */
static unsigned long long status_field(const char *buf, const char *key,
				       int base, unsigned long long dflt)
{
	const char *p = strstr(buf, key);

	return p ? strtoull(p + strlen(key), NULL, base) : dflt;
}

int hx_proc_signals(pid_t tid, struct hx_procsignals *sg)
{
	char buf[4096];
	int e = read_status(tid, buf, sizeof(buf));

	memset(sg, 0, sizeof(*sg));
	if (e)
		return e;
	sg->threads = (int)status_field(buf, "\nThreads:", 10, 0);
	sg->pending = status_field(buf, "\nSigPnd:", 16, 0);
	sg->shared = status_field(buf, "\nShdPnd:", 16, 0);
	sg->blocked = status_field(buf, "\nSigBlk:", 16, 0);
	sg->ignored = status_field(buf, "\nSigIgn:", 16, 0);
	sg->caught = status_field(buf, "\nSigCgt:", 16, 0);
	return 0;
}

int hx_proc_status(pid_t tid, struct hx_procstatus *st)
{
	char buf[4096];
	int e;

	memset(st, 0, sizeof(*st));
	st->umask = 022;
	if ((e = read_status(tid, buf, sizeof(buf))))
		return e;
	st->tgid = (pid_t)status_field(buf, "\nTgid:", 10, 0);
	st->ppid = (pid_t)status_field(buf, "\nPPid:", 10, 0);
	st->tracer = (pid_t)status_field(buf, "\nTracerPid:", 10, 0);
	st->uid = (uid_t)status_field(buf, "\nUid:", 10, 0);
	st->umask = (mode_t)(status_field(buf, "\nUmask:", 8, 022) & 0777);
	st->filters = (int)status_field(buf, "\nSeccomp_filters:", 10,
					(unsigned long long)-1);
	return st->tgid > 0 ? 0 : -EIO;
}

bool hx_proc_status_confined(const struct hx_procstatus *st, int self_filters)
{
	return self_filters < 0 || st->filters < 0 ||
	       st->filters > self_filters;
}

bool hx_proc_confined(pid_t pid, int self_filters)
{
	struct hx_procstatus st;

	if (self_filters < 0)
		return true;
	return !hx_proc_status(pid, &st) &&
	       hx_proc_status_confined(&st, self_filters);
}

static ssize_t proc_link(pid_t pid, const char *which, char *out, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, which);
	n = readlink(path, out, size - 1);
	out[n > 0 ? n : 0] = '\0';
	return n;
}

/* A zombie leader has no image of its own while its other threads run
 * one, theirs: every thread shares it. Its records named no program, and
 * a raw call of the shim-loaded process that skipped the shim was not
 * marked a bypass (the twenty-sixth attack review). */
static ssize_t thread_exe(pid_t pid, char *out, size_t size)
{
	char dir[64], which[96];
	struct dirent *d;
	ssize_t n = -1;
	DIR *dh;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	if (!(dh = opendir(dir)))
		return -1;
	while (n <= 0 && (d = readdir(dh))) {
		if (d->d_name[0] == '.' || atoi(d->d_name) == (int)pid)
			continue;
		snprintf(which, sizeof(which), "task/%.16s/exe", d->d_name);
		n = proc_link(pid, which, out, size);
	}
	closedir(dh);
	return n;
}

ssize_t hx_proc_exe(pid_t pid, char *out, size_t size)
{
	ssize_t n = proc_link(pid, "exe", out, size);

	return n < 0 && errno == ENOENT ? thread_exe(pid, out, size) : n;
}

ssize_t hx_proc_cwd(pid_t pid, char *out, size_t size)
{
	return proc_link(pid, "cwd", out, size);
}

#define MAX_SCAN 32768

size_t hx_proc_descendants(pid_t root, struct hx_proc *out, size_t max)
{
	/* Per call, not static: the loop's thread, a question's and the
	 * metrics' scan at once. */
	struct {
		pid_t pid, ppid;
		unsigned long long starttime;
	} *all = malloc(MAX_SCAN * sizeof(*all));
	size_t n = 0, found = 0, j, done;
	DIR *d = all ? opendir("/proc") : NULL;
	struct dirent *de;

	if (!d) {
		free(all);
		return 0;
	}
	while ((de = readdir(d)) && n < MAX_SCAN) {
		struct hx_procstat st;
		char *end;
		long v = strtol(de->d_name, &end, 10);

		/* A zombie leader whose other threads run (its main thread
		 * called pthread_exit) is alive, with children of its own. */
		if (*end || v <= 0 || hx_proc_stat((pid_t)v, &st) ||
		    st.state == 'X' || (st.state == 'Z' && st.threads <= 1))
			continue;
		all[n].pid = (pid_t)v;
		all[n].ppid = st.ppid;
		all[n++].starttime = st.starttime;
	}
	closedir(d);
	/* Transitive closure from root, breadth first over out[]. */
	for (done = 0; done <= found; done++) {
		pid_t parent = done ? out[done - 1].pid : root;

		for (j = 0; j < n && found < max; j++)
			if (all[j].ppid == parent)
				out[found++] = (struct hx_proc){
				    all[j].pid, all[j].starttime};
	}
	free(all);
	return found;
}

size_t hx_proc_agent_descendants(struct hx_proc *out, size_t max)
{
	struct hx_procstatus self;
	size_t n = hx_proc_descendants(getpid(), out, max), k = 0;

	if (hx_proc_status(getpid(), &self))
		return n;
	for (size_t i = 0; i < n; i++)
		if (hx_proc_confined(out[i].pid, self.filters))
			out[k++] = out[i];
	return k;
}

bool hx_proc_signal(const struct hx_proc *p, int sig)
{
	int fd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	struct hx_procstat st;
	bool sent;

	if (fd < 0)
		return false;
	/* The pidfd pins one process; its start time says it is the one
	 * the scan saw, not a newer one with the same pid. */
	sent = !hx_proc_stat(p->pid, &st) && st.starttime == p->starttime &&
	       !syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) &&
	       st.state != 'Z' && st.state != 'X';
	close(fd);
	return sent;
}

int hx_proc_pin(pid_t pid, struct hx_proc *p)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct hx_procstat st;

	if (fd < 0)
		return -1;
	/* Read after the pidfd: the start time is the pinned process's. */
	if (hx_proc_stat(pid, &st)) {
		close(fd);
		return -1;
	}
	*p = (struct hx_proc){pid, st.starttime};
	return fd;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif

bool hx_proc_peer_still(int sock)
{
	socklen_t len = sizeof(int);
	int fd = -1;
	bool alive;

	if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &fd, &len))
		return errno == ENOPROTOOPT;
	alive = !syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0);
	close(fd);
	return alive;
}

int hx_proc_kill(int pidfd, pid_t pid, int sig)
{
	if (pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
	return kill(pid, sig);
}

bool hx_proc_pinned(int pidfd, const struct hx_proc *p)
{
	struct hx_procstat st;

	/* ESRCH once reaped; before, the number is still its. */
	return pidfd >= 0 &&
	       !syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) &&
	       !hx_proc_stat(p->pid, &st) && st.starttime == p->starttime;
}

#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1U << 2) /* Linux 6.9 */
#endif

bool hx_proc_signal_group(int pidfd, const struct hx_proc *p, int sig)
{
	if (pidfd < 0)
		return false;
	/* The kernel signals the group of the pidfd's struct pid, never a
	 * group a newer process with the number leads. */
	if (!syscall(SYS_pidfd_send_signal, pidfd, sig, NULL,
		     PIDFD_SIGNAL_PROCESS_GROUP))
		return true;
	if (errno != EINVAL)
		return false;
	/* Before 6.9: by number, only while its leader is the pinned
	 * process (a group led by a process gone is left to the gate). */
	return hx_proc_pinned(pidfd, p) && !kill(-p->pid, sig);
}

int hx_proc_ns(pid_t pid, const char *ns, struct hx_nsid *out)
{
	char path[64];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	if (stat(path, &st))
		return -errno;
	*out = (struct hx_nsid){st.st_dev, st.st_ino};
	return 0;
}

int hx_proc_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 2;
}

/* /proc/<pid>/<what> whole, at most cap bytes (hx_proc_cmdline). */
static char *proc_read(pid_t pid, const char *what, size_t cap, size_t *len)
{
	size_t size = cap < 4096 ? cap + 1 : 4096, n = 0;
	char path[64], *buf = malloc(size), *b;
	ssize_t k;
	int fd;

	*len = 0;
	if (!buf)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	/* Grown as it is read: most are short, an argv may be megabytes. */
	while (n < cap + 1) {
		if (n == size) {
			size = size * 2 > cap + 1 ? cap + 1 : size * 2;
			if (!(b = realloc(buf, size)))
				break;
			buf = b;
		}
		k = read(fd, buf + n, size - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	*len = n;
	return buf;
}

char *hx_proc_cmdline(pid_t pid, size_t cap, size_t *len)
{
	return proc_read(pid, "cmdline", cap, len);
}

char *hx_proc_environ(pid_t pid, size_t cap, size_t *len)
{
	return proc_read(pid, "environ", cap, len);
}

void hx_proc_self_path(pid_t pid, pid_t tid, const char *path, char *out,
		       size_t size)
{
	static const char *const std[] = {"/dev/stdin", "/dev/stdout",
					  "/dev/stderr"};

	/* /dev/fd and the standard streams are links into /proc/self/fd:
	 * read in our view, they were harness-exec's own fds (an exec of
	 * /dev/fd/5 looked at harness-exec's fd 5 for its image). */
	for (int i = 0; i < 3; i++)
		if (!strcmp(path, std[i])) {
			snprintf(out, size, "/proc/%d/fd/%d", (int)pid, i);
			return;
		}
	if (!strncmp(path, "/dev/fd/", 8) || !strcmp(path, "/dev/fd"))
		snprintf(out, size, "/proc/%d/fd%s", (int)pid, path + 7);
	else if (!strncmp(path, "/proc/self/", 11) ||
		 !strcmp(path, "/proc/self"))
		snprintf(out, size, "/proc/%d%s", (int)pid, path + 10);
	else if (!strncmp(path, "/proc/thread-self/", 18) ||
		 !strcmp(path, "/proc/thread-self"))
		snprintf(out, size, "/proc/%d/task/%d%s", (int)pid,
			 (int)(tid ? tid : pid), path + 17);
	else
		snprintf(out, size, "%s", path);
}
