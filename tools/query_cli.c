/* harness-audit query; see query_cli.h. */
#define _GNU_SOURCE
#include "tools/query_cli.h"

#include <fnmatch.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/glob.h"
#include "common/notice.h"
#include "common/sbuf.h"
#include "supervisor/fmt.h"
#include "supervisor/record.h"
#include "supervisor/export/proctree.h"
#include "supervisor/export/logline.h"
#include "tools/sessions_cli.h"

static const char usage[] =
    "Usage: harness-audit query [LOG | SESSION | --last] [FILTER...]\n"
    "                           [--json]\n"
    "\n"
    "Prints the records that match every filter given: one JSON object\n"
    "per line as stored (jq reads them), or on a terminal a table (time,\n"
    "pid, event, verdict, rule, what). Exits 1 when nothing matched.\n"
    "\n"
    "Filters:\n"
    "  --event E      the libc entry point or record kind (execve, openat,\n"
    "                 connect, process_start, ask_answer, session_end...)\n"
    "  --category C   exec, file_read, file_write, net_connect, net_send,\n"
    "                 net_resolve, net_listen, process\n"
    "  --verdict V    allow, ask, deny\n"
    "  --rule R       the rule's id (default:file_write, harness:protect)\n"
    "  --layer L      shim, kernel, shim+kernel, mask, harness\n"
    "  --class K      an exec's class (read_only ... destructive)\n"
    "  --pid P        the process (its pid)\n"
    "  --exe GLOB     the process's executable (/usr/bin/*)\n"
    "  --path GLOB    a path of the call (args.path, args.path2; ** spans\n"
    "                 directories)\n"
    "  --host GLOB    a host of a connect or lookup (by name or address;\n"
    "                 *.example.com)\n"
    "  --since T, --until T\n"
    "                 a time: ISO 8601 in UTC (2026-12-02T07:00, any\n"
    "                 prefix), or an age (30s, 15m, 2h, 7d)\n"
    "  --json         JSON lines on a terminal too\n";

/* A filter on a string field: the record's value must equal it. */
struct exact {
	const char *key, *want;
	char needle[320]; /* "key":"want" as the log writes it */
};

struct query {
	struct exact ex[6];
	size_t nex;
	/* the longest literal run of the --path and --exe globs: a line
	 * without it cannot match (".ssh/" of a glob on ~/.ssh) */
	char lit[2][256];
	size_t nlit;
	long long pid;
	bool has_pid, as_lines;
	const char *exe, *path, *host;
	char since[40], until[40];
	size_t matched;
	FILE *out;
};

/* An age ("15m") or an ISO prefix, as the ISO text records compare with. */
static int parse_time(const char *in, char *out, size_t size)
{
	long long age;
	time_t t;
	struct tm tm;

	if (strspn(in, "0123456789") == 4 && (in[4] == '\0' || in[4] == '-')) {
		snprintf(out, size, "%s", in);
		return 0;
	}
	if ((age = hx_fmt_parse_age(in)) < 0)
		return -1;
	t = time(NULL) - (time_t)age;
	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%S", &tm);
	return 0;
}

static bool host_matches(const char *glob, json_t *args)
{
	const char *addr = hx_record_field(args, "addr"),
		   *host = hx_record_field(args, "host");
	char a[300];
	const char *colon;
	size_t i;
	json_t *n;

	if (host[0] && !fnmatch(glob, host, FNM_CASEFOLD))
		return true;
	json_array_foreach(json_object_get(args, "names"), i, n)
	{
		if (json_string_value(n) &&
		    !fnmatch(glob, json_string_value(n), FNM_CASEFOLD))
			return true;
	}
	/* "1.2.3.4:443", "[::1]:80": the address without its port */
	colon = strrchr(addr, ':');
	if (!addr[0] || !colon || strncmp(addr, "unix:", 5) == 0)
		return false;
	snprintf(a, sizeof(a), "%.*s", (int)(colon - addr), addr);
	if (a[0] == '[' && a[strlen(a) - 1] == ']') {
		memmove(a, a + 1, strlen(a));
		a[strlen(a) - 1] = '\0';
	}
	return !fnmatch(glob, a, 0);
}

/* A path filter matches what a call named and what it acted on: a
 * write through a link in the project to a file outside has that file
 * as its path_resolved only. */
static bool path_matches(const char *glob, json_t *args)
{
	static const char *const k[] = {"path_resolved", "path2_resolved"};

	if (hx_glob_match(glob, hx_record_field(args, "path")) ||
	    hx_glob_match(glob, hx_record_field(args, "path2")))
		return true;
	for (size_t i = 0; i < 2; i++)
		if (*hx_record_field(args, k[i]) &&
		    hx_glob_match(glob, hx_record_field(args, k[i])))
			return true;
	return false;
}

