/* Alerts: the conditions watched on the session's records; see alerts.h. */
#define _GNU_SOURCE
#include "supervisor/alerts.h"

#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/names.h"
#include "common/notice.h"
#include "policy/policy.h"
#include "supervisor/audit.h"
#include "supervisor/pipeline.h"
#include "supervisor/proc.h"
#include "supervisor/record.h"

/* The processes seen, by pid, direct-mapped: a pid's parent and each
 * consecutive_denials rule's count for the tree below it. A slot taken
 * by another pid forgets the first; pids are handed out in order, so
 * two that share a slot are 4096 apart. The agent's first process has
 * a place of its own (the last): the tree of every process, orphans
 * too, would be forgotten by a child forked until its pid shares it. */
#define TREE_SLOTS 4096
#define TREE_DEPTH 32
/* A window is counted in buckets of window/16: a burst is seen within a
 * sixteenth of its window. */
#define BUCKETS	  16
#define MAX_FIRED 8
/* A rule that only records (log, notify) is written at most once in
 * this long: with count: 1 an agent's every refusal would be an alert,
 * past the log's rate quota. One that pauses, asks or kills always
 * acts. */
#define HOLDOFF_MS 1000
#define ACTING	   (HX_ACT_PAUSE | HX_ACT_KILL)

struct slot {
	pid_t pid, ppid;
};

struct window {
	uint64_t epoch[BUCKETS];
	unsigned n[BUCKETS];
};

struct rstate {
	struct window w;
	bool disk_low;	     /* said, until the space comes back */
	char name[72];	     /* "alert:ID", the rule an ask names */
	size_t streaks;	     /* consecutive_denials: its column of streak */
	uint64_t said_ms;    /* when it was last written */
	unsigned suppressed; /* held back since (HOLDOFF_MS) */
};

struct hx_alerts {
	pthread_mutex_t lock;
	const struct hx_alert_rule *rules;
	size_t n;
	bool quiet;
	struct rstate *st;
	struct slot slots[TREE_SLOTS + 1];
	unsigned *streak; /* [slot][rule column] */
	size_t ncols;
	const char *escalate; /* an ask action's rule, until taken */
	pid_t root;	      /* the agent's first process, or 0 */
	uint64_t disk_ms;     /* the last look at the file system */
	hx_alert_act_fn *act;
	void *act_arg;
};

int hx_alerts_new(const struct hx_policy *p, bool quiet, struct hx_alerts **out)
{
	struct hx_alerts *a;
	size_t n;
	const struct hx_alert_rule *rules = hx_policy_alerts(p, &n);

	*out = NULL;
	if (!n)
		return 0;
	if (!(a = calloc(1, sizeof(*a))) ||
	    !(a->st = calloc(n, sizeof(*a->st)))) {
		free(a);
		return -ENOMEM;
	}
	pthread_mutex_init(&a->lock, NULL);
	a->rules = rules;
	a->n = n;
	a->quiet = quiet;
	for (size_t i = 0; i < n; i++) {
		snprintf(a->st[i].name, sizeof(a->st[i].name), "alert:%s",
			 rules[i].id);
		if (rules[i].kind == HX_ALERT_DENIALS)
			a->st[i].streaks = a->ncols++;
	}
	if (a->ncols && !(a->streak = calloc((TREE_SLOTS + 1) * a->ncols,
					     sizeof(unsigned)))) {
		hx_alerts_free(a);
		return -ENOMEM;
	}
	*out = a;
	return 0;
}

void hx_alerts_free(struct hx_alerts *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
	free(a->streak);
	free(a->st);
	free(a);
}

void hx_alerts_set_root(struct hx_alerts *a, pid_t root)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->root = root;
	pthread_mutex_unlock(&a->lock);
}

void hx_alerts_set_act(struct hx_alerts *a, hx_alert_act_fn *fn, void *arg)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->act = fn;
	a->act_arg = arg;
	pthread_mutex_unlock(&a->lock);
}

bool hx_alerts_sensitive(unsigned c)
{
	return c == HX_CAT_EXEC || c == HX_CAT_FILE_WRITE ||
	       c == HX_CAT_NET_CONNECT || c == HX_CAT_NET_SEND ||
	       c == HX_CAT_NET_LISTEN;
}

const char *hx_alerts_escalate(struct hx_alerts *a)
{
	const char *r;

	if (!a)
		return NULL;
	pthread_mutex_lock(&a->lock);
	r = a->escalate;
	a->escalate = NULL;
	pthread_mutex_unlock(&a->lock);
	return r;
}

