/* make bench: the cost of one exec decision under the embedded default
 * policy, by what the argv holds: every part judged, and the argv alone
 * (hx_event.argv_only: the reading is still done, for the class; what
 * is saved is matching the parts); ns per decision, median of 15 rounds
 * of 2,000. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy/policy.h"
#include "tests/bench/decide_median.h"

int main(void)
{
	static const char *const snap =
	    "source /home/u/.claude/shell-snapshots/snapshot-bash-1.sh && "
	    "eval 'git diff --stat HEAD~1 | tail -n 5' < /dev/null && "
	    "pwd -P >| /tmp/claude-1-cwd";
	static char big[4096];
	const char *const cases[][4] = {
	    {"/usr/bin/true", "true", NULL},
	    {"/usr/bin/git", "git", "status", NULL},
	    {"/usr/bin/bash", "bash", "-c", snap},
	    {"/usr/bin/sh", "sh", "-c", big},
	};
	const char *const names[] = {"true", "git status",
				     "bash -c (Claude Code's form)",
				     "sh -c (a 2 KB script)"};
	struct hx_policy_vars v = {
	    .home = "/home/u", .cwd = "/home/u/p", .tmpdir = "/tmp/hx-s"};
	struct hx_policy_error err;
	struct hx_policy *p;
	size_t off = 0;

	while (off < 2000)
		off += (size_t)snprintf(
		    big + off, sizeof(big) - off,
		    "for f in src/*.c; do cc -c \"$f\" -o build/$(basename "
		    "$f .c).o || exit 1; done && ar rcs lib.a build/*.o; ");
	if (hx_policy_load_default(&v, &p, &err)) {
		fprintf(stderr, "bench_decide: the default policy: %s\n",
			err.message);
		return 1;
	}
	printf("| exec | read (ns) | argv only (ns) |\n|---|---:|---:|\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hx_event ev = {.op = HX_OP_EXEC,
				      .path = cases[i][0],
				      .argv = &cases[i][1],
				      .cwd = "/home/u/p"};
		long long whole, argv_only;

		while (ev.argc < 3 && cases[i][1 + ev.argc])
			ev.argc++;
		whole = median_ns(p, &ev);
		ev.argv_only = true;
		argv_only = median_ns(p, &ev);
		printf("| %s | %lld | %lld |\n", names[i], whole, argv_only);
	}
	hx_policy_free(p);
	return 0;
}
