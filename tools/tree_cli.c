/* harness-audit tree; see tree_cli.h. A process is known by the records
 * that carry its pid: its parent from their ppid, what it runs from its
 * exec records (an exec keeps the pid), its end from process_exit. A
 * pid that exited and comes back is a new process. */
#define _GNU_SOURCE
#include "tools/tree_cli.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sbuf.h"
#include "supervisor/record.h"
#include "tools/logline.h"
#include "tools/logscan.h"
#include "tools/sessions_cli.h"

static const char usage[] =
    "Usage: harness-audit tree [LOG | SESSION | --last] [--denials]\n"
    "                          [--json]\n"
    "\n"
    "Draws the session's processes as a tree: pid, what it ran (the argv\n"
    "of its last exec, earlier images after '<-'), how long it lived,\n"
    "how it ended (exit status or signal; '?' without a process_exit\n"
    "record: the exec gate records them), its decided calls and how many\n"
    "were refused, each refusal under it (verdict, call, rule).\n"
    "\n"
    "  --denials  only the processes on the way to a refusal: the chain\n"
    "             of execs that led to each\n"
    "  --json     one JSON object per process, parents first, with its\n"
    "             depth and the pids from the root (chain)\n";

struct refusal {
	char verdict[8], event[24], what[240], rule[96];
	long long ask; /* its question, or 0 */
	bool approved;
	struct refusal *next;
};

struct proc {
	long long pid, ppid;
	char start[40], end[40];
	char *exe;
	json_t *images;	  /* the argv of each exec, oldest first */
	char *last_image; /* the last as the log has it */
	bool exited, closed;
	json_t *how; /* exit_code or signal */
	size_t events, refused;
	struct refusal *ref, **ref_tail;
	struct proc *parent, *first_child, *last_child, *next;
	bool shown;
	bool lost_parent; /* its parent left no record: under the root */
};

struct tree {
	struct proc **all; /* in the order of their first record */
	size_t n, cap;
	/* pid -> its newest process (open addressing; 0: empty) */
	struct proc **by_pid;
	size_t slots;
	long long harness_pid;
	bool denials_only, as_json;
	FILE *out;
};

static struct proc **slot(struct tree *t, long long pid)
{
	size_t i = (size_t)pid * 0x9e3779b97f4a7c15ull & (t->slots - 1);

	while (t->by_pid[i] && t->by_pid[i]->pid != pid)
		i = (i + 1) & (t->slots - 1);
	return &t->by_pid[i];
}

static struct proc *current(struct tree *t, long long pid)
{
	struct proc *p = t->slots ? *slot(t, pid) : NULL;

	return p && !p->closed ? p : NULL;
}

/* p is its pid's newest process; the table stays at most half full. */
static bool index_pid(struct tree *t, struct proc *p)
{
	if (2 * (t->n + 1) > t->slots) {
		size_t old = t->slots;
		struct proc **was = t->by_pid;

		t->slots = old ? old * 2 : 1024;
		if (!(t->by_pid = calloc(t->slots, sizeof(*t->by_pid)))) {
			t->by_pid = was;
			t->slots = old;
			return false;
		}
		for (size_t i = 0; i < old; i++)
			if (was[i])
				*slot(t, was[i]->pid) = was[i];
		free(was);
	}
	*slot(t, p->pid) = p;
	return true;
}

static struct proc *add(struct tree *t, long long pid, long long ppid,
			const char *time)
{
	struct proc *p = calloc(1, sizeof(*p)), *parent;

	if (p)
		p->pid = pid;
	if (!p ||
	    (t->n == t->cap &&
	     !(t->all = reallocarray(t->all, t->cap = t->cap * 2 + 64,
				     sizeof(*t->all)))) ||
	    !index_pid(t, p)) {
		free(p);
		return NULL;
	}
	p->ppid = ppid;
	p->images = json_array();
	p->ref_tail = &p->ref;
	snprintf(p->start, sizeof(p->start), "%s", time);
	parent = current(t, ppid);
	/* A parent that made no decided call (a subshell that only forked)
	 * has no record: the child goes under the agent's first process. */
	if (!parent && t->n && ppid != t->harness_pid) {
		parent = t->all[0];
		p->lost_parent = true;
	}
	if (parent) {
		p->parent = parent;
		if (parent->last_child)
			parent->last_child->next = p;
		else
			parent->first_child = p;
		parent->last_child = p;
	}
	t->all[t->n++] = p;
	return p;
}

