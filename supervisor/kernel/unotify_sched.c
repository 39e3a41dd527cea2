/* The user-notify handler: priorities and scheduling of another thread
 * or process by its id (unotify_int.h). The kernel checks only that
 * the uids agree, and Landlock scopes signals and ptrace, not these: an
 * agent set nice 19, SCHED_IDLE or one CPU on any process of the user
 * outside the session. On its own tree they are done here, with the
 * worker's rights (no CAP_SYS_NICE, as the agent); on anyone else,
 * EPERM. The forms on oneself (id 0) pass in BPF, the group and user
 * forms are refused there (seccomp_deny.c). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define IOPRIO_WHO_PROCESS 1
#define MASK_MAX	   1024 /* bytes of a CPU mask: 8192 CPUs */
#define ATTR_MAX                                                               \
	256 /* struct sched_attr grows; its size is its first field            \
	     */

void hx_un_sched(struct hx_unotify *u, const struct seccomp_notif *n,
		 const struct target *t, struct answer *a)
{
	const __u64 *arg = n->data.args;
	unsigned char buf[ATTR_MAX > MASK_MAX ? ATTR_MAX : MASK_MAX] = {0};
	int nr = n->data.nr, e = 0;
	size_t len = 0;
	uint64_t ptr = 0;
	char path[64];
	pid_t pid;
	long r;

	/* The id as the kernel reads it (an int). */
	pid = (pid_t)(nr == SYS_setpriority || nr == SYS_ioprio_set ? arg[1]
								    : arg[0]);
	if ((nr == SYS_setpriority && (int)arg[0] != PRIO_PROCESS) ||
	    (nr == SYS_ioprio_set && (int)arg[0] != IOPRIO_WHO_PROCESS)) {
		a->err = EPERM; /* the group and user forms: BPF's already */
		return;
	}
	if (pid == 0)
		pid = t->tid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (pid < 0 || access(path, F_OK)) {
		a->err = pid < 0 ? EINVAL : ESRCH;
		return;
	}
	if (!hx_un_in_tree(u, pid)) {
		atomic_fetch_add(&u->n_denied, 1);
		a->err = EPERM;
		return;
	}
	switch (nr) {
	case SYS_sched_setaffinity:
		len = arg[1] < MASK_MAX ? (size_t)arg[1] : MASK_MAX;
		ptr = arg[2];
		break;
	case SYS_sched_setscheduler:
		len = sizeof(struct sched_param);
		ptr = arg[2];
		break;
	case SYS_sched_setparam:
		len = sizeof(struct sched_param);
		ptr = arg[1];
		break;
	case SYS_sched_setattr: {
		uint32_t size;

		if ((e = hx_un_read_mem(t->tid, arg[1], &size, sizeof(size))))
			break;
		/* 0 is the first version's 48 bytes; more than we copy
		 * must be zeros to the kernel too: E2BIG, as it says of
		 * what it does not know. */
		len = size ? size : 48;
		if (len > ATTR_MAX) {
			a->err = E2BIG;
			return;
		}
		ptr = arg[1];
		break;
	}
	}
	if (!e && len && ptr)
		e = hx_un_read_mem(t->tid, ptr, buf, len);
	if (e) {
		a->err = -e;
		return;
	}
	if (!hx_un_id_valid(u, n->id)) {
		a->err = ESRCH;
		return;
	}
	switch (nr) {
	case SYS_setpriority:
		r = setpriority(PRIO_PROCESS, (id_t)pid, (int)arg[2]);
		break;
	case SYS_ioprio_set:
		r = syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, pid,
			    (int)arg[2]);
		break;
	case SYS_sched_setaffinity:
		r = syscall(SYS_sched_setaffinity, pid,
			    arg[1] < MASK_MAX ? arg[1] : MASK_MAX,
			    ptr ? buf : NULL);
		break;
	case SYS_sched_setscheduler:
		r = syscall(SYS_sched_setscheduler, pid, (int)arg[1],
			    ptr ? buf : NULL);
		break;
	case SYS_sched_setparam:
		r = syscall(SYS_sched_setparam, pid, ptr ? buf : NULL);
		break;
	default: /* sched_setattr */
		r = syscall(SYS_sched_setattr, pid, buf, (unsigned)arg[2]);
		break;
	}
	hx_un_done(u, a, r < 0 ? -errno : 0);
}
