/* harness-mcp's calls: each one decided, queued, handed to the worker,
 * linked to the records of the processes doing it, and recorded when it
 * ends; see front.h. */
#define _GNU_SOURCE
#include "supervisor/mcp/front_int.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/names.h"
#include "supervisor/ask.h"
#include "supervisor/askuser.h"
#include "supervisor/kernel/execgate.h"
#include "supervisor/mcp/gittools.h"
#include "supervisor/mcp/result.h"
#include "supervisor/path_resolve.h"
#include "supervisor/pipeline.h"
#include "supervisor/proc.h"
#include "supervisor/record.h"
#include "supervisor/say.h"
#include "supervisor/git/worktree.h"

#define ANCESTORS_MAX 32
#define KILL_MAX      4096

/* ---- quotas ---- */

static struct hx_quota *quota_of(struct hx_mcp *m, const struct hx_tool *t)
{
	size_t n;
	const struct hx_tool *all = hx_tools_all(&n);
	struct hx_quota *q = &m->q[t - all];

	if (!q->per_minute) {
		q->per_minute =
		    m->o.per_minute ? m->o.per_minute : t->per_minute;
		q->concurrent =
		    m->o.concurrent ? m->o.concurrent : t->concurrent;
	}
	return q;
}

/* NULL, or what the call would exceed. A ring of the last per_minute
 * calls' times: the oldest within a minute means one call too many. */
static const char *over_quota(struct hx_mcp *m, const struct hx_tool *t)
{
	struct hx_quota *q = quota_of(m, t);
	uint64_t now = hx_mono_ms();

	if (q->running >= q->concurrent)
		return "calls at once";
	if (!q->stamps && !(q->stamps = calloc(q->per_minute, 8)))
		return "calls a minute";
	if (q->n == q->per_minute && now - q->stamps[q->at] < 60000)
		return "calls a minute";
	q->stamps[q->at] = now;
	q->at = (q->at + 1) % q->per_minute;
	if (q->n < q->per_minute)
		q->n++;
	return NULL;
}

/* ---- the table ---- */

static struct hx_call *new_call(struct hx_mcp *m)
{
	for (size_t i = 0; i < HX_MCP_CALLS; i++)
		if (m->calls[i].state == HX_CALL_FREE) {
			struct hx_call *c = &m->calls[i];

			memset(c, 0, sizeof(*c));
			c->state = HX_CALL_NEW;
			c->n = ++m->next;
			snprintf(c->id, sizeof(c->id), "mcp-%lu", c->n);
			clock_gettime(CLOCK_MONOTONIC, &c->t0);
			return c;
		}
	return NULL;
}

static int index_of(struct hx_mcp *m, struct hx_call *c)
{
	return (int)(c - m->calls);
}

static struct hx_call *by_n(struct hx_mcp *m, unsigned long n)
{
	for (size_t i = 0; i < HX_MCP_CALLS; i++)
		if (m->calls[i].state != HX_CALL_FREE && m->calls[i].n == n)
			return &m->calls[i];
	return NULL;
}

static void release(struct hx_mcp *m, struct hx_call *c)
{
	/* Never left waiting: its answer would come to a freed call. */
	if (c->ask)
		hx_ask_withdraw(m->pl->ask, c->ask, "gone");
	if (c->tool) /* counted since it was taken */
		quota_of(m, c->tool)->running--;
	if (m->file_busy == index_of(m, c))
		m->file_busy = -1;
	if (m->run_starting == index_of(m, c))
		m->run_starting = -1;
	json_decref(c->rpc_id);
	json_decref(c->args);
	json_decref(c->wargs);
	json_decref(c->token);
	json_decref(c->refusals);
	if (c->pid > 0)
		close(c->pidfd);
	memset(c, 0, sizeof(*c));
}

/* ---- the worker ---- */

