/* harness-mcp: the agent's tools as an MCP server, each call through the
 * session's policy, audit log and sandbox (supervisor/mcp/front.h). */
#include <stdio.h>

#include "supervisor/options.h"
#include "supervisor/run.h"
#include "tools/mcp_cli.h"

int main(int argc, char **argv)
{
	static struct hx_mcp_cli c;
	struct hx_options o;
	char err[512];

	if (hx_mcp_cli_parse(argc, argv, &c, &o, err, sizeof(err))) {
		fprintf(stderr, "harness-mcp: %s\nTry 'harness-mcp --help'.\n",
			err);
		return 2;
	}
	if (c.help) {
		hx_mcp_cli_usage(stdout);
		return 0;
	}
	if (c.version) {
		printf("harness-mcp %s\n", HX_VERSION);
		return 0;
	}
	return hx_run(&o);
}
