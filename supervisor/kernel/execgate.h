/* The exec gate (DESIGN.md invariant 3, issue 3 item 5): every exec of
 * the agent tree is decided at the syscall by the user-notify handler
 * (unotify_exec.c), which can only answer it with CONTINUE; the kernel then
 * re-reads the path and argv from the agent's memory, where a second
 * thread may have swapped them. The gate closes that window: at
 * PTRACE_EVENT_EXEC (the new image has not run an instruction yet) the
 * executable (/proc/<pid>/exe: device and inode) and the new argv
 * (/proc/<pid>/cmdline) are compared with what the handler approved for
 * that thread; a mismatch or an exec nobody approved is killed (enforce
 * mode) and logged as an attack.
 *
 * Mechanism: ptrace with exec, fork, vfork and clone events only, from
 * one tracer thread (ptrace requests must come from the thread that
 * attached). PTRACE_O_EXITKILL: if the tracer goes, the tree dies. The
 * tracer is also the only waiter of harness-exec's children while the
 * gate runs (a waitpid elsewhere in the process would consume ptrace
 * stops: the tracer's thread group is the root child's real parent);
 * run.c asks hx_execgate_child_status instead.
 *
 * Lifecycle (harness-exec): fork -> hx_unotify_receive ->
 * hx_execgate_start (seizes the child while it waits for the listener
 * hand-off's ack: dumpable, and before its exec) ->
 * hx_unotify_release_child -> hx_unotify_start(..., gate) -> loop ... ->
 * hx_execgate_stop after the tree is gone. */
#ifndef HX_EXECGATE_H
#define HX_EXECGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct hx_pipeline;
struct hx_server;
struct hx_execgate;
struct hx_peer;

/* Starts the tracer thread, which seizes child (a fresh fork that does
 * not exec before the caller lets it). Exec mismatches are logged
 * through pl on srv's loop (an eventfd source). on_exit(arg) runs on
 * the loop when the child's exit status is known. lineage: keep each
 * process's birth lineage (hx_execgate_branch), which costs every fork
 * a /proc read and holds a new process until its parent's event; only
 * harness-mcp's calls need it. Returns 0 or -errno (the caller must
 * then kill the child: it is not gated). */
int hx_execgate_start(pid_t child, struct hx_pipeline *pl,
		      struct hx_server *srv, bool lineage,
		      void (*on_exit)(void *), void *arg,
		      struct hx_execgate **out);

/* Records what the exec of thread peer->tid (of process peer->pid) was
 * approved as: the final executable's device and inode, the argv the
 * new image will see (cmdline: NUL-terminated strings back to back,
 * copied), and the cwd it was decided (and a question shown) in, which
 * its relative names mean what they name from (NULL: not held); seq and
 * path, the decision's record and path, for the "failed" record written
 * when no exec follows (the kernel refused it: the approval is replaced
 * by the thread's next one, or the thread ends). Replaces an earlier
 * approval of tid. Call BEFORE answering CONTINUE. Thread-safe. Returns
 * 0 or -ENOMEM (then deny the exec). */
int hx_execgate_approve(struct hx_execgate *g, const struct hx_peer *peer,
			uint64_t seq, const char *path, dev_t dev, ino_t ino,
			const char *cmdline, size_t len, const char *cwd);

/* The environment tid's approved exec runs with (env: len bytes, its
 * strings back to back as the kernel copies them), held at the exec
 * event against /proc/<pid>/environ. Call after hx_execgate_approve,
 * before CONTINUE. 0, or -ENOENT (no approval of tid). */
int hx_execgate_approve_env(struct hx_execgate *g, pid_t tid, const char *env,
			    size_t len);

/* Takes back tid's approval made with seq (a "failed" record follows)
 * when the CONTINUE could not be sent: the thread left the call (a
 * fatal signal, another thread's exec) and may have been reaped before
 * the approval was made, so no exit of it will ever take it. */
void hx_execgate_withdraw(struct hx_execgate *g, pid_t tid, uint64_t seq);

/* What a new image opens by name once it runs, each name at most: a #!
 * script's at each level (its interpreter's argv), a loader's program. */
#define HX_EXECGATE_NAMES 6

/* Adds to tid's approval (call after hx_execgate_approve) a name the new
 * image will open (as its argv says: absolute, relative to its cwd, or
 * /dev/fd/N/...): at the exec event that name must still lead to the
 * file decided (dev, ino), else the image is killed. A script's
 * interpreter and rtld open their file by name after the gate's look
 * at the image: an exec of ./run.sh decided on one cwd ran another
 * directory's run.sh under the record of the first. Returns 0 or
 * -ENOMEM / -ENOSPC / -ENOENT (no approval: deny the exec). */
int hx_execgate_approve_name(struct hx_execgate *g, pid_t tid, dev_t dev,
			     ino_t ino, const char *name);

/* Holds every process of the tree (hold true) in a ptrace stop until
 * it is called again with false: the tracer interrupts each tracee and
 * keeps every stop while held, the first stop of each new one too, so
 * neither a process that forks faster than anyone can look nor a
 * SIGCONT (a ptrace stop ends only by its tracer) gets past it. SIGKILL
 * still ends a held process. Holds are counted: the tree is let go at
 * the last false. Returns once the tracer has done it: 0, -ENOSYS (no
 * tracer), or -ETIMEDOUT (it did not, within a second: the tree is
 * gone; a hold that timed out is not counted). Thread-safe; not on the
 * tracer's thread. */
int hx_execgate_hold(struct hx_execgate *g, bool hold);
/* The tracer thread's id: what /proc/<tid>/status says as TracerPid
 * of every thread the gate traces. 0 before it started. */
pid_t hx_execgate_tracer(const struct hx_execgate *g);

/* Birth lineage (a gate started with lineage): the child of the root
 * that pid descends from, as the fork events said (each process's branch is its
 * parent's, taken from the process that forked it, so setsid, CLONE_PARENT or
 * being orphaned and reparented change nothing), or 0 for the root, a pid not
 * traced, a NULL g or one without lineage. A new process does not run before
 * its branch is known. Thread-safe. */
pid_t hx_execgate_branch(struct hx_execgate *g, pid_t pid);

/* Sends sig to every living process of branch (the branch's own pid
 * included), each through a pidfd checked against its start time;
 * returns how many were signalled. The branch is doomed from then on:
 * a process born into it later (forked while this ran) is killed
 * before it runs, whatever sig was. Thread-safe. */
size_t hx_execgate_kill_branch(struct hx_execgate *g, pid_t branch, int sig);

/* The root child's wait status once it has exited: true and *status. */
bool hx_execgate_child_status(struct hx_execgate *g, int *status);

/* Execs checked and mismatches found, for session_end. */
void hx_execgate_stats(const struct hx_execgate *g, unsigned long long *checked,
		       unsigned long long *mismatches);

/* Whether this process may PTRACE_SEIZE a child of its own (Yama, an
 * LSM or a container may forbid it): forks one that waits, seizes it,
 * kills it. 0 or -errno. For --doctor. */
int hx_execgate_probe(void);

/* The tracer's options (execgate.c, execgate_probe.c). */
#define HX_EXECGATE_OPTS                                                       \
	(PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |       \
	 PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL)

/* Stops the tracer (its tracees, if any are left, are killed by
 * PTRACE_O_EXITKILL), frees g. NULL: no-op. Call on the loop's thread. */
void hx_execgate_stop(struct hx_execgate *g);

#endif
