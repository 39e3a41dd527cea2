/* code_run: one child process (a shell command, an argv, or a Python or
 * Node snippet) in its own process group, its stdin fed from a pipe and
 * its stdout and stderr read into bounded buffers, with a timeout
 * (SIGTERM to the group, HX_MW_TERM_GRACE_MS later SIGKILL) and
 * cancellation (SIGKILL to the group). Driven by the loop (loop.h): the
 * run gives its fds to poll and its next deadline, and is told when
 * they are ready and what time it is. No threads, no signals of its own:
 * the loop wakes it on SIGCHLD. */
#ifndef HX_MW_CODERUN_H
#define HX_MW_CODERUN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct json_t;
struct pollfd;
struct hx_mw_coderun;

/* The most pollfds a run asks for. */
#define HX_MW_CODERUN_FDS 4

/* Checks args and starts the child for request id at time now (ms,
 * CLOCK_MONOTONIC). 0 and *run (hx_mw_coderun_free), or -errno and *res
 * (an error object). */
int hx_mw_coderun_start(uint64_t id, struct json_t *args, uint64_t now,
			struct hx_mw_coderun **run, struct json_t **res);

uint64_t hx_mw_coderun_id(const struct hx_mw_coderun *r);
pid_t hx_mw_coderun_pid(const struct hx_mw_coderun *r);

/* Fills p with the fds to poll (at most HX_MW_CODERUN_FDS): the count. */
int hx_mw_coderun_fds(const struct hx_mw_coderun *r, struct pollfd *p);

/* Handles the revents of the n pollfds at p (those it filled, or any:
 * fds not its own are skipped). */
void hx_mw_coderun_io(struct hx_mw_coderun *r, const struct pollfd *p, int n);

/* Reaps the child if it exited and applies the timeout and the kill
 * grace at time now. Returns the ms until it needs the next tick
 * (0: now), or -1 for none. */
int hx_mw_coderun_tick(struct hx_mw_coderun *r, uint64_t now);

/* A progress object {elapsed_ms, stdout_bytes, stderr_bytes} when one
 * is due at now (at most one each HX_MW_PROGRESS_MS), else NULL. */
struct json_t *hx_mw_coderun_progress(struct hx_mw_coderun *r, uint64_t now);

/* Kills the group (SIGKILL) and marks the run cancelled. */
void hx_mw_coderun_cancel(struct hx_mw_coderun *r);

/* True once the child is reaped and its output read to the end (or the
 * drain grace ran out). */
bool hx_mw_coderun_done(const struct hx_mw_coderun *r);

/* The reply's body once done: 0 and *res the result, or -errno and
 * *res an error (the command could not be started: cwd, exec). */
int hx_mw_coderun_result(struct hx_mw_coderun *r, struct json_t **res);

/* SIGKILL to the group, the child reaped (blocking), the run freed.
 * NULL is a no-op; hx_mw_coderun_free is the same once done. */
void hx_mw_coderun_free(struct hx_mw_coderun *r);

#endif
