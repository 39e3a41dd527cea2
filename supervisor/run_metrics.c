/* A session's metrics (metrics.h) as run.c sets them up and ends them:
 * the places they go kept from the agent, the endpoint bound before
 * session_start names it, served from the fork on, stopped after
 * session_end, so the last scrape and the file count all of it. */
#define _GNU_SOURCE
#include "supervisor/run_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/kernel/execgate.h"
#include "supervisor/kernel/unotify.h"
#include "supervisor/metrics.h"
#include "supervisor/metrics_serve.h"
#include "supervisor/say.h"

int hx_run_protect_metrics(struct run *r)
{
	const char *a = r->o->metrics, *f = r->o->metrics_file;
	char tmp[PATH_MAX];
	int e = 0;

	/* The file a scraper trusts, its temporary name and a Unix
	 * endpoint are the harness's: an agent that replaced them would
	 * feed its own figures to the monitoring. */
	if (f && !(e = hx_session_protect(&r->sess, f))) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", f);
		e = hx_session_protect(&r->sess, tmp);
	}
	if (!e && a && !strncmp(a, "unix:", 5))
		a += 5;
	if (!e && a && a[0] == '/')
		e = hx_session_protect(&r->sess, a);
	return e;
}

int hx_run_register(struct run *r)
{
	int e;

	/* the others' files by their names beneath a second mount too (set
	 * before live/ changes: a read of it is kept until it changes);
	 * the account's own home holds other files, no alias of these */
	r->pl.alias_from = r->aliases.fromp;
	r->pl.alias_to = r->aliases.top;
	r->pl.nalias = r->aliases.nmounts;
	if ((e = hx_session_register(&r->sess)))
		hx_say("session %s: cannot register its files: %s", r->sess.id,
		       strerror(-e));
	return e ? -1 : 0;
}

int hx_run_open_metrics(struct run *r)
{
	const struct hx_options *o = r->o;
	char err[256];
	int e;

	r->metrics_fd = -1;
	if (!o->metrics && !o->metrics_file)
		return 0;
	e = hx_metrics_new(r->sess.id,
			   r->pl.mode == HX_MODE_AUDIT ? "audit" : "enforce",
			   r->policy_sha, &r->pl.metrics);
	if (e) {
		hx_say("metrics: %s", strerror(-e));
		return -1;
	}
	hx_metrics_set_audit(r->pl.metrics, r->audit);
	if (o->metrics &&
	    hx_metrics_listen(o->metrics, &r->metrics_fd, r->metrics_addr,
			      sizeof(r->metrics_addr), err, sizeof(err))) {
		hx_say("%s", err);
		return -1;
	}
	/* A TCP endpoint: no connect of the agent's reaches it. A Unix
	 * one is protected by its path (hx_run_protect_metrics), and the
	 * way to it too: no directory or symlink on that path moved. */
	if (r->metrics_fd >= 0 &&
	    (e = strncmp(r->metrics_addr, "unix:", 5)
		     ? hx_pipeline_protect_endpoint(&r->pl, r->metrics_fd)
		     : hx_pipeline_protect_way(&r->pl, r->metrics_addr + 5))) {
		hx_say("metrics: %s", strerror(-e));
		return -1;
	}
	if (o->metrics && !o->quiet)
		fprintf(stderr, "harness-exec: metrics at %s%s/metrics\n",
			strncmp(r->metrics_addr, "unix:", 5) ? "http://" : "",
			r->metrics_addr);
	return 0;
}

static void source(void *arg, struct hx_metrics_source *out)
{
	struct run *r = arg;
	struct hx_server_stats st = {0};

	if (r->un) {
		struct hx_unotify_stats us;

		hx_unotify_stats(r->un, &us);
		out->notify = true;
		out->notified = us.notifications;
		out->emulated = us.emulated;
		out->denied = us.denied;
		out->continued = us.continued;
		out->errors = us.errors;
	}
	if (r->gate)
		hx_execgate_stats(r->gate, &out->gate_checked,
				  &out->gate_mismatches);
	hx_server_stats(r->srv, &st);
	out->shim_connections = st.conns_accepted;
	out->shim_protocol_errors = st.protocol_errors;
}

void hx_run_serve_metrics(struct run *r)
{
	const struct hx_options *o = r->o;
	const char *unix_path = NULL;
	int e;

	if (!r->pl.metrics)
		return;
	hx_metrics_set_tree(r->pl.metrics, r->child);
	hx_metrics_set_source(r->pl.metrics, source, r);
	if (!strncmp(r->metrics_addr, "unix:", 5))
		unix_path = r->metrics_addr + 5;
	e = hx_metrics_serve_start(r->pl.metrics, r->metrics_fd, unix_path,
				   o->metrics_file, &r->metrics_srv);
	r->metrics_fd = -1; /* taken */
	if (e && !o->quiet)
		fprintf(stderr,
			"harness-exec: warning: metrics cannot be served: %s\n",
			strerror(-e));
}

void hx_run_stop_metrics(struct run *r)
{
	bool served = r->metrics_srv != NULL;

	if (!r->pl.metrics)
		return;
	hx_metrics_set_ended(r->pl.metrics);
	/* What it reads is stopped and freed next. */
	hx_metrics_set_source(r->pl.metrics, NULL, NULL);
	hx_metrics_serve_stop(r->metrics_srv);
	r->metrics_srv = NULL;
	if (r->metrics_fd >= 0) /* bound, never served: a failed start */
		close(r->metrics_fd);
	r->metrics_fd = -1;
	if (!strncmp(r->metrics_addr, "unix:", 5) && !served)
		unlink(r->metrics_addr + 5);
}