static bool matches(const struct query *q, json_t *r)
{
	json_t *args = json_object_get(r, "args");
	const char *t = hx_record_field(r, "time");

	for (size_t i = 0; i < q->nex; i++)
		if (strcmp(hx_record_field(r, q->ex[i].key), q->ex[i].want))
			return false;
	if (q->has_pid &&
	    json_integer_value(json_object_get(r, "pid")) != q->pid)
		return false;
	if (q->since[0] && strcmp(t, q->since) < 0)
		return false;
	if (q->until[0] && strncmp(t, q->until, strlen(q->until)) > 0)
		return false;
	if (q->exe && fnmatch(q->exe, hx_record_field(r, "exe"), 0))
		return false;
	if (q->path && !path_matches(q->path, args))
		return false;
	if (q->host && !host_matches(q->host, args))
		return false;
	return true;
}

/* A record, or an audit_overflow record one of whose groups (the same
 * call, counted past the rate: its pid, event, op, verdict, rule and
 * first_args) matches as that call's record would: a query for a path
 * found nothing of a call coalesced. */
static bool matches_any(const struct query *q, json_t *r)
{
	json_t *g, *c;
	size_t i;
	bool hit = false;

	if (matches(q, r))
		return true;
	if (strcmp(hx_record_field(r, "event"), "audit_overflow"))
		return false;
	json_array_foreach(json_object_get(r, "groups"), i, g)
	{
		if (hit || !json_is_object(g) || !(c = json_copy(r)))
			continue;
		json_object_del(c, "groups");
		json_object_update(c, g);
		json_object_set(c, "args", json_object_get(g, "first_args"));
		hit = matches(q, c);
		json_decref(c);
	}
	return hit;
}

/* What a record is about, for the table: a path, an argv, an address. */
static void what(json_t *r, char *out, size_t size)
{
	json_t *args = json_object_get(r, "args"), *argv, *w;
	struct hx_sbuf b = {out, size, 0};
	const char *s;
	size_t i;

	out[0] = '\0';
	if ((argv = json_object_get(args, "argv")) && json_array_size(argv)) {
		/* the executable first unless argv[0] is it (exec -a) */
		s = hx_record_field(args, "path");
		if (*s && strcmp(s, json_string_value(json_array_get(argv, 0))
					?: "")) {
			hx_sbuf_put_escaped(&b, s, strlen(s));
			hx_sbuf_put(&b, ": ");
		}
		json_array_foreach(argv, i, w)
		{
			if (i)
				hx_sbuf_put(&b, " ");
			if ((s = json_string_value(w)))
				hx_sbuf_put_escaped(&b, s, strlen(s));
		}
		return;
	}
	if (*hx_record_field(args, "path")) {
		hx_paths_line(args, out, size);
		return;
	}
	s = *hx_record_field(args, "addr") ? hx_record_field(args, "addr")
					   : hx_record_field(args, "host");
	hx_sbuf_put_escaped(&b, s, strlen(s));
}

static void print(struct query *q, json_t *r, const char *line)
{
	char w[512], st[64], se[64], sv[64], sr[128];
	const char *t = hx_record_field(r, "time");

	q->matched++;
	if (q->as_lines) {
		fprintf(q->out, "%s\n", line);
		return;
	}
	what(r, w, sizeof(w));
	/* every field terminal-safe: a record's strings are the agent's */
	fprintf(q->out, "%-12.12s %7lld %-14.14s %-6s %-24.24s %s\n",
		hx_text_safe(st, sizeof(st), strlen(t) > 11 ? t + 11 : t),
		(long long)json_integer_value(json_object_get(r, "pid")),
		hx_text_safe(se, sizeof(se), hx_record_field(r, "event")),
		hx_text_safe(sv, sizeof(sv), hx_record_field(r, "verdict")),
		hx_text_safe(sr, sizeof(sr), hx_record_field(r, "rule")), w);
}

/* Each line: the needles first (no parse for a line that cannot
 * match), then the record. */
static void one_line(void *arg, char *line, size_t n)
{
	struct query *q = arg;
	json_error_t e;
	json_t *r;
	bool skip = false;

	for (size_t i = 0; i < q->nex && !skip; i++)
		skip =
		    !memmem(line, n, q->ex[i].needle, strlen(q->ex[i].needle));
	for (size_t i = 0; i < q->nlit && !skip; i++)
		skip = !memmem(line, n, q->lit[i], strlen(q->lit[i]));
	if (skip || !(r = json_loadb(line, n, 0, &e)))
		return;
	if (line[n - 1] == '\n')
		line[n - 1] = '\0';
	if (matches_any(q, r))
		print(q, r, line);
	json_decref(r);
}

