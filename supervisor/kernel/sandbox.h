/* The agent's kernel set-up (DESIGN.md invariants 4-6): no_new_privs,
 * no capabilities (also as root), Landlock, the seccomp deny list.
 *
 * Lifecycle: hx_sandbox_prepare (in harness-exec, before fork: builds
 * the filter, starts the Landlock ruleset, probes the kernel, warns
 * about what is missing) -> hx_sandbox_ready (before fork) ->
 * hx_sandbox_enter (in the child, right before execvp) ->
 * [hx_sandbox_release (in the parent, once the child has entered)] ->
 * hx_sandbox_free (in the parent). hx_sandbox_free(NULL) is a no-op. */
#ifndef HX_SANDBOX_H
#define HX_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/types.h"

struct hx_policy;
struct hx_policy_vars;
struct hx_sandbox;
struct hx_limits;
struct json_t; /* jansson's json_t, without its header */

/* Builds everything the child needs, so that entering it allocates
 * nothing. Landlock is derived from p and vars in enforce mode only:
 * it is the policy's boundary, while the seccomp deny list is the
 * sandbox's integrity and holds in audit mode too. Unless quiet, warns
 * once on stderr for each missing mechanism this run relies on.
 * The Landlock ruleset is derived on a thread of its own, from p and a
 * copy of vars (the strings are borrowed until hx_sandbox_ready): p
 * must not change meanwhile. Returns 0, or -errno with a message in err
 * (harness-exec refuses to start: an unconfined agent is never the
 * fallback). */
int hx_sandbox_prepare(const struct hx_policy *p,
		       const struct hx_policy_vars *vars, enum hx_mode mode,
		       bool quiet, bool describe, struct hx_sandbox **out,
		       char *err, size_t errlen);

/* What the Landlock ruleset holds, for --verbose (prepared with
 * describe; after hx_sandbox_ready). */
void hx_sandbox_describe(const struct hx_sandbox *sb, FILE *out);

/* Waits for the Landlock ruleset. Must succeed before
 * hx_sandbox_kernel_json and the fork: hx_sandbox_enter refuses a
 * sandbox that is not ready. Returns 0, or -errno with a message in err
 * (refuse to start, as for prepare). */
int hx_sandbox_ready(struct hx_sandbox *sb, char *err, size_t errlen);

/* Enforce mode without --trace-reads (so after hx_sandbox_set_trace_reads
 * and before hx_sandbox_ready): starts looking for the files the policy
 * denies for reading under roots (the project), which the agent's first
 * process then masks (masks.h). roots and mask_dir are borrowed until
 * hx_sandbox_ready; quiet_dir (the sessions' run dir, or NULL) is not
 * watched for names made later (hx_maskwatch_quiet). Returns 0 or
 * -errno. */
#define HX_MASKS_MAX_ENTRIES 200000
int hx_sandbox_find_masks(struct hx_sandbox *sb, const char *const *roots,
			  size_t nroots, const char *mask_dir,
			  const char *quiet_dir);

/* Adds the seccomp user-notify filter (after prepare, before fork):
 * the child installs it with SECCOMP_FILTER_FLAG_NEW_LISTENER and hands
 * the listener over handoff_fd (its end of a socketpair; the parent
 * takes it with hx_unotify_receive), keeping no copy. Returns 0 or
 * -errno with a message (the kernel lacks user-notify or pidfd_getfd). */
int hx_sandbox_enable_notify(struct hx_sandbox *sb, int handoff_fd, char *err,
			     size_t errlen);

/* Before hx_sandbox_enable_notify: also notify execve and execveat,
 * for the exec gate (execgate.h), which must then trace the child. */
void hx_sandbox_set_exec_gate(struct hx_sandbox *sb, bool on);

/* Before hx_sandbox_enable_notify: notify every open, read-only ones
 * too (--trace-reads), so reads are decided in the kernel layer. */
void hx_sandbox_set_trace_reads(struct hx_sandbox *sb, bool on);

/* Whether every open is notified: --trace-reads, or, after
 * hx_sandbox_ready, masks that could not cover the project. */
bool hx_sandbox_trace_reads(const struct hx_sandbox *sb);

/* Before the fork: the agent's Landlock refusals make audit records
 * (kaudit.h), and the child's first one, before it execs, is a signal
 * to probe (harness-exec), whose record names the session's domain. */
void hx_sandbox_set_landlock_log(struct hx_sandbox *sb, pid_t probe);

/* In the forked child, right before exec: the policy's rlimits
 * (rlimits.h, enforce mode), no_new_privs, drop every
 * capability (bounding, ambient, securebits locked so a uid-0 agent
 * does not regain them on exec; then effective, permitted, inheritable),
 * Landlock, close every fd above 2, load the seccomp filter. On any
 * failure prints one line "harness-exec: sandbox: ..." and _exit(126):
 * it never returns unconfined. */
void hx_sandbox_enter(const struct hx_sandbox *sb);

/* In the parent, once the child has restricted itself and before its
 * calls are served: the thread that reopens the devices the kernel layer
 * opens for the agent within the agent's Landlock rules (devbound.h).
 * *out NULL when Landlock bounds no device ioctl. 0 or -errno. */
struct hx_devbound;
int hx_sandbox_start_devbound(struct hx_sandbox *sb, struct hx_devbound **out);

/* In the parent, once the child has entered the sandbox (it handed the
 * listener over: Landlock is applied): frees what only the child
 * needed, the Landlock ruleset, while the agent starts. The sandbox
 * cannot be entered again afterwards. NULL: no-op. */
void hx_sandbox_release(struct hx_sandbox *sb);

/* The limits the child will apply (rlimits.h), for the caller to settle
 * who holds the process count (hx_limits_processes) before the fork. */
struct hx_limits *hx_sandbox_limits(struct hx_sandbox *sb);

/* Whether this process may make a user namespace (an ordinary user's
 * masks, terminals and process count need one): 0 or -errno. */
int hx_sandbox_userns_probe(void);

/* The kernel availability for the session_start record, e.g.
 * {"seccomp": true, "landlock_abi": 6, ...}; a new reference. */
struct json_t *hx_sandbox_kernel_json(const struct hx_sandbox *sb);

/* The files granted for reading that the kernel layer links in for the
 * agent's creations in the directories Landlock carves (ipool.h), owned
 * by sb; NULL without Landlock or when none. After hx_sandbox_ready. */
struct hx_ipool;
struct hx_ipool *hx_sandbox_pool(const struct hx_sandbox *sb);

/* The masks' records (maskfs.h): after the fork, the thread that serves
 * them and writes their refusals into pl on srv's loop (0, or -errno:
 * the child's masks are unserved then, and it must not run); at the
 * end, what is queued written; {"served": ...} for session_end, or NULL
 * when the masks are not served so. */
struct hx_pipeline;
struct hx_server;
int hx_sandbox_serve_masks(struct hx_sandbox *sb, pid_t child,
			   struct hx_pipeline *pl, struct hx_server *srv);
void hx_sandbox_stop_masks(struct hx_sandbox *sb);
struct json_t *hx_sandbox_masks_json(const struct hx_sandbox *sb);

void hx_sandbox_free(struct hx_sandbox *sb);

#endif
