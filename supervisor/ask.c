/* Questions, their answers and the session's grants; see ask.h. */
#define _GNU_SOURCE
#include "supervisor/ask_int.h"
#include "supervisor/strv.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/names.h"
#include "common/sbuf.h"
#include "supervisor/correlate.h"
#include "supervisor/grants.h"
#include "supervisor/pipeline.h"
#include "supervisor/proc.h"
#include "supervisor/record.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int hx_ask_new(struct hx_pipeline *pl, const char *grants_path,
	       unsigned timeout_s, struct hx_ask **out)
{
	struct hx_ask *a = calloc(1, sizeof(*a));
	char err[PATH_MAX + 64];

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->pl = pl;
	a->timeout_s = timeout_s;
	a->session = json_array();
	a->always = json_array();
	a->next_id = 1;
	pthread_mutex_init(&a->m, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (!a->session || !a->always) {
		hx_ask_free(a);
		return -ENOMEM;
	}
	if (grants_path) {
		snprintf(a->grants_path, sizeof(a->grants_path), "%s",
			 grants_path);
		if (hx_grants_load(grants_path, a->always, err, sizeof(err)) ==
			0 &&
		    err[0])
			fprintf(stderr,
				"harness-exec: warning: grants %s (skipped)\n",
				err);
	}
	*out = a;
	return 0;
}

/* ---- subjects ---- */

static char *opt_dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void subject_dup(const struct hx_ask_subject *in,
			struct hx_ask_subject *o)
{
	*o = *in;
	o->path = opt_dup(in->path);
	o->path2 = opt_dup(in->path2);
	o->addr = opt_dup(in->addr);
	o->rule = opt_dup(in->rule);
	o->judged_as = opt_dup(in->judged_as);
	o->cwd = NULL; /* the call's, borrowed: the question keeps its own */
	o->env = NULL;
	if (in->env && in->env_len && (o->env = malloc(in->env_len)))
		memcpy((char *)o->env, in->env, in->env_len);
	else if (in->env_len)
		o->env_unread = true; /* no memory: stands for nothing */
	o->argv = (const char *const *)hx_strv_dup(in->argv, in->argc);
	o->names = (const char *const *)hx_strv_dup(in->names, in->nnames);
}

static void subject_free(struct hx_ask_subject *s)
{
	free((char *)s->path);
	free((char *)s->path2);
	free((char *)s->addr);
	free((char *)s->rule);
	free((char *)s->judged_as);
	free((char *)s->env);
	hx_strv_free((char **)s->argv, s->argc);
	hx_strv_free((char **)s->names, s->nnames);
}

static bool is_file(const struct hx_ask_subject *s)
{
	return s->op != HX_OP_EXEC && !s->addr && s->path;
}

/* ---- grants ---- */

static bool same_text(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

/* The file an exec's path names now, as the caller reaches it: false
 * when it cannot be read. */
static bool exec_file(const struct hx_ask_subject *s, struct stat *st)
{
	char here[PATH_MAX + 64];

	if (s->op != HX_OP_EXEC || !s->path)
		return false;
	hx_proc_self_path(s->pid, s->tid, s->path, here, sizeof(here));
	return !stat(here, st);
}

/* Whether an exec's file is still the one a question showed: another
 * renamed over it, or its bytes rewritten, is another program. */
static bool same_shown(const struct token *t, const struct hx_ask_subject *s)
{
	struct stat now;

	if (!t->has_shown)
		return true;
	return exec_file(s, &now) && now.st_dev == t->shown.st_dev &&
	       now.st_ino == t->shown.st_ino &&
	       now.st_size == t->shown.st_size &&
	       now.st_ctim.tv_sec == t->shown.st_ctim.tv_sec &&
	       now.st_ctim.tv_nsec == t->shown.st_ctim.tv_nsec;
}

/* Whether an exec's environment is the one its question showed (all of
 * it: a shell's bookkeeping too); none read stands for nothing. */
static bool same_env(const struct hx_ask_subject *a,
		     const struct hx_ask_subject *s)
{
	return !a->env_unread && !s->env_unread && a->env_len == s->env_len &&
	       (!a->env_len || !memcmp(a->env, s->env, a->env_len));
}

/* Whether s is the call t answered: the same process (or, for a spawn,
 * its child: posix_spawn asks in the parent), operation, resolved
 * paths, argv, address and rule, and an exec's cwd as the question
 * showed it. A path re-pointed since, another argv, another rule's
 * file, an exec's cwd moved by a thread while the question waited (its
 * relative names are others): another call, asked again. */
static bool same_call(const struct token *t, const struct hx_ask_subject *s)
{
	const struct hx_ask_subject *a = &t->s;

	if (a->op != s->op || a->argc != s->argc ||
	    (a->pid != s->pid && !(a->spawn && a->pid == s->ppid)) ||
	    !same_text(a->path, s->path) || !same_text(a->path2, s->path2) ||
	    !same_text(a->addr, s->addr) || !same_text(a->rule, s->rule) ||
	    (a->op == HX_OP_EXEC && (!same_text(t->cwd, s->cwd) ||
				     !same_env(a, s) || !same_shown(t, s))))
		return false;
	for (size_t i = 0; i < s->argc; i++)
		if (!same_text(a->argv[i], s->argv[i]))
			return false;
	return true;
}

/* An answer "once" still standing for s: an allow for the kernel
 * layer's sight of the call the shim asked about (used up), a deny for
 * the same call again at once (a shell's $PATH search asks for
 * /usr/bin/git, then /bin/git: the same file). */
/* pid's start time, or 0 (gone). */
static unsigned long long start_of(pid_t pid)
{
	struct hx_procstat st;

	return hx_proc_stat(pid, &st) ? 0 : st.starttime;
}

static bool token_holds(struct hx_ask *a, const struct hx_ask_subject *s,
			enum hx_verdict *v, char *how, size_t hlen)
{
	int64_t now = now_ms();

	for (int i = 0; i < MAX_TOKENS; i++) {
		struct token *t = &a->tokens[i];

		if (!t->id || t->until_ms < now ||
		    (t->v == HX_VERDICT_ALLOW && !s->kernel) ||
		    !same_call(t, s) || !t->start ||
		    start_of(t->s.pid) != t->start)
			continue;
		snprintf(how, hlen, "once #%u", t->id);
		*v = t->v;
		if (t->v == HX_VERDICT_ALLOW) { /* used up */
			subject_free(&t->s);
			free(t->cwd);
			t->cwd = NULL;
			t->id = 0;
		}
		return true;
	}
	return false;
}

static void token_put(struct hx_ask *a, const struct question *q,
		      enum hx_verdict v)
{
	struct token *slot = &a->tokens[0];
	int64_t now = now_ms();

	for (int i = 0; i < MAX_TOKENS; i++)
		if (!a->tokens[i].id || a->tokens[i].until_ms < now ||
		    a->tokens[i].until_ms < slot->until_ms) {
			slot = &a->tokens[i];
			if (!slot->id || slot->until_ms < now)
				break;
		}
	if (slot->id) {
		subject_free(&slot->s);
		free(slot->cwd);
	}
	subject_dup(&q->s, &slot->s);
	slot->cwd = q->cwd ? strdup(q->cwd) : NULL;
	slot->shown = q->shown;
	slot->has_shown = q->has_shown;
	slot->s.image = NULL;
	slot->v = v;
	slot->until_ms = now + TOKEN_TTL_MS;
	slot->start = q->start;
	slot->id = q->id;
}

static void tokens_free(struct hx_ask *a)
{
	for (int i = 0; i < MAX_TOKENS; i++)
		if (a->tokens[i].id) {
			subject_free(&a->tokens[i].s);
			free(a->tokens[i].cwd);
		}
}

/* An exec allowed because of a script read from its argv (judged_as):
 * what the script runs is allowed with it. */
static void script_allowed(struct hx_ask *a, const struct hx_ask_subject *s,
			   const char *cwd, const char *how)
{
	if (s->op == HX_OP_EXEC && s->judged_as)
		hx_askscripts_add(&a->scripts, s->pid, s->argv, s->argc, cwd,
				  how);
}

enum hx_verdict hx_ask_granted(struct hx_ask *a, const struct hx_ask_subject *s,
			       char *how, size_t hlen)
{
	json_t *g;
	enum hx_verdict tv;

	if (token_holds(a, s, &tv, how, hlen))
		return tv;
	g = hx_grants_match(a->session, s);
	if (!g)
		g = hx_grants_match(a->always, s);
	if (!g) {
		if (s->op == HX_OP_EXEC &&
		    hx_askscripts_cover(&a->scripts, a->pl->policy, s->pid,
					s->rule, s->cwd, s->argv, s->argc, how,
					hlen))
			return HX_VERDICT_ALLOW;
		return HX_VERDICT_ASK;
	}
	snprintf(how, hlen, "%s %s",
		 json_string_value(json_object_get(g, "scope")) ?: "always",
		 json_string_value(json_object_get(g, "id")));
	if (strcmp(json_string_value(json_object_get(g, "verdict")), "allow"))
		return HX_VERDICT_DENY;
	script_allowed(a, s, NULL, how);
	return HX_VERDICT_ALLOW;
}

/* ---- questions ---- */

static struct question *find(const struct hx_ask *a, unsigned id)
{
	for (struct question *q = a->qs; q; q = q->next)
		if (q->id == id)
			return q;
	return NULL;
}

struct question *hx_ask_head(const struct hx_ask *a, unsigned b)
{
	for (struct question *q = a->qs; q; q = q->next)
		if (q->batch == b && q->recorded)
			return q;
	return NULL;
}

static void changed(struct hx_ask *a)
{
	if (a->on_change)
		a->on_change(a->change_arg);
}

static bool same_dir(const char *x, const char *y)
{
	const char *sx = strrchr(x, '/'), *sy = strrchr(y, '/');

	return sx && sy && sx - x == sy - y && !strncmp(x, y, (size_t)(sx - x));
}

/* The batch a new file question joins: one waiting for the same access
 * and rule in the same directory. */
static unsigned batch_of(const struct hx_ask *a, const struct hx_ask_subject *s)
{
	if (!is_file(s) || s->path2)
		return 0;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (struct question *q = a->qs; q; q = q->next)
		if (q->recorded && is_file(&q->s) && !q->s.path2 &&
		    /* closed once it may have been shown: what a person
		     * answers is what was put to them */
		    (now.tv_sec - hx_ask_head(a, q->batch)->asked.tv_sec) *
				1000 +
			    (now.tv_nsec -
			     hx_ask_head(a, q->batch)->asked.tv_nsec) /
				1000000 <
			BATCH_MS &&
		    q->s.op == s->op && q->s.rule && s->rule &&
		    !strcmp(q->s.rule, s->rule) && same_dir(q->s.path, s->path))
			return q->batch;
	return 0;
}

static json_t *chain_of(pid_t pid)
{
	json_t *c = json_array();
	char exe[PATH_MAX];
	pid_t me = getpid();

	for (int i = 0; c && pid > 1 && pid != me && i < CHAIN_MAX; i++) {
		json_t *p = json_object();

		json_object_set_new(p, "pid", json_integer(pid));
		if (hx_proc_exe(pid, exe, sizeof(exe)) > 0)
			json_object_set_new(p, "exe",
					    hx_record_text(NULL, "", exe));
		json_array_append_new(c, p);
		pid = hx_proc_ppid(pid);
	}
	return c;
}

static char *cwd_of(pid_t pid)
{
	char buf[PATH_MAX];

	return hx_proc_cwd(pid, buf, sizeof(buf)) > 0 ? strdup(buf) : NULL;
}

unsigned hx_ask_open(struct hx_ask *a, const struct hx_ask_subject *s)
{
	struct question *q, **tail;

	if (!a || !a->timeout_s || a->nq >= MAX_WAITING ||
	    !(q = calloc(1, sizeof(*q))))
		return 0;
	q->id = a->next_id++;
	q->batch = batch_of(a, s);
	if (!q->batch)
		q->batch = q->id;
	subject_dup(s, &q->s);
	if (s->image) {
		q->image = *s->image;
		q->s.image = &q->image;
	}
	q->chain = chain_of(s->pid);
	/* The decision's (the calling thread's), which the exec gate holds
	 * the exec to; the process's only when it had none. */
	if (s->op == HX_OP_EXEC) {
		q->cwd = s->cwd ? strdup(s->cwd) : cwd_of(s->pid);
		/* What "once" will stand for: this file, not another put
		 * in its place while the question waits. */
		q->has_shown = exec_file(s, &q->shown);
	}
	clock_gettime(CLOCK_MONOTONIC, &q->asked);
	q->start = start_of(s->pid); /* it waits in its call, or the shim */
	for (tail = &a->qs; *tail; tail = &(*tail)->next)
		;
	*tail = q;
	a->nq++;
	return q->id;
}

/* The agent's question q's record; 0 or -errno. */
static int record_question(struct hx_ask *a, struct question *q)
{
	json_t *rec = hx_record_new(a->pl, NULL, "question", NULL), *ch;
	int e;

	if (!rec)
		return -ENOMEM;
	json_object_set_new(rec, "ask", json_integer(q->id));
	hx_record_set_str(rec, "from", "agent");
	hx_record_set_str(rec, "call_id", q->uq.call_id);
	hx_record_set_text(rec, rec, "question", "question", q->uq.text);
	if (q->uq.nchoices && (ch = json_array())) {
		for (size_t i = 0; i < q->uq.nchoices; i++)
			json_array_append_new(
			    ch,
			    hx_record_text(rec, "choices", q->uq.choices[i]));
		json_object_set_new(rec, "choices", ch);
	}
	json_object_set_new(rec, "timeout_s", json_integer(a->timeout_s));
	e = hx_record_append(a->pl, rec, &q->seq);
	json_decref(rec);
	return e;
}

static void free_q(struct question *q);

unsigned hx_ask_question(struct hx_ask *a, const struct hx_ask_question *uq)
{
	struct question *q, **tail;

	if (!a || !a->timeout_s || a->nq >= MAX_WAITING ||
	    !(q = calloc(1, sizeof(*q))))
		return 0;
	q->agent = true;
	q->id = q->batch = a->next_id++;
	clock_gettime(CLOCK_MONOTONIC, &q->asked);
	if (hx_askuser_dup(uq, &q->uq) || !(q->chain = json_array()) ||
	    record_question(a, q)) {
		free_q(q);
		return 0;
	}
	q->recorded = true;
	for (tail = &a->qs; *tail; tail = &(*tail)->next)
		;
	*tail = q;
	a->nq++;
	changed(a);
	return q->id;
}

const struct hx_ask_question *hx_ask_question_of(const struct hx_ask *a,
						 unsigned id)
{
	const struct question *q = a ? find(a, id) : NULL;

	return q && q->agent && q->recorded ? &q->uq : NULL;
}

static void unlink_q(struct hx_ask *a, struct question *q)
{
	for (struct question **p = &a->qs; *p; p = &(*p)->next)
		if (*p == q) {
			*p = q->next;
			a->nq--;
			return;
		}
}

static void free_q(struct question *q)
{
	subject_free(&q->s);
	free(q->cwd);
	json_decref(q->chain);
	hx_askuser_free(&q->uq);
	free(q->answer);
	free(q);
}

void hx_ask_recorded(struct hx_ask *a, unsigned id, uint64_t seq)
{
	struct question *q = a ? find(a, id) : NULL;
	bool first;

	if (!q)
		return;
	first = hx_ask_head(a, q->batch) == NULL;
	q->seq = seq;
	q->recorded = true;
	if (first)
		changed(a);
}

void hx_ask_drop(struct hx_ask *a, unsigned id)
{
	struct question *q = a ? find(a, id) : NULL;

	if (!q)
		return;
	unlink_q(a, q);
	free_q(q);
}

/* What the agent's question's answer is, for its asker: accept (an
 * answer given), decline, or cancel (nobody answered). */
static const char *action_of(enum hx_verdict v, const char *why)
{
	if (v == HX_VERDICT_ALLOW)
		return "accept";
	return strcmp(why, "answer") ? "cancel" : "decline";
}

/* The ask_answer record of q; returns its seq (0: not written). */
static uint64_t record_answer(struct hx_ask *a, struct question *q,
			      enum hx_verdict v, enum hx_ask_scope scope,
			      const char *by, const char *why, json_t *grant)
{
	struct hx_peer peer = {
	    .pid = q->s.pid, .tid = q->s.tid, .ppid = q->s.ppid};
	struct timespec now;
	json_t *rec =
	    hx_record_new(a->pl, q->agent ? NULL : &peer, "ask_answer", NULL);
	uint64_t seq = 0;
	double ms;

	if (!rec)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (double)(now.tv_sec - q->asked.tv_sec) * 1e3 +
	     (double)(now.tv_nsec - q->asked.tv_nsec) / 1e6;
	json_object_set_new(rec, "ask", json_integer(q->id));
	if (q->batch != q->id)
		json_object_set_new(rec, "batch", json_integer(q->batch));
	if (q->seq)
		json_object_set_new(rec, "ref_seq",
				    json_integer((json_int_t)q->seq));
	if (q->agent) {
		hx_record_set_str(rec, "from", "agent");
		hx_record_set_str(rec, "call_id", q->uq.call_id);
		hx_record_set_str(rec, "action", action_of(v, why));
		hx_record_set_text(rec, rec, "answer", "answer", q->answer);
	} else {
		json_object_set_new(rec, "op",
				    json_string(hx_op_name(q->s.op)));
		hx_record_set_str(rec, "rule", q->s.rule);
	}
	json_object_set_new(rec, "verdict", json_string(hx_verdict_name(v)));
	if (!q->agent)
		json_object_set_new(rec, "scope",
				    json_string(hx_grant_scope_name(scope)));
	json_object_set_new(rec, "by", json_string(by));
	json_object_set_new(rec, "latency_ms",
			    json_real((double)(int64_t)(ms * 10) / 10));
	if (grant)
		json_object_set_new(rec, "grant",
				    json_incref(json_object_get(grant, "id")));
	if (!q->agent)
		json_object_set_new(
		    rec, "layer", json_string(q->s.kernel ? "kernel" : "shim"));
	hx_record_append(a->pl, rec, &seq);
	json_decref(rec);
	return seq;
}

/* What an answer v to a call's question q (its ask_answer record seq)
 * leaves: counted, a script allowed, a token for the same call. */
static void settle_call(struct hx_ask *a, struct question *q, enum hx_verdict v,
			enum hx_ask_scope scope, const char *why, uint64_t seq)
{
	struct hx_peer peer = {
	    .pid = q->s.pid, .tid = q->s.tid, .ppid = q->s.ppid};

	if (v == HX_VERDICT_ALLOW) {
		char how[24];

		a->stats.allowed++;
		snprintf(how, sizeof(how), "q%u", q->id);
		script_allowed(a, &q->s, q->cwd, how);
	} else if (!strcmp(why, "timeout"))
		a->stats.timed_out++;
	else if (!strcmp(why, "answer"))
		a->stats.denied++;
	else
		a->stats.gone++;
	/* Denied once, or unanswered: the same call again at once is
	 * denied too, unasked (a shell's $PATH search waited out a second
	 * timeout for /bin/git after /usr/bin/git's). */
	if (v == HX_VERDICT_DENY && scope == HX_ASK_ONCE &&
	    (!strcmp(why, "answer") || !strcmp(why, "timeout")))
		token_put(a, q, HX_VERDICT_DENY);
	/* The shim makes the call next; the kernel layer's view of it is
	 * this answer (one record stands for both). */
	if (!q->s.kernel && v == HX_VERDICT_ALLOW && a->pl->kern) {
		token_put(a, q, HX_VERDICT_ALLOW);
		hx_correlate_put(a->pl, &peer,
				 hx_correlate_op((int)q->s.op, q->s.spawn),
				 q->s.key, v, seq, false);
	}
}

/* Ends q with v: recorded, its waiter told, q freed. */
static void finish(struct hx_ask *a, struct question *q, enum hx_verdict v,
		   enum hx_ask_scope scope, const char *by, const char *why,
		   json_t *grant)
{
	struct hx_ask_result r = {v, 0, why, NULL};

	unlink_q(a, q);
	if (q->recorded)
		r.seq = record_answer(a, q, v, scope, by, why, grant);
	if (!q->agent)
		settle_call(a, q, v, scope, why, r.seq);
	else if (v == HX_VERDICT_ALLOW)
		a->stats.answered++, r.answer = q->answer;
	else if (!strcmp(why, "answer"))
		a->stats.declined++;
	else
		a->stats.cancelled++;
	if (q->kw) {
		pthread_mutex_lock(&a->m);
		q->kw->r = r;
		q->kw->done = true;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->m);
	} else if (q->fn) {
		q->fn(q->arg, &r);
	}
	free_q(q);
}

/* Ends every question of batch b with v. */
static void finish_batch(struct hx_ask *a, unsigned b, unsigned upto,
			 enum hx_verdict v, enum hx_ask_scope scope,
			 const char *by, const char *why, json_t *grant)
{
	struct question *q, *next;

	for (q = a->qs; q; q = next) {
		next = q->next;
		if (q->batch == b && q->recorded && q->id <= upto)
			finish(a, q, v, scope, by, why, grant);
	}
}

size_t hx_ask_batch_size(const struct hx_ask *a, unsigned b, unsigned upto)
{
	size_t n = 0;

	for (const struct question *q = a->qs; q; q = q->next)
		n += q->batch == b && q->recorded && q->id <= upto;
	return n;
}

unsigned hx_ask_batch_last(const struct hx_ask *a, unsigned b)
{
	unsigned last = 0;

	for (const struct question *q = a->qs; q; q = q->next)
		if (q->batch == b && q->recorded && q->id > last)
			last = q->id;
	return last;
}

/* The grant of an answer "session" or "always" to q: kept, and written
 * to the grants file for "always" (a failure said into msg). NULL: out
 * of memory. */
static json_t *grant_for(struct hx_ask *a, const struct question *q,
			 enum hx_verdict v, enum hx_ask_scope scope,
			 unsigned prefix, char *msg, size_t mlen)
{
	json_t *g = hx_grant_new(&q->s, v, scope, prefix, NULL);
	int e = 0;

	if (!g)
		return NULL;
	json_object_set_new(g, "session",
			    json_string(a->pl->session ? a->pl->session : ""));
	json_array_append(scope == HX_ASK_ALWAYS ? a->always : a->session, g);
	if (scope == HX_ASK_ALWAYS &&
	    (!a->grants_path[0] || (e = hx_grants_append(a->grants_path, g))))
		snprintf(msg, mlen,
			 "%s for the session only: the grants file cannot be "
			 "written (%s)",
			 hx_verdict_name(v),
			 a->grants_path[0] ? strerror(-e) : "none");
	return g;
}

/* An allow or deny of the agent's question q: deny declines it, once
 * (nothing is granted by a question); allow cannot answer it. */
static int decline(struct hx_ask *a, struct question *q, enum hx_verdict v,
		   enum hx_ask_scope scope, const char *by, char *msg,
		   size_t mlen)
{
	struct hx_sbuf b = {msg, mlen, 0};

	if (v == HX_VERDICT_ALLOW) {
		hx_sbuf_put(&b, "question ");
		hx_sbuf_put_uint(&b, q->id);
		hx_sbuf_put(&b, " is the agent's and wants an answer: "
				"harness-exec answer ");
		hx_sbuf_put_uint(&b, q->id);
		hx_sbuf_put(&b, q->uq.nchoices ? " CHOICE (its text or its "
						 "number:"
					       : " TEXT");
		for (size_t i = 0; i < q->uq.nchoices; i++) {
			hx_sbuf_put(&b, i ? ", " : " ");
			hx_sbuf_put_uint(&b, i + 1);
			hx_sbuf_put(&b, ") ");
			hx_askuser_put_text(&b, q->uq.choices[i], NULL);
		}
		hx_sbuf_put(&b,
			    q->uq.nchoices ? "), or deny it" : ", or deny it");
		return -EINVAL;
	}
	if (scope != HX_ASK_ONCE) {
		snprintf(msg, mlen,
			 "question %u is the agent's: it is declined once, "
			 "without --scope",
			 q->id);
		return -EINVAL;
	}
	snprintf(msg, mlen, "declined %u (the agent's question)", q->id);
	finish(a, q, HX_VERDICT_DENY, HX_ASK_ONCE, by, "answer", NULL);
	changed(a);
	return 0;
}

int hx_ask_reply(struct hx_ask *a, unsigned id, const char *text,
		 const char *by, char *msg, size_t mlen)
{
	struct question *q = a ? find(a, id) : NULL;
	int k;

	if (!q || !q->recorded)
		return -ENOENT;
	if (!q->agent) {
		snprintf(msg, mlen,
			 "question %u is about a call: approve or deny it", id);
		return -EINVAL;
	}
	if ((k = hx_askuser_choice(&q->uq, text)) >= 0)
		text = q->uq.choices[k];
	if (hx_askuser_check(&q->uq, text, msg, mlen))
		return -EINVAL;
	if (!(q->answer = strdup(text)))
		return -ENOMEM;
	snprintf(msg, mlen, "answered %u (the agent's question)", id);
	finish(a, q, HX_VERDICT_ALLOW, HX_ASK_ONCE, by, "answer", NULL);
	changed(a);
	return 0;
}

void hx_ask_withdraw(struct hx_ask *a, unsigned id, const char *by)
{
	struct question *q = a ? find(a, id) : NULL;

	if (!q)
		return;
	q->fn = NULL; /* its asker knows */
	finish(a, q, HX_VERDICT_DENY, HX_ASK_ONCE, by, "gone", NULL);
	changed(a);
}

int hx_ask_answer(struct hx_ask *a, unsigned id, unsigned upto,
		  enum hx_verdict v, enum hx_ask_scope scope, const char *by,
		  unsigned prefix, char *msg, size_t mlen)
{
	struct question *q = find(a, id), *next;
	unsigned b;
	size_t n;

	/* id names the batch too (the label pending shows), when its first
	 * question is gone already */
	if (!q || !q->recorded)
		q = hx_ask_head(a, id);
	if (!q || !q->recorded)
		return -ENOENT;
	if (v != HX_VERDICT_ALLOW && v != HX_VERDICT_DENY)
		return -EINVAL;
	if (q->agent)
		return decline(a, q, v, scope, by, msg, mlen);
	b = q->batch;
	if (!upto)
		upto = UINT_MAX;
	n = hx_ask_batch_size(a, b, upto);
	snprintf(msg, mlen, "%s %u%s (%zu call%s)", hx_verdict_name(v), b,
		 scope == HX_ASK_ONCE	   ? ""
		 : scope == HX_ASK_SESSION ? " for the session"
					   : " always",
		 n, n == 1 ? "" : "s");
	/* Each call of a batch its own grant: the files shown, not every
	 * file of their directory. */
	for (q = a->qs; q; q = next) {
		json_t *g = NULL;

		next = q->next;
		if (q->batch != b || !q->recorded || q->id > upto)
			continue;
		if (scope != HX_ASK_ONCE && !hx_grant_can_name(&q->s, NULL))
			snprintf(msg, mlen, "%s once: no grant names its bytes",
				 hx_verdict_name(v)); /* this call only */
		else if (scope != HX_ASK_ONCE &&
			 !(g = grant_for(a, q, v, scope, prefix, msg, mlen)))
			return -ENOMEM;
		finish(a, q, v, g ? scope : HX_ASK_ONCE, by, "answer", g);
		json_decref(g);
		next = a->qs; /* finish changed the list */
	}
	changed(a);
	return 0;
}

bool hx_ask_wait_begin(struct hx_ask *a, unsigned id, struct hx_ask_wait *w)
{
	struct question *q = find(a, id);

	*w =
	    (struct hx_ask_wait){false, {HX_VERDICT_DENY, 0, "gone", NULL}, id};
	if (!q)
		return false;
	q->kw = w;
	return true;
}

bool hx_ask_wait_sleep(struct hx_ask *a, struct hx_ask_wait *w,
		       bool (*gone)(void *arg), void *arg)
{
	struct timespec until;
	bool done;

	pthread_mutex_lock(&a->m);
	while (!w->done) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += POLL_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&a->cv, &a->m, &until);
		if (!w->done && gone(arg))
			break;
	}
	done = w->done;
	pthread_mutex_unlock(&a->m);
	return done;
}

