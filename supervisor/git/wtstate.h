/* The record of a --worktree session kept in its session dir
 * (worktree.json): where the repository and the worktree are, the
 * supervisor's pid, the control socket, and whether the session ended.
 * The CLIs (checkpoint, restore, diff, gc) find sessions through it. */
#ifndef HX_WTSTATE_H
#define HX_WTSTATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define HX_WTSTATE_FILE "worktree.json"

struct hx_wtstate {
	char session[65];
	char dir[PATH_MAX];	  /* the session dir (not stored) */
	char repo[PATH_MAX];	  /* the user's working directory root */
	char commondir[PATH_MAX]; /* the common git dir */
	char worktree[PATH_MAX];
	char branch[128];	      /* refs/heads/harness/<session> */
	char base[41];		      /* commit id */
	char ctl[108];		      /* control socket path */
	char status[16];	      /* running, ended, collected */
	char result[41];	      /* result commit, once ended */
	pid_t pid;		      /* harness-exec */
	unsigned long long pid_start; /* its start time (clock ticks) */
	time_t started, ended;
	bool keep;
};

/* Writes <dir>/worktree.json atomically (temp file + rename). */
int hx_wtstate_write(const struct hx_wtstate *s);
/* Reads <dir>/worktree.json; sets s->dir. Returns 0 or -errno. */
int hx_wtstate_read(const char *dir, struct hx_wtstate *s);

/* True while the harness-exec that wrote s still runs. */
bool hx_wtstate_live(const struct hx_wtstate *s);

/* The start time of pid from /proc (0 when gone). */
unsigned long long hx_proc_starttime(pid_t pid);

/* Finds session name (NULL: the only live worktree session) in the
 * state dir. Returns 0, -ENOENT, or -EEXIST when name is NULL and
 * several are live, with a message in err. */
int hx_wtstate_find(const char *name, struct hx_wtstate *s, char *err,
		    size_t errlen);

/* Calls fn for each session dir holding a worktree.json. */
int hx_wtstate_foreach(void (*fn)(struct hx_wtstate *s, void *arg), void *arg);

/* The commit of checkpoint *n (*n < 0: the last; *n set to it) as the
 * session recorded it in <dir>/checkpoints.jsonl, into out. Not its
 * ref: refs/harness/<session>/ is in the agent's repository, which an
 * audit session's agent writes (its own checkpoints or another
 * session's, and one more past the last). 0, or -ENOENT. */
int hx_wtstate_checkpoint(const char *dir, long *n, char out[41]);

#endif
