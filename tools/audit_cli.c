/* harness-audit subcommands; see auditcli.h. */
#include "tools/audit_cli.h"

#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/audit.h"
#include "supervisor/record.h"
#include "supervisor/git/wtaudit.h"
#include "tools/query_cli.h"
#include "tools/sessions_cli.h"
#include "tools/tag_cli.h"

static const char usage_main[] =
    "Usage: harness-audit COMMAND [OPTIONS] [LOG | SESSION | --last]\n"
    "\n"
    "Inspect a harness audit log (JSON Lines, SHA-256 chained): a path, a\n"
    "session id, or --last, the default: the last session started in the\n"
    "current directory.\n"
    "\n"
    "Commands:\n"
    "  sessions [--here] [--json]\n"
    "                 your sessions: id, start, duration, exit, events,\n"
    "                 denials, worktree branch, command\n"
    "  verify LOG     check the hash chain; report the first broken record\n"
    "  summary LOG    counts by category and verdict, denied events with\n"
    "                 their rule, processes seen\n"
    "  show LOG [--verdict V] [--event E] [--pid P]\n"
    "                 print the matching records as JSON lines\n"
    "  query LOG [--event E] [--verdict V] [--rule R] [--path GLOB]\n"
    "            [--host GLOB] [--exe GLOB] [--since T] [--until T]...\n"
    "                 the records matching every filter: JSON lines, or a\n"
    "                 table on a terminal\n"
    "  tag < FILE     the HASH of a secret your sessions redacted as\n"
    "                 «redacted:TYPE:HASH», to find where it was used\n"
    "  checkpoints SESSION  the checkpoints of a --worktree session\n"
    "  diff SESSION [N [M]] unified diff of a session's changes\n"
    "\n"
    "Run 'harness-audit COMMAND --help' for one command.\n"
    "\n"
    "Exit status: 0 ok; 1 the chain is broken (verify) or nothing\n"
    "matched (show); 2 usage or I/O error.\n";

static const char usage_verify[] =
    "Usage: harness-audit verify [LOG | SESSION | --last]\n"
    "\n"
    "Recomputes each record's SHA-256, checks that it chains to the\n"
    "previous one (prev) and that seq increases by one. Prints\n"
    "  LOG: ok, N records, chain intact, last hash H\n"
    "or, for the first broken record,\n"
    "  LOG:LINE: record seq S: REASON\n"
    "(reasons: hash mismatch (record edited), prev mismatch (record\n"
    "deleted or reordered), seq gap, not JSON, torn line) and exits 1.\n"
    "Warns when the last record is not a session_end (the log was cut\n"
    "at the end, or the session is still running).\n";

static const char usage_summary[] =
    "Usage: harness-audit summary [LOG | SESSION | --last]\n"
    "\n"
    "Prints the number of records per category and verdict, each denied\n"
    "(or ask) event with its rule, and the processes seen (pid, exe,\n"
    "argv). Does not verify the chain: run verify for that.\n";

static const char usage_show[] =
    "Usage: harness-audit show [LOG | SESSION | --last] [--verdict V]\n"
    "                          [--event E] [--pid P]\n"
    "\n"
    "Prints the records matching every given filter, one JSON object per\n"
    "line as stored. V: allow, ask, deny; E: an event name (execve,\n"
    "openat, connect, process_start, session_end...); P: a pid.\n"
    "Exits 1 when nothing matched. It is `query --json`: every filter of\n"
    "query is taken too.\n";

static bool is_help(const char *a)
{
	return !strcmp(a, "--help") || !strcmp(a, "-h");
}

