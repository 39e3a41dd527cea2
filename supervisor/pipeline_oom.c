/* The pipeline's judgement of writes to the OOM killer's weights
 * (pipeline_int.h, supervisor/kernel/oomshield.h). */
#include "supervisor/pipeline_int.h"

#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>

#include "common/wire.h"

static bool oom_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "oom_score_adj") || !strcmp(base, "oom_adj");
}

/* Whether path (in pid's view) is a process's oom_score_adj or
 * oom_adj: a file of that name beneath /proc, or on procfs mounted
 * elsewhere. The path is the resolved one: a link of the agent's, an
 * fd's magic link, a task's directory all end in that name. A name
 * first, so that a write elsewhere costs no system call. */
static bool oom_file(pid_t pid, const char *path)
{
	char view[PATH_MAX + 64];
	struct statfs sf;

	if (!oom_name(path))
		return false;
	if (!strncmp(path, "/proc/", 6))
		return true;
	hx_pl_in_view(pid, path, view, sizeof(view));
	return !statfs(view, &sf) && sf.f_type == PROC_SUPER_MAGIC;
}

/* Judge: no process of the session writes an oom_score_adj, its own or
 * another's (harness-exec's among them): the agent's are put first in
 * the OOM killer's line and would lower themselves, or raise
 * harness-exec's. harness:oom-score, in audit mode too. */
void hx_pl_judge_oom_score(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	const char *path = hx_pl_judged_path(&f->p1);

	if ((rq->op != HX_OP_WRITE && rq->op != HX_OP_TRUNCATE) || !path ||
	    !oom_file(f->peer->gone ? 0 : f->peer->pid, path))
		return;
	f->d.verdict = HX_VERDICT_DENY;
	f->d.rule = "harness:oom-score";
	f->d.pattern = NULL;
}
