/* The pipeline's judgement of an agent's own configuration that names
 * the programs it starts (agentconf.h): Claude Code's ~/.claude.json,
 * whatever rule allows its place (the claude profile does). */
#define _GNU_SOURCE
#include "supervisor/pipeline_int.h"

#include <stdio.h>
#include <string.h>

#include "common/wire.h"
#include "supervisor/agentconf.h"

static bool is_conf(const struct flow *f, const char *path)
{
	return path && f->pl->agent_conf && !strcmp(path, f->pl->agent_conf);
}

/* A write of the file by any way but a checked rename: an open for
 * writing, a node, a truncation, a link either way (the new name would
 * write it), a symlink put there, an exchange, a tree moved over it.
 * Its mode, times and attributes are not its content. */
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
		return is_conf(f, p1);
	case HX_OP_LINK:
		return is_conf(f, p1) || is_conf(f, p2);
	case HX_OP_RENAME:
		return (xchg && (is_conf(f, p1) || is_conf(f, p2))) ||
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
	if (f->d.verdict != HX_VERDICT_ALLOW || !p1 || !f->pl->agent_conf)
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