bool hx_alerts_disk_low(const struct hx_alert_rule *r, uint64_t free,
			uint64_t size)
{
	if (r->free_bytes && free < r->free_bytes)
		return true;
	/* free/size < pct/100, without overflow for any size */
	return r->free_pct && size &&
	       (long double)free * 100 < (long double)size * r->free_pct;
}

/* Calls within w's window, counting these n. */
static unsigned window_add(struct window *w, uint64_t window_ms, uint64_t now,
			   unsigned n)
{
	uint64_t width = window_ms / BUCKETS ? window_ms / BUCKETS : 1;
	uint64_t e = now / width;
	size_t i = (size_t)(e % BUCKETS);
	unsigned sum = 0;

	if (w->epoch[i] != e) {
		w->epoch[i] = e;
		w->n[i] = 0;
	}
	w->n[i] += n;
	for (size_t j = 0; j < BUCKETS; j++)
		if (w->epoch[j] + BUCKETS > e)
			sum += w->n[j];
	return sum;
}

static struct slot *slot_of(struct hx_alerts *a, pid_t pid, pid_t ppid)
{
	size_t i = pid == a->root ? TREE_SLOTS : (size_t)pid % TREE_SLOTS;
	struct slot *s = &a->slots[i];

	if (s->pid != pid) {
		s->pid = pid;
		/* a parent with no record of its own yet: asked of /proc */
		s->ppid = ppid ? ppid : hx_proc_ppid(pid);
		for (size_t c = 0; c < a->ncols; c++)
			a->streak[i * a->ncols + c] = 0;
	} else if (ppid) {
		s->ppid = ppid;
	}
	return s;
}

/* A decision of pid: each consecutive_denials rule's streak of every
 * tree pid is in (pid's own and its ancestors', up to harness-exec),
 * counted up by denied refusals (a folded storm's are many) and back
 * to 0 by anything else. The deepest
 * tree that reaches the count fires, and the streaks of the whole chain
 * start again. */
static void streaks(struct hx_alerts *a, pid_t pid, pid_t ppid, unsigned denied,
		    struct hx_alert_fired *out, size_t *nout)
{
	size_t chain[TREE_DEPTH], depth = 0;
	pid_t self = getpid(), p = pid;

	while (p > 1 && depth < TREE_DEPTH) {
		struct slot *s;

		/* An orphan's parent is harness-exec (the subreaper) now: it
		 * is still of the agent's first process's tree, or a double
		 * fork before each refused call would make every one a
		 * tree of its own. */
		if (p == self && (pid == self || (p = a->root) <= 0))
			break; /* harness-exec's own records are no call */
		s = slot_of(a, p, p == pid ? ppid : 0);

		for (size_t k = 0; k < depth; k++)
			if (chain[k] == (size_t)(s - a->slots))
				goto walked; /* a cycle of stale slots */
		chain[depth++] = (size_t)(s - a->slots);
		p = s->ppid;
	}
walked:
	for (size_t r = 0; r < a->n; r++) {
		const struct hx_alert_rule *rule = &a->rules[r];
		size_t col = a->st[r].streaks;
		bool fired = false;

		if (rule->kind != HX_ALERT_DENIALS)
			continue;
		for (size_t k = 0; k < depth; k++) {
			unsigned *v = &a->streak[chain[k] * a->ncols + col];

			*v = denied ? *v + denied : 0;
			if (!fired && *v >= rule->count && *nout < MAX_FIRED) {
				struct hx_alert_fired *f = &out[(*nout)++];

				*f = (struct hx_alert_fired){
				    .rule = rule,
				    .tree = a->slots[chain[k]].pid,
				    .pid = pid,
				    .value = *v};
				snprintf(f->what, sizeof(f->what),
					 "%u denied calls in a row in the "
					 "tree of pid %d",
					 *v, (int)f->tree);
				fired = true;
			}
		}
		for (size_t k = 0; fired && k < depth; k++)
			a->streak[chain[k] * a->ncols + col] = 0;
	}
}

static bool rule_listed(const struct hx_alert_rule *r, const char *rule)
{
	if (!r->nrules)
		return true;
	for (size_t i = 0; i < r->nrules; i++)
		if (!fnmatch(r->rules[i], rule, 0))
			return true;
	return false;
}

/* rate and sensitive_burst: the calls they count, in their window. */
static void windows(struct hx_alerts *a, const char *cat, unsigned calls,
		    bool denied, const char *rule, pid_t pid,
		    struct hx_alert_fired *out, size_t *nout)
{
	uint64_t now = hx_mono_ms();

