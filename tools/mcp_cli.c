/* harness-mcp's command line; see mcp_cli.h. */
#define _GNU_SOURCE
#include "tools/mcp_cli.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/options.h"

static int number(const char *opt, const char *v, unsigned long max,
		  unsigned long *out, char *err, size_t len)
{
	char *end;

	errno = 0;
	*out = v ? strtoul(v, &end, 10) : 0;
	if (!v || !*v || *end || errno || *out < 1 || *out > max) {
		snprintf(err, len, "%s takes a number from 1 to %lu", opt, max);
		return -EINVAL;
	}
	return 0;
}

static int worker_path(struct hx_mcp_cli *c, char *err, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0 || !(self[n] = '\0', slash = strrchr(self, '/'))) {
		snprintf(err, len, "cannot find its own directory");
		return -EINVAL;
	}
	*slash = '\0';
	if ((size_t)snprintf(c->worker, sizeof(c->worker),
			     "%s/harness-mcp-worker",
			     self) >= sizeof(c->worker)) {
		snprintf(err, len, "its directory's name is too long");
		return -EINVAL;
	}
	return 0;
}

/* One of harness-mcp's own options at argv[*i]: 1 taken, 0 not ours,
 * -EINVAL. */
static int own(int argc, char **argv, int *i, struct hx_mcp_cli *c,
	       struct hx_options *o, char *err, size_t len)
{
	static const char *const num[] = {"--calls-per-minute",
					  "--calls-at-once", "--max-output"};
	static const unsigned long max[] = {100000, 64, 64ul << 20};
	const char *a = argv[*i];
	unsigned long v;
	int e;

	if (!strcmp(a, "--help") || !strcmp(a, "-h"))
		return c->help = 1;
	if (!strcmp(a, "--version"))
		return c->version = 1;
	if (!strcmp(a, "--http") || !strncmp(a, "--http=", 7)) {
		o->mcp_http = a[6] ? a + 7 : *i + 1 < argc ? argv[++*i] : NULL;
		if (!o->mcp_http || !*o->mcp_http) {
			snprintf(err, len,
				 "--http takes [HOST:]PORT or unix:PATH");
			return -EINVAL;
		}
		return 1;
	}
	for (int k = 0; k < 3; k++) {
		size_t n = strlen(num[k]);
		const char *val;

		if (strncmp(a, num[k], n) || (a[n] && a[n] != '='))
			continue;
		val = a[n] == '='     ? a + n + 1
		      : *i + 1 < argc ? argv[++*i]
				      : NULL;
		if ((e = number(num[k], val, max[k], &v, err, len)))
			return e;
		if (k == 0)
			o->mcp_per_minute = (unsigned)v;
		else if (k == 1)
			o->mcp_concurrent = (unsigned)v;
		else
			o->mcp_max_output = v;
		return 1;
	}
	return 0;
}

int hx_mcp_cli_parse(int argc, char **argv, struct hx_mcp_cli *c,
		     struct hx_options *o, char *err, size_t errlen)
{
	struct hx_options mine = {0}; /* ours: o is parsed anew below */
	int n = 1, e;

	memset(c, 0, sizeof(*c));
	strcpy(c->dashes, "--");
	memset(o, 0, sizeof(*o));
	c->argv[0] = argv[0];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--") || argv[i][0] != '-') {
			snprintf(err, errlen,
				 "'%s': harness-mcp runs no command (its tools "
				 "do); did you mean harness-exec?",
				 argv[i]);
			return -EINVAL;
		}
		if ((e = own(argc, argv, &i, c, &mine, err, errlen)) < 0)
			return e;
		if (e)
			continue;
		if (n >= 250) {
			snprintf(err, errlen, "too many options");
			return -EINVAL;
		}
		c->argv[n++] = argv[i];
		if (hx_options_takes_value(argv[i]) && i + 1 < argc)
			c->argv[n++] = argv[++i];
	}
	if (c->help || c->version)
		return 0;
	if ((e = worker_path(c, err, errlen)))
		return e;
	c->argv[n++] = c->dashes;
	c->argv[n++] = c->worker;
	c->argv[n] = NULL;
	if ((e = hx_options_parse(n, c->argv, o, err, errlen)))
		return e;
	if (o->help || o->doctor || o->version) {
		snprintf(err, errlen, "unknown option for harness-mcp");
		return -EINVAL;
	}
	o->mcp = true;
	o->mcp_per_minute = mine.mcp_per_minute;
	o->mcp_concurrent = mine.mcp_concurrent;
	o->mcp_max_output = mine.mcp_max_output;
	o->mcp_http = mine.mcp_http;
	return 0;
}

