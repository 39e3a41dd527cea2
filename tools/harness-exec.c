/* harness-exec: run a command under the harness supervisor. The work is
 * in supervisor/run.c; options in supervisor/options.c. */
#include <stdio.h>

#include "supervisor/askcli.h"
#include "supervisor/doctor.h"
#include "supervisor/options.h"
#include "supervisor/run.h"
#include "supervisor/git/wtcli.h"

int main(int argc, char **argv)
{
	struct hx_options o;
	char err[256];

	/* checkpoint, restore, gc: worktree sessions (docs/worktrees.md). */
	if (argc > 1 && hx_wtcli_is_command(argv[1]))
		return hx_wtcli(argc, argv, stdout, stderr);
	/* pending, approve, deny: questions of running sessions (ask.h). */
	if (argc > 1 && hx_askcli_is_command(argv[1]))
		return hx_askcli(argc, argv, stdout, stderr);
	if (hx_options_parse(argc, argv, &o, err, sizeof(err))) {
		fprintf(stderr,
			"harness-exec: %s\nTry 'harness-exec --help'.\n", err);
		return 2;
	}
	if (o.help) {
		hx_options_usage(stdout);
		return 0;
	}
	if (o.doctor)
		return hx_doctor(stdout);
	if (o.version) {
		printf("harness-exec %s\n", HX_VERSION);
		return 0;
	}
	return hx_run(&o);
}
