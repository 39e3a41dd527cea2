/* harness-audit summary; see summary_cli.h. */
#define _GNU_SOURCE
#include "tools/summary_cli.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/notice.h"
#include "supervisor/export/logline.h"
#include "supervisor/export/logscan.h"
#include "tools/sessions_cli.h"

static const char usage[] =
    "Usage: harness-audit summary [LOG | SESSION | --last] [--top N]\n"
    "\n"
    "Prints the number of records per category and verdict (\"failed\":\n"
    "calls allowed that the kernel then refused), each denied\n"
    "(or ask) event with its rule, the processes seen (pid, exe, argv),\n"
    "the N (default 10) hosts, path prefixes (three directories deep)\n"
    "and rules met most often, with how many of each were refused, and\n"
    "the decision latency per category and layer (p50, p90, p99, max),\n"
    "and the files whose changes the project's git index hides from git\n"
    "status and git diff at the session's end (hidden_changes records,\n"
    "and a branch the session rewrote: history_rewritten).\n"
    "Does not verify the chain: run verify for that.\n";

#define SUMMARY_PROCS  15
#define PREFIX_DEPTH   3
#define LATENCY_GROUPS 64

/* The values of one category and layer, in ns. */
struct latencies {
	char key[64];
	uint64_t *v;
	size_t n, cap;
};

/* The members a summary reads of each record. */
enum {
	EVENT,
	CATEGORY,
	VERDICT,
	RULE,
	LAYER,
	LATENCY,
	ENFORCED,
	SEQ,
	PID,
	PPID,
	EXE,
	ERROR,
	ARGS,
	NKEYS
};
static const char *const keys[NKEYS] = {
    "event", "category", "verdict", "rule", "layer", "latency_ns", "enforced",
    "seq",   "pid",	 "ppid",    "exe",  "error", "args"};
enum { A_PATH, A_ADDR, A_HOST, A_ARGV, A_RESOLVED, A_NKEYS };
static const char *const args_keys[A_NKEYS] = {"path", "addr", "host", "argv",
					       "path_resolved"};

struct rec {
	struct hx_span m[NKEYS], a[A_NKEYS];
	char category[32], verdict[8], layer[24];
};

struct summary {
	json_t *counts; /* category -> verdict -> n */
	json_t *denied; /* array of lines */
	json_t *hidden; /* lines: changes the user's git does not show */
	json_t *procs;	/* the first SUMMARY_PROCS, of nprocs */
	/* name -> [seen, refused] */
	json_t *hosts, *prefixes, *rules;
	struct latencies lat[LATENCY_GROUPS];
	size_t nlat, records, bad, top, nprocs;
	/* how many calls the record summed stands for: 1, or a coalesced
	 * group's count (sum_groups) */
	long long weight;
};

static void tally(json_t *table, const char *key, bool refused, long long w)
{
	json_t *e = json_object_get(table, key);

	if (!key[0])
		return;
	if (!e) {
		e = json_pack("[ii]", 0, 0);
		json_object_set_new(table, key, e);
	}
	json_array_set_new(
	    e, 0, json_integer(json_integer_value(json_array_get(e, 0)) + w));
	if (refused)
		json_array_set_new(
		    e, 1,
		    json_integer(json_integer_value(json_array_get(e, 1)) + w));
}

/* The first PREFIX_DEPTH directories of path: /home/me/proj/... */
static void prefix_of(const char *path, char *out, size_t size)
{
	const char *p = path;
	int depth = 0;

	if (path[0] != '/') {
		out[0] = '\0';
		return;
	}
	while (*p && depth < PREFIX_DEPTH) {
		p++;
		p += strcspn(p, "/");
		depth++;
	}
	/* the file itself is no prefix: only directories */
	if (!*p && depth <= PREFIX_DEPTH) {
		const char *slash = strrchr(path, '/');

		p = slash > path ? slash : path + 1;
	}
	snprintf(out, size, "%.*s", (int)(p - path), path);
}