static void to_worker(struct hx_mcp *m, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	int e = s ? hx_lines_write(&m->wk, s, strlen(s)) : -ENOMEM;

	free(s);
	json_decref(msg);
	if (e) { /* a worker that reads nothing is lost: its calls end */
		hx_say("mcp: the worker cannot be written to: %s",
		       strerror(-e));
		hx_mcp_worker_gone(m);
	} else if (hx_lines_pending(&m->wk) && !m->wk_out_watched) {
		hx_server_del(m->srv, &m->wk_src);
		if (!hx_server_add(m->srv, &m->wk_src, EPOLLIN | EPOLLOUT))
			m->wk_out_watched = true;
	}
}

static void send_call(struct hx_mcp *m, struct hx_call *c)
{
	c->state = HX_CALL_SENT;
	to_worker(m, json_pack("{s:I,s:s,s:O}", "id", (json_int_t)c->n, "tool",
			       c->tool->where == HX_TOOL_GIT ? "code_run"
							     : c->tool->name,
			       "args", c->wargs));
}

/* The lane a call waits in: the worker's file calls and checkpoints
 * one at a time, code_run trees side by side. */
static enum hx_tool_where lane(const struct hx_tool *t)
{
	if (t->where == HX_TOOL_CKPT)
		return HX_TOOL_FILE;
	return t->where == HX_TOOL_GIT ? HX_TOOL_RUN : t->where;
}

/* The oldest queued call of lane where. */
static struct hx_call *oldest(struct hx_mcp *m, enum hx_tool_where where)
{
	struct hx_call *best = NULL;

	for (size_t i = 0; i < HX_MCP_CALLS; i++) {
		struct hx_call *c = &m->calls[i];

		if (c->state == HX_CALL_QUEUED && lane(c->tool) == where &&
		    (!best || c->n < best->n))
			best = c;
	}
	return best;
}

static void checkpoint(struct hx_mcp *m, struct hx_call *c);

/* One file call at the worker at a time, and one code_run between its
 * sending and its start: then the worker's own records belong to the
 * file call, and a child of the worker not yet announced to the
 * code_run being started (hx_mcp_call_of). */
static void pump(struct hx_mcp *m)
{
	struct hx_call *c;

	if (m->worker_gone || m->told_exit || !m->worker_ready)
		return;
	while (m->file_busy < 0 && (c = oldest(m, HX_TOOL_FILE))) {
		if (c->tool->where == HX_TOOL_CKPT) {
			checkpoint(m, c); /* finished: the lane is free */
			continue;
		}
		m->file_busy = index_of(m, c);
		send_call(m, c);
	}
	if (m->run_starting < 0 && (c = oldest(m, HX_TOOL_RUN))) {
		m->run_starting = index_of(m, c);
		send_call(m, c);
	}
}

/* ---- linking and refusals ---- */

static struct hx_execgate *gate_of(const struct hx_mcp *m)
{
	return m->o.gate ? *m->o.gate : NULL;
}

/* Without the exec gate: up the parent links from pid (whose parent is
 * ppid), which a process cannot forge; an orphan is harness-exec's (the
 * subreaper), and its walk ends there. A call's first process counts
 * while its number is its own (pinned): reaped while its output is
 * drained, the number may be any process's of the session. */
static struct hx_call *walk(struct hx_mcp *m, pid_t pid, pid_t ppid)
{
	pid_t p = pid;

	for (int d = 0; p > 1 && d < ANCESTORS_MAX; d++) {
		for (size_t i = 0; i < HX_MCP_CALLS; i++)
			if (m->calls[i].state == HX_CALL_RUNNING &&
			    m->calls[i].pid == p &&
			    hx_proc_pinned(m->calls[i].pidfd,
					   &m->calls[i].proc))
				return &m->calls[i];
		if (p == m->o.worker)
			return m->run_starting >= 0 ? &m->calls[m->run_starting]
						    : NULL;
		p = d ? hx_proc_ppid(p) : ppid;
	}
	return NULL;
}

static bool runs(const struct hx_mcp *m)
{
	for (size_t i = 0; i < HX_MCP_CALLS; i++)
		if (m->calls[i].state == HX_CALL_RUNNING)
			return true;
	return m->run_starting >= 0;
}

