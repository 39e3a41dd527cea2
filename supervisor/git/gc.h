/* harness-exec gc: removes what ended (or crashed) --worktree sessions
 * left in their repositories once older than an age: the worktree and
 * its metadata, the refs under refs/harness/<session>/, lock files in the
 * session's own ref and worktree namespaces, and (with branches) the branch
 * harness/<session>. Locks of a session whose harness-exec is gone are
 * removed whatever its age: nobody holds them. */
#ifndef HX_GC_H
#define HX_GC_H

#include <stdbool.h>
#include <stdio.h>

struct hx_gc_opts {
	long long older_than; /* seconds */
	bool branches;	      /* also delete harness/<session> */
	bool dry_run;
};

/* Runs gc over every worktree session of the state dir, reporting to
 * out. Returns the number of errors (0: all fine). */
int hx_gc_run(const struct hx_gc_opts *o, FILE *out, FILE *err);

#endif
