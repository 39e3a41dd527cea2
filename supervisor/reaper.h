/* The reaper: kills the agent's whole tree when harness-exec itself dies
 * without ending the session (SIGKILL, a crash, the OOM killer), so no
 * agent process outlives its supervisor (DESIGN.md invariant 1).
 *
 * The agent runs in a cgroup v2 of its own; a small process forked before
 * the agent holds the read end of a pipe from harness-exec, and when the
 * pipe closes without the "session ended" byte it writes cgroup.kill,
 * which the kernel applies to every process of the cgroup at once, forks
 * in flight included. The agent cannot signal the reaper (Landlock signal
 * scope) nor leave the cgroup (/sys is outside every write root).
 *
 * Lifecycle: hx_reaper_start (early: the fork overlaps the rest of the
 * set-up) -> hx_reaper_settle (before PR_SET_CHILD_SUBREAPER and the
 * agent's fork) -> hx_reaper_join (in the agent's first process, before
 * exec) -> hx_reaper_stop (at the end of the session). Without a
 * writable cgroup v2, start returns -ENOTSUP and the guarantee is
 * reported as missing. */
#ifndef HX_REAPER_H
#define HX_REAPER_H

#include <sys/types.h>

struct hx_reaper {
	int dir_fd;	 /* the cgroup's directory, for CLONE_INTO_CGROUP */
	int procs_fd;	 /* the cgroup's cgroup.procs, for hx_reaper_join */
	int born_inside; /* set in the child that clone3 put in the cgroup */
	int pipe_w;	 /* closing it without HX_REAPER_DONE kills the tree */
	pid_t mid;	 /* the child that forks the reaper, until settled */
	char cgroup[4096];
	/* pids.max: in cgroup when its pids controller is on, else in a
	 * cgroup v1 pids hierarchy (pids_cg, joined through pids_fd) */
	int pids_fd;
	char pids_cg[4096];
	char mnt_pids[4096]; /* the v1 pids hierarchy's mount, or "" */
};

/* Creates the session's cgroup and forks the reaper (through a child
 * that exits at once: the reaper must not be harness-exec's descendant,
 * or ending the session would wait for it). Returns 0, or -errno
 * (-ENOTSUP: no writable cgroup v2); *rp is then inert. */
int hx_reaper_start(const char *session, struct hx_reaper *rp);

/* Waits for the child hx_reaper_start left, so that the reaper is not
 * reparented to us once we are a subreaper. Idempotent. */
void hx_reaper_settle(struct hx_reaper *rp);

/* fork(), with the child born inside the session's cgroup (clone3 with
 * CLONE_INTO_CGROUP): moving a running process into a cgroup waits for
 * an RCU grace period, about 12 ms on a small VM, while being born there
 * costs nothing. Falls back to fork() when clone3 refuses. Returns what
 * fork returns. The child is single-threaded glibc-wise (no atfork
 * handlers ran): it may only set itself up and exec. */
pid_t hx_reaper_fork(struct hx_reaper *rp);

/* Puts the calling process into the session's cgroup, unless it was
 * born there. The caller has one thread. Async-signal-safe (it runs
 * between fork and exec).
 * Returns 0 or -errno. */
int hx_reaper_join(const struct hx_reaper *rp);

/* Caps the session's tasks at max (threads count): pids.max of the
 * session's cgroup v2 when its parent delegates the pids controller
 * (enabled there if it can be), else of a cgroup of its own in a v1
 * pids hierarchy (hybrid systems), which hx_reaper_join then joins.
 * Before hx_reaper_fork. Returns 0 or -errno (-ENOTSUP: nowhere). */
int hx_reaper_pids_max(struct hx_reaper *rp, const char *session,
		       unsigned long max);

/* Writes v into file of the session's cgroup (cgroup.freeze: "1" or
 * "0"; cgroup.kill: "1"). 0 or -errno; -ENOTSUP on an inert reaper. */
int hx_reaper_write(const struct hx_reaper *rp, const char *file,
		    const char *v);

/* Closes the fds the agent must not inherit (in the agent's child). */
void hx_reaper_forget(struct hx_reaper *rp);

/* In the agent's first process, at once: it holds no end of the pipe.
 * Were harness-exec killed while that process is still being set up
 * (its close-on-exec end not yet closed by the exec), the reaper would
 * never see the pipe close, and a process stuck in its set-up (a mount
 * that waits on the dead supervisor's FUSE server) would live on. */
void hx_reaper_child(struct hx_reaper *rp);

/* Settles, ends the reaper without killing anything, and removes the
 * cgroup once it is empty. Safe on an inert reaper. */
void hx_reaper_stop(struct hx_reaper *rp);

#endif
