/* The session_start and session_end records of a session; see
 * run_int.h. */
#define _GNU_SOURCE
#include "supervisor/run_int.h"
#include "supervisor/phases.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/policy.h"
#include "supervisor/anchor.h"
#include "supervisor/ask.h"
#include "supervisor/audit.h"
#include "supervisor/fmt.h"
#include "supervisor/git/worktree.h"
#include "supervisor/kernel/execgate.h"
#include "supervisor/kernel/ipool.h"
#include "supervisor/kernel/kaudit.h"
#include "supervisor/kernel/sandbox.h"
#include "supervisor/kernel/unotify.h"
#include "supervisor/record.h"
#include "supervisor/redact.h"
#include "supervisor/run.h"
#include "supervisor/say.h"
#include "supervisor/sha256.h"

int hx_run_log_open(struct run *r)
{
	const struct hx_redact_conf *rc = hx_policy_redact(r->policy);
	struct hx_audit_quota q;
	struct hx_redact *red;
	uint8_t key[HX_REDACT_KEY_LEN];
	int e;

	/* The anchor's room, taken now: an agent that fills the file
	 * system before it exits must not leave the session without one. */
	if ((e = hx_anchor_reserve(r->sess.dir))) {
		hx_say("session anchor in %s: %s", r->sess.dir, strerror(-e));
		return -1;
	}
	hx_policy_audit_quota(r->policy, &q);
	r->pl.quota_rate = q.rate;
	r->pl.quota_burst = q.burst;
	r->pl.quota_max_size = q.max_size;
	if (!rc->enabled)
		return 0;
	e = hx_redact_key_load(r->sess.state_dir, key);
	r->redact_key = e ? "session" : "user";
	if (e && !r->o->quiet)
		fprintf(stderr,
			"harness-exec: warning: %s/redact.key: %s; the "
			"redacted secrets' tags are of this session's key\n",
			r->sess.state_dir, strerror(-e));
	e = hx_redact_new(rc, key, &red);
	explicit_bzero(key, sizeof(key));
	if (e) {
		hx_say("audit.redact: %s", strerror(-e));
		return -1;
	}
	hx_record_redact(red);
	r->pl.redact = red;
	return 0;
}

/* Whether secrets are redacted, and whose key tags them. */
static json_t *redaction_json(const struct run *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "enabled", json_boolean(r->redact_key));
	if (r->redact_key)
		json_object_set_new(o, "key", json_string(r->redact_key));
	return o;
}

static void add_source(const char *name, const char *text, size_t len,
		       void *arg)
{
	char sha[65];
	json_t *o = json_object();

	hx_sha256_hex(text, len, sha);
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "sha256", json_string(sha));
	json_array_append_new(arg, o);
}

/* Every document the policy is made of, each with its digest. */
static json_t *policy_sources(const struct hx_policy *p)
{
	json_t *a = json_array();

	hx_policy_foreach_source(p, add_source, a);
	return a;
}

/* The profiles added to the policy, and how each was chosen. */
static json_t *profiles_json(const struct run *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->nprofiles; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(r->profiles[i]));
		json_object_set_new(o, "chosen",
				    json_string(r->profile_detected[i]
						    ? "detected"
						    : "option"));
		json_array_append_new(a, o);
	}
	return a;
}

/* {names[i]: v[i]} for n counters. */
static json_t *counts_json(const char *const *names, const uint64_t *v,
			   size_t n)
{
	json_t *o = json_object();

	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, names[i],
				    json_integer((json_int_t)v[i]));
	return o;
}

/* Whether Landlock's refusals are records this session, and why not. */
static json_t *landlock_audit_json(const struct run *r)
{
	json_t *la = json_object();

	json_object_set_new(la, "recorded", json_boolean(r->ka));
	if (!r->ka)
		json_object_set_new(la, "why", json_string(r->ka_why));
	if (hx_kaudit_enabled_by_us(r->ka))
		json_object_set_new(la, "enabled_by_harness", json_true());
	return la;
}

/* The session's OpenTelemetry trace (supervisor/export/otlp.h): drawn
 * at random, so that no process of the agent, which knows the session
 * id, can add spans to it at a collector. */
static void set_trace_id(json_t *rec)
{
	uint8_t trace[16];
	char hex[33];

	if (getrandom(trace, sizeof(trace), 0) == (ssize_t)sizeof(trace))
		json_object_set_new(
		    rec, "trace_id",
		    json_string(hx_fmt_hex(trace, sizeof(trace), hex)));
}

