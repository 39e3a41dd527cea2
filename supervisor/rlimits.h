/* The policy's resource limits as rlimits of the agent (issue 3, item
 * 1): prepared in harness-exec, applied in the child before exec as both
 * soft and hard limit, never above the hard limit it already has (a
 * policy limits, it does not grant). The agent, without
 * CAP_SYS_RESOURCE, cannot raise them; every process it starts inherits
 * them. Each limit is per process, as rlimits are. */
#ifndef HX_RLIMITS_H
#define HX_RLIMITS_H

#include <stdbool.h>
#include <sys/resource.h>

#include "../policy/policy.h"

struct json_t;

struct hx_limits {
	unsigned set; /* bit (1 << enum hx_limit) for each one to apply */
	rlim_t value[HX_LIMIT_COUNT];
};

void hx_limits_from_policy(const struct hx_policy *p, struct hx_limits *out);

/* In the child (system calls only). Returns 0, or -errno with the
 * limit's name in *what. */
int hx_limits_apply(const struct hx_limits *l, const char **what);

/* {"cpu": 60, ...}: a new reference. */
struct json_t *hx_limits_json(const struct hx_limits *l);

#endif
