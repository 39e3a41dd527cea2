/* Kernel feature probes; see features.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/features.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/kernel/landlock.h"

#include "supervisor/kernel/seccomp_uapi.h"

int hx_features_version(const char *release, int *major, int *minor)
{
	return sscanf(release, "%d.%d", major, minor) == 2 ? 0 : -EINVAL;
}

static bool action_avail(uint32_t action)
{
	return !syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action);
}

enum { P_LISTENER = 1, P_ADDFD = 2, P_SEND = 4, P_SYNC = 8, P_DONE = 64 };

/* In a forked child (the filter stays on it): make a listener with an
 * allow-all filter, then ask it with a notification id that cannot
 * exist. The kernel checks flags before it looks the id up, so ENOENT
 * means "understood", EINVAL or ENOTTY "not this kernel". */
static int listener_child(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {.len = 1, .filter = &allow};
	struct seccomp_notif_addfd add = {.id = ~0ull, .srcfd = 0, .flags = 0};
	int fd, res = P_DONE;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return res;
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		return res;
	res |= P_LISTENER;
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 && errno == ENOENT)
		res |= P_ADDFD;
	add.flags = SECCOMP_ADDFD_FLAG_SEND;
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 && errno == ENOENT)
		res |= P_SEND;
	/* The flags travel by value, not through a pointer. */
	if (!ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
		   (unsigned long)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP))
		res |= P_SYNC;
	return res;
}

static void probe_listener(struct hx_features *k)
{
	int pfd[2], res = 0, st;
	pid_t pid;
	ssize_t n;

	k->listener = k->addfd = k->addfd_send = k->sync_wake = HX_MISSING;
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(k->listener_err, sizeof(k->listener_err), "pipe: %s",
			 strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		res = listener_child();
		if (write(pfd[1], &res, sizeof(res)) < 0)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (pid > 0) {
		do
			n = read(pfd[0], &res, sizeof(res));
		while (n < 0 && errno == EINTR);
		if (n != sizeof(res))
			res = 0;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	close(pfd[0]);
	if (!(res & P_LISTENER)) {
		/* EBUSY: we already run under someone's listener. */
		snprintf(k->listener_err, sizeof(k->listener_err), "%s",
			 pid < 0 ? "fork failed"
				 : "the kernel refused a listener here "
				   "(nested sandbox?)");
		/* Not probed is not "missing": say unknown. */
		k->addfd = k->addfd_send = k->sync_wake = HX_UNKNOWN;
		return;
	}
	k->listener = HX_AVAILABLE;
	k->addfd = res & P_ADDFD ? HX_AVAILABLE : HX_MISSING;
	k->addfd_send = res & P_SEND ? HX_AVAILABLE : HX_MISSING;
	k->sync_wake = res & P_SYNC ? HX_AVAILABLE : HX_MISSING;
}

/* Whether the kernel knows SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: it
 * checks the flags before it reads the filter, so a NULL one fails with
 * EFAULT where they are known and EINVAL where not. Installs nothing. */
static bool probe_notify_killable(void)
{
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		       SECCOMP_FILTER_FLAG_NEW_LISTENER |
			   SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
		       NULL) < 0 &&
	       errno == EFAULT;
}

static void probe_pidfd(struct hx_features *k)
{
	int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0), fd;

	if (pfd < 0)
		return;
	k->pidfd_open = true;
	fd = (int)syscall(SYS_pidfd_getfd, pfd, 0, 0);
	/* EPERM is a policy (ptrace scope), ENOSYS a missing syscall; only
	 * a working call counts. */
	if (fd >= 0) {
		k->pidfd_getfd = true;
		close(fd);
	}
	close(pfd);
}

bool hx_features_has_cap(int cap)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* Our own cgroup v2 directory: the "0::" line, under the cgroup2 mount
 * point from mountinfo. */
static void probe_cgroup(struct hx_features *k)
{
	char line[1024], mnt[256] = "", rel[512] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - cgroup2 "), mp[256];

		if (sep && sscanf(line, "%*s %*s %*s %*s %255s", mp) == 1) {
			snprintf(mnt, sizeof(mnt), "%s", mp);
			break;
		}
	}
	fclose(f);
	if (!mnt[0])
		return;
	k->cgroup2 = true;
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3) &&
		    sscanf(line + 3, "%511[^\n]", rel) == 1)
			break;
	fclose(f);
	if ((size_t)snprintf(k->cgroup2_dir, sizeof(k->cgroup2_dir), "%s%s",
			     mnt, strcmp(rel, "/") ? rel : "") >=
	    sizeof(k->cgroup2_dir)) {
		k->cgroup2_dir[0] = '\0'; /* too long to name: not writable */
		return;
	}
	/* Making a child cgroup needs write access to our directory. */
	k->cgroup2_writable = !access(k->cgroup2_dir, W_OK);
}

void hx_features_probe(struct hx_features *k, bool deep)
{
	struct utsname u;
	uint32_t sizes[3];
	int v;

	memset(k, 0, sizeof(*k));
	if (!uname(&u))
		snprintf(k->release, sizeof(k->release), "%s", u.release);
	k->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 &&
		     action_avail(SECCOMP_RET_ERRNO) &&
		     action_avail(SECCOMP_RET_KILL_PROCESS);
	k->user_notif =
	    !syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, sizes) &&
	    action_avail(SECCOMP_RET_USER_NOTIF);
	k->listener = k->addfd = k->addfd_send = k->sync_wake = HX_UNKNOWN;
	if (deep && k->user_notif)
		probe_listener(k);
	k->notify_killable = k->user_notif && probe_notify_killable();
	probe_pidfd(k);
	k->landlock_abi = hx_landlock_abi();
	v = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	k->nnp = v >= 0;
	k->nnp_set = v == 1;
	k->cap_setpcap = hx_features_has_cap(CAP_SETPCAP);
	k->root = geteuid() == 0;
	probe_cgroup(k);
}
