/* The pipeline's judgements of an agent's own files: its configuration
 * that names the programs it starts (agentconf.h: Claude Code's
 * ~/.claude.json, whatever rule allows its place), and the places a
 * rule keeps to the session's own files (own_files: true; owned.h). */
#define _GNU_SOURCE
#include "supervisor/pipeline_int.h"

#include <stdio.h>
#include <string.h>

#include "common/wire.h"
#include "supervisor/agentconf.h"
#include "supervisor/owned.h"

static bool is_conf(const struct flow *f, const char *path)
{
	return path && f->pl->agent_conf && !strcmp(path, f->pl->agent_conf);
}

/* A write of the file by any way but a checked rename: an open for
 * writing, a node, a truncation, a link either way (the new name would
 * write it), a symlink put there, an exchange, a tree moved over it;
 * its removal or a move away (Claude Code does neither; with it gone,
 * what the user restores is a backup the agent may write). Its mode,
 * times and attributes are not its content. */
static bool writes_conf(const struct flow *f, const char *p1, const char *p2,
			bool xchg)
{
	const struct hx_request *rq = f->rq;

	switch (rq->op) {
	case HX_OP_WRITE:
		return is_conf(f, p1) &&
		       (rq->call < HX_CALL_CHMOD || rq->call == HX_CALL_MKNOD ||
			rq->call == HX_CALL_BIND);
	case HX_OP_TRUNCATE:
	case HX_OP_SYMLINK:
	case HX_OP_UNLINK:
		return is_conf(f, p1);
	case HX_OP_LINK:
		return is_conf(f, p1) || is_conf(f, p2);
	case HX_OP_RENAME:
		return is_conf(f, p1) || (xchg && is_conf(f, p2)) ||
		       (f->ev.moves_tree && is_conf(f, p2));
	default:
		return false;
	}
}

void hx_pl_judge_agent_conf(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	const char *p1 = hx_pl_judged_path(&f->p1),
		   *p2 = hx_pl_judged_path(&f->p2);
	bool xchg = rq->has_flags && (rq->flags & RENAME_EXCHANGE), hit;

	f->agent_copy = false;
	if (!hx_pl_may_proceed(f) || !p1 || !f->pl->agent_conf)
		return;
	hit = writes_conf(f, p1, p2, xchg);
	if (!hit && rq->op == HX_OP_RENAME && !xchg && !f->ev.moves_tree &&
	    is_conf(f, p2)) {
		hit = hx_agentconf_changes_servers(p1, p2);
		f->agent_copy = !hit;
	}
	if (hit) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:agent-config";
		f->d.pattern = NULL;
	}
}

/* Whether path's rule, decided alone as a write, says own_files. */
static bool own_place(const struct flow *f, const char *path)
{
	struct hx_event ev = {.op = HX_OP_WRITE, .path = path};
	struct hx_decision d;

	if (!path)
		return false;
	hx_policy_decide(f->pl->policy, &ev, &d);
	return d.verdict == HX_VERDICT_ALLOW && d.own_files;
}

/* Whether path is in an own_files place and not the session's. *fresh:
 * in such a place, nothing there. */
static bool foreign(const struct flow *f, const char *path, bool *fresh)
{
	*fresh = false;
	return own_place(f, path) &&
	       hx_owned_foreign_file(f->pl->owned, path, fresh);
}

void hx_pl_judge_own_files(struct flow *f)
{
	enum hx_op op = f->rq->op;
	bool fresh, fresh2 = false, hit;

	if (!hx_pl_may_proceed(f) || !f->pl->owned ||
	    !hx_policy_owns_files(f->pl->policy) ||
	    (!hx_pl_writes_file(op) && op != HX_OP_RMDIR))
		return;
	/* A rename's source and destination; a link's existing file,
	 * which the new name would let be written. */
	hit = foreign(f, hx_pl_judged_path(&f->p1), &fresh) ||
	      ((op == HX_OP_RENAME || op == HX_OP_LINK) &&
	       foreign(f, hx_pl_judged_path(&f->p2), &fresh2));
	if (hit) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:own-files";
		f->d.pattern = NULL;
	} else if (fresh && op == HX_OP_WRITE) {
		f->fresh = true; /* what the open makes is the session's */
	}
}
