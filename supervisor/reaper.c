/* The reaper; see reaper.h. */
#define _GNU_SOURCE
#include "supervisor/reaper.h"

#include <errno.h>
#include <linux/sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HX_REAPER_DONE 'q'

/* The cgroup v2 mount point, from /proc/self/mountinfo ("... MOUNTPOINT
 * ... - cgroup2 ..."). */
static int cgroup2_mount(char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int r = -ENOTSUP;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - cgroup2 ");
		char mnt[4096];

		if (!sep)
			continue;
		/* Fields: id parent major:minor root mountpoint ... */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 &&
		    strlen(mnt) < cap) {
			strcpy(out, mnt);
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

/* The mount point of the cgroup v1 hierarchy that has controller ctl
 * ("... MOUNTPOINT ... - cgroup cgroup rw,pids"). */
static int cgroup1_mount(const char *ctl, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mnt[4096], opts[4096], *tok, *save;
	int r = -ENOTSUP;

	if (!f)
		return -errno;
	while (r && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - cgroup ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 10, "%*s %4095s", opts) != 1)
			continue;
		for (tok = strtok_r(opts, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save))
			if (!strcmp(tok, ctl) && strlen(mnt) < cap) {
				strcpy(out, mnt);
				r = 0;
			}
	}
	fclose(f);
	return r;
}

/* Our own cgroup path: in v2 ("0::PATH") when ctl is NULL, else in the
 * v1 hierarchy whose /proc/self/cgroup line names controller ctl. */
static int own_cgroup_in(const char *ctl, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096], *p, *c;
	int r = -ENOTSUP;

	if (!f)
		return -errno;
	while (r && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		p = strchr(line, ':');
		c = p ? strchr(p + 1, ':') : NULL;
		if (!c)
			continue;
		*c = '\0';
		if (ctl ? strstr(p + 1, ctl) == NULL
			: strncmp(line, "0:", 2) || p[1])
			continue;
		if (strlen(c + 1) < cap) {
			strcpy(out, c + 1);
			r = 0;
		}
	}
	fclose(f);
	return r;
}

static int own_cgroup(char *out, size_t cap)
{
	return own_cgroup_in(NULL, out, cap);
}

static int write_file(const char *dir, const char *name, const char *v)
{
	char path[4200];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, v, strlen(v)) < 0)
		r = -errno;
	close(fd);
	return r;
}

int hx_reaper_write(const struct hx_reaper *rp, const char *file, const char *v)
{
	return rp->dir_fd < 0 ? -ENOTSUP : write_file(rp->cgroup, file, v);
}

/* Removes the cgroup, killing what is left in it first; waits up to
 * about a second for the kernel to empty it. */
static void remove_cgroup(const char *dir)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	for (int i = 0; i < 100; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			return;
		write_file(dir, "cgroup.kill", "1");
		nanosleep(&ts, NULL);
	}
}

/* The reaper process: waits for harness-exec to go away. */
static void __attribute__((noreturn)) reaper_main(int rfd, const char *dir)
{
	char c = 0;
	ssize_t n;
	int fd;

	prctl(PR_SET_NAME, "harness-reaper");
	/* Off the terminal: a ^C meant for the agent must not end the
	 * reaper, and the agent's process group is not ours; nor does it
	 * hold it (a question on it stops whoever does: askterm.h). */
	setsid();
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		for (int i = 0; i < 3; i++)
			dup2(fd, i);
		if (fd > 2)
			close(fd);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	do
		n = read(rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 && c == HX_REAPER_DONE)
		_exit(0);
	/* harness-exec died without ending the session. */
	write_file(dir, "cgroup.kill", "1");
	remove_cgroup(dir);
	_exit(0);
}