void hx_ask_wait_end(struct hx_ask *a, struct hx_ask_wait *w, const char *why,
		     struct hx_ask_result *r)
{
	struct question *q;

	/* Answered while it looked: then the answer stands. */
	if (!w->done && (q = find(a, w->id)) && q->kw == w) {
		q->kw = NULL;
		finish(a, q, HX_VERDICT_DENY, HX_ASK_ONCE, why, why, NULL);
		changed(a);
	}
	*r = w->r;
}

void hx_ask_defer(struct hx_ask *a, unsigned id, void *owner,
		  void (*fn)(void *arg, const struct hx_ask_result *r),
		  void *arg)
{
	struct question *q = find(a, id);

	if (!q) {
		struct hx_ask_result r = {HX_VERDICT_DENY, 0, "end", NULL};

		fn(arg, &r);
		return;
	}
	q->fn = fn;
	q->arg = arg;
	q->owner = owner;
}

void hx_ask_forget(struct hx_ask *a, void *owner)
{
	struct question *q, *next;
	bool any = false;

	for (q = a ? a->qs : NULL; q; q = next) {
		next = q->next;
		if (q->fn && q->owner == owner) {
			finish(a, q, HX_VERDICT_DENY, HX_ASK_ONCE, "gone",
			       "gone", NULL);
			any = true;
		}
	}
	if (any)
		changed(a);
}