void hx_run_log_start(struct run *r)
{
	json_t *rec = hx_record_new(&r->pl, NULL, "session_start", NULL);
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (!rec)
		return;
	if (n > 0) {
		exe[n] = '\0';
		json_object_set_new(rec, "exe", json_string(exe));
	}
	json_object_set_new(rec, "category", json_string("process"));
	json_object_set_new(rec, "command",
			    hx_record_strings(rec, "command",
					      (const char *const *)r->o->cmd,
					      (size_t)r->o->ncmd));
	json_object_set_new(rec, "cwd", hx_record_text(rec, "cwd", r->cwd));
	/* $HOME as the policy had it: harness-policy test replays with it */
	if (getenv("HOME"))
		json_object_set_new(
		    rec, "home", hx_record_text(rec, "home", getenv("HOME")));
	json_object_set_new(rec, "policy",
			    json_string(hx_policy_source(r->policy)));
	json_object_set_new(rec, "policy_sha256", json_string(r->policy_sha));
	set_trace_id(rec);
	json_object_set_new(rec, "policy_sources", policy_sources(r->policy));
	json_object_set_new(rec, "redaction", redaction_json(r));
	json_object_set_new(rec, "profiles", profiles_json(r));
	json_object_set_new(
	    rec, "mode",
	    json_string(r->pl.mode == HX_MODE_AUDIT ? "audit" : "enforce"));
	json_object_set_new(rec, "version", json_string(HX_VERSION));
	json_object_set_new(rec, "uid", json_integer(getuid()));
	json_object_set_new(rec, "session_dir", json_string(r->sess.dir));
	json_object_set_new(rec, "tmpdir", json_string(r->sess.tmpdir));
	json_object_set_new(rec, "socket", json_string(r->sess.sock_path));
	if (r->metrics_addr[0] || r->o->metrics_file) {
		json_t *m = json_object();

		hx_record_set_str(m, "listen",
				  r->metrics_addr[0] ? r->metrics_addr : NULL);
		hx_record_set_str(m, "file", r->o->metrics_file);
		json_object_set_new(rec, "metrics", m);
	}
	json_object_set_new(rec, "shim", json_string(r->shim));
	json_object_set_new(rec, "kernel", hx_sandbox_kernel_json(r->sb));
	json_object_set_new(json_object_get(rec, "kernel"), "reaper_cgroup",
			    json_boolean(!r->reaper_err));
	json_object_set_new(json_object_get(rec, "kernel"), "landlock_audit",
			    landlock_audit_json(r));
	/* Who answers the agent's DNS: the supervisor, or the system's
	 * resolvers (lookups judged by the shim alone), and why. */
	json_object_set_new(
	    json_object_get(rec, "kernel"), "dns",
	    json_string(r->dnsns ? "supervisor"
			: r->dns_err == -ENOSYS
			    ? "system (no kernel layer)"
			    : "system (no network namespace of its own)"));
	json_object_set_new(json_object_get(rec, "kernel"), "tree_kill",
			    json_string(!r->reaper_err ? "cgroup"
					: r->exec_gate ? "exec-gate"
						       : "none"));
	hx_record_append(&r->pl, rec, NULL);
	json_decref(rec);
}