static int run(struct query *q, const char *log)
{
	char id[NAME_MAX + 1];

	return hx_logline_each_of(log, hx_sessions_only(log, id, sizeof(id)),
				  one_line, q);
}

/* The longest run of glob without a special character, as the log
 * writes it in a string (JSON-escaped); none when shorter than 3. */
static void add_literal(struct query *q, const char *glob)
{
	size_t best = 0, at = 0, i = 0;
	json_t *js;
	char run[256], *j;

	while (glob[i]) {
		size_t n = strcspn(glob + i, "*?[\\");

		if (n > best) {
			best = n;
			at = i;
		}
		i += n ? n : 1;
	}
	if (best < 3 || best >= sizeof(run))
		return;
	memcpy(run, glob + at, best);
	run[best] = '\0';
	js = json_string(run);
	j = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
	json_decref(js);
	if (j && strlen(j) - 2 < sizeof(q->lit[0])) {
		memcpy(q->lit[q->nlit], j + 1, strlen(j) - 2);
		q->lit[q->nlit++][strlen(j) - 2] = '\0';
	}
	free(j);
}

static int add_exact(struct query *q, const char *key, const char *want)
{
	struct exact *x = &q->ex[q->nex];
	json_t *js = json_string(want);
	char *j = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;

	json_decref(js);
	if (q->nex == sizeof(q->ex) / sizeof(q->ex[0]) || !j) {
		free(j);
		return -1;
	}
	snprintf(x->needle, sizeof(x->needle), "\"%s\":%s", key, j);
	free(j);
	x->key = key;
	x->want = want;
	q->nex++;
	return 0;
}

int hx_query_cli(int argc, char *const *argv, FILE *out, FILE *err)
{
	static const char *const exact[][2] = {
	    {"--event", "event"},     {"--category", "category"},
	    {"--verdict", "verdict"}, {"--rule", "rule"},
	    {"--layer", "layer"},     {"--class", "class"}};
	struct query q = {.out = out, .as_lines = !isatty(fileno(out))};
	const char *log = NULL;
	char path[PATH_MAX], *end;

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool known = false;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, out);
			return 0;
		}
		if (!strcmp(a, "--json")) {
			q.as_lines = true;
			continue;
		}
		if (a[0] != '-' || !strcmp(a, "--last")) {
			if (log) {
				fputs(usage, err);
				return 2;
			}
			log = a;
			continue;
		}
		if (!v) {
			fprintf(err, "harness-audit: query: %s needs a value\n",
				a);
			return 2;
		}
		for (size_t k = 0; k < sizeof(exact) / sizeof(exact[0]); k++)
			if (!strcmp(a, exact[k][0])) {
				if (add_exact(&q, exact[k][1], v))
					return 2;
				known = true;
			}
		if (!strcmp(a, "--pid")) {
			q.pid = strtoll(v, &end, 10);
			if (!*v || *end) {
				fprintf(err,
					"harness-audit: query: --pid '%s' "
					"is not a number\n",
					v);
				return 2;
			}
			q.has_pid = known = true;
		} else if (!strcmp(a, "--exe")) {
			add_literal(&q, q.exe = v);
			known = true;
		} else if (!strcmp(a, "--path")) {
			add_literal(&q, q.path = v);
			known = true;
		} else if (!strcmp(a, "--host")) {
			q.host = v;
			known = true;
		} else if (!strcmp(a, "--since") || !strcmp(a, "--until")) {
			char *to = a[2] == 's' ? q.since : q.until;

			if (parse_time(v, to, sizeof(q.since))) {
				fprintf(err,
					"harness-audit: query: %s '%s': give "
					"2026-12-02T07:00 or an age: 30s, 15m, "
					"2h, 7d\n",
					a, v);
				return 2;
			}
			known = true;
		}
		if (!known) {
			fprintf(err,
				"harness-audit: query: unknown option "
				"'%s'\n\n%s",
				a, usage);
			return 2;
		}
		i++;
	}
	if (hx_sessions_log(log, path, sizeof(path), err))
		return 2;
	if (run(&q, path)) {
		fprintf(err, "harness-audit: %s: %m\n", path);
		return 2;
	}
	return q.matched ? 0 : 1;
}