/* By the exec gate's birth lineage: the code_run whose first process
 * pid's branch is. A process that setsid'd, double-forked or was
 * orphaned is still its call's; a branch no call has is the code_run
 * being started (one at a time, pump) or one that ended. */
static const char *of_branch(struct hx_mcp *m, pid_t b)
{
	for (size_t i = 0; i < HX_MCP_CALLS; i++)
		if (m->calls[i].state == HX_CALL_RUNNING &&
		    m->calls[i].pid == b)
			return m->calls[i].id;
	for (size_t i = 0; i < HX_MCP_ENDED; i++)
		if (m->ended[i].pid == b)
			return m->ended[i].id;
	return m->run_starting >= 0 ? m->calls[m->run_starting].id : NULL;
}

/* A process gone (its process_exit) has left the lineage: the call its
 * last record was linked to. */
static const char *by_branch(struct hx_mcp *m, pid_t pid)
{
	pid_t b = hx_execgate_branch(gate_of(m), pid);
	struct hx_mcp_link *l = &m->linked[(size_t)pid % HX_MCP_LINKED];
	const char *id;

	if (!b)
		return l->pid == pid && l->id[0] ? l->id : NULL;
	if ((id = of_branch(m, b))) {
		*l = (struct hx_mcp_link){.pid = pid};
		snprintf(l->id, sizeof(l->id), "%s", id);
	}
	return id;
}

const char *hx_mcp_call_of(void *arg, pid_t pid)
{
	struct hx_mcp *m = arg;
	struct hx_mcp_link *l = &m->linked[(size_t)pid % HX_MCP_LINKED];
	struct hx_procstat st;
	struct hx_call *c = NULL;
	bool alive;

	if (pid == m->o.worker)
		return m->file_busy >= 0 ? m->calls[m->file_busy].id : NULL;
	if (gate_of(m))
		return by_branch(m, pid);
	alive = !hx_proc_stat(pid, &st);
	if (alive && runs(m))
		c = walk(m, pid, st.ppid);
	if (c) {
		*l = (struct hx_mcp_link){.pid = pid, .start = st.starttime};
		snprintf(l->id, sizeof(l->id), "%s", c->id);
		return l->id;
	}
	/* Once linked, a process stays its call's: after a double fork
	 * took it out of the tree, after the call returned (a job left in
	 * the background), and at its process_exit (no /proc to walk). */
	if (l->pid == pid && (!alive || l->start == st.starttime))
		return l->id;
	return NULL;
}

static struct hx_call *by_id(struct hx_mcp *m, const char *id)
{
	for (size_t i = 0; id && i < HX_MCP_CALLS; i++)
		if (m->calls[i].state != HX_CALL_FREE &&
		    !strcmp(m->calls[i].id, id))
			return &m->calls[i];
	return NULL;
}

void hx_mcp_observe(void *arg, json_t *rec, uint64_t seq)
{
	struct hx_mcp *m = arg;
	struct hx_call *c = by_id(m, hx_record_field(rec, "call_id"));
	const char *v = hx_record_field(rec, "verdict");

	/* The agent's own question (ask_user) and its answer are no
	 * refusal of its work. */
	if (c && strcmp(hx_record_field(rec, "event"), "tool_call") &&
	    strcmp(hx_record_field(rec, "from"), "agent") &&
	    (!strcmp(v, "deny") || !strcmp(v, "ask"))) {
		if (!c->refusals)
			c->refusals = json_array();
		if (json_array_size(c->refusals) < HX_MCP_REFUSALS)
			json_array_append_new(
			    c->refusals,
			    hx_mcp_refusal_of(rec, (json_int_t)seq));
	}
	if (m->prev_observe)
		m->prev_observe(m->prev_arg, rec, seq);
}

/* ---- the end of a call ---- */

static void forget_ended(struct hx_mcp *m, pid_t pid)
{
	for (size_t i = 0; i < HX_MCP_ENDED; i++)
		if (m->ended[i].pid == pid)
			m->ended[i].pid = 0;
}

/* A code_run's end is its work's: what its first process left running
 * (a background job, a double-forked daemon, an orphan) is killed
 * before its record, which counts them. Returns that count. */
