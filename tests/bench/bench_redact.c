/* make bench: what redaction (supervisor/redact.h) costs each recorded
 * string, by what the string is: a clean path (the common case, one
 * scan of its bytes), a path with a secret, Claude Code's form of a Bash
 * call, a long argv of file names, a 2 KB script; ns per string, median
 * of 15 rounds, each round all the strings of a case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/redact.h"
#include "tests/helpers/timing.h"

#define ROUNDS 15
#define PER    2000

/* ns per string of the n strings of v (as argv words when argv). */
static long long median_ns(const struct hx_redact *r, const char *const *v,
			   size_t n, int argv)
{
	long long t[ROUNDS];
	char *out;

	for (int k = 0; k < ROUNDS; k++) {
		long long t0 = now_ns();

		for (int i = 0; i < PER; i++)
			for (size_t j = 0; j < n; j++) {
				out = NULL;
				if (argv ? hx_redact_argv(r, v, j, &out) > 0
					 : hx_redact_text(r, v[j], &out) > 0)
					free(out);
			}
		t[k] = (now_ns() - t0) / (PER * (long long)n);
	}
	qsort(t, ROUNDS, sizeof(*t), cmp_ll);
	return t[ROUNDS / 2];
}

int main(void)
{
	static const char *const path[] = {
	    "/usr/lib/x86_64-linux-gnu/libc.so.6"};
	static const char *const secret[] = {
	    "/tmp/x/ghp_0123456789abcdefghijABCDEFGHIJklmnop"};
	static const char *const claude[] = {
	    "bash", "-c", "-l",
	    "source /home/u/.claude/shell-snapshots/snapshot-bash-1.sh && "
	    "eval 'git diff --stat HEAD~1 | tail -n 5' < /dev/null && "
	    "pwd -P >| /tmp/claude-1-cwd"};
	static char names[64][48], script[4096];
	const char *argv[66] = {"cc", "-c"}, *text[] = {script};
	uint8_t key[HX_REDACT_KEY_LEN] = {0};
	struct hx_redact *r;
	size_t off = 0;

	for (int i = 0; i < 64; i++) {
		snprintf(names[i], sizeof(names[i]),
			 "src/module_%02d/file-%02d.c", i / 8, i);
		argv[i + 2] = names[i];
	}
	while (off < 2000)
		off += (size_t)snprintf(
		    script + off, sizeof(script) - off,
		    "for f in src/*.c; do cc -c \"$f\" -o build/$(basename "
		    "$f .c).o || exit 1; done && ar rcs lib.a build/*.o; ");
	if (hx_redact_new(NULL, key, &r)) {
		fprintf(stderr, "bench_redact: no memory\n");
		return 1;
	}
	printf("| string | bytes | ns per string |\n|---|---:|---:|\n");
	printf("| a clean path | %zu | %lld |\n", strlen(path[0]),
	       median_ns(r, path, 1, 0));
	printf("| a path with a GitHub token | %zu | %lld |\n",
	       strlen(secret[0]), median_ns(r, secret, 1, 0));
	printf("| Claude Code's bash -c, each word | %zu | %lld |\n",
	       strlen(claude[3]), median_ns(r, claude, 4, 1));
	printf("| cc -c and 64 files, each word | %zu | %lld |\n",
	       strlen(names[0]), median_ns(r, argv, 66, 1));
	printf("| a 2 KB sh -c script | %zu | %lld |\n", strlen(script),
	       median_ns(r, text, 1, 0));
	hx_redact_free(r);
	return 0;
}