static void add_latency(struct summary *s, const struct rec *r)
{
	long long l = hx_span_int(&r->m[LATENCY], -1);
	struct latencies *g = NULL;
	char key[64];

	if (l < 0)
		return;
	snprintf(key, sizeof(key), "%s %s", r->category, r->layer);
	for (size_t i = 0; i < s->nlat && !g; i++)
		if (!strcmp(s->lat[i].key, key))
			g = &s->lat[i];
	if (!g) {
		if (s->nlat == LATENCY_GROUPS)
			return;
		g = &s->lat[s->nlat++];
		snprintf(g->key, sizeof(g->key), "%s", key);
	}
	if (g->n == g->cap) {
		uint64_t *v =
		    reallocarray(g->v, g->cap = g->cap * 2 + 256, sizeof(*v));

		if (!v)
			return;
		g->v = v;
	}
	g->v[g->n++] = (uint64_t)l;
}

/* An argv as JSON, compact, with every byte past ASCII as \uXXXX (a
 * right-to-left override the log keeps as its bytes) and every control
 * as JSON escapes it: a terminal's text. */
static const char *raw(const struct hx_span *v, char *out, size_t size)
{
	json_t *j = v->p ? json_loadb(v->p, v->n, JSON_DECODE_ANY, NULL) : NULL;
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII |
					JSON_ENCODE_ANY)
		    : NULL;

	snprintf(out, size, "%s", s ? s : "");
	free(s);
	json_decref(j);
	return out;
}

static void add_process(struct summary *s, const struct rec *r)
{
	char buf[2048], exe[PATH_MAX], safe[1024], argv[768];

	/* A summary stays short: the full list is one `show` away. */
	if (s->nprocs++ >= SUMMARY_PROCS)
		return;
	snprintf(buf, sizeof(buf), "  pid %lld ppid %lld %s %s",
		 hx_span_int(&r->m[PID], 0), hx_span_int(&r->m[PPID], 0),
		 hx_text_safe(safe, sizeof(safe),
			      hx_span_str(&r->m[EXE], exe, sizeof(exe))),
		 raw(&r->a[A_ARGV], argv, sizeof(argv)));
	json_array_append_new(s->procs, json_string(buf));
}

static void add_denied(struct summary *s, const struct rec *r)
{
	char what[2 * PATH_MAX + 16], ev[32], rule[96], buf[2048], sw[1024],
	    se[128], sr[384];

	hx_span_str(&r->a[A_PATH], what, sizeof(what));
	if (what[0] && r->a[A_RESOLVED].p) { /* what it acted on too */
		char res[PATH_MAX];
		size_t n = strlen(what);

		hx_span_str(&r->a[A_RESOLVED], res, sizeof(res));
		if (strcmp(res, what))
			snprintf(what + n, sizeof(what) - n, " (resolved %s)",
				 res);
	}
	if (!what[0])
		hx_span_str(&r->a[A_ADDR], what, sizeof(what));
	if (!what[0])
		hx_span_str(&r->a[A_HOST], what, sizeof(what));
	if (!what[0])
		hx_span_str(&r->m[ERROR], what, sizeof(what));
	if (what[0])
		hx_text_safe(sw, sizeof(sw), what);
	else
		raw(&r->a[A_ARGV], sw, sizeof(sw)); /* terminal-safe */
	snprintf(buf, sizeof(buf), "  seq %lld pid %lld %s %s %s%s: rule %s",
		 hx_span_int(&r->m[SEQ], 0), hx_span_int(&r->m[PID], 0),
		 hx_text_safe(se, sizeof(se),
			      hx_span_str(&r->m[EVENT], ev, sizeof(ev))),
		 sw, r->verdict,
		 r->m[ENFORCED].p && r->m[ENFORCED].n == 5 ? " (not enforced)"
							   : "",
		 hx_text_safe(sr, sizeof(sr),
			      hx_span_str(&r->m[RULE], rule, sizeof(rule))));
	json_array_append_new(s->denied, json_string(buf));
}

/* A hidden_changes record's files, or a hidden_changes_failed's
 * error, as lines: what the user's git status and git diff do not show
 * (run_hidden.c). Rare: the line is parsed whole. */