	for (size_t r = 0; r < a->n && *nout < MAX_FIRED; r++) {
		const struct hx_alert_rule *ar = &a->rules[r];
		struct hx_alert_fired *f;
		unsigned n;

		if (ar->kind == HX_ALERT_RATE
			? strcmp(cat, hx_category_name(ar->category))
			: ar->kind != HX_ALERT_SECRETS || !denied ||
			      strcmp(cat, "file_read") ||
			      !rule_listed(ar, rule))
			continue;
		n = window_add(&a->st[r].w, ar->window_ms, now, calls);
		if (n < ar->count)
			continue;
		memset(&a->st[r].w, 0, sizeof(a->st[r].w));
		f = &out[(*nout)++];
		*f =
		    (struct hx_alert_fired){.rule = ar, .pid = pid, .value = n};
		snprintf(f->what, sizeof(f->what), "%u %s%s within %llu ms", n,
			 ar->kind == HX_ALERT_RATE ? "calls of "
						   : "denied reads",
			 ar->kind == HX_ALERT_RATE ? cat : "",
			 (unsigned long long)ar->window_ms);
	}
}

static void kind_fired(struct hx_alerts *a, enum hx_alert_kind kind,
		       const char *what, struct hx_alert_fired *out,
		       size_t *nout)
{
	for (size_t r = 0; r < a->n && *nout < MAX_FIRED; r++)
		if (a->rules[r].kind == kind) {
			out[*nout] =
			    (struct hx_alert_fired){.rule = &a->rules[r]};
			snprintf(out[*nout].what, sizeof(out[*nout].what), "%s",
				 what);
			(*nout)++;
		}
}

/* Whether r's alert is held back (HOLDOFF_MS); else how many were
 * since the last is taken into *suppressed. */
static bool holdoff(struct hx_alerts *a, const struct hx_alert_rule *r,
		    unsigned *suppressed)
{
	struct rstate *st = &a->st[r - a->rules];
	uint64_t now = hx_mono_ms();
	bool held;

	pthread_mutex_lock(&a->lock);
	held = !(r->actions & ACTING) && st->said_ms &&
	       now - st->said_ms < HOLDOFF_MS;
	if (held) {
		st->suppressed++;
	} else {
		*suppressed = st->suppressed;
		st->suppressed = 0;
		st->said_ms = now;
	}
	pthread_mutex_unlock(&a->lock);
	return held;
}

/* The alert record, the line, the actions: outside the lock (the record
 * is appended through the pipeline, which comes back here with it). */
static void emit(struct hx_pipeline *pl, const struct hx_alert_fired *f)
{
	struct hx_alerts *a = pl->alerts;
	const struct hx_alert_rule *r = f->rule;
	json_t *rec = hx_record_new(pl, NULL, "alert", NULL), *acts;
	hx_alert_act_fn *act;
	char origin[PATH_MAX + 16];
	uint64_t seq = 0;
	unsigned suppressed = 0;
	char safe[4 * sizeof(f->what)];
	void *arg;

	if (!rec)
		return;
	if (holdoff(a, r, &suppressed)) {
		json_decref(rec);
		return;
	}
	hx_record_set_str(rec, "category", "process");
	hx_record_set_str(rec, "risk", "high");
	hx_record_set_str(rec, "alert", r->id);
	hx_record_set_str(rec, "when", hx_alert_kind_name(r->kind));
	snprintf(origin, sizeof(origin), "%s:%u", r->file ? r->file : "?",
		 r->line);
	hx_record_set_str(rec, "origin", origin);
	acts = json_array();
	for (unsigned b = HX_ACT_NOTIFY; b <= HX_ACT_KILL; b <<= 1)
		if (r->actions & b)
			json_array_append_new(
			    acts, json_string(hx_alert_action_name(b)));
	json_object_set_new(rec, "actions", acts);
	if (f->tree)
		json_object_set_new(rec, "tree", json_integer(f->tree));
	if (f->pid)
		json_object_set_new(rec, "last_pid", json_integer(f->pid));
	json_object_set_new(rec, "value", json_integer((json_int_t)f->value));
	if (suppressed)
		json_object_set_new(rec, "suppressed",
				    json_integer((json_int_t)suppressed));
	hx_record_set_str(rec, "reason", f->what);
	hx_record_append(pl, rec, &seq);
	/* what may quote the agent's file names (git's errors) */
	hx_text_escape(safe, sizeof(safe), f->what);
	if (!a->quiet)
		fprintf(stderr, "harness: alert %s: %s%s\n", r->id, safe,
			r->actions & HX_ACT_KILL    ? "; ending the agent"
			: r->actions & HX_ACT_PAUSE ? "; the agent is paused "
						      "(harness-exec resume)"
			: r->actions & HX_ACT_ASK   ? "; its next call is asked"
						    : "");
	pthread_mutex_lock(&a->lock);
	if (r->actions & HX_ACT_ASK)
		a->escalate = a->st[r - a->rules].name;
	act = a->act;
	arg = a->act_arg;
	pthread_mutex_unlock(&a->lock);
	if (act && (r->actions & (HX_ACT_NOTIFY | HX_ACT_PAUSE | HX_ACT_KILL)))
		act(arg, f, rec, seq);
	json_decref(rec);
}

