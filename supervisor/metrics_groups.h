/* The metrics' process groups: each decision counted by its process's
 * group as well, so a fleet sees which job did what (a shell's job, a
 * tool call of Claude Code, which runs each command in a group of its
 * own). A process's group is read from /proc at its first record and
 * again at each process_start and exec, and kept when it is gone.
 *
 * The groups are the agent's to make (setpgid in a loop), so at most
 * HX_PGROUPS are counted: when one more comes, the group counted least
 * recently is folded into the group "other" (pgid 0). Not locked: the
 * metrics' lock is held around every call. */
#ifndef HX_METRICS_GROUPS_H
#define HX_METRICS_GROUPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define HX_PGROUPS 32

struct hx_pgroups;

/* 0 or -ENOMEM. */
int hx_pgroups_new(struct hx_pgroups **out);
void hx_pgroups_free(struct hx_pgroups *g);

/* pid has started or is about to exec: its group is read again. */
void hx_pgroups_seen(struct hx_pgroups *g, pid_t pid);
/* One decision of pid; labels (`category="..",verdict=".."`) is its
 * kind. false when the table of kinds was full (not counted). */
bool hx_pgroups_count(struct hx_pgroups *g, pid_t pid, const char *labels);

/* fn once for each kind a group counted (pgid 0: "other"), groups in
 * the order they came. */
typedef void hx_pgroups_fn(void *arg, pid_t pgid, const char *labels,
			   uint64_t n);
void hx_pgroups_each(const struct hx_pgroups *g, hx_pgroups_fn *fn, void *arg);

#endif
