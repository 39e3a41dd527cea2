/* harness-exec: run a command under the harness supervisor. The work is
 * in supervisor/run.c; options in supervisor/options.c. */
#include <stdio.h>

#include "supervisor/options.h"
#include "supervisor/run.h"

int main(int argc, char **argv)
{
	struct hx_options o;
	char err[256];

	if (hx_options_parse(argc, argv, &o, err, sizeof(err))) {
		fprintf(stderr,
			"harness-exec: %s\nTry 'harness-exec --help'.\n", err);
		return 2;
	}
	if (o.help) {
		hx_options_usage(stdout);
		return 0;
	}
	if (o.version) {
		printf("harness-exec %s\n", HX_VERSION);
		return 0;
	}
	return hx_run(&o);
}