static int cmd_verify(int argc, char *const *argv, FILE *out, FILE *err)
{
	char log[PATH_MAX];
	struct hx_audit_verify v;
	int r;

	if (argc == 3 && is_help(argv[2])) {
		fputs(usage_verify, out);
		return 0;
	}
	if (argc > 3) {
		fputs(usage_verify, err);
		return 2;
	}
	if (hx_sessions_log(argc == 3 ? argv[2] : NULL, log, sizeof(log), err))
		return 2;
	r = hx_audit_verify(log, &v);
	if (r < 0) {
		fprintf(err, "harness-audit: %s: %s\n", log, strerror(-r));
		return 2;
	}
	if (r) {
		if (v.bad_seq)
			fprintf(out, "%s:%llu: record seq %llu: %s\n", log,
				(unsigned long long)v.bad_line,
				(unsigned long long)v.bad_seq, v.reason);
		else
			fprintf(out, "%s:%llu: record seq ?: %s\n", log,
				(unsigned long long)v.bad_line, v.reason);
		return 1;
	}
	if (!v.records) {
		fprintf(out, "%s: ok, 0 records\n", log);
		return 0;
	}
	fprintf(out, "%s: ok, %llu records, chain intact, last hash %s\n", log,
		(unsigned long long)v.records, v.last_hash);
	if (!v.last_is_end)
		fprintf(err,
			"harness-audit: warning: %s: the last record is not a "
			"session_end (log cut at the end, or session still "
			"running)\n",
			log);
	return 0;
}

/* Calls fn for each JSON record of the log; lines that do not parse are
 * counted in *bad. Returns 0 or -errno. */
static int each_record(const char *path,
		       void (*fn)(json_t *, const char *, void *), void *arg,
		       size_t *bad)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	*bad = 0;
	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *j;

		if (line[n - 1] == '\n')
			line[--n] = '\0';
		j = json_loads(line, 0, NULL);
		if (json_is_object(j))
			fn(j, line, arg);
		else
			(*bad)++;
		json_decref(j);
	}
	free(line);
	fclose(f);
	return 0;
}

struct summary {
	json_t *counts; /* category -> verdict -> n */
	json_t *denied; /* array of lines */
	json_t *procs;	/* array */
	size_t records;
};

static void sum_one(json_t *j, const char *line, void *arg)
{
	struct summary *s = arg;
	const char *cat = hx_record_field(j, "category"),
		   *ver = hx_record_field(j, "verdict");
	const char *ev = hx_record_field(j, "event");
	json_t *c, *n;
	char buf[1024];

	(void)line;
	s->records++;
	if (!strcmp(ev, "process_start")) {
		json_t *argv =
		    json_object_get(json_object_get(j, "args"), "argv");
		char *a = argv ? json_dumps(argv, JSON_COMPACT) : NULL;

		snprintf(buf, sizeof(buf), "  pid %lld ppid %lld %s %s",
			 json_integer_value(json_object_get(j, "pid")),
			 json_integer_value(json_object_get(j, "ppid")),
			 hx_record_field(j, "exe"), a ? a : "");
		free(a);
		json_array_append_new(s->procs, json_string(buf));
	}
	if (!cat[0] || !ver[0])
		return;
	c = json_object_get(s->counts, cat);
	if (!c) {
		c = json_object();
		json_object_set_new(s->counts, cat, c);
	}
	n = json_object_get(c, ver);
	json_object_set_new(c, ver,
			    json_integer(n ? json_integer_value(n) + 1 : 1));
	if (!strcmp(ver, "deny") || !strcmp(ver, "ask")) {
		json_t *args = json_object_get(j, "args");
		const char *what = hx_record_field(args, "path");
		char *argv = NULL;

		if (!what[0])
			what = hx_record_field(args, "addr");
		if (!what[0])
			what = hx_record_field(args, "host");
		if (!what[0] && json_object_get(args, "argv"))
			what = argv = json_dumps(json_object_get(args, "argv"),
						 JSON_COMPACT);
		if (!what[0])
			what = hx_record_field(j, "error");
		snprintf(buf, sizeof(buf),
			 "  seq %lld pid %lld %s %s %s%s: rule %s",
			 json_integer_value(json_object_get(j, "seq")),
			 json_integer_value(json_object_get(j, "pid")), ev,
			 what, ver,
			 json_is_false(json_object_get(j, "enforced"))
			     ? " (not enforced)"
			     : "",
			 hx_record_field(j, "rule"));
		free(argv);
		json_array_append_new(s->denied, json_string(buf));
	}
}

