/* The exec gate's birth lineage of the traced processes (execgate.h,
 * hx_execgate_branch): which child of the root each process descends
 * from, taken at each fork, vfork or clone event from the process that
 * forked it, so that setsid, CLONE_PARENT and an orphan's reparenting
 * change nothing; and the branches being killed, so that what is born
 * into one while it is killed dies too. Only harness-mcp's calls need
 * it: each fork then costs a /proc read. Thread-safe; every function
 * takes a NULL lineage (none kept) and does nothing. */
#ifndef HX_LINEAGE_H
#define HX_LINEAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct hx_lineage;

/* 0 or -ENOMEM. */
int hx_lineage_new(pid_t root, struct hx_lineage **out);
void hx_lineage_free(struct hx_lineage *l);

/* At parent's fork event, child is born. *cont: its first stop came
 * before and waits (hx_lineage_first_stop): the tracer lets it go on.
 * *doom: born into a branch being killed, it is to die before it runs. */
void hx_lineage_born(struct hx_lineage *l, pid_t parent, pid_t child,
		     bool *cont, bool *doom);
/* A new tracee's first stop (not the root's): true when it must wait
 * for its parent's event (its branch unknown yet, it may not run). */
bool hx_lineage_first_stop(struct hx_lineage *l, pid_t pid);
/* pid exited. */
void hx_lineage_gone(struct hx_lineage *l, pid_t pid);

/* pid's branch, or 0 (the root, unknown, a NULL l). */
pid_t hx_lineage_branch(struct hx_lineage *l, pid_t pid);
/* sig to every living process of branch (checked against its start
 * time); the branch is doomed from then on. Returns how many got it. */
size_t hx_lineage_kill_branch(struct hx_lineage *l, pid_t branch, int sig);

#endif