/* What a call acted on: an exec's argv, a path (-> its second), a host
 * or an address. */
static void target(json_t *rec, char *out, size_t size)
{
	json_t *args = json_object_get(rec, "args");
	const char *k[] = {"host", "addr", "path"};
	struct hx_sbuf b = {out, size, 0};
	json_t *argv = json_object_get(args, "argv");

	out[0] = '\0';
	if (json_array_size(argv)) {
		hx_sessions_command(argv, out, size);
		return;
	}
	for (size_t i = 0; i < 3 && !b.len; i++) {
		const char *v = json_string_value(json_object_get(args, k[i]));

		if (v)
			hx_sbuf_put_escaped(&b, v, strlen(v));
	}
	if (json_string_value(json_object_get(args, "path2"))) {
		const char *v = hx_record_field(args, "path2");

		hx_sbuf_put(&b, " -> ");
		hx_sbuf_put_escaped(&b, v, strlen(v));
	}
}

static void note_refusal(struct proc *p, json_t *rec, const char *verdict)
{
	struct refusal *r = calloc(1, sizeof(*r));

	if (!r)
		return;
	snprintf(r->verdict, sizeof(r->verdict), "%s", verdict);
	snprintf(r->event, sizeof(r->event), "%s", hx_record_field(rec, "op"));
	if (!r->event[0])
		snprintf(r->event, sizeof(r->event), "%s",
			 hx_record_field(rec, "event"));
	snprintf(r->rule, sizeof(r->rule), "%s", hx_record_field(rec, "rule"));
	target(rec, r->what, sizeof(r->what));
	r->ask = json_integer_value(json_object_get(rec, "ask"));
	*p->ref_tail = r;
	p->ref_tail = &r->next;
	p->refused++;
}

/* A question answered yes no longer counts as refused. */
static void answered(struct tree *t, json_t *rec)
{
	long long id = json_integer_value(json_object_get(rec, "ask"));

	if (!id || strcmp(hx_record_field(rec, "verdict"), "allow"))
		return;
	for (size_t i = 0; i < t->n; i++)
		for (struct refusal *r = t->all[i]->ref; r; r = r->next)
			if (r->ask == id && !r->approved) {
				r->approved = true;
				t->all[i]->refused--;
			}
}

/* The members tree reads of every record; a refusal and an answer are
 * parsed whole (they are few). */
enum {
	EVENT,
	VERDICT,
	TIME,
	PID,
	PPID,
	EXE,
	CATEGORY,
	ARGS,
	EXIT,
	SIGNAL,
	NKEYS
};
static const char *const keys[NKEYS] = {
    "event", "verdict",	 "time", "pid",	      "ppid",
    "exe",   "category", "args", "exit_code", "signal"};

/* An allowed exec: the pid runs that program from now on (the shim's
 * process_start says the same of an image it loaded in). */
static void ran(struct proc *p, const struct hx_span *argv)
{
	size_t n = json_array_size(p->images);
	json_t *v;

	if (n && p->last_image && strlen(p->last_image) == argv->n &&
	    !memcmp(p->last_image, argv->p, argv->n))
		return;
	v = json_loadb(argv->p, argv->n, 0, NULL);
	if (!json_is_array(v) || !json_array_size(v)) {
		json_decref(v);
		return;
	}
	json_array_append_new(p->images, v);
	free(p->last_image);
	p->last_image = strndup(argv->p, argv->n);
}

