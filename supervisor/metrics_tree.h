/* What the agent's processes use now, read from /proc for the metrics:
 * the living descendants of harness-exec but its own helpers (the
 * processes that run harness-exec's image: connectors, the masks'
 * binder), with what the ended ones used. */
#ifndef HX_METRICS_TREE_H
#define HX_METRICS_TREE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HX_USAGE_GROUPS 32

/* The living processes of one process group of the agent's. */
struct hx_group_usage {
	pid_t pgid;
	size_t processes;
	double cpu_seconds; /* theirs and their waited-for children's */
	uint64_t rss_bytes;
};

struct hx_tree_usage {
	size_t processes;
	double cpu_seconds; /* user + system, living and waited for */
	uint64_t rss_bytes;
	size_t open_fds;
	/* the first HX_USAGE_GROUPS groups met, breadth first */
	struct hx_group_usage groups[HX_USAGE_GROUPS];
	size_t ngroups, groups_left_out; /* processes of groups past them */
};

/* User and system time of getrusage(who) in seconds (0: unknown). */
double hx_metrics_cpu_seconds(int who);

/* Fills *u; all zero until the agent's first process (root) exists. */
void hx_metrics_tree_usage(pid_t root, struct hx_tree_usage *u);

#endif
