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

#include "common/notice.h"
#include "common/sbuf.h"
#include "supervisor/record.h"
#include "supervisor/export/proctree.h"
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

struct tree {
	struct hx_ptree pt;
	bool denials_only, as_json;
	FILE *out;
};

/* Marks the processes on the way to a refusal. */
static bool mark(struct hx_ptree_proc *p)
{
	bool any = p->refused > 0;

	for (struct hx_ptree_proc *c = p->first_child; c; c = c->next)
		any |= mark(c);
	return p->shown = any;
}

static void what_ran(const struct hx_ptree_proc *p, char *out, size_t size)
{
	size_t n = json_array_size(p->images);
	struct hx_sbuf b = {out, size, 0};
	const char *path, *a0;
	char one[160];

	if (!n) {
		hx_text_safe(out, size, p->exe ? p->exe : "?");
		return;
	}
	/* What ran first: argv[0] is the caller's word (exec -a git
	 * /usr/bin/curl was drawn as "git ..."; the eleventh attack
	 * review), so the executable leads unless argv[0] is it. */
	path = json_string_value(json_array_get(p->image_paths, n - 1));
	a0 = json_string_value(
	    json_array_get(json_array_get(p->images, n - 1), 0));
	if (path && (!a0 || strcmp(a0, path))) {
		hx_sbuf_put_escaped(&b, path, strlen(path));
		hx_sbuf_put(&b, ": ");
	}
	hx_argv_line(json_array_get(p->images, n - 1), one, sizeof(one));
	hx_sbuf_put(&b, one);
	for (size_t i = n - 1; i-- > 0;) { /* what it was before */
		hx_argv_line(json_array_get(p->images, i), one, 48);
		hx_sbuf_put(&b, "  <- ");
		hx_sbuf_put(&b, one);
	}
}

static void how_ended(const struct hx_ptree_proc *p, char *out, size_t size)
{
	if (!p->exited)
		snprintf(out, size, "?");
	else if (json_is_string(p->how))
		hx_text_safe(out, size, json_string_value(p->how));
	else
		snprintf(out, size, "exit %lld",
			 (long long)json_integer_value(p->how));
}

static void print_text(struct tree *t, const struct hx_ptree_proc *p,
		       const char *prefix, bool last, bool root)
{
	char ran[512], dur[16], how[32], pre[512], sv[64], so[64], sr[512];
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
	/* r->what is terminal-safe (proctree.h); the rest from the record */
	for (const struct hx_ptree_refusal *r = p->ref; r; r = r->next) {
		char times[32] = ""; /* a group past the audit rate */

		if (r->count > 1)
			snprintf(times, sizeof(times), ", %lld times",
				 r->count);
		fprintf(t->out, "%s%s  ! %s %s %s (rule %s)%s\n", pre,
			p->first_child ? "|" : " ",
			r->approved ? "asked, approved:"
				    : hx_text_safe(sv, sizeof(sv), r->verdict),
			hx_text_safe(so, sizeof(so), r->op), r->what,
			hx_text_safe(sr, sizeof(sr), r->rule), times);
	}
	for (const struct hx_ptree_proc *c = p->first_child; c; c = c->next) {
		const struct hx_ptree_proc *after = c->next;

		while (t->denials_only && after && !after->shown)
			after = after->next;
		print_text(t, c, pre, !after, false);
	}
}

static json_t *chain_of(const struct hx_ptree_proc *p)
{
	json_t *a = p->parent ? chain_of(p->parent) : json_array();

	json_array_append_new(a, json_integer(p->pid));
	return a;
}

static void print_json(struct tree *t, const struct hx_ptree_proc *p, int depth)
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
	json_object_set_new(o, "image_paths", json_incref(p->image_paths));
	json_object_set_new(o, "start", json_string(p->start));
	json_object_set_new(o, "end", json_string(p->end));
	json_object_set_new(o, "exited", json_boolean(p->exited));
	if (p->how)
		json_object_set(
		    o, json_is_string(p->how) ? "signal" : "exit_code", p->how);
	json_object_set_new(o, "events", json_integer((json_int_t)p->events));
	json_object_set_new(o, "refused", json_integer((json_int_t)p->refused));
	for (const struct hx_ptree_refusal *r = p->ref; r; r = r->next)
		json_array_append_new(
		    refs, json_pack("{s:s,s:s,s:s,s:s,s:b,s:I}", "verdict",
				    r->verdict, "op", r->op, "target", r->what,
				    "rule", r->rule, "approved", r->approved,
				    "count", (json_int_t)r->count));
	json_object_set_new(o, "refusals", refs);
	line = json_dumps(o, JSON_COMPACT);
	if (line)
		fprintf(t->out, "%s\n", line);
	free(line);
	json_decref(o);
	for (const struct hx_ptree_proc *c = p->first_child; c; c = c->next)
		print_json(t, c, depth + 1);
}

int hx_tree_cli(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct tree t = {.out = out};
	const char *log = NULL;
	char path[PATH_MAX], id[NAME_MAX + 1];
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
	if (hx_ptree_read_of(&t.pt, path,
			     hx_sessions_only(path, id, sizeof(id)))) {
		fprintf(err, "harness-audit: %s: %m\n", path);
		return 2;
	}
	/* Roots: the agent's first process, and any whose parent left no
	 * record (a subshell that only forked). */
	for (size_t i = 0; i < t.pt.n; i++) {
		struct hx_ptree_proc *p = t.pt.all[i];

		if (p->parent || (t.denials_only && !mark(p)))
			continue;
		roots++;
		if (t.as_json)
			print_json(&t, p, 0);
		else
			print_text(&t, p, "", true, true);
	}
	hx_ptree_free(&t.pt);
	return roots ? 0 : 1;
}
