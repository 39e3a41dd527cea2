/* make bench: the cost of one file decision under the embedded default
 * policy (a write in the project, a read of a library, a read of a
 * secret, a rename): ns per decision, median of 15 rounds of 2,000. The
 * supervisor makes one for each notified write and the shim one for
 * each read it allows by itself. */
#include <stdio.h>
#include <stdlib.h>

#include "policy/policy.h"
#include "tests/bench/decide_median.h"

int main(void)
{
	static const struct {
		const char *name;
		enum hx_op op;
		const char *path, *path2;
	} cases[] = {
	    {"write in the project", HX_OP_WRITE, "/home/u/p/src/main.c", NULL},
	    {"read of a library", HX_OP_READ,
	     "/usr/lib/python3.11/json/__init__.py", NULL},
	    {"read of a secret", HX_OP_READ, "/home/u/.ssh/id_ed25519", NULL},
	    {"write in $HOME's cache", HX_OP_WRITE,
	     "/home/u/.cache/pip/http/a/b/c", NULL},
	    {"rename in the project", HX_OP_RENAME, "/home/u/p/a.tmp",
	     "/home/u/p/a.txt"},
	};
	struct hx_policy_vars v = {
	    .home = "/home/u", .cwd = "/home/u/p", .tmpdir = "/tmp/hx-s"};
	struct hx_policy_error err;
	struct hx_policy *p;

	if (hx_policy_load_default(&v, &p, &err)) {
		fprintf(stderr, "bench_decide_file: the default policy: %s\n",
			err.message);
		return 1;
	}
	printf("| file decision | ns |\n|---|---:|\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hx_event ev = {.op = cases[i].op,
				      .path = cases[i].path,
				      .path2 = cases[i].path2};

		printf("| %s | %lld |\n", cases[i].name, median_ns(p, &ev));
	}
	hx_policy_free(p);
	return 0;
}