static void add_hidden(struct summary *s, const char *line, size_t len)
{
	json_t *j = json_loadb(line, len, 0, NULL), *c;
	char buf[PATH_MAX + 64], safe[PATH_MAX], by[96], now_s[96];
	size_t i;

	if (!json_is_object(j)) {
		json_decref(j);
		return;
	}
	json_array_foreach(json_object_get(j, "changes"), i, c)
	{
		const char *now = json_string_value(json_object_get(c, "now"));

		snprintf(
		    buf, sizeof(buf), "  %s (%s%s%s)",
		    hx_text_safe(safe, sizeof(safe),
				 json_string_value(json_object_get(c, "path"))),
		    hx_text_safe(
			by, sizeof(by),
			json_string_value(json_object_get(c, "hidden_by"))),
		    now ? ", now " : "",
		    now ? hx_text_safe(now_s, sizeof(now_s), now) : "");
		json_array_append_new(s->hidden, json_string(buf));
	}
	/* history_rewritten: the branch of the start no longer holds its
	 * commit (an amend put the change in the user's own commit) */
	if (json_object_get(j, "was")) {
		snprintf(
		    buf, sizeof(buf), "  %s rewritten: was %.12s, now %.12s",
		    hx_text_safe(safe, sizeof(safe),
				 json_string_value(json_object_get(j, "ref"))),
		    hx_text_safe(by, sizeof(by),
				 json_string_value(json_object_get(j, "was"))),
		    hx_text_safe(now_s, sizeof(now_s),
				 json_string_value(json_object_get(j, "now"))));
		json_array_append_new(s->hidden, json_string(buf));
	}
	if (json_object_get(j, "error")) {
		snprintf(buf, sizeof(buf), "  not checked: %s",
			 hx_text_safe(
			     safe, sizeof(safe),
			     json_string_value(json_object_get(j, "error"))));
		json_array_append_new(s->hidden, json_string(buf));
	}
	json_decref(j);
}

static void sum_one(struct summary *s, const char *line, size_t len);

/* An audit_overflow record's groups, each summed as the record of the
 * calls it counts, weighed by its count: the summary counted none of
 * them, and a path read or written past the audit rate was in no
 * prefix. Rare: the line is parsed whole. */
static void sum_groups(struct summary *s, const char *line, size_t len)
{
	json_t *j = json_loadb(line, len, 0, NULL), *g, *c;
	char *text;
	size_t i;

	json_array_foreach(json_object_get(j, "groups"), i, g)
	{
		if (!json_is_object(g) || !(c = json_copy(g)))
			continue;
		json_object_set(c, "args", json_object_get(g, "first_args"));
		json_object_del(c, "first_args");
		text = json_dumps(c, JSON_COMPACT);
		s->weight = json_integer_value(json_object_get(g, "count"));
		if (text && s->weight > 0)
			sum_one(s, text, strlen(text));
		s->weight = 1;
		free(text);
		json_decref(c);
	}
	json_decref(j);
}

static void sum_one(struct summary *s, const char *line, size_t len)
{
	struct rec r;
	const char *cat = r.category, *ver = r.verdict;
	char prefix[PATH_MAX], v[PATH_MAX];
	json_t *c, *n;
	bool refused;

	if (hx_scan_members(line, len, keys, NKEYS, r.m) ||
	    (r.m[ARGS].p && hx_scan_members(r.m[ARGS].p, r.m[ARGS].n, args_keys,
					    A_NKEYS, r.a))) {
		s->bad++;
		return;
	}
	if (!r.m[ARGS].p)
		memset(r.a, 0, sizeof(r.a));
	hx_span_str(&r.m[CATEGORY], r.category, sizeof(r.category));
	hx_span_str(&r.m[VERDICT], r.verdict, sizeof(r.verdict));
	hx_span_str(&r.m[LAYER], r.layer, sizeof(r.layer));
	if (s->weight == 1)
		s->records++;
	if (hx_span_is(&r.m[EVENT], "audit_overflow")) {
		sum_groups(s, line, len);
		return;
	}
	if (hx_span_is(&r.m[EVENT], "process_start"))
		add_process(s, &r);
	if (hx_span_is(&r.m[EVENT], "hidden_changes") ||
	    hx_span_is(&r.m[EVENT], "hidden_changes_failed") ||
	    hx_span_is(&r.m[EVENT], "history_rewritten"))
		add_hidden(s, line, len);
	/* An allowed call the kernel then refused: counted beside its
	 * allow, as "failed". */
	if (!ver[0] && hx_span_is(&r.m[EVENT], "failed"))
		snprintf(r.verdict, sizeof(r.verdict), "failed");
	if (!cat[0] || !ver[0])
		return;
	c = json_object_get(s->counts, cat);
	if (!c) {
		c = json_object();
		json_object_set_new(s->counts, cat, c);
	}
	n = json_object_get(c, ver);
	json_object_set_new(
	    c, ver, json_integer((n ? json_integer_value(n) : 0) + s->weight));
	if (!strcmp(ver, "failed"))
		return;
	refused = !strcmp(ver, "deny") || !strcmp(ver, "ask");
	if (refused)
		add_denied(s, &r);
	tally(s->rules, hx_span_str(&r.m[RULE], v, sizeof(v)), refused,
	      s->weight);
	if (!strncmp(cat, "net_", 4)) {
		if (!hx_span_str(&r.a[A_HOST], v, sizeof(v))[0])
			hx_span_str(&r.a[A_ADDR], v, sizeof(v));
		tally(s->hosts, v, refused, s->weight);
	}
	if (!strncmp(cat, "file_", 5)) {
		/* where the call acted: through a link, its resolved path */
		if (!hx_span_str(&r.a[A_RESOLVED], v, sizeof(v))[0])
			hx_span_str(&r.a[A_PATH], v, sizeof(v));
		prefix_of(v, prefix, sizeof(prefix));
		tally(s->prefixes, prefix, refused, s->weight);
	}
	add_latency(s, &r);
}

