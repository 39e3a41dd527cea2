/* A session's processes from its log; see proctree.h. */
#define _GNU_SOURCE
#include "supervisor/export/proctree.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sbuf.h"
#include "supervisor/record.h"
#include "supervisor/export/logline.h"
#include "supervisor/export/logscan.h"

static struct hx_ptree_proc **slot(struct hx_ptree *t, long long pid)
{
	size_t i = (size_t)pid * 0x9e3779b97f4a7c15ull & (t->slots - 1);

	while (t->by_pid[i] && t->by_pid[i]->pid != pid)
		i = (i + 1) & (t->slots - 1);
	return &t->by_pid[i];
}

static struct hx_ptree_proc *current(struct hx_ptree *t, long long pid)
{
	struct hx_ptree_proc *p = t->slots ? *slot(t, pid) : NULL;

	return p && !p->closed ? p : NULL;
}

/* p is its pid's newest process; the table stays at most half full. */
static bool index_pid(struct hx_ptree *t, struct hx_ptree_proc *p)
{
	if (2 * (t->n + 1) > t->slots) {
		size_t old = t->slots;
		struct hx_ptree_proc **was = t->by_pid;

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

static struct hx_ptree_proc *add(struct hx_ptree *t, long long pid,
				 long long ppid, const char *time)
{
	struct hx_ptree_proc *p = calloc(1, sizeof(*p)), *parent;

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
	p->image_paths = json_array();
	p->image_seqs = json_array();
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
	const char *k[] = {"host", "addr"};
	struct hx_sbuf b = {out, size, 0};
	json_t *argv = json_object_get(args, "argv");

	out[0] = '\0';
	if (json_array_size(argv)) {
		hx_argv_line(argv, out, size);
		return;
	}
	for (size_t i = 0; i < 2 && !b.len; i++) {
		const char *v = json_string_value(json_object_get(args, k[i]));

		if (v)
			hx_sbuf_put_escaped(&b, v, strlen(v));
	}
	if (!b.len)
		hx_paths_line(args, out, size);
}

static void put_path(struct hx_sbuf *b, json_t *args, const char *key,
		     const char *resolved)
{
	const char *p = hx_record_field(args, key),
		   *r = hx_record_field(args, resolved);

	hx_sbuf_put_escaped(b, p, strlen(p));
	if (*r && strcmp(p, r)) {
		hx_sbuf_put(b, " (resolved ");
		hx_sbuf_put_escaped(b, r, strlen(r));
		hx_sbuf_put(b, ")");
	}
}

void hx_paths_line(json_t *args, char *out, size_t size)
{
	struct hx_sbuf b = {out, size, 0};

	out[0] = '\0';
	if (!json_string_value(json_object_get(args, "path")))
		return;
	put_path(&b, args, "path", "path_resolved");
	if (json_string_value(json_object_get(args, "path2"))) {
		hx_sbuf_put(&b, " -> ");
		put_path(&b, args, "path2", "path2_resolved");
	}
}

/* Adds rec's refusal, standing for count calls, to p. */
static void note_refusal(struct hx_ptree_proc *p, json_t *rec,
			 const char *verdict, long long count)
{
	struct hx_ptree_refusal *r = calloc(1, sizeof(*r));

	p->refused += (size_t)count;
	if (!r)
		return;
	r->count = count;
	snprintf(r->verdict, sizeof(r->verdict), "%s", verdict);
	snprintf(r->op, sizeof(r->op), "%s", hx_record_field(rec, "op"));
	if (!r->op[0])
		snprintf(r->op, sizeof(r->op), "%s",
			 hx_record_field(rec, "event"));
	snprintf(r->rule, sizeof(r->rule), "%s", hx_record_field(rec, "rule"));
	snprintf(r->time, sizeof(r->time), "%s", hx_record_field(rec, "time"));
	target(rec, r->what, sizeof(r->what));
	r->ask = json_integer_value(json_object_get(rec, "ask"));
	*p->ref_tail = r;
	p->ref_tail = &r->next;
}

/* A question answered yes no longer counts as refused. */
static void answered(struct hx_ptree *t, json_t *rec)
{
	long long id = json_integer_value(json_object_get(rec, "ask"));

	if (!id || strcmp(hx_record_field(rec, "verdict"), "allow"))
		return;
	for (size_t i = 0; i < t->n; i++)
		for (struct hx_ptree_refusal *r = t->all[i]->ref; r;
		     r = r->next)
			if (r->ask == id && !r->approved) {
				r->approved = true;
				t->all[i]->refused -= (size_t)r->count;
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
	SEQ,
	REF_SEQ,
	NKEYS
};
static const char *const keys[NKEYS] = {
    "event",	"verdict", "time",	"pid",	  "ppid", "exe",
    "category", "args",	   "exit_code", "signal", "seq",  "ref_seq"};

/* An allowed exec: the pid runs that program from now on (the shim's
 * process_start says the same of an image it loaded in). */
static void ran(struct hx_ptree_proc *p, const struct hx_span *argv,
		const struct hx_span *path, long long seq)
{
	size_t n = json_array_size(p->images);
	char exe[PATH_MAX];
	json_t *v;

	hx_span_str(path, exe, sizeof(exe));
	if (n && p->last_image && strlen(p->last_image) == argv->n &&
	    !memcmp(p->last_image, argv->p, argv->n)) {
		/* the same image seen again (process_start after its exec):
		 * the later path is the kernel's own */
		if (exe[0])
			json_array_set_new(p->image_paths, n - 1,
					   json_string(exe));
		return;
	}
	v = json_loadb(argv->p, argv->n, 0, NULL);
	if (!json_is_array(v) || !json_array_size(v)) {
		json_decref(v);
		return;
	}
	json_array_append_new(p->images, v);
	json_array_append_new(p->image_paths,
			      exe[0] ? json_string(exe) : json_null());
	json_array_append_new(p->image_seqs, json_integer(seq));
	free(p->last_image);
	p->last_image = strndup(argv->p, argv->n);
}

/* A record that says the exec of record seq did not run (the kernel
 * refused it after its allow: failed; a shim claim the kernel layer
 * never saw: kernel_unconfirmed; revoked): that image is not the
 * process's. A python whose exec of a file the kernel refused (ENOEXEC)
 * was drawn and exported as that file's "ls -la" from then on, its own
 * refusals under it (twenty-fourth attack review). */
static void not_ran(struct hx_ptree_proc *p, long long seq)
{
	size_t n = json_array_size(p->image_seqs);
	json_t *last;

	for (size_t i = n; seq > 0 && i-- > 0;) {
		if (json_integer_value(json_array_get(p->image_seqs, i)) != seq)
			continue;
		json_array_remove(p->images, i);
		json_array_remove(p->image_paths, i);
		json_array_remove(p->image_seqs, i);
		if (i + 1 < n)
			return;
		free(p->last_image);
		last = json_array_get(p->images, i - 1);
		p->last_image = last ? json_dumps(last, JSON_COMPACT) : NULL;
		return;
	}
}

/* A group's process: its pid's newest, ended or not (the overflow
 * record comes within a second, or at the session's end), or one made
 * from the group (its pid, ppid and exe) when the pid has none. A child
 * that forked past the rate had every record coalesced (its shim's
 * process_start too): tree and export showed neither it nor its
 * refusals, though the log counted them (thirty-second attack review,
 * part a). */
static struct hx_ptree_proc *group_proc(struct hx_ptree *t, json_t *rec,
					json_t *g)
{
	json_int_t pid = json_integer_value(json_object_get(g, "pid"));
	struct hx_ptree_proc *p = t->slots ? *slot(t, pid) : NULL;
	const char *exe = json_string_value(json_object_get(g, "exe"));

	if (p || pid <= 0 || pid == t->harness_pid)
		return p;
	p = add(t, pid, json_integer_value(json_object_get(g, "ppid")),
		hx_record_field(rec, "since"));
	if (p && exe)
		p->exe = strdup(exe);
	if (p)
		snprintf(p->end, sizeof(p->end), "%s",
			 hx_record_field(rec, "until"));
	return p;
}

/* An audit_overflow record's groups: each the record of a call made
 * count times past the audit rate, counted in its process's events and
 * refusals as those records would be (tree and export counted none:
 * harness-exec's pid is the overflow record's). */
static void take_groups(struct hx_ptree *t, char *line, size_t len)
{
	json_t *rec = hx_logline_parse(line, len), *g, *c;
	struct hx_ptree_proc *p;
	const char *v;
	json_int_t n;
	size_t i;

	json_array_foreach(json_object_get(rec, "groups"), i, g)
	{
		if (!(p = group_proc(t, rec, g)))
			continue;
		n = json_integer_value(json_object_get(g, "count"));
		v = json_string_value(json_object_get(g, "verdict"));
		if (n <= 0 || !v)
			continue;
		p->events += (size_t)n;
		if (!strcmp(v, "allow"))
			continue;
		if (!(c = json_copy(g))) {
			p->refused += (size_t)n; /* counted, if not shown */
			continue;
		}
		json_object_set(c, "args", json_object_get(g, "first_args"));
		json_object_set(c, "time", json_object_get(rec, "until"));
		note_refusal(p, c, v, n);
		json_decref(c);
	}
	json_decref(rec);
}

static void take(struct hx_ptree *t, char *line, size_t len)
{
	struct hx_span m[NKEYS], argv[2];
	char time[40], verdict[8], exe[PATH_MAX];
	long long pid;
	struct hx_ptree_proc *p;
	json_t *rec;

	if (hx_scan_members(line, len, keys, NKEYS, m))
		return;
	pid = hx_span_int(&m[PID], 0);
	if (hx_span_is(&m[EVENT], "session_start") && !t->session_start) {
		t->harness_pid = pid;
		t->session_start = hx_logline_parse(line, len);
		return;
	}
	if (hx_span_is(&m[EVENT], "session_end") && pid == t->harness_pid) {
		json_decref(t->session_end);
		t->session_end = hx_logline_parse(line, len);
		return;
	}
	if (hx_span_is(&m[EVENT], "audit_overflow")) {
		take_groups(t, line, len);
		return;
	}
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
	if (m[REF_SEQ].p && (hx_span_is(&m[EVENT], "failed") ||
			     hx_span_is(&m[EVENT], "kernel_unconfirmed") ||
			     hx_span_is(&m[EVENT], "revoked")))
		not_ran(p, hx_span_int(&m[REF_SEQ], 0));
	hx_span_str(&m[VERDICT], verdict, sizeof(verdict));
	if (!verdict[0])
		return;
	p->events++;
	if (!strcmp(verdict, "allow")) {
		if ((hx_span_is(&m[CATEGORY], "exec") ||
		     hx_span_is(&m[EVENT], "process_start")) &&
		    m[ARGS].p &&
		    !hx_scan_members(m[ARGS].p, m[ARGS].n,
				     (const char *const[]){"argv", "path"}, 2,
				     argv) &&
		    argv[0].p)
			ran(p, &argv[0], &argv[1], hx_span_int(&m[SEQ], 0));
		return;
	}
	if ((rec = hx_logline_parse(line, len)))
		note_refusal(p, rec, verdict, 1);
	json_decref(rec);
}

void hx_ptree_take_line(struct hx_ptree *t, char *line, size_t n)
{
	take(t, line, n);
}

static void take_line(void *arg, char *line, size_t n)
{
	take(arg, line, n);
}

int hx_ptree_read(struct hx_ptree *t, const char *path)
{
	return hx_ptree_read_of(t, path, NULL);
}

int hx_ptree_read_of(struct hx_ptree *t, const char *path, const char *only)
{
	memset(t, 0, sizeof(*t));
	return hx_logline_each_of(path, only, take_line, t);
}

void hx_ptree_free(struct hx_ptree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct hx_ptree_proc *p = t->all[i];

		while (p->ref) {
			struct hx_ptree_refusal *r = p->ref;

			p->ref = r->next;
			free(r);
		}
		json_decref(p->images);
		json_decref(p->image_paths);
		json_decref(p->image_seqs);
		free(p->last_image);
		json_decref(p->how);
		free(p->exe);
		free(p);
	}
	free(t->all);
	free(t->by_pid);
	json_decref(t->session_start);
	json_decref(t->session_end);
}

void hx_argv_line(json_t *cmd, char *out, size_t size)
{
	struct hx_sbuf b = {out, size, 0};
	size_t i;
	json_t *w;

	out[0] = '\0';
	json_array_foreach(cmd, i, w)
	{
		const char *s = json_string_value(w);

		if (i)
			hx_sbuf_put(&b, " ");
		if (s)
			hx_sbuf_put_escaped(&b, s, strlen(s));
	}
}