void hx_mcp_cli_usage(FILE *f)
{
	fputs(
	    "Usage: harness-mcp [OPTIONS]\n"
	    "\n"
	    "Serves an agent's tools over the Model Context Protocol (MCP) on\n"
	    "standard input and output, each call through the harness: the\n"
	    "session's policy decides it, its work runs inside the sandbox\n"
	    "(seccomp user-notify, Landlock, the exec gate) in a process of\n"
	    "its own, and it is one tool_call record in the session's audit\n"
	    "log, whose system-call records carry its call_id.\n"
	    "\n"
	    "Tools: code_run, file_read, file_write, file_patch, list_dir,\n"
	    "search, ask_user, session_info; with --worktree checkpoint,\n"
	    "diff and restore.\n"
	    "A client lists them with tools/list.\n"
	    "\n"
	    "Options of harness-mcp:\n"
	    "  --calls-per-minute N  every tool's rate quota (default: each\n"
	    "                        tool's own: code_run 120, file_read "
	    "1200)\n"
	    "  --calls-at-once N     every tool's concurrency (default: its "
	    "own)\n"
	    "  --max-output BYTES    text of one result (default 1 MiB): cut\n"
	    "                        past it, with a marker\n"
	    "  --http [HOST:]PORT    serve MCP's Streamable HTTP transport at\n"
	    "                        http://HOST:PORT/mcp instead of stdio;\n"
	    "                        HOST a loopback address (127.0.0.1 by\n"
	    "                        default), PORT 0 one the kernel picks.\n"
	    "                        Each request needs Authorization: Bearer\n"
	    "                        TOKEN: $HARNESS_MCP_TOKEN (16 characters "
	    "or\n"
	    "                        more), else a random one; the URL and "
	    "the\n"
	    "                        token are in the session dir's mcp.json\n"
	    "                        (0600). DELETE on the URL ends the "
	    "session\n"
	    "  --http unix:PATH      the same on a Unix socket at PATH (an\n"
	    "                        absolute path; 0600, removed at the "
	    "end),\n"
	    "                        for this user's processes outside the\n"
	    "                        session; URL http://localhost/mcp\n"
	    "  -h, --help            this text\n"
	    "  --version             the version\n"
	    "\n"
	    "Every session option of harness-exec applies (see harness-exec\n"
	    "--help): --policy FILE, --profile NAME, --mode audit, "
	    "--worktree,\n"
	    "--audit-log PATH, --session NAME, --trace-reads, --metrics ADDR,\n"
	    "--otlp-endpoint URL, --ask-timeout S, --quiet, --verbose.\n"
	    "\n"
	    "Registering it:\n"
	    "  claude mcp add harness -- harness-mcp --worktree\n"
	    "  codex mcp add harness -- harness-mcp --worktree\n"
	    "  gemini mcp add harness harness-mcp --worktree\n"
	    "  or by hand: Codex's ~/.codex/config.toml\n"
	    "    [mcp_servers.harness]\n"
	    "    command = \"harness-mcp\"\n"
	    "  Gemini CLI's ~/.gemini/settings.json\n"
	    "    {\"mcpServers\": {\"harness\": {\"command\": "
	    "\"harness-mcp\"}}}\n"
	    "\n"
	    "Exit status: 0 when the client closed the connection and the\n"
	    "worker ended; 2 for a usage or policy error; 125 when the audit\n"
	    "log could take no more records.\n"
	    "\n"
	    "Files: the session's audit log, as harness-exec's\n"
	    "($XDG_STATE_HOME/harness/sessions/ID/audit.jsonl).\n",
	    f);
}
