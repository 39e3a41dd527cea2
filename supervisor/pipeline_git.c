/* The pipeline's judgements of git's files (pipeline_int.h): its
 * objects that predate the session, the stores kept as they were, and
 * the repositories the agent makes in the project. */
#define _GNU_SOURCE
#include "supervisor/pipeline_int.h"

#include <stdio.h>
#include <string.h>

#include "common/wire.h"
#include "supervisor/existing.h"
#include "supervisor/gitconf.h"
#include "supervisor/gitobj.h"

/* Judge: a git object that predates the session is never written,
 * moved or removed, whatever rule allows its place (gitobj.h): the
 * agent's commits make new ones. */
void hx_pl_judge_git_objects(struct flow *f)
{
	enum hx_op op = f->rq->op;
	bool hit;

	/* A kept store's files that predate it likewise (existing.h). */
	if (f->d.verdict == HX_VERDICT_ALLOW &&
	    hx_existing_refuses(f->pl->policy, op, hx_pl_judged_path(&f->p1),
				hx_pl_judged_path(&f->p2), &f->pl->started)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:keep-existing";
		f->d.pattern = NULL;
	}
	if (!hx_pl_writes_file(op) || f->d.verdict != HX_VERDICT_ALLOW)
		return;
	hit =
	    (hx_pl_judged_path(&f->p1) &&
	     hx_gitobj_predates(hx_pl_judged_path(&f->p1), &f->pl->started)) ||
	    /* a rename's destination; a link's existing file, which
	     * the new name would let be written */
	    ((op == HX_OP_RENAME || op == HX_OP_LINK) &&
	     hx_pl_judged_path(&f->p2) &&
	     hx_gitobj_predates(hx_pl_judged_path(&f->p2), &f->pl->started));
	if (hit) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:git-objects";
		f->d.pattern = NULL;
	}
}

static bool in_roots(const struct hx_pipeline *pl, const char *path)
{
	for (size_t i = 0; i < 2; i++) {
		const char *r = pl->git_roots[i];
		size_t n = r ? strlen(r) : 0;

		if (n && !strncmp(path, r, n) &&
		    (path[n] == '/' || !path[n] || !strcmp(r, "/")))
			return true;
	}
	return false;
}

static bool git_code(const struct hx_pipeline *pl, const char *path)
{
	return path &&
	       hx_gitconf_place(path, in_roots(pl, path)) != HX_GITCONF_NONE;
}

/* Judge: a repository the agent makes (git init sub, a gitlink to it in
 * the project's index) runs its configuration and hooks on the user's
 * next git status in the project (gitconf.h): its config is written by
 * a rename only and the bytes are checked, hooks, gitfiles, commondir
 * and bare layouts never, nor moved in under another name. */
void hx_pl_judge_nested_git(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	const char *p1 = hx_pl_judged_path(&f->p1),
		   *p2 = hx_pl_judged_path(&f->p2);
	bool hit = false;

	f->git_copy = false;
	if (f->d.verdict != HX_VERDICT_ALLOW || !p1)
		return;
	if (rq->op == HX_OP_WRITE &&
	    (rq->call < HX_CALL_CHMOD || rq->call == HX_CALL_MKNOD))
		hit = git_code(f->pl, p1); /* an open, a node: not a rename */
	else if (rq->op == HX_OP_SYMLINK)
		hit = git_code(f->pl, p1);
	else if (rq->op == HX_OP_LINK) /* the new name writes the old */
		hit = git_code(f->pl, p1) || git_code(f->pl, p2);
	else if (rq->op == HX_OP_RENAME && p2 && f->ev.moves_tree)
		hit = hx_gitconf_in_git(p1) || hx_gitconf_in_git(p2) ||
		      (in_roots(f->pl, p2) && !in_roots(f->pl, p1) &&
		       hx_gitconf_tree_has_bare(p1));
	else if (rq->op == HX_OP_RENAME && p2 && rq->has_flags &&
		 (rq->flags & RENAME_EXCHANGE))
		hit = git_code(f->pl, p1) || git_code(f->pl, p2);
	else if (rq->op == HX_OP_RENAME && p2)
		switch (hx_gitconf_place(p2, in_roots(f->pl, p2))) {
		case HX_GITCONF_CODE:
			hit = true;
			break;
		case HX_GITCONF_CONFIG:
			hit = hx_gitconf_file_names_code(p1);
			f->git_copy = !hit;
			break;
		default:
			break;
		}
	if (hit) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:git-config";
		f->d.pattern = NULL;
	}
}