static int by_count(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_array_get(*(json_t **)a, 1));
	json_int_t y = json_integer_value(json_array_get(*(json_t **)b, 1));

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The top N of a table, most seen first: [name, seen, refused]... */
static json_t *top_rows(json_t *table, size_t top)
{
	size_t n = json_object_size(table), i = 0;
	json_t **rows = calloc(n ? n : 1, sizeof(*rows)), *v, *out;
	const char *k;

	if (!rows)
		return NULL;
	json_object_foreach(table, k, v) rows[i++] =
	    json_pack("[s,I,I]", k, json_integer_value(json_array_get(v, 0)),
		      json_integer_value(json_array_get(v, 1)));
	qsort(rows, n, sizeof(*rows), by_count);
	out = json_array();
	for (i = 0; i < n; i++)
		if (i < top)
			json_array_append_new(out, rows[i]);
		else
			json_decref(rows[i]);
	free(rows);
	return out;
}

static void print_top(FILE *out, const char *title, json_t *table, size_t top)
{
	json_t *rows = top_rows(table, top), *r;
	size_t i;

	if (!json_array_size(rows)) {
		json_decref(rows);
		return;
	}
	fprintf(out, "top %s (%zu):\n", title, json_object_size(table));
	json_array_foreach(rows, i, r)
	{
		char safe[PATH_MAX * 4];

		fprintf(out, "  %8lld  %6lld refused  %s\n",
			json_integer_value(json_array_get(r, 1)),
			json_integer_value(json_array_get(r, 2)),
			hx_text_safe(safe, sizeof(safe),
				     json_string_value(json_array_get(r, 0))));
	}
	json_decref(rows);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void us(char *out, size_t size, uint64_t ns)
{
	snprintf(out, size, ns < 10000000 ? "%.1f" : "%.0f", (double)ns / 1e3);
}

static size_t rank(double q, size_t n)
{
	size_t r = (size_t)(q * (double)n + 0.999999);

	return r ? (r > n ? n : r) - 1 : 0;
}

static void print_latency(FILE *out, struct summary *s)
{
	if (!s->nlat)
		return;
	fprintf(out, "decision latency, us (category layer: n p50 p90 p99 "
		     "max):\n");
	for (size_t i = 0; i < s->nlat; i++) {
		struct latencies *g = &s->lat[i];
		char p[4][24], key[sizeof(g->key) * 4];
		const double q[] = {0.5, 0.9, 0.99};

		qsort(g->v, g->n, sizeof(*g->v), by_value);
		/* nearest rank: the smallest value at or above q of them */
		for (int k = 0; k < 3; k++)
			us(p[k], sizeof(p[k]), g->v[rank(q[k], g->n)]);
		us(p[3], sizeof(p[3]), g->v[g->n - 1]);
		fprintf(out, "  %-24s %8zu %8s %8s %8s %8s\n",
			hx_text_safe(key, sizeof(key), g->key), g->n, p[0],
			p[1], p[2], p[3]);
	}
}

static void sum_line(void *arg, char *line, size_t n)
{
	sum_one(arg, line, n);
}

static int read_log(struct summary *s, const char *path)
{
	char id[NAME_MAX + 1];

	return hx_logline_each_of(path, hx_sessions_only(path, id, sizeof(id)),
				  sum_line, s);
}

static void print(FILE *out, struct summary *s, const char *log)
{
	const char *cat, *ver;
	json_t *c, *n;
	size_t i;

	fprintf(out, "%s: %zu records%s\n", log, s->records,
		s->bad ? " (some lines unreadable: run verify)" : "");
	fprintf(out, "by category and verdict:\n");
	json_object_foreach(s->counts, cat, c)
	{
		char s1[256], s2[256];

		fprintf(out, "  %-12s", hx_text_safe(s1, sizeof(s1), cat));
		json_object_foreach(c, ver, n)
		    fprintf(out, " %s %lld", hx_text_safe(s2, sizeof(s2), ver),
			    json_integer_value(n));
		fputc('\n', out);
	}
	fprintf(out, "denied (%zu):\n", json_array_size(s->denied));
	for (i = 0; i < json_array_size(s->denied); i++)
		fprintf(out, "%s\n",
			json_string_value(json_array_get(s->denied, i)));
	if (json_array_size(s->hidden))
		fprintf(out, "hidden from git status and git diff (%zu):\n",
			json_array_size(s->hidden));
	for (i = 0; i < json_array_size(s->hidden); i++)
		fprintf(out, "%s\n",
			json_string_value(json_array_get(s->hidden, i)));
	fprintf(out, "processes (%zu):\n", s->nprocs);
	for (i = 0; i < json_array_size(s->procs); i++)
		fprintf(out, "%s\n",
			json_string_value(json_array_get(s->procs, i)));
	if (i < s->nprocs)
		fprintf(out,
			"  ... %zu more: harness-audit show %s --event "
			"process_start\n",
			s->nprocs - i, log);
	print_top(out, "hosts", s->hosts, s->top);
	print_top(out, "path prefixes", s->prefixes, s->top);
	print_top(out, "rules", s->rules, s->top);
	print_latency(out, s);
}

static void summary_init(struct summary *s)
{
	*s = (struct summary){.counts = json_object(),
			      .denied = json_array(),
			      .hidden = json_array(),
			      .procs = json_array(),
			      .hosts = json_object(),
			      .prefixes = json_object(),
			      .rules = json_object(),
			      .top = 10,
			      .weight = 1};
}

static void summary_free(struct summary *s)
{
	json_decref(s->counts);
	json_decref(s->denied);
	json_decref(s->hidden);
	json_decref(s->procs);
	json_decref(s->hosts);
	json_decref(s->prefixes);
	json_decref(s->rules);
	for (size_t i = 0; i < s->nlat; i++)
		free(s->lat[i].v);
}

json_t *hx_summary_json(const char *log, size_t top)
{
	struct summary s;
	json_t *o = NULL;

	summary_init(&s);
	if (!read_log(&s, log))
		o = json_pack("{s:O,s:I,s:I,s:o,s:o,s:o,s:O}", "counts",
			      s.counts, "records", (json_int_t)s.records,
			      "refused", (json_int_t)json_array_size(s.denied),
			      "hosts", top_rows(s.hosts, top), "path_prefixes",
			      top_rows(s.prefixes, top), "rules",
			      top_rows(s.rules, top), "hidden_from_git",
			      s.hidden);
	summary_free(&s);
	return o;
}

int hx_summary_cli(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct summary s;
	const char *log = NULL;
	char path[PATH_MAX], *end;
	int r = 0;

	summary_init(&s);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, out);
			goto out;
		} else if (!strcmp(argv[i], "--top") && i + 1 < argc) {
			s.top = strtoul(argv[++i], &end, 10);
			if (!argv[i][0] || *end) {
				fprintf(err,
					"harness-audit: summary: --top '%s' "
					"is not a number\n",
					argv[i]);
				r = 2;
				goto out;
			}
		} else if ((argv[i][0] != '-' || !strcmp(argv[i], "--last")) &&
			   !log) {
			log = argv[i];
		} else {
			fputs(usage, err);
			r = 2;
			goto out;
		}
	}
	if (hx_sessions_log(log, path, sizeof(path), err)) {
		r = 2;
		goto out;
	}
	if ((r = read_log(&s, path))) {
		fprintf(err, "harness-audit: %s: %s\n", path, strerror(-r));
		r = 2;
		goto out;
	}
	print(out, &s, path);
out:
	summary_free(&s);
	return r;
}
