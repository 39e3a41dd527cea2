/* What harness-exec asks of the kernel for the session before the fork:
 * Landlock's refusals as audit records, the user namespace probe, the
 * process count. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "supervisor/kernel/kaudit.h"
#include "supervisor/kernel/rlimits.h"
#include "supervisor/kernel/sandbox.h"
#include "supervisor/options.h"
#include "supervisor/reaper.h"
#include "supervisor/run_int.h"

/* The slow asks, on a thread while the main one parses the policy: as
 * root, kernel audit's AUDIT_GET is answered by a kernel thread (0.3 to
 * 4 ms); as a user, the namespace probe copies the mount table. */
struct hx_run_early {
	pthread_t th;
	bool open_ka, may_enable, probe;
	int ka_err;
	struct hx_kaudit *ka;
	char why[160];
};

static void *early(void *arg)
{
	struct hx_run_early *e = arg;

	if (e->probe)
		hx_sandbox_userns_probe(); /* its answer is kept */
	if (e->open_ka)
		e->ka_err = hx_kaudit_open(e->may_enable, &e->ka, e->why,
					   sizeof(e->why));
	return NULL;
}

void hx_run_kernel_begin(struct run *r)
{
	struct hx_run_early *e = calloc(1, sizeof(*e));

	if (!e)
		return; /* asked when needed instead */
	/* Before the mode is known: a policy in audit mode puts it back. */
	e->open_ka = r->o->mode != HX_MODE_AUDIT;
	e->may_enable = !r->o->no_kernel_audit;
	e->probe = geteuid() != 0;
	if (pthread_create(&e->th, NULL, early, e)) {
		free(e);
		return;
	}
	r->early = e;
}

void hx_run_kernel_join(struct run *r)
{
	struct hx_run_early *e = r->early;

	if (!e)
		return;
	pthread_join(e->th, NULL);
	r->early = NULL;
	r->ka = e->ka;
	r->ka_asked = e->open_ka;
	r->ka_err = e->ka_err;
	snprintf(r->ka_why, sizeof(r->ka_why), "%s", e->why);
	free(e);
}

/* Landlock's refusals of programs that skip the shim, as records: root
 * only (CAP_AUDIT_READ), and Landlock ABI 7. */
void hx_run_landlock_audit(struct run *r)
{
	const struct hx_options *o = r->o;

	hx_run_kernel_join(r);
	if (r->pl.mode != HX_MODE_ENFORCE) {
		hx_kaudit_free(r->ka); /* asked before the mode was known */
		r->ka = NULL;
		snprintf(r->ka_why, sizeof(r->ka_why),
			 "audit mode: no Landlock");
		return;
	}
	if (!r->ka_asked)
		r->ka_err = hx_kaudit_open(!o->no_kernel_audit, &r->ka,
					   r->ka_why, sizeof(r->ka_why));
	if (!r->ka_err)
		hx_sandbox_set_landlock_log(r->sb, getpid());
	else if (o->verbose)
		fprintf(stderr,
			"harness-exec: Landlock refusals of programs that skip "
			"the shim are not recorded (%s); --trace-reads records "
			"every open\n",
			r->ka_why);
}

/* Who holds the process count: the cgroup where there is one. */
void hx_run_limit_processes(struct run *r)
{
	struct hx_limits *lim = hx_sandbox_limits(r->sb);
	bool cg = false;

	if (lim->set & (1u << HX_LIMIT_PROCESSES))
		cg = !hx_reaper_pids_max(
		    &r->reaper, r->sess.id,
		    (unsigned long)lim->value[HX_LIMIT_PROCESSES]);
	/* An ordinary user's agent gets a user namespace of its own in
	 * enforce mode (masks.h), where its tasks are counted apart: when
	 * one can be made, so that session_start says which it is. */
	hx_limits_processes(lim, cg,
			    r->pl.mode == HX_MODE_ENFORCE && getuid() != 0 &&
				!hx_sandbox_userns_probe());
	/* Before the loop counts its connections' fds (server.h). */
	hx_limits_raise_nofile(lim);
}
