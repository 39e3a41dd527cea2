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
			  * tasks at start plus the limit */
};

struct hx_limits {
	unsigned set; /* bit (1 << enum hx_limit) for each rlimit to apply */
	rlim_t value[HX_LIMIT_COUNT];
	rlim_t count; /* the policy's process count, 0 when none */
	enum hx_procs_by processes;
};

/* The policy's limits; in audit mode only the process count, which
 * protects the harness rather than enforcing the policy. */
void hx_limits_from_policy(const struct hx_policy *p, bool audit,
			   struct hx_limits *out);

/* Settles who holds the process count: the cgroup when cgroup is true
 * (its pids.max is set), else RLIMIT_NPROC for an ordinary user (the
 * user's tasks now plus the limit), else nothing (uid 0 is exempt from
 * RLIMIT_NPROC). */
void hx_limits_processes(struct hx_limits *l, bool cgroup);

/* In the child (system calls only). Returns 0, or -errno with the
 * limit's name in *what. */
int hx_limits_apply(const struct hx_limits *l, const char **what);

/* {"cpu": 60, ...}: a new reference. */
struct json_t *hx_limits_json(const struct hx_limits *l);

#endif