static size_t end_run(struct hx_mcp *m, struct hx_call *c)
{
	size_t n;

	if (lane(c->tool) != HX_TOOL_RUN || c->pid <= 0 || !gate_of(m))
		return 0;
	n = hx_execgate_kill_branch(gate_of(m), c->pid, SIGKILL);
	m->ended[m->ended_at].pid = c->pid;
	snprintf(m->ended[m->ended_at].id, sizeof(m->ended[0].id), "%s", c->id);
	m->ended_at = (m->ended_at + 1) % HX_MCP_ENDED;
	return n;
}

static void finish(struct hx_mcp *m, struct hx_call *c, json_t *result,
		   json_t *error, const char *outcome)
{
	struct hx_mcp_end e = {
	    .tool = c->tool,
	    .call_id = c->id,
	    .args = c->args,
	    .d = &c->d,
	    .result = result,
	    .error = error,
	    .outcome = outcome,
	    .refusals = c->refusals,
	    .t0 = &c->t0,
	    .mode = m->pl->mode,
	    .redact = m->pl->redact,
	    .max_output = m->o.max_output,
	};
	json_t *res = NULL;

	/* Killed by us: whether the worker saw its child die before it
	 * read the cancel or after, the call was cancelled. */
	if (!outcome && c->killed && result)
		e.outcome = "cancelled";
	e.leftovers = end_run(m, c);
	hx_mcp_record_call(m->pl, &e);
	if (!c->cancelled && c->rpc_id && (res = hx_mcp_result(&e)))
		hx_mcp_reply(m, c->rpc_id, res);
	release(m, c);
	pump(m);
}

/* finish() with an error of our own (errno's name and a message). */
static void fail(struct hx_mcp *m, struct hx_call *c, const char *err,
		 const char *msg, const char *outcome)
{
	json_t *e = json_pack("{s:s,s:s}", "errno", err, "message", msg);

	finish(m, c, NULL, e, outcome);
	json_decref(e);
}

static void kill_run(struct hx_mcp *m, struct hx_call *c)
{
	static struct hx_proc d[KILL_MAX];
	size_t n;

	/* Its branch: what setsid'd and was orphaned too. A file call has
	 * nothing to kill: what it did stands. */
	if (c->pid > 0) {
		c->killed = true;
		hx_execgate_kill_branch(gate_of(m), c->pid, SIGKILL);
	}
	if (c->pid <= 0)
		return;
	/* Its descendants by parent links (setsid or a new group does not
	 * take one out), then its group, then itself; each through the
	 * pidfd taken when it started: once the worker reaped it, its
	 * number may be a process's outside the session. */
	for (int round = 0; round < 3 && hx_proc_pinned(c->pidfd, &c->proc);
	     round++) {
		n = hx_proc_descendants(c->pid, d, KILL_MAX);
		for (size_t i = 0; i < n; i++)
			hx_proc_signal(&d[i], SIGKILL);
		if (!n)
			break;
	}
	hx_proc_signal_group(c->pidfd, &c->proc, SIGKILL);
	syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
}

/* ---- checkpoint: the worktree's, by the supervisor ---- */

static void checkpoint(struct hx_mcp *m, struct hx_call *c)
{
	char reply[512], commit[64] = "", how[16] = "";
	unsigned n;
	size_t changed;
	json_t *r;

	c->state = HX_CALL_SENT;
	hx_worktree_control(m->o.wt, "checkpoint", reply, sizeof(reply));
	if (sscanf(reply, "ok %u %15s %63s %zu", &n, how, commit, &changed) !=
	    4) {
		fail(m, c, "EIO", reply, NULL);
		return;
	}
	r = json_pack("{s:i,s:b,s:s,s:I}", "checkpoint", (int)n, "created",
		      !strcmp(how, "created"), "commit", commit, "changed",
		      (json_int_t)changed);
	finish(m, c, r, NULL, NULL);
	json_decref(r);
}

/* ---- ask_user: the client's elicitation, or the session's approvals ---- */

static void question_id(const struct hx_call *c, char *buf, size_t size)
{
	snprintf(buf, size, "hx-ask-%lu", c->n);
}

