/* harness-audit checkpoints / diff; see wtaudit.h. */
#define _GNU_SOURCE
#include "supervisor/git/wtaudit.h"

#include <errno.h>
#include <git2.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/notice.h"
#include "supervisor/fmt.h"
#include "supervisor/git/checkpoint.h"
#include "supervisor/session.h"
#include "supervisor/git/gitutil.h"
#include "supervisor/git/wtstate.h"

static const char usage_ck[] =
    "Usage: harness-audit checkpoints SESSION\n"
    "\n"
    "Lists the checkpoints of a --worktree session: N, time, files\n"
    "changed since the previous one, what triggered it, and the process\n"
    "whose end caused it (pid, exe, argv, audit seq of its last write).\n";
static const char usage_diff[] =
    "Usage: harness-audit diff SESSION [N [M]]\n"
    "\n"
    "Prints a unified diff: no N, the base commit against the last\n"
    "checkpoint; N, checkpoint N-1 (the base for 0) against N; N M,\n"
    "checkpoint N against M.\n";

static int find(const char *name, struct hx_wtstate *s, FILE *err)
{
	char msg[512];

	if (hx_wtstate_find(name, s, msg, sizeof(msg))) {
		fprintf(err, "harness-audit: %s\n", msg);
		return -1;
	}
	return 0;
}