void hx_ask_tick(struct hx_ask *a)
{
	struct timespec now;
	bool any = false;
	struct question *q;

	if (!a)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* A batch waits as long as its first question. */
	for (q = a->qs; q;) {
		/* by the nanosecond: by the second, a question asked at
		 * x.95 s timed out at the tick after x+1 s, 0.05 s later */
		if (q->recorded && hx_ask_head(a, q->batch) == q &&
		    (now.tv_sec - q->asked.tv_sec) * 1000000000LL +
			    (now.tv_nsec - q->asked.tv_nsec) >=
			(long long)a->timeout_s * 1000000000LL) {
			finish_batch(a, q->batch, UINT_MAX, HX_VERDICT_DENY,
				     HX_ASK_ONCE, "timeout", "timeout", NULL);
			any = true;
			q = a->qs; /* the list changed */
			continue;
		}
		q = q->next;
	}
	if (any)
		changed(a);
}

/* Whether q's asker still waits for it: not dead, nor a zombie. */
static bool asker_lives(const struct question *q)
{
	struct hx_procstat st;

	return !hx_proc_stat(q->s.pid, &st) && st.state != 'Z' &&
	       st.state != 'X';
}

void hx_ask_ending(struct hx_ask *a)
{
	for (struct question *q = a ? a->qs : NULL; q; q = q->next)
		q->ending = q->agent || asker_lives(q);
}

void hx_ask_end(struct hx_ask *a)
{
	bool any = a && a->qs;

	while (a && a->qs) {
		const char *why =
		    a->qs->ending || a->qs->agent || asker_lives(a->qs)
			? "end"
			: "gone";

		finish(a, a->qs, HX_VERDICT_DENY, HX_ASK_ONCE, why, why, NULL);
	}
	if (any)
		changed(a);
}

void hx_ask_free(struct hx_ask *a)
{
	if (!a)
		return;
	hx_ask_end(a);
	tokens_free(a);
	hx_askscripts_free(&a->scripts);
	json_decref(a->session);
	json_decref(a->always);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->m);
	free(a);
}

bool hx_ask_waits_in_kernel(const struct hx_ask *a, pid_t pid)
{
	for (const struct question *q = a ? a->qs : NULL; q; q = q->next)
		if (q->kw && q->s.pid == pid)
			return true;
	return false;
}

void hx_ask_stats(const struct hx_ask *a, struct hx_ask_stats *st)
{
	if (a)
		*st = a->stats;
	else
		memset(st, 0, sizeof(*st));
}

void hx_ask_on_change(struct hx_ask *a, void (*fn)(void *arg), void *arg)
{
	a->on_change = fn;
	a->change_arg = arg;
}
