/* An exec's environment and its loader's options as part of its call
 * (pipeline_int.h). */
#define _GNU_SOURCE
#include "supervisor/pipeline_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "supervisor/loader.h"

/* A loader's own options after the environment's difference, one
 * entry each ("ld.so:--preload=LIB", "ld.so:--inhibit-cache"): "ld.so
 * --preload LIB git push" was decided, asked and granted as "git push"
 * with nothing of LIB shown, and LIB's code ran in the approved program
 * (twenty-second attack review). Shown, recorded and keyed as the
 * environment is; the exec gate holds them in the argv it holds. */
static int put_loader_opts(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	int r = 0;

	for (size_t i = 0; !r && i < rq->loader_nopts; i++) {
		const char *o = rq->loader_opts[i];
		bool arg =
		    hx_loader_opt_takes_arg(o) && i + 1 < rq->loader_nopts;
		char *e; /* whole: a cut entry would key two libraries alike */

		if (asprintf(&e, "ld.so:%s%s%s", o, arg ? "=" : "",
			     arg ? rq->loader_opts[i + 1] : "") < 0)
			return -ENOMEM;
		i += arg;
		r = hx_envdiff_append(&f->env, e);
		free(e);
	}
	return r;
}

/* Validate: an exec's environment as it differs from the session's
 * (envdiff.h), part of its call as its argv is, and a loader's own
 * options with it. */
void hx_pl_validate_env(struct flow *f)
{
	static const char *const git_config[] = {
	    "GIT_CONFIG", "HOME=", "XDG_CONFIG_HOME=", "GIT_COMMON_DIR=", NULL};
	const struct hx_request *rq = f->rq;

	f->env = (struct hx_envdiff){NULL, 0, 0};
	f->env_unread = rq->op == HX_OP_EXEC && rq->env_unread;
	f->ev.git_env_config = false;
	if (rq->op != HX_OP_EXEC)
		return;
	if (!rq->env_unread && rq->envp &&
	    hx_envdiff_make(f->pl->envbase, rq->envp, rq->envc, &f->env))
		f->env_unread = true; /* no memory: stands for nothing */
	if (put_loader_opts(f))
		f->env_unread = true;
	/* git's configuration by its environment is its -c (a forced push
	 * from GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.push);
	 * an environment unread may say so. HOME and XDG_CONFIG_HOME say
	 * where its global file is: one of the agent's, which may say
	 * anything (~/.gitconfig is not the agent's to write);
	 * GIT_COMMON_DIR where its repository's is (a directory that
	 * needs no HEAD, whose config no HEAD's writing checks). */
	f->ev.git_env_config =
	    f->env_unread || hx_envdiff_sets(&f->env, git_config);
}