/* The approvals' word on call c's question (its asker, arg), as
 * ask_user's result, the elicitation's shape: accept with the answer,
 * decline, or cancel with the reason (timeout, session end, withdrawn). */
static void answered(void *arg, const struct hx_ask_result *r)
{
	struct hx_call *c = arg;
	const char *reason = "withdrawn", *outcome = "ended";
	json_t *res;

	c->ask = 0; /* it waits no more */
	if (r->verdict == HX_VERDICT_ALLOW && r->answer) {
		res = json_pack("{s:s,s:s}", "action", "accept", "answer",
				r->answer);
		outcome = NULL;
	} else if (!strcmp(r->why, "answer")) {
		res = json_pack("{s:s,s:n}", "action", "decline", "answer");
		outcome = NULL;
	} else {
		if (!strcmp(r->why, "timeout"))
			reason = "timeout", outcome = "timed_out";
		else if (!strcmp(r->why, "end"))
			reason = "session end";
		res = json_pack("{s:s,s:n,s:s}", "action", "cancel", "answer",
				"reason", reason);
	}
	finish(c->m, c, res, NULL, outcome);
	json_decref(res);
}

/* The session ends (by "end") or the client is gone (by "gone") while
 * call c's question waits in the approvals: withdrawn, recorded so, and
 * the call answered cancel when its client is there to read it. */
static void ask_ended(struct hx_mcp *m, struct hx_call *c, const char *by)
{
	struct hx_ask_result r = {HX_VERDICT_DENY, 0, by, NULL};

	hx_ask_withdraw(m->pl->ask, c->ask, by);
	answered(c, &r);
}

/* A client that cannot elicit: the question goes to the person through
 * the session's approvals (harness-exec's terminal, harness-exec answer),
 * under the policy's ask_timeout. */
static void ask_person(struct hx_mcp *m, struct hx_call *c)
{
	json_t *choices = json_object_get(c->args, "choices"), *x;
	const char *v[HX_MCP_CHOICES];
	struct hx_ask_question uq = {
	    .text = json_string_value(json_object_get(c->args, "question")),
	    .choices = v,
	    .call_id = c->id,
	};
	size_t i;

	json_array_foreach(choices, i, x) if (i < HX_MCP_CHOICES)
	    v[uq.nchoices++] = json_string_value(x);
	c->m = m;
	if (!(c->ask = hx_ask_question(m->pl->ask, &uq))) {
		fail(m, c, "ENOTSUP",
		     "nobody can be asked: this client cannot show a question "
		     "(it declared no elicitation capability) and the "
		     "session's approvals take none (ask_timeout 0, or too "
		     "many wait): ask in your reply instead",
		     NULL);
		return;
	}
	c->state = HX_CALL_SENT;
	hx_ask_defer(m->pl->ask, c->ask, m, answered, c);
}

static void ask(struct hx_mcp *m, struct hx_call *c)
{
	json_t *answer = json_pack("{s:s}", "type", "string");
	json_t *choices = json_object_get(c->args, "choices");
	char id[32];

	if (!m->elicitation) {
		json_decref(answer);
		ask_person(m, c);
		return;
	}
	if (choices)
		json_object_set(answer, "enum", choices);
	question_id(c, id, sizeof(id));
	c->state = HX_CALL_SENT;
	hx_mcp_request(
	    m, c->rpc_id, id, "elicitation/create",
	    json_pack("{s:s,s:O,s:{s:s,s:{s:o},s:[s]}}", "mode", "form",
		      "message", json_object_get(c->args, "question"),
		      "requestedSchema", "type", "object", "properties",
		      "answer", answer, "required", "answer"));
}

/* Call c's question is wanted no more (by: why, for its record): the
 * approvals' withdrawn, or the client told to stop asking (its request
 * cancelled). */
