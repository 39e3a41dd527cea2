/* harness-exec checkpoint / restore / gc; see wtcli.h. */
#define _GNU_SOURCE
#include "supervisor/git/wtcli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "supervisor/git/checkpoint.h"
#include "supervisor/control.h"
#include "supervisor/fmt.h"
#include "supervisor/git/gc.h"
#include "supervisor/git/wtstate.h"

static const char usage[] =
    "Usage: harness-exec checkpoint [SESSION]\n"
    "       harness-exec restore SESSION N\n"
    "       harness-exec gc [--older-than AGE] [--branches] [--dry-run]\n"
    "\n"
    "checkpoint  asks the running --worktree session SESSION (default:\n"
    "            the only one running) for a checkpoint now; prints\n"
    "            'checkpoint N created|unchanged COMMIT FILES'\n"
    "restore     checks checkpoint N out into SESSION's worktree (files\n"
    "            not in it are removed, ignored ones kept); the branch\n"
    "            and the user's checkout are not touched\n"
    "gc          for ended or crashed sessions older than AGE (default\n"
    "            7d; N with s, m, h, d or w): removes the worktree and\n"
    "            refs/harness/<session>/*; --branches also deletes the\n"
    "            result branch harness/<session>. Stale locks of dead\n"
    "            sessions and stale worktree metadata go whatever the age.\n";

static int cmd_checkpoint(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct hx_wtstate s;
	char msg[512], reply[4096];
	int r;

	if (argc > 3) {
		fputs(usage, err);
		return 2;
	}
	r = hx_wtstate_find(argc == 3 ? argv[2] : NULL, &s, msg, sizeof(msg));
	if (r) {
		fprintf(err, "harness-exec checkpoint: %s\n", msg);
		return 1;
	}
	if (!hx_wtstate_live(&s) || !s.ctl[0]) {
		fprintf(err,
			"harness-exec checkpoint: session %s is not "
			"running\n",
			s.session);
		return 1;
	}
	r = hx_control_request(s.ctl, "checkpoint", reply, sizeof(reply),
			       30000);
	if (r) {
		fprintf(err, "harness-exec checkpoint: %s: %s\n", s.ctl,
			strerror(-r));
		return 1;
	}
	if (strncmp(reply, "ok ", 3)) {
		fprintf(err, "harness-exec checkpoint: %s\n", reply);
		return 1;
	}
	fprintf(out, "checkpoint %s\n", reply + 3);
	return 0;
}

static int cmd_restore(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct hx_wtstate s;
	struct stat st;
	char msg[1024], *end, commit[41];
	unsigned long n;
	long k;
	int r;

	if (argc != 4) {
		fputs(usage, err);
		return 2;
	}
	errno = 0;
	n = strtoul(argv[3], &end, 10);
	if (errno || *end || end == argv[3] || n > 1000000) {
		fprintf(err,
			"harness-exec restore: '%s' is not a checkpoint "
			"number\n",
			argv[3]);
		return 2;
	}
	r = hx_wtstate_find(argv[2], &s, msg, sizeof(msg));
	if (r) {
		fprintf(err, "harness-exec restore: %s\n", msg);
		return 1;
	}
	if (stat(s.worktree, &st)) {
		fprintf(err,
			"harness-exec restore: the worktree of %s is gone "
			"(sessions keep it with --keep-worktree); the "
			"checkpoint is refs/harness/%s/checkpoints/%lu\n",
			s.session, s.session, n);
		return 1;
	}
	k = (long)n;
	if (hx_wtstate_checkpoint(s.dir, &k, commit))
		commit[0] = '\0'; /* said as no such checkpoint */
	r = hx_ckpt_restore(s.commondir, s.worktree, s.session, (unsigned)n,
			    commit, msg, sizeof(msg));
	if (r) {
		fprintf(err, "harness-exec restore: %s\n", msg);
		return 1;
	}
	fprintf(out, "restored checkpoint %lu of %s into %s\n", n, s.session,
		s.worktree);
	return 0;
}

static int cmd_gc(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct hx_gc_opts o = {.older_than = 7 * 86400};

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = NULL;

		if (!strncmp(a, "--older-than=", 13))
			v = a + 13;
		else if (!strcmp(a, "--older-than") && i + 1 < argc)
			v = argv[++i];
		else if (!strcmp(a, "--branches"))
			o.branches = true;
		else if (!strcmp(a, "--dry-run"))
			o.dry_run = true;
		else {
			fputs(usage, err);
			return 2;
		}
		if (v && (o.older_than = hx_fmt_parse_age(v)) < 0) {
			fprintf(err,
				"harness-exec gc: --older-than: '%s' is "
				"not an age (30m, 12h, 7d)\n",
				v);
			return 2;
		}
	}
	return hx_gc_run(&o, out, err) ? 1 : 0;
}

int hx_wtcli(int argc, char *const *argv, FILE *out, FILE *err)
{
	if (argc > 2 &&
	    (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		fputs(usage, out);
		return 0;
	}
	if (!strcmp(argv[1], "checkpoint"))
		return cmd_checkpoint(argc, argv, out, err);
	if (!strcmp(argv[1], "restore"))
		return cmd_restore(argc, argv, out, err);
	return cmd_gc(argc, argv, out, err);
}
