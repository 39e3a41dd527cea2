/* harness-mcp's command line: its own options, then harness-exec's
 * session options (policy, mode, worktree, audit log, metrics...), and
 * no command: the session's first process is harness-mcp-worker, found
 * next to harness-mcp. */
#ifndef HX_MCP_CLI_H
#define HX_MCP_CLI_H

#include <stddef.h>
#include <stdio.h>

struct hx_options;

struct hx_mcp_cli {
	char worker[4096]; /* the worker's path */
	char *argv[256];   /* what hx_options_parse was given */
	char dashes[3];	   /* "--", writable as argv's are */
	int help, version;
};

/* Fills o (o->cmd points into c). 0, or -EINVAL with err said. */
int hx_mcp_cli_parse(int argc, char **argv, struct hx_mcp_cli *c,
		     struct hx_options *o, char *err, size_t errlen);
void hx_mcp_cli_usage(FILE *f);

#endif
