/* The policy's resource limits as rlimits of the agent (issue 3, item
 * 1): prepared in harness-exec, applied in the child before exec as both
 * soft and hard limit, never above the hard limit it already has (a
 * policy limits, it does not grant). The agent, without
 * CAP_SYS_RESOURCE, cannot raise them; every process it starts inherits
 * them. Each limit is per process, as rlimits are, except the process
 * count (a cgroup's pids.max, or RLIMIT_NPROC, which is per user). */
#ifndef HX_RLIMITS_H
#define HX_RLIMITS_H

#include <stdbool.h>
#include <sys/resource.h>

#include "policy/policy.h"

struct json_t;

/* Who holds the process count. */
enum hx_procs_by {
	HX_PROCS_NONE,	 /* nothing: root without a cgroup's pids.max */
	HX_PROCS_CGROUP, /* the session cgroup's pids.max */
	HX_PROCS_RLIMIT, /* RLIMIT_NPROC: per user, so set to the user's
			  * tasks at start plus the limit, or in the
			  * agent's own user namespace (nproc_in_ns) */
};

struct hx_limits {
	unsigned set; /* bit (1 << enum hx_limit) for each rlimit to apply */
	rlim_t value[HX_LIMIT_COUNT];
	rlim_t count; /* the policy's process count, 0 when none */
	enum hx_procs_by processes;
	/* RLIMIT_NPROC is set to count once the agent's first process is
	 * in a user namespace of its own (hx_limits_apply_in_ns), where
	 * the kernel counts the namespace's tasks only: the session's. */
	bool nproc_in_ns;
	/* harness-exec's soft RLIMIT_NOFILE at start, given back to the
	 * agent (hx_limits_raise_nofile), or 0 */
	rlim_t nofile_soft;
};

/* The policy's limits; in audit mode only the process count, which
 * protects the harness rather than enforcing the policy. */
void hx_limits_from_policy(const struct hx_policy *p, bool audit,
			   struct hx_limits *out);

/* Settles who holds the process count: the cgroup when cgroup is true
 * (its pids.max is set), else RLIMIT_NPROC for an ordinary user, else
 * nothing (uid 0 is exempt from RLIMIT_NPROC). RLIMIT_NPROC counts the
 * user's tasks of one user namespace: with own_ns (the agent gets one
 * of its own, enforce mode) it is the limit, set there; else the
 * user's tasks now (a walk of /proc) plus the limit. */
void hx_limits_processes(struct hx_limits *l, bool cgroup, bool own_ns);

/* Raises harness-exec's soft RLIMIT_NOFILE to its hard limit: each
 * connection of the agent's is two or three of its fds (server.h), and
 * a desktop's soft 1024 let about 500 of them fill the table, so that
 * the open of a late mask failed. The agent gets the soft limit back
 * (hx_limits_apply). */
void hx_limits_raise_nofile(struct hx_limits *l);

/* In the child (system calls only): half of the user's queued signals
 * and message queue bytes (RLIMIT_SIGPENDING, RLIMIT_MSGQUEUE: counted
 * per user), the soft RLIMIT_NOFILE given back, then the policy's
 * limits. Returns 0, or -errno with the limit's name in *what. */
int hx_limits_apply(const struct hx_limits *l, const char **what);

/* In the child, once it tried to make its own user namespace (made:
 * in_ns): there, as an ordinary user, half of the user's inotify
 * instances and watches for the session; RLIMIT_NPROC when
 * nproc_in_ns, counting the session's tasks there, or, without that
 * namespace, the user's tasks now plus the limit. Returns 0 or
 * -errno. */
int hx_limits_apply_in_ns(const struct hx_limits *l, bool in_ns);

/* {"cpu": 60, ...}: a new reference. */
struct json_t *hx_limits_json(const struct hx_limits *l);

#endif