void hx_run_log_end(struct run *r, int code)
{
	json_t *rec, *o;
	struct hx_server_stats st = {0};

	if (r->srv)
		hx_server_say_refused(r->srv);
	if (!(rec = hx_record_new(&r->pl, NULL, "session_end", NULL)))
		return;
	if (r->srv)
		hx_server_stats(r->srv, &st);
	json_object_set_new(rec, "category", json_string("process"));
	json_object_set_new(rec, "exit_code", json_integer(code));
	hx_phase("end");
	json_object_set_new(rec, "timeline_ms", hx_phases_json());
	if (r->child_done && WIFSIGNALED(r->child_status))
		json_object_set_new(rec, "signal",
				    json_integer(WTERMSIG(r->child_status)));
	json_object_set_new(rec, "events",
			    json_integer((json_int_t)r->pl.events));
	/* harness-exec's own peak (the agent's tree not counted): that it
	 * does not grow with the events is measured by make bench. */
	{
		struct rusage ru;

		if (!getrusage(RUSAGE_SELF, &ru))
			json_object_set_new(rec, "supervisor_max_rss_kb",
					    json_integer(ru.ru_maxrss));
	}
	{
		static const char *const verdicts[] = {"allow", "ask", "deny"};
		static const char *const answers[] = {"allowed", "denied",
						      "timed_out", "withdrawn"};
		static const char *const questions[] = {"answered", "declined",
							"cancelled"};
		struct hx_ask_stats as;

		hx_ask_stats(r->pl.ask, &as);
		json_object_set_new(rec, "verdicts",
				    counts_json(verdicts, r->pl.verdicts, 3));
		json_object_set_new(
		    rec, "answers",
		    counts_json(answers,
				(const uint64_t[]){as.allowed, as.denied,
						   as.timed_out, as.gone},
				4));
		/* the agent's own questions (askuser.h), when it put any */
		if (as.answered + as.declined + as.cancelled)
			json_object_set_new(
			    rec, "questions",
			    counts_json(questions,
					(const uint64_t[]){as.answered,
							   as.declined,
							   as.cancelled},
					3));
	}
	json_object_set_new(rec, "connections",
			    json_integer((json_int_t)st.conns_accepted));
	json_object_set_new(rec, "protocol_errors",
			    json_integer((json_int_t)st.protocol_errors));
	if (st.conns_refused)
		json_object_set_new(rec, "connections_refused",
				    json_integer((json_int_t)st.conns_refused));
	if (r->un) {
		struct hx_unotify_stats us;
		json_t *k = json_object();

		hx_unotify_stats(r->un, &us);
		json_object_set_new(k, "notifications",
				    json_integer((json_int_t)us.notifications));
		json_object_set_new(k, "emulated",
				    json_integer((json_int_t)us.emulated));
		json_object_set_new(k, "denied",
				    json_integer((json_int_t)us.denied));
		json_object_set_new(k, "continued",
				    json_integer((json_int_t)us.continued));
		json_object_set_new(k, "errors",
				    json_integer((json_int_t)us.errors));
		if (r->pl.pool) /* ipool.h: readable files made in $HOME */
			json_object_set_new(
			    k, "pooled_files",
			    json_integer(
				(json_int_t)hx_ipool_used(r->pl.pool)));
		if (r->gate) {
			unsigned long long c, m;

			hx_execgate_stats(r->gate, &c, &m);
			json_object_set_new(k, "execs_checked",
					    json_integer((json_int_t)c));
			json_object_set_new(k, "exec_mismatches",
					    json_integer((json_int_t)m));
		}
		json_object_set_new(rec, "kernel_notify", k);
	}
	if (r->pl.audit_errors)
		json_object_set_new(
		    rec, "audit_errors",
		    json_integer((json_int_t)r->pl.audit_errors));
	if (r->pl.failed)
		json_object_set_new(rec, "audit_failed",
				    json_string(r->pl.failed_why));
	hx_audit_check_mode(r->audit); /* before the count */
	if (hx_audit_mode_restored(r->audit))
		json_object_set_new(
		    rec, "audit_log_mode_restored",
		    json_integer(hx_audit_mode_restored(r->audit)));
	if (r->ka)
		json_object_set_new(rec, "landlock_audit",
				    hx_kaudit_json(r->ka));
	if ((o = hx_sandbox_masks_json(r->sb)))
		json_object_set_new(rec, "mask_records", o);
	if (r->terminals)
		json_object_set_new(rec, "terminals",
				    json_string(r->terminals));
	if (r->sysv_ipc)
		json_object_set_new(rec, "sysv_ipc", json_string(r->sysv_ipc));
	if (r->shm_removed || r->shm_left)
		json_object_set_new(rec, "dev_shm",
				    json_pack("{s:I, s:b}", "removed",
					      (json_int_t)r->shm_removed,
					      "left", r->shm_left));
	hx_worktree_end_fields(r->wt, rec);
	hx_record_append(&r->pl, rec, NULL);
	json_decref(rec);
}

void hx_run_say_verbose(const struct run *r)
{
	fprintf(stderr,
		"harness: session %s\n"
		"harness: session dir %s\n"
		"harness: audit log %s\n"
		"harness: socket %s\n"
		"harness: mode %s, policy %s\n",
		r->sess.id, r->sess.dir, r->sess.audit_path, r->sess.sock_path,
		r->pl.mode == HX_MODE_AUDIT ? "audit" : "enforce",
		hx_policy_source(r->policy));
	hx_sandbox_describe(r->sb, stderr); /* what the kernel holds */
}

/* What a missing layer costs, said once at the start. */
void hx_run_warn_missing(struct run *r)
{
	const struct hx_options *o = r->o;

	if (r->exec_gate && r->hand[0] < 0) {
		r->exec_gate = false;
		if (!o->quiet)
			fprintf(stderr, "harness-exec: warning: the exec gate "
					"needs the user-notify layer: exec "
					"rules bind programs through the shim "
					"only\n");
	}
	/* Without a cgroup the gate's PTRACE_O_EXITKILL ends the tree if we
	 * die: each of its processes is traced from its fork. */
	if (r->reaper_err && !r->exec_gate && !o->quiet)
		fprintf(stderr,
			"harness-exec: warning: no cgroup v2 for the session "
			"(%s) and no exec gate: if harness-exec itself is "
			"killed, the agent's processes are not\n",
			strerror(-r->reaper_err));
}

void hx_run_anchor(struct run *r)
{
	int fd;

	/* what verify checks a log the agent may write against; synced
	 * with the log's last records */
	if (!r->audit || !hx_audit_last_seq(r->audit))
		return;
	fd = hx_anchor_write(r->sess.dir, hx_audit_last_seq(r->audit),
			     hx_audit_last_hash(r->audit));
	if (fd < 0)
		hx_say("session anchor in %s: not written", r->sess.dir);
	else
		hx_audit_sync_also(r->audit, fd);
}