static void take(struct tree *t, char *line, size_t len)
{
	struct hx_span m[NKEYS], argv[1];
	char time[40], verdict[8], exe[PATH_MAX];
	long long pid;
	struct proc *p;
	json_t *rec;

	if (hx_scan_members(line, len, keys, NKEYS, m))
		return;
	pid = hx_span_int(&m[PID], 0);
	if (hx_span_is(&m[EVENT], "session_start"))
		t->harness_pid = pid;
	if (hx_span_is(&m[EVENT], "ask_answer")) {
		if ((rec = hx_logline_parse(line, len)))
			answered(t, rec);
		json_decref(rec);
		return;
	}
	if (pid <= 0 || pid == t->harness_pid)
		return;
	hx_span_str(&m[TIME], time, sizeof(time));
	p = current(t, pid);
	if (!p && !(p = add(t, pid, hx_span_int(&m[PPID], 0), time)))
		return;
	snprintf(p->end, sizeof(p->end), "%s", time);
	if (hx_span_is(&m[EVENT], "process_exit")) {
		p->exited = p->closed = true;
		p->how =
		    m[SIGNAL].p
			? json_string(hx_span_str(&m[SIGNAL], exe, sizeof(exe)))
			: json_integer(hx_span_int(&m[EXIT], 0));
		return;
	}
	if (m[EXE].p && (!p->exe || !hx_span_is(&m[EXE], p->exe))) {
		free(p->exe);
		p->exe = strdup(hx_span_str(&m[EXE], exe, sizeof(exe)));
	}
	hx_span_str(&m[VERDICT], verdict, sizeof(verdict));
	if (!verdict[0])
		return;
	p->events++;
	if (!strcmp(verdict, "allow")) {
		if ((hx_span_is(&m[CATEGORY], "exec") ||
		     hx_span_is(&m[EVENT], "process_start")) &&
		    m[ARGS].p &&
		    !hx_scan_members(m[ARGS].p, m[ARGS].n,
				     (const char *const[]){"argv"}, 1, argv) &&
		    argv[0].p)
			ran(p, argv);
		return;
	}
	if ((rec = hx_logline_parse(line, len)))
		note_refusal(p, rec, verdict);
	json_decref(rec);
}

/* Marks the processes on the way to a refusal. */
static bool mark(struct proc *p)
{
	bool any = p->refused > 0;

	for (struct proc *c = p->first_child; c; c = c->next)
		any |= mark(c);
	return p->shown = any;
}

static void what_ran(const struct proc *p, char *out, size_t size)
{
	size_t n = json_array_size(p->images);
	struct hx_sbuf b = {out, size, 0};
	char one[160];

	if (!n) {
		snprintf(out, size, "%s", p->exe ? p->exe : "?");
		return;
	}
	hx_sessions_command(json_array_get(p->images, n - 1), one, sizeof(one));
	hx_sbuf_put(&b, one);
	for (size_t i = n - 1; i-- > 0;) { /* what it was before */
		hx_sessions_command(json_array_get(p->images, i), one, 48);
		hx_sbuf_put(&b, "  <- ");
		hx_sbuf_put(&b, one);
	}
}

static void how_ended(const struct proc *p, char *out, size_t size)
{
	if (!p->exited)
		snprintf(out, size, "?");
	else if (json_is_string(p->how))
		snprintf(out, size, "%s", json_string_value(p->how));
	else
		snprintf(out, size, "exit %lld",
			 (long long)json_integer_value(p->how));
}

static void print_text(struct tree *t, const struct proc *p, const char *prefix,
		       bool last, bool root)
{
	char ran[512], dur[16], how[32], pre[512];
	double d = hx_sessions_seconds(p->start, p->end);

	if (t->denials_only && !p->shown)
		return;
	what_ran(p, ran, sizeof(ran));
	hx_sessions_duration(d, dur, sizeof(dur));
	how_ended(p, how, sizeof(how));
	fprintf(t->out, "%s%s%lld %s  [%s, %s, %zu event%s", prefix,
		root   ? ""
		: last ? "`-- "
		       : "|-- ",
		p->pid, ran, dur, how, p->events, p->events == 1 ? "" : "s");
	if (p->refused)
		fprintf(t->out, ", %zu refused", p->refused);
	if (p->lost_parent)
		fprintf(t->out, ", parent %lld left no record", p->ppid);
	fputs("]\n", t->out);
	snprintf(pre, sizeof(pre), "%s%s", prefix,
		 root	? ""
		 : last ? "    "
			: "|   ");
	for (const struct refusal *r = p->ref; r; r = r->next)
		fprintf(t->out, "%s%s  ! %s %s %s (rule %s)\n", pre,
			p->first_child ? "|" : " ",
			r->approved ? "asked, approved:" : r->verdict, r->event,
			r->what, r->rule);
	for (const struct proc *c = p->first_child; c; c = c->next) {
		const struct proc *after = c->next;

		while (t->denials_only && after && !after->shown)
			after = after->next;
		print_text(t, c, pre, !after, false);
	}
}