static void withdraw_question(struct hx_mcp *m, struct hx_call *c,
			      const char *by)
{
	char id[32];

	if (c->tool->where != HX_TOOL_ASK || c->state != HX_CALL_SENT)
		return;
	if (c->ask) {
		hx_ask_withdraw(m->pl->ask, c->ask, by);
		c->ask = 0;
		return;
	}
	question_id(c, id, sizeof(id));
	hx_mcp_notify(m, c->rpc_id, "notifications/cancelled",
		      json_pack("{s:s,s:s}", "requestId", id, "reason",
				"the tool call was cancelled"));
}

/* Whether answer is one of choices (none: any answer is). */
static bool among(json_t *choices, json_t *answer)
{
	json_t *x;
	size_t i;

	json_array_foreach(choices, i,
			   x) if (json_equal(x, answer)) return true;
	return !json_array_size(choices);
}

void hx_mcp_response(struct hx_mcp *m, json_t *id, json_t *msg)
{
	const char *s = json_string_value(id);
	json_t *r = json_object_get(msg, "result");
	const char *action = json_string_value(json_object_get(r, "action"));
	json_t *answer =
	    json_object_get(json_object_get(r, "content"), "answer");
	struct hx_call *c;
	char *end;

	if (!s || strncmp(s, "hx-ask-", 7))
		return;
	c = by_n(m, strtoul(s + 7, &end, 10));
	if (!c || *end || c->tool->where != HX_TOOL_ASK ||
	    c->state != HX_CALL_SENT || c->ask)
		return; /* not a question that waits: dropped */
	if (!action ||
	    (strcmp(action, "accept") && strcmp(action, "decline") &&
	     strcmp(action, "cancel")) ||
	    (!strcmp(action, "accept") && !json_is_string(answer))) {
		fail(m, c, "EPROTO",
		     json_object_get(msg, "error")
			 ? "the client could not ask its user"
			 : "the client's answer has no action or answer",
		     NULL);
		return;
	}
	if (!strcmp(action, "accept") &&
	    !among(json_object_get(c->args, "choices"), answer)) {
		fail(m, c, "EPROTO",
		     "the client's answer is not one of the choices", NULL);
		return;
	}
	r = json_pack("{s:s,s:O}", "action", action, "answer",
		      strcmp(action, "accept") ? json_null() : answer);
	finish(m, c, r, NULL, NULL);
	json_decref(r);
}

void hx_mcp_cancel(struct hx_mcp *m, json_t *id)
{
	for (size_t i = 0; id && i < HX_MCP_CALLS; i++) {
		struct hx_call *c = &m->calls[i];

		if (c->state == HX_CALL_FREE || !c->rpc_id ||
		    !json_equal(c->rpc_id, id) || c->cancelled)
			continue;
		c->cancelled = true;
		if (c->state == HX_CALL_QUEUED ||
		    c->tool->where == HX_TOOL_ASK) {
			withdraw_question(m, c, "cancelled");
			finish(m, c, NULL, NULL, "cancelled");
			return;
		}
		kill_run(m, c);
		to_worker(m, json_pack("{s:I}", "cancel", (json_int_t)c->n));
		return;
	}
}

void hx_mcp_end_calls(struct hx_mcp *m, const char *why)
{
	for (size_t i = 0; i < HX_MCP_CALLS; i++) {
		struct hx_call *c = &m->calls[i];

		if (c->state == HX_CALL_FREE)
			continue;
		/* The session ends: a question still waiting for a person
		 * is answered cancel (if the client is still there). */
		if (c->ask) {
			c->cancelled = m->client_gone;
			ask_ended(m, c, m->client_gone ? "gone" : "end");
			continue;
		}
		c->cancelled = true; /* nobody to answer */
		if (c->state == HX_CALL_QUEUED || c->tool->where == HX_TOOL_ASK)
			fail(m, c, "ECANCELED", why, "ended");
		else
			kill_run(m, c);
	}
	if (!m->told_exit && !m->worker_gone) {
		m->told_exit = true;
		to_worker(m, json_pack("{s:b}", "exit", 1));
	}
}

