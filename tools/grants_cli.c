/* harness-policy grants; see grants_cli.h. */
#include "tools/grants_cli.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/notice.h"
#include "supervisor/grants.h"

static const char usage[] =
    "Usage: harness-policy grants [--json]\n"
    "       harness-policy grants revoke ID...\n"
    "       harness-policy grants path\n"
    "\n"
    "The answers given \"always\" to harness-exec's questions (allow or\n"
    "deny), kept in $XDG_STATE_HOME/harness/grants.jsonl (default\n"
    "~/.local/state), one JSON object per line, which no session's agent\n"
    "can read or write.\n"
    "\n"
    "grants       lists them: one JSON object per line, or, on a terminal\n"
    "             without --json, one line each (id, verdict, what)\n"
    "revoke ID    removes grant ID (the next such call is asked again)\n"
    "path         prints the file's path\n"
    "\n"
    "Exit status: 0 ok, 1 no such grant, 2 usage or I/O error.\n";

/* g's member k, terminal-safe: a grant keeps the agent's words */
static const char *safe(json_t *g, const char *k, char *buf, size_t size)
{
	return hx_text_safe(buf, size,
			    json_string_value(json_object_get(g, k)));
}

static void print_line(FILE *out, json_t *g)
{
	const char *kind = json_string_value(json_object_get(g, "kind"));
	json_t *argv = json_object_get(g, "argv"), *w;
	char a[4 * PATH_MAX], b[4 * PATH_MAX];
	size_t i;

	fprintf(out, "%s  %-5s  ", safe(g, "id", a, sizeof(a)),
		safe(g, "verdict", b, sizeof(b)));
	if (!strcmp(kind, "exec")) {
		fprintf(out, "exec %s", safe(g, "path", a, sizeof(a)));
		json_array_foreach(argv, i, w)
		    fprintf(out, " %s",
			    hx_text_safe(a, sizeof(a), json_string_value(w)));
		/* the environment it was given with: names, never values */
		json_array_foreach(json_object_get(g, "env"), i, w)
		    fprintf(out, "%s%s", i ? " " : "  (with ",
			    hx_text_safe(a, sizeof(a), json_string_value(w)));
		if (json_array_size(json_object_get(g, "env")))
			fputc(')', out);
	} else if (!strcmp(kind, "file")) {
		fprintf(out, "%s %s", safe(g, "access", a, sizeof(a)),
			safe(g, "glob", b, sizeof(b)));
	} else {
		fprintf(out, "connect %s", safe(g, "target", a, sizeof(a)));
	}
	fputc('\n', out);
}

static int list(const char *path, bool json, FILE *out, FILE *err)
{
	json_t *arr = json_array(), *g;
	char msg[PATH_MAX + 64];
	size_t i;
	int r = hx_grants_load(path, arr, msg, sizeof(msg));

	if (r) {
		fprintf(err, "harness-policy grants: %s: %s\n", path,
			strerror(-r));
		json_decref(arr);
		return 2;
	}
	if (msg[0])
		fprintf(err, "harness-policy grants: %s (skipped)\n", msg);
	json_array_foreach(arr, i, g)
	{
		if (json) {
			char *s = json_dumps(g, JSON_COMPACT);

			fprintf(out, "%s\n", s);
			free(s);
		} else {
			print_line(out, g);
		}
	}
	if (!json && !json_array_size(arr))
		fprintf(out, "no grants (%s)\n", path);
	json_decref(arr);
	return 0;
}

int hx_grants_cli(int argc, char *const *argv, FILE *out, FILE *err)
{
	char path[PATH_MAX];
	bool json = !isatty(fileno(out));
	int r, status = 0;

	if (argc > 1 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage, out);
		return 0;
	}
	if ((r = hx_grants_path(path, sizeof(path)))) {
		fprintf(err, "harness-policy grants: %s\n", strerror(-r));
		return 2;
	}
	if (argc == 1 || (argc == 2 && !strcmp(argv[1], "--json")))
		return list(path, json || argc == 2, out, err);
	if (argc == 2 && !strcmp(argv[1], "path")) {
		fprintf(out, "%s\n", path);
		return 0;
	}
	if (argc < 3 || strcmp(argv[1], "revoke")) {
		fprintf(err, "harness-policy grants: unexpected '%s'\n\n%s",
			argv[1], usage);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		r = hx_grants_revoke(path, argv[i]);
		if (r == -ENOENT) {
			fprintf(err, "harness-policy grants: no grant %s\n",
				argv[i]);
			status = status ? status : 1;
		} else if (r) {
			fprintf(err, "harness-policy grants: %s: %s\n", path,
				strerror(-r));
			status = 2;
		} else {
			fprintf(out, "revoked %s\n", argv[i]);
		}
	}
	return status;
}
