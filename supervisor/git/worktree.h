/* A --worktree session (DESIGN.md section 7, docs/worktrees.md): the
 * linked worktree the agent runs in, its checkpoints, the provenance of
 * its writes, the control socket, and the result commit with its
 * manifest note.
 *
 * Lifecycle, driven by run.c:
 *   hx_worktree_open     before the policy is loaded (it needs $WORKTREE)
 *   hx_worktree_policy_vars  fills the git-dir write rules of the policy
 *   hx_worktree_start    once the session dir, audit log and server
 *                        exist: checkpoint 0, hooks, control socket
 *   ... the agent runs; checkpoints after each writing process ...
 *   hx_worktree_finish   after the agent's tree is gone: last checkpoint
 *                        and the manifest (before session_end)
 *   hx_worktree_end_fields   adds the result's tree and manifest hash to
 *                        the session_end record
 *   hx_worktree_result   after session_end is written: the result commit
 *                        (trailer Harness-Audit-Hash), the note, and the
 *                        worktree's removal unless kept
 *   hx_worktree_free     (NULL is a no-op; before start it also removes
 *                        what open created)
 * Messages go to stderr prefixed "harness-exec: ". */
#ifndef HX_WORKTREE_H
#define HX_WORKTREE_H

#include <stdbool.h>
#include <stddef.h>

struct hx_worktree;
struct hx_pipeline;
struct hx_server;
struct hx_policy_vars;
struct hx_audit;
struct json_t;

struct hx_worktree_opts {
	const char *session;	 /* the session id */
	const char *session_dir; /* <state>/sessions/<id> */
	const char *run_dir; /* /tmp/harness-<uid>, for a long socket path */
	const char *cwd;     /* the user's current directory */
	const char *base;    /* --base REF, or NULL for HEAD */
	bool copy_untracked, keep, quiet;
	/* The checkpoints' walks of the tree made on a thread confined to
	 * it (confine.h): set where the agent may make symlinks in it. */
	bool confine;
};

/* Creates branch harness/<session> from the base commit and the linked
 * worktree under <common git dir>/harness/worktrees/<session>. Returns 0,
 * or -errno with a message in err (not a repository, a bare one, a REF
 * naming no commit...: a usage error, exit 2). */
int hx_worktree_open(const struct hx_worktree_opts *o, struct hx_worktree **out,
		     char *err, size_t errlen);

/* The worktree root, and the directory the agent starts in (the
 * subdirectory of the checkout the user was in, mirrored). */
const char *hx_worktree_path(const struct hx_worktree *w);
const char *hx_worktree_cwd(const struct hx_worktree *w);

/* Sets $WORKTREE's value and the session's git-dir write rules (deny the
 * user's hooks, config and refs; allow what the agent's own git needs).
 * The strings belong to w. w NULL: nothing. */
void hx_worktree_policy_vars(const struct hx_worktree *w,
			     struct hx_policy_vars *v);

/* Takes checkpoint 0, writes worktree.json, hooks into the pipeline
 * (provenance) and the server (a closed connection = a process image
 * ended), and opens the control socket. Returns 0 or -errno. */
int hx_worktree_start(struct hx_worktree *w, struct hx_pipeline *pl,
		      struct hx_server *srv);

/* A request of the control socket's ("checkpoint") from inside the
 * supervisor (harness-mcp's checkpoint tool): the same reply, "ok N
 * created|unchanged COMMIT CHANGED" or "error WHY". */
void hx_worktree_control(struct hx_worktree *w, const char *request,
			 char *reply, size_t size);

/* The final checkpoint and the manifest (session dir + kept for the
 * note). */
void hx_worktree_finish(struct hx_worktree *w);
/* Adds "worktree": {...} to the session_end record. */
void hx_worktree_end_fields(const struct hx_worktree *w, struct json_t *rec);
/* Commits the result on the branch with the audit chain's last hash,
 * attaches the manifest note, removes the worktree unless kept. Returns
 * 0 or -errno (reported on stderr). */
int hx_worktree_result(struct hx_worktree *w, struct hx_audit *audit,
		       char *const *cmd, int ncmd, int code);

void hx_worktree_free(struct hx_worktree *w);

#endif