void hx_mcp_worker_gone(struct hx_mcp *m)
{
	if (!m->worker_gone) {
		m->worker_gone = true;
		hx_server_del(m->srv, &m->wk_src);
	}
	for (size_t i = 0; i < HX_MCP_CALLS; i++)
		if (m->calls[i].ask) /* the session ends with it */
			ask_ended(m, &m->calls[i], "end");
		else if (m->calls[i].state != HX_CALL_FREE)
			fail(m, &m->calls[i], "ECHILD",
			     "the sandbox's worker ended before the call did",
			     "ended");
}

static void started(struct hx_mcp *m, struct hx_call *c, json_t *s)
{
	pid_t pid = (pid_t)json_integer_value(json_object_get(s, "pid"));
	int fd = pid > 1 ? hx_proc_pin(pid, &c->proc) : -1;

	/* The worker's word, checked: its own child, pinned before the
	 * check, so that what is killed later is what was checked. */
	if (lane(c->tool) != HX_TOOL_RUN || fd < 0 ||
	    hx_proc_ppid(pid) != m->o.worker) {
		hx_say("mcp: the worker named pid %d for %s: not its child",
		       (int)pid, c->id);
		if (fd >= 0)
			close(fd);
		fd = -1;
		pid = 0;
	}
	if (c->pid > 0) /* said twice: the first is let go */
		close(c->pidfd);
	c->pid = pid;
	c->pidfd = fd;
	c->state = HX_CALL_RUNNING;
	forget_ended(m, pid); /* a recycled pid is this call's now */
	if (m->run_starting == index_of(m, c))
		m->run_starting = -1;
	if (c->cancelled)
		kill_run(m, c);
	pump(m);
}

static void progress(struct hx_mcp *m, struct hx_call *c, json_t *p)
{
	char msg[128];

	if (!c->token || c->cancelled)
		return;
	snprintf(
	    msg, sizeof(msg), "running %.1f s, %lld bytes of output",
	    (double)json_integer_value(json_object_get(p, "elapsed_ms")) / 1e3,
	    (long long)(json_integer_value(json_object_get(p, "stdout_bytes")) +
			json_integer_value(
			    json_object_get(p, "stderr_bytes"))));
	c->progress += 1;
	hx_mcp_notify(m, c->rpc_id, "notifications/progress",
		      json_pack("{s:O,s:f,s:s}", "progressToken", c->token,
				"progress", c->progress, "message", msg));
}

/* The worker's result: a git tool's made from its code_run's. */
static void finished(struct hx_mcp *m, struct hx_call *c, json_t *result)
{
	json_t *r, *e;

	if (c->tool->where != HX_TOOL_GIT) {
		finish(m, c, result, NULL, NULL);
		return;
	}
	hx_gittool_result(c->tool->name, c->args, result, &r, &e);
	finish(m, c, r, e, NULL);
	json_decref(r);
	json_decref(e);
}

void hx_mcp_worker_line(struct hx_mcp *m, const char *line, size_t len)
{
	json_t *msg = json_loadb(line, len, 0, NULL), *x;
	struct hx_call *c;

	if (json_object_get(msg, "hello")) {
		m->worker_ready = true;
		pump(m);
	}
	if (!json_is_object(msg) || json_object_get(msg, "hello"))
		goto out;
	c = by_n(m,
		 (unsigned long)json_integer_value(json_object_get(msg, "id")));
	if (!c || c->state == HX_CALL_QUEUED) {
		hx_say("mcp: the worker answered no call it has");
		goto out;
	}
	if ((x = json_object_get(msg, "started")))
		started(m, c, x);
	else if ((x = json_object_get(msg, "progress")))
		progress(m, c, x);
	else if ((x = json_object_get(msg, "result")) && json_is_object(x))
		finished(m, c, x);
	else if ((x = json_object_get(msg, "error")) && json_is_object(x))
		finish(m, c, NULL, x, NULL);
out:
	json_decref(msg);
}

/* ---- a new call ---- */

/* The policy's word on the call, before it runs: the same rules as the
 * system calls its work makes, on the path as given and as its
 * symlinks lead from the worker's view. */