static json_t *chain_of(const struct proc *p)
{
	json_t *a = p->parent ? chain_of(p->parent) : json_array();

	json_array_append_new(a, json_integer(p->pid));
	return a;
}

static void print_json(struct tree *t, const struct proc *p, int depth)
{
	json_t *o = json_object(), *refs = json_array();
	char *line;

	if (t->denials_only && !p->shown)
		return;
	json_object_set_new(o, "pid", json_integer(p->pid));
	json_object_set_new(o, "ppid", json_integer(p->ppid));
	if (p->lost_parent)
		json_object_set_new(o, "parent_unrecorded", json_true());
	json_object_set_new(o, "depth", json_integer(depth));
	json_object_set_new(o, "chain", chain_of(p));
	if (p->exe)
		json_object_set_new(o, "exe", json_string(p->exe));
	json_object_set_new(o, "images", json_incref(p->images));
	json_object_set_new(o, "start", json_string(p->start));
	json_object_set_new(o, "end", json_string(p->end));
	json_object_set_new(o, "exited", json_boolean(p->exited));
	if (p->how)
		json_object_set(
		    o, json_is_string(p->how) ? "signal" : "exit_code", p->how);
	json_object_set_new(o, "events", json_integer((json_int_t)p->events));
	json_object_set_new(o, "refused", json_integer((json_int_t)p->refused));
	for (const struct refusal *r = p->ref; r; r = r->next)
		json_array_append_new(refs, json_pack("{s:s,s:s,s:s,s:s,s:b}",
						      "verdict", r->verdict,
						      "op", r->event, "target",
						      r->what, "rule", r->rule,
						      "approved", r->approved));
	json_object_set_new(o, "refusals", refs);
	line = json_dumps(o, JSON_COMPACT);
	if (line)
		fprintf(t->out, "%s\n", line);
	free(line);
	json_decref(o);
	for (const struct proc *c = p->first_child; c; c = c->next)
		print_json(t, c, depth + 1);
}

static int read_log(struct tree *t, const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return -1;
	while ((n = getline(&line, &cap, f)) > 0)
		take(t, line, (size_t)n);
	free(line);
	fclose(f);
	return 0;
}

static void drop(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct proc *p = t->all[i];

		while (p->ref) {
			struct refusal *r = p->ref;

			p->ref = r->next;
			free(r);
		}
		json_decref(p->images);
		free(p->last_image);
		json_decref(p->how);
		free(p->exe);
		free(p);
	}
	free(t->all);
	free(t->by_pid);
}

int hx_tree_cli(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct tree t = {.out = out};
	const char *log = NULL;
	char path[PATH_MAX];
	size_t roots = 0;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, out);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			t.as_json = true;
		} else if (!strcmp(argv[i], "--denials")) {
			t.denials_only = true;
		} else if ((argv[i][0] != '-' || !strcmp(argv[i], "--last")) &&
			   !log) {
			log = argv[i];
		} else {
			fprintf(err, "harness-audit: tree: unknown '%s'\n\n%s",
				argv[i], usage);
			return 2;
		}
	}
	if (hx_sessions_log(log, path, sizeof(path), err))
		return 2;
	if (read_log(&t, path)) {
		fprintf(err, "harness-audit: %s: %m\n", path);
		return 2;
	}
	/* Roots: the agent's first process, and any whose parent left no
	 * record (a subshell that only forked). */
	for (size_t i = 0; i < t.n; i++) {
		struct proc *p = t.all[i];

		if (p->parent || (t.denials_only && !mark(p)))
			continue;
		roots++;
		if (t.as_json)
			print_json(&t, p, 0);
		else
			print_text(&t, p, "", true, true);
	}
	drop(&t);
	return roots ? 0 : 1;
}