int hx_reaper_start(const char *session, struct hx_reaper *rp)
{
	char mnt[4096], own[4096];
	int p[2], r;
	pid_t pid;

	rp->dir_fd = rp->procs_fd = rp->pipe_w = rp->pids_fd = -1;
	rp->born_inside = 0;
	rp->mid = -1;
	rp->cgroup[0] = rp->pids_cg[0] = '\0';
	if (cgroup1_mount("pids", rp->mnt_pids, sizeof(rp->mnt_pids)))
		rp->mnt_pids[0] = '\0';
	if ((r = cgroup2_mount(mnt, sizeof(mnt))) ||
	    (r = own_cgroup(own, sizeof(own))))
		return r;
	if ((size_t)snprintf(rp->cgroup, sizeof(rp->cgroup), "%s%s/harness-%s",
			     mnt, strcmp(own, "/") ? own : "",
			     session) >= sizeof(rp->cgroup))
		return -ENAMETOOLONG;
	if (mkdir(rp->cgroup, 0755) && errno != EEXIST) {
		r = -errno;
		goto fail;
	}
	{
		char procs[4200];

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", rp->cgroup);
		rp->procs_fd = open(procs, O_WRONLY | O_CLOEXEC);
		rp->dir_fd =
		    open(rp->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (rp->procs_fd < 0 || pipe2(p, O_CLOEXEC)) {
		r = -errno;
		goto fail;
	}
	/* Double fork (reaper.h); the first child is waited for later, in
	 * hx_reaper_settle, so its exit costs no wake-up here. */
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		goto fail;
	}
	if (pid == 0) {
		close(p[1]);
		if (fork() == 0) {
			if (p[0] != 3)
				dup2(p[0], 3);
			syscall(SYS_close_range, 4u, ~0u, 0u);
			reaper_main(3, rp->cgroup);
		}
		_exit(0);
	}
	rp->mid = pid;
	close(p[0]);
	rp->pipe_w = p[1];
	return 0;
fail:
	hx_reaper_forget(rp);
	if (rp->cgroup[0])
		rmdir(rp->cgroup);
	rp->cgroup[0] = '\0';
	return r;
}

void hx_reaper_settle(struct hx_reaper *rp)
{
	if (rp->mid <= 0)
		return;
	while (waitpid(rp->mid, NULL, 0) < 0 && errno == EINTR)
		;
	rp->mid = -1;
}

pid_t hx_reaper_fork(struct hx_reaper *rp)
{
	struct clone_args ca = {
	    .flags = CLONE_INTO_CGROUP,
	    .exit_signal = SIGCHLD,
	    .cgroup = (__u64)rp->dir_fd,
	};
	long pid;

	if (rp->dir_fd >= 0) {
		rp->born_inside = 1;
		pid = syscall(SYS_clone3, &ca, sizeof(ca));
		if (pid >= 0)
			return (pid_t)pid;
		rp->born_inside = 0;
	}
	return fork();
}

int hx_reaper_pids_max(struct hx_reaper *rp, const char *session,
		       unsigned long max)
{
	char v[32], parent[4096], own[4096], *slash;
	int r;

	snprintf(v, sizeof(v), "%lu", max);
	if (rp->cgroup[0]) {
		if (!write_file(rp->cgroup, "pids.max", v))
			return 0;
		/* Not delegated yet: enable it, if the parent lets us. */
		snprintf(parent, sizeof(parent), "%s", rp->cgroup);
		slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			if (!write_file(parent, "cgroup.subtree_control",
					"+pids") &&
			    !write_file(rp->cgroup, "pids.max", v))
				return 0;
		}
	}
	if (!rp->mnt_pids[0])
		return -ENOTSUP;
	if ((r = own_cgroup_in("pids", own, sizeof(own))))
		return r;
	if ((size_t)snprintf(rp->pids_cg, sizeof(rp->pids_cg),
			     "%s%s/harness-%s", rp->mnt_pids,
			     strcmp(own, "/") ? own : "",
			     session) >= sizeof(rp->pids_cg)) {
		rp->pids_cg[0] = '\0';
		return -ENAMETOOLONG;
	}
	if (mkdir(rp->pids_cg, 0755) && errno != EEXIST) {
		r = -errno;
		rp->pids_cg[0] = '\0';
		return r;
	}
	if (!(r = write_file(rp->pids_cg, "pids.max", v))) {
		char tasks[4200];

		/* tasks, not cgroup.procs: hx_reaper_join moves a process
		 * that has one thread, and moving the caller's own thread
		 * skips the lock of every thread group that cgroup.procs
		 * takes, whose RCU grace period cost each session 5 to
		 * 40 ms on a 2-vCPU VM. */
		snprintf(tasks, sizeof(tasks), "%s/tasks", rp->pids_cg);
		rp->pids_fd = open(tasks, O_WRONLY | O_CLOEXEC);
		r = rp->pids_fd < 0 ? -errno : 0;
	}
	if (r) {
		rmdir(rp->pids_cg);
		rp->pids_cg[0] = '\0';
	}
	return r;
}

int hx_reaper_join(const struct hx_reaper *rp)
{
	/* v1 has no CLONE_INTO_CGROUP: joined here, before exec, by the
	 * child's only thread (fork copies one), so its process moves. */
	if (rp->pids_fd >= 0 && write(rp->pids_fd, "0", 1) != 1)
		return -errno;
	if (rp->born_inside)
		return 0;
	if (rp->procs_fd < 0)
		return rp->pids_fd >= 0 ? 0 : -ENOTSUP;
	return write(rp->procs_fd, "0", 1) == 1 ? 0 : -errno;
}

void hx_reaper_child(struct hx_reaper *rp)
{
	if (rp->pipe_w >= 0)
		close(rp->pipe_w);
	rp->pipe_w = -1;
}

void hx_reaper_forget(struct hx_reaper *rp)
{
	if (rp->dir_fd >= 0)
		close(rp->dir_fd);
	if (rp->procs_fd >= 0)
		close(rp->procs_fd);
	if (rp->pipe_w >= 0)
		close(rp->pipe_w);
	if (rp->pids_fd >= 0)
		close(rp->pids_fd);
	rp->dir_fd = rp->procs_fd = rp->pipe_w = rp->pids_fd = -1;
}

void hx_reaper_stop(struct hx_reaper *rp)
{
	char done = HX_REAPER_DONE;

	hx_reaper_settle(rp);
	if (rp->pipe_w >= 0 && write(rp->pipe_w, &done, 1) != 1) {
		/* The reaper is gone already; nothing to tell it. */
	}
	hx_reaper_forget(rp);
	if (rp->cgroup[0])
		remove_cgroup(rp->cgroup);
	rp->cgroup[0] = '\0';
	/* The tree is gone by now (v1 has no cgroup.kill), but the kernel
	 * frees the last task's place a moment later: retry from 100 us,
	 * doubling up to about 1 s in all (a flat 10 ms cost every session
	 * 10 ms at its end). */
	for (useconds_t us = 100; rp->pids_cg[0] && us < 600000; us *= 2) {
		if (!rmdir(rp->pids_cg) || errno != EBUSY)
			break;
		usleep(us);
	}
	rp->pids_cg[0] = '\0';
}
