/* harness-audit subcommands; see auditcli.h. */
#include "tools/audit_cli.h"

#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/anchor.h"
#include "supervisor/audit.h"
#include "supervisor/session.h"
#include "supervisor/record.h"
#include "supervisor/git/wtaudit.h"
#include "tools/query_cli.h"
#include "tools/compact_cli.h"
#include "tools/export_cli.h"
#include "tools/sessions_cli.h"
#include "tools/summary_cli.h"
#include "tools/tree_cli.h"
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
    "                 their rule, processes seen, the top hosts, paths\n"
    "                 and rules, decision latency percentiles\n"
    "  show LOG [--verdict V] [--event E] [--pid P]\n"
    "                 print the matching records as JSON lines\n"
    "  query LOG [--event E] [--verdict V] [--rule R] [--path GLOB]\n"
    "            [--host GLOB] [--exe GLOB] [--since T] [--until T]...\n"
    "                 the records matching every filter: JSON lines, or a\n"
    "                 table on a terminal\n"
    "  tree LOG [--denials] [--json]\n"
    "                 the processes as a tree: what each ran, lifetime,\n"
    "                 exit, calls and refusals\n"
    "  compact [--keep AGE] [--aggregate AGE] [--dry-run]\n"
    "                 retention: old sessions' logs replaced by one\n"
    "                 compacted record that continues their chain, older\n"
    "                 ones removed\n"
    "  tag < FILE     the HASH of a secret your sessions redacted as\n"
    "                 «redacted:TYPE:HASH», to find where it was used\n"
    "  export --otlp FILE|URL LOG\n"
    "                 the session as OpenTelemetry traces, to a file or\n"
    "                 an OTLP/HTTP collector\n"
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
    "Then checks the log against the anchor (last seq and hash) each\n"
    "session it names left in its session directory, and the given\n"
    "session's: LOG: session ID...: cut, or rewritten, exit 1.\n"
    "Warns when the last record is not a session_end (the log was cut\n"
    "at the end, or the session is still running). A log that compact\n"
    "replaced begins with a compacted record, which continues the chain\n"
    "of the records it stands for.\n";

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

/* The chain checked against the anchors its sessions left (anchor.h):
 * 0, or 1 said on out. */
static int check_anchors(const char *log, FILE *out, FILE *err)
{
	char id[128], why[512];
	size_t checked;
	int r;

	hx_sessions_id_of(log, id, sizeof(id));
	r = hx_anchor_check(log, id[0] ? id : NULL, false, &checked, why,
			    sizeof(why));
	if (r < 0)
		fprintf(err, "harness-audit: %s: anchors: %s\n", log,
			strerror(-r));
	if (r == 1)
		fprintf(out, "%s: %s\n", log, why);
	/* a session without one is said, not failed (still running...) */
	if (r == 0 &&
	    hx_anchor_check(log, NULL, true, &checked, why, sizeof(why)) == 1)
		fprintf(err, "harness-audit: warning: %s: %s\n", log, why);
	return r == 1;
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
	if (!v.records) { /* an anchored session's records all gone? */
		if (check_anchors(log, out, err))
			return 1;
		fprintf(out, "%s: ok, 0 records\n", log);
		return 0;
	}
	if (check_anchors(log, out, err))
		return 1;
	fprintf(out, "%s: ok, %llu records, chain intact, last hash %s\n", log,
		(unsigned long long)v.records, v.last_hash);
	if (v.compacted)
		fprintf(out,
			"%s: compacted: its first record stands for %llu "
			"removed ones (their first and last hash in it)\n",
			log, (unsigned long long)v.compacted);
	if (!v.last_is_end)
		fprintf(err,
			"harness-audit: warning: %s: the last record is not a "
			"session_end (log cut at the end, or session still "
			"running)\n",
			log);
	return 0;
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
	if (!strcmp(argv[1], "tree"))
		return hx_tree_cli(argc, argv, out, err);
	if (!strcmp(argv[1], "compact"))
		return hx_compact_cli(argc, argv, out, err);
	if (!strcmp(argv[1], "export"))
		return hx_export_cli(argc, argv, out, err);
	if (!strcmp(argv[1], "verify"))
		return cmd_verify(argc, argv, out, err);
	if (!strcmp(argv[1], "summary"))
		return hx_summary_cli(argc, argv, out, err);
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