#define SUMMARY_PROCS 15

static int cmd_summary(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct summary s = {json_object(), json_array(), json_array(), 0};
	char log[PATH_MAX];
	size_t bad, i;
	const char *cat, *ver;
	json_t *c, *n;
	int r;

	if (argc == 3 && is_help(argv[2])) {
		fputs(usage_summary, out);
		return 0;
	}
	if (argc > 3) {
		fputs(usage_summary, err);
		return 2;
	}
	if (hx_sessions_log(argc == 3 ? argv[2] : NULL, log, sizeof(log), err))
		return 2;
	r = each_record(log, sum_one, &s, &bad);
	if (r) {
		fprintf(err, "harness-audit: %s: %s\n", log, strerror(-r));
		goto out;
	}
	fprintf(out, "%s: %zu records%s\n", log, s.records,
		bad ? " (some lines unreadable: run verify)" : "");
	fprintf(out, "by category and verdict:\n");
	json_object_foreach(s.counts, cat, c)
	{
		fprintf(out, "  %-12s", cat);
		json_object_foreach(c, ver, n)
		    fprintf(out, " %s %lld", ver, json_integer_value(n));
		fputc('\n', out);
	}
	fprintf(out, "denied (%zu):\n", json_array_size(s.denied));
	for (i = 0; i < json_array_size(s.denied); i++)
		fprintf(out, "%s\n",
			json_string_value(json_array_get(s.denied, i)));
	fprintf(out, "processes (%zu):\n", json_array_size(s.procs));
	/* A summary stays short: the full list is one `show` away. */
	for (i = 0; i < json_array_size(s.procs) && i < SUMMARY_PROCS; i++)
		fprintf(out, "%s\n",
			json_string_value(json_array_get(s.procs, i)));
	if (i < json_array_size(s.procs))
		fprintf(out,
			"  ... %zu more: harness-audit show %s --event "
			"process_start\n",
			json_array_size(s.procs) - i, log);
out:
	json_decref(s.counts);
	json_decref(s.denied);
	json_decref(s.procs);
	return r ? 2 : 0;
}

/* show is query with JSON lines always: the records as stored. */
static int cmd_show(int argc, char *const *argv, FILE *out, FILE *err)
{
	char **v = calloc((size_t)argc + 2, sizeof(*v));
	int r;

	for (int i = 2; i < argc; i++)
		if (is_help(argv[i])) {
			free(v);
			fputs(usage_show, out);
			return 0;
		}
	if (!v) {
		fprintf(err, "harness-audit: out of memory\n");
		return 2;
	}
	memcpy(v, argv, (size_t)argc * sizeof(*v));
	v[argc] = (char *)"--json";
	r = hx_query_cli(argc + 1, v, out, err);
	free(v);
	return r;
}

int hx_audit_cli(int argc, char *const *argv, FILE *out, FILE *err)
{
	if (argc < 2) {
		fputs(usage_main, err);
		return 2;
	}
	if (is_help(argv[1])) {
		fputs(usage_main, out);
		return 0;
	}
	if (!strcmp(argv[1], "sessions"))
		return hx_sessions_cli(argc, argv, out, err);
	if (!strcmp(argv[1], "query"))
		return hx_query_cli(argc, argv, out, err);
	if (!strcmp(argv[1], "verify"))
		return cmd_verify(argc, argv, out, err);
	if (!strcmp(argv[1], "summary"))
		return cmd_summary(argc, argv, out, err);
	if (!strcmp(argv[1], "show"))
		return cmd_show(argc, argv, out, err);
	if (!strcmp(argv[1], "tag"))
		return hx_tag_cli(argc, argv, stdin, out, err);
	if (!strcmp(argv[1], "checkpoints"))
		return hx_wtaudit_checkpoints(argc, argv, out, err);
	if (!strcmp(argv[1], "diff"))
		return hx_wtaudit_diff(argc, argv, out, err);
	fprintf(err, "harness-audit: unknown command '%s'\n\n%s", argv[1],
		usage_main);
	return 2;
}