int hx_wtaudit_checkpoints(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct hx_wtstate s;
	char path[PATH_MAX + 32], *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (argc == 3 &&
	    (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		fputs(usage_ck, out);
		return 0;
	}
	if (argc != 3) {
		fputs(usage_ck, err);
		return 2;
	}
	if (find(argv[2], &s, err))
		return 2;
	snprintf(path, sizeof(path), "%s/checkpoints.jsonl", s.dir);
	f = fopen(path, "r");
	if (!f) {
		fprintf(err, "harness-audit: %s: %s\n", path, strerror(errno));
		return 2;
	}
	fprintf(out, "%-4s %-24s %-6s %-12s %-12s %s\n", "N", "TIME", "FILES",
		"TRIGGER", "COMMIT", "CAUSE");
	while (getline(&line, &cap, f) > 0) {
		json_t *o = json_loads(line, 0, NULL), *c, *argvj, *v;
		char cause[1024] = "-", safe[512];
		size_t k = 0, i;

		if (!o)
			continue;
		c = json_object_get(o, "cause");
		if (json_is_object(c)) {
			/* the agent's words, terminal-safe (notice.h) */
			k = (size_t)snprintf(
			    cause, sizeof(cause), "pid %lld %s",
			    (long long)json_integer_value(
				json_object_get(c, "pid")),
			    json_string_value(json_object_get(c, "exe"))
				? hx_text_safe(safe, sizeof(safe),
					       json_string_value(
						   json_object_get(c, "exe")))
				: "?");
			argvj = json_object_get(c, "argv");
			if (json_is_array(argvj) && k < sizeof(cause)) {
				k += (size_t)snprintf(cause + k,
						      sizeof(cause) - k, " [");
				json_array_foreach(argvj, i, v)
				{
					if (k >= sizeof(cause))
						break;
					k += (size_t)snprintf(
					    cause + k, sizeof(cause) - k,
					    "%s%s", i ? " " : "",
					    hx_text_safe(safe, sizeof(safe),
							 json_string_value(v)));
				}
				if (k < sizeof(cause))
					k += (size_t)snprintf(
					    cause + k, sizeof(cause) - k, "]");
			}
			if (json_object_get(c, "seq") && k < sizeof(cause))
				snprintf(cause + k, sizeof(cause) - k,
					 " seq %lld",
					 (long long)json_integer_value(
					     json_object_get(c, "seq")));
		}
		fprintf(out, "%-4lld %-24s %-6lld %-12s %.12s %s\n",
			(long long)json_integer_value(json_object_get(o, "n")),
			json_string_value(json_object_get(o, "time")),
			(long long)json_integer_value(
			    json_object_get(o, "files_changed")),
			json_string_value(json_object_get(o, "trigger")),
			json_string_value(json_object_get(o, "commit")), cause);
		json_decref(o);
	}
	free(line);
	fclose(f);
	return 0;
}

/* Whether code point c, written raw, would make a terminal show other
 * text than the line's: a C0 control but tab, DEL, a C1 control, or a
 * format character that reorders or hides text (zero-width ones, bidi
 * embeddings, overrides and isolates, a BOM). */
static bool hides(uint32_t c)
{
	return (c < 0x20 && c != '\t') || (c >= 0x7f && c < 0xa0) ||
	       (c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2060 && c <= 0x2069) || c == 0xfeff;
}

/* A diff line's bytes as text (its newline at the end kept): what
 * hides() names as \xNN or \u{N}, a byte that is no UTF-8 as \xNN.
 * The lines are the agent's files: an added "curl ... | sh" followed by
 * ESC [2K and a carriage return was drawn over by the next line, and
 * the reviewer of harness-audit diff saw "+echo build" only (the
 * seventeenth attack review; git's pager, less -R, shows such bytes). */
static void put_text(FILE *out, const char *p, size_t n)
{
	uint32_t c;
	size_t k;

	for (size_t i = 0; i < n; i += k) {
		k = hx_utf8_char(p + i, n - i, &c);
		if (!k) {
			k = 1;
			fprintf(out, "\\x%02x", (unsigned char)p[i]);
		} else if (c == '\n' && i + 1 == n) {
			fputc('\n', out);
		} else if (hides(c)) {
			fprintf(out, c < 0x80 ? "\\x%02x" : "\\u{%x}", c);
		} else {
			fwrite(p + i, 1, k, out);
		}
	}
}

static int print_line(const git_diff_delta *d, const git_diff_hunk *h,
		      const git_diff_line *l, void *arg)
{
	FILE *out = arg;

	(void)d;
	(void)h;
	if (l->origin == GIT_DIFF_LINE_CONTEXT ||
	    l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		fputc(l->origin, out);
	put_text(out, l->content, l->content_len);
	return 0;
}

/* The tree of checkpoint n, or of the base when n < 0. */
static int tree_of(git_repository *repo, const struct hx_wtstate *s, long n,
		   git_tree **out, FILE *err)
{
	git_object *o = NULL;
	char spec[300];
	int e;

	char commit[41];
	long k = n;

	/* the commit the session recorded, not its ref (wtstate.h) */
	if (n < 0)
		snprintf(spec, sizeof(spec), "%s^{tree}", s->base);
	else if (!hx_wtstate_checkpoint(s->dir, &k, commit))
		snprintf(spec, sizeof(spec), "%s^{tree}", commit);
	else
		spec[0] = '\0';
	e = spec[0] ? git_revparse_single(&o, repo, spec) : -1;
	if (e) {
		if (n < 0)
			fprintf(err, "harness-audit: base %s: %s\n", s->base,
				hx_git_err());
		else
			fprintf(err,
				"harness-audit: session %s has no "
				"checkpoint %ld\n",
				s->session, n);
		return -1;
	}
	*out = (git_tree *)o;
	return 0;
}

static long last_checkpoint(const struct hx_wtstate *s)
{
	char commit[41];
	long n = -1;

	return hx_wtstate_checkpoint(s->dir, &n, commit) ? -1 : n;
}

static int parse_n(const char *a, long *n, FILE *err)
{
	char *end;

	errno = 0;
	*n = strtol(a, &end, 10);
	if (errno || *end || end == a || *n < 0) {
		fprintf(err, "harness-audit: '%s' is not a checkpoint number\n",
			a);
		return -1;
	}
	return 0;
}

int hx_wtaudit_diff(int argc, char *const *argv, FILE *out, FILE *err)
{
	git_diff_options dopt;
	git_repository *repo = NULL;
	git_tree *a = NULL, *b = NULL;
	git_diff *d = NULL;
	struct hx_wtstate s;
	long n = -1, m = -1;
	int rc = 2;

	if (argc == 3 &&
	    (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		fputs(usage_diff, out);
		return 0;
	}
	if (argc < 3 || argc > 5) {
		fputs(usage_diff, err);
		return 2;
	}
	git_diff_options_init(&dopt, GIT_DIFF_OPTIONS_VERSION);
	if (find(argv[2], &s, err) || hx_git_init())
		return 2;
	if (git_repository_open_ext(&repo, s.commondir,
				    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
		fprintf(err, "harness-audit: %s: %s\n", s.commondir,
			hx_git_err());
		return 2;
	}
	if (argc == 3) {
		n = -1;
		m = last_checkpoint(&s);
	} else if (argc == 4) {
		if (parse_n(argv[3], &m, err))
			goto out;
		n = m - 1;
	} else if (parse_n(argv[3], &n, err) || parse_n(argv[4], &m, err)) {
		goto out;
	}
	if (tree_of(repo, &s, n, &a, err) || tree_of(repo, &s, m, &b, err))
		goto out;
	dopt.flags |= GIT_DIFF_SHOW_BINARY;
	if (git_diff_tree_to_tree(&d, repo, a, b, &dopt) ||
	    git_diff_print(d, GIT_DIFF_FORMAT_PATCH, print_line, out)) {
		fprintf(err, "harness-audit: diff: %s\n", hx_git_err());
		goto out;
	}
	rc = 0;
out:
	git_diff_free(d);
	git_tree_free(a);
	git_tree_free(b);
	git_repository_free(repo);
	return rc;
}
