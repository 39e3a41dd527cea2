/* A session's approvals (ask.h) as run.c sets them up and ends them:
 * the questions and grants, the ask socket another terminal answers
 * through, the questions on harness-exec's terminal (askterm.h). */
#define _GNU_SOURCE
#include "supervisor/run_int.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "supervisor/ask.h"
#include "supervisor/askterm.h"
#include "supervisor/control.h"
#include "supervisor/grants.h"
#include "supervisor/say.h"

void hx_run_ask_signals(void (*disposition)(int))
{
	signal(SIGTTIN, disposition);
	signal(SIGTTOU, disposition);
}

void hx_run_own_signals(struct run *r)
{
	/* A full file system or RLIMIT_FSIZE must fail a write of the log
	 * (cut off, reported), not kill harness-exec with its session. */
	signal(SIGXFSZ, SIG_IGN);
	/* Nor a notice on a stderr whose reader is gone (`2>&1 | head`,
	 * which the agent's own lines fill): harness-exec died of SIGPIPE
	 * at a refusal's notice, its session with no session_end and no
	 * anchor. The agent gets what it was started with. */
	r->sigpipe = signal(SIGPIPE, SIG_IGN);
	hx_run_ask_signals(SIG_IGN);
}

void hx_run_agent_signals(const struct run *r)
{
	signal(SIGXFSZ, SIG_DFL);
	signal(SIGPIPE, r->sigpipe == SIG_ERR ? SIG_DFL : r->sigpipe);
	hx_run_ask_signals(SIG_DFL);
}

static void on_ask_control(void *arg, pid_t pid, const char *req, char *reply,
			   size_t size)
{
	struct run *r = arg;

	if (!strcmp(req, "resume"))
		hx_run_resume(r, pid, reply, size); /* run_alerts.c */
	else
		hx_ask_control(r->pl.ask, req, pid, reply, size);
}

int hx_run_open_ask(struct run *r)
{
	char grants[PATH_MAX];
	unsigned timeout = r->o->ask_timeout >= 0
			       ? (unsigned)r->o->ask_timeout
			       : hx_policy_ask_timeout(r->policy);
	int e = hx_grants_path(grants, sizeof(grants));

	if ((e = hx_ask_new(&r->pl, e ? NULL : grants, timeout, &r->pl.ask))) {
		hx_say("approvals: %s", strerror(-e));
		return -1;
	}
	if ((e = hx_control_listen(r->srv, r->sess.ask_path, on_ask_control, r,
				   &r->askctl)) &&
	    !r->o->quiet)
		fprintf(stderr,
			"harness-exec: warning: ask socket %s: %s: questions "
			"are answered on the terminal only\n",
			r->sess.ask_path, strerror(-e));
	return 0;
}

void hx_run_ask_terminal(struct run *r)
{
	r->askterm =
	    hx_askterm_new(r->pl.ask, &r->pl, r->srv, &r->gate, r->o->quiet);
}

void hx_run_end_asks(struct run *r)
{
	hx_askterm_free(r->askterm);
	r->askterm = NULL;
	hx_ask_end(r->pl.ask);
}

void hx_run_close_ask(struct run *r)
{
	hx_askterm_free(r->askterm); /* a set-up that failed half way */
	r->askterm = NULL;
	hx_control_free(r->askctl);
	r->askctl = NULL;
	hx_ask_free(r->pl.ask);
	r->pl.ask = NULL;
}