static void emit_all(struct hx_pipeline *pl, const struct hx_alert_fired *f,
		     size_t n)
{
	for (size_t i = 0; i < n; i++)
		emit(pl, &f[i]);
}

void hx_alerts_record(struct hx_pipeline *pl, json_t *rec)
{
	struct hx_alerts *a = pl->alerts;
	struct hx_alert_fired fired[MAX_FIRED];
	size_t n = 0;
	const char *ev, *cat, *v;
	pid_t pid, ppid;
	json_int_t rep;
	unsigned calls;
	bool denied;

	if (!a)
		return;
	ev = hx_record_field(rec, "event");
	cat = hx_record_field(rec, "category");
	v = hx_record_field(rec, "verdict");
	if (!strcmp(ev, "checkpoint_failed")) {
		pthread_mutex_lock(&a->lock);
		kind_fired(a, HX_ALERT_CHECKPOINT,
			   hx_record_field(rec, "error"), fired, &n);
		pthread_mutex_unlock(&a->lock);
		emit_all(pl, fired, n);
		return;
	}
	/* A decision of the agent's calls: not an answer, nor a process's
	 * start (its HELLO, allowed, would break every streak). */
	if (!*v || !*cat || !strcmp(cat, "process") ||
	    !json_object_get(rec, "layer") || !strcmp(ev, "ask_answer"))
		return;
	denied = !strcmp(v, "deny");
	/* A storm the kernel layers fold (the same refusal again and again)
	 * is a record with repeated: N, N calls: counted as one, a loop of
	 * thousands of refused opens would stay under every threshold. */
	rep = json_integer_value(json_object_get(rec, "repeated"));
	calls = rep > 0 ? (unsigned)(rep < 1 << 20 ? rep : 1 << 20) : 1;
	pid = (pid_t)json_integer_value(json_object_get(rec, "pid"));
	ppid = (pid_t)json_integer_value(json_object_get(rec, "ppid"));
	pthread_mutex_lock(&a->lock);
	if (a->ncols && pid > 0)
		streaks(a, pid, ppid, denied ? calls : 0, fired, &n);
	windows(a, cat, calls, denied, hx_record_field(rec, "rule"), pid, fired,
		&n);
	pthread_mutex_unlock(&a->lock);
	emit_all(pl, fired, n);
}

void hx_alerts_tick(struct hx_pipeline *pl)
{
	struct hx_alerts *a = pl->alerts;
	struct hx_alert_fired fired[MAX_FIRED];
	struct statvfs sv;
	uint64_t now = hx_mono_ms(), free, size;
	size_t n = 0;

	if (!a || !pl->audit || now - a->disk_ms < 1000)
		return;
	a->disk_ms = now;
	if (fstatvfs(hx_audit_fd(pl->audit), &sv))
		return;
	free = (uint64_t)sv.f_bavail * sv.f_frsize;
	size = (uint64_t)sv.f_blocks * sv.f_frsize;
	pthread_mutex_lock(&a->lock);
	for (size_t r = 0; r < a->n && n < MAX_FIRED; r++) {
		const struct hx_alert_rule *ar = &a->rules[r];
		bool low;

		if (ar->kind != HX_ALERT_DISK)
			continue;
		low = hx_alerts_disk_low(ar, free, size);
		if (low && !a->st[r].disk_low) {
			fired[n] =
			    (struct hx_alert_fired){.rule = ar, .value = free};
			snprintf(fired[n].what, sizeof(fired[n].what),
				 "the audit log's file system has %llu MiB "
				 "free of %llu MiB",
				 (unsigned long long)(free >> 20),
				 (unsigned long long)(size >> 20));
			n++;
		}
		a->st[r].disk_low = low;
	}
	pthread_mutex_unlock(&a->lock);
	emit_all(pl, fired, n);
}