static void judge(struct hx_mcp *m, struct hx_call *c)
{
	const char *path = hx_tool_path(c->tool, c->args);
	const char *argv[4096];
	char real[PATH_MAX];
	struct hx_event ev = {.op = c->tool->op};
	struct hx_decision d2;

	c->d.verdict = HX_VERDICT_ALLOW;
	c->d.category = c->tool->category;
	c->d.rule = "harness:mcp";
	if (c->tool->op == HX_OP_COUNT) /* nothing the policy names */
		return;
	if (lane(c->tool) == HX_TOOL_RUN) {
		ev.argc = hx_tool_run_argv(c->wargs, argv, 4096);
		ev.argv = argv;
		ev.path = argv[0];
		ev.cwd = json_string_value(json_object_get(c->wargs, "cwd"));
		hx_policy_decide(m->pl->policy, &ev, &c->d);
		return;
	}
	ev.path = path;
	hx_policy_decide(m->pl->policy, &ev, &c->d);
	if (c->d.verdict == HX_VERDICT_DENY ||
	    hx_path_resolve(m->o.worker, 0, path, true, real, sizeof(real)) ||
	    !strcmp(real, path))
		return;
	ev.path = real;
	hx_policy_decide(m->pl->policy, &ev, &d2);
	if (d2.verdict > c->d.verdict)
		c->d = d2;
}

static bool refused(const struct hx_mcp *m, const struct hx_call *c)
{
	return c->d.verdict == HX_VERDICT_DENY &&
	       (m->pl->mode == HX_MODE_ENFORCE ||
		!strncmp(c->d.rule, "harness:", 8));
}

void hx_mcp_call(struct hx_mcp *m, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	json_t *meta = json_object_get(params, "_meta");
	const struct hx_tool *t = name ? hx_tool_find(name) : NULL;
	struct hx_call *c;
	const char *over;
	char err[512];
	json_t *prepared;

	if (!t) {
		hx_mcp_error(m, id, -32602,
			     name ? "unknown tool" : "no tool name",
			     name ? json_pack("{s:s}", "tool", name) : NULL);
		return;
	}
	if (!args)
		args = json_object();
	else
		json_incref(args);
	if (!hx_tool_prepare(t, args, m->project, &prepared, err,
			     sizeof(err))) {
		hx_mcp_error(m, id, -32602, err,
			     json_pack("{s:s}", "tool", name));
		json_decref(args);
		return;
	}
	json_decref(args);
	if ((over = over_quota(m, t)) || !(c = new_call(m))) {
		snprintf(err, sizeof(err),
			 "quota: too many %s calls (%s); wait and retry", name,
			 over ? over : "at once, all tools");
		hx_mcp_error(m, id, -32000, err,
			     json_pack("{s:s,s:s}", "tool", name, "quota",
				       over ? over : "calls at once"));
		hx_mcp_record_quota(m->pl, t, over ? over : "calls at once");
		json_decref(prepared);
		return;
	}
	quota_of(m, t)->running++;
	c->rpc_id = json_incref(id);
	c->tool = t;
	c->args = prepared;
	c->wargs =
	    t->where == HX_TOOL_GIT
		? hx_gittool_run(t->name, prepared, m->o.session, m->project)
		: json_incref(prepared);
	c->token = json_incref(json_object_get(meta, "progressToken"));
	judge(m, c);
	if ((t->where == HX_TOOL_GIT || t->where == HX_TOOL_CKPT) && !m->o.wt) {
		fail(m, c, "ENOTSUP",
		     "this session has no worktree, so no checkpoints "
		     "(harness-mcp --worktree keeps the work on a branch of "
		     "its own, with checkpoints)",
		     NULL);
	} else if (t->where == HX_TOOL_ASK) {
		ask(m, c);
	} else if (t->where == HX_TOOL_HERE) {
		json_t *info = hx_mcp_session_info(m);

		c->state = HX_CALL_SENT;
		finish(m, c, info, NULL, NULL);
		json_decref(info);
	} else if (refused(m, c)) {
		c->state = HX_CALL_SENT;
		finish(m, c, NULL, NULL, "refused");
	} else {
		c->state = HX_CALL_QUEUED;
		pump(m);
	}
}
