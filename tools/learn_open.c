/* What a learned policy opens of the default's protections; see
 * learn_open.h. */
#define _GNU_SOURCE
#include "tools/learn_open.h"
#include "common/glob.h"
#include "tools/replay_event.h"
#include "tools/yaml_out.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/names.h"
#include "policy/policy.h"

#define MAX_EXAMPLES 3

/* The protections alone: every category allowed but what they refuse. */
static const char protections[] =
    "version: 1\nmode: enforce\ninclude: [" HX_DEFAULT_PROTECTIONS "]\n"
    "defaults:\n  exec: allow\n  file_read: allow\n  file_write: allow\n"
    "  net_connect: allow\n  net_send: allow\n  net_resolve: allow\n"
    "  net_listen: allow\n  process: allow\n";

struct hx_learn_open {
	struct hx_policy *p; /* the protections for the current session */
	char cwd[PATH_MAX], home[PATH_MAX], tmpdir[PATH_MAX], session[80];
	/* rule id -> {section, access, verdict, pats: [all], open: {pattern:
	 * [examples]}}, patterns with the session's variables put back */
	json_t *rules;
};

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

struct hx_learn_open *hx_learn_open_new(void)
{
	struct hx_learn_open *o = calloc(1, sizeof(*o));

	if (o && !(o->rules = json_object())) {
		free(o);
		return NULL;
	}
	return o;
}

void hx_learn_open_free(struct hx_learn_open *o)
{
	if (!o)
		return;
	hx_policy_free(o->p);
	json_decref(o->rules);
	free(o);
}

int hx_learn_open_session(struct hx_learn_open *o, json_t *start, FILE *err)
{
	struct hx_policy_vars v = {0};
	struct hx_policy_error e;
	char buf[1024];

	snprintf(o->cwd, sizeof(o->cwd), "%s", str(start, "cwd") ?: "");
	snprintf(o->home, sizeof(o->home), "%s",
		 str(start, "home") ?: getenv("HOME") ?: "");
	snprintf(o->tmpdir, sizeof(o->tmpdir), "%s",
		 str(start, "tmpdir") ?: "/tmp");
	snprintf(o->session, sizeof(o->session), "%s",
		 str(start, "session") ?: "");
	v.cwd = o->cwd[0] ? o->cwd : NULL;
	v.worktree = v.cwd;
	v.home = o->home[0] ? o->home : NULL;
	v.tmpdir = o->tmpdir;
	v.session = o->session;
	hx_policy_free(o->p);
	o->p = NULL;
	/* Without the session's profiles: the learned policy is enforced
	 * with whatever profile is chosen then, or none. */
	if (!hx_policy_load_buffer("learn", protections,
				   sizeof(protections) - 1, &v, &o->p, &e))
		return 0;
	fprintf(err, "harness-policy learn: the default's protections: %s\n",
		hx_policy_error_format(&e, buf, sizeof(buf)));
	return -1;
}

/* pattern with the session's $CWD, $TMPDIR or $HOME (the longest that
 * starts it, after a "unix:") put back, into out. */
static void unexpand(const struct hx_learn_open *o, const char *pattern,
		     char *out, size_t size)
{
	static const char *const names[] = {"$CWD", "$TMPDIR", "$HOME"};
	const char *vals[] = {o->cwd, o->tmpdir, o->home};
	const char *at = pattern;
	char esc[PATH_MAX * 2];
	size_t best = 0;
	int which = -1;

	if (!strncmp(at, "unix:", 5))
		at += 5;
	for (int i = 0; i < 3; i++) {
		size_t n;

		if (!vals[i][0] || hx_glob_escape(vals[i], esc, sizeof(esc)))
			continue;
		n = strlen(esc);
		if (n > best && !strncmp(at, esc, n) &&
		    (at[n] == '/' || !at[n])) {
			best = n;
			which = i;
		}
	}
	if (which < 0)
		snprintf(out, size, "%s", pattern);
	else
		snprintf(out, size, "%.*s%s%s", (int)(at - pattern), pattern,
			 names[which], at + best);
}

struct find {
	const struct hx_learn_open *o;
	const char *name;
	json_t *rule;
};

/* The rule named f->name as the learned policy will copy it. */
static void find_rule(const struct hx_rule_info *r, void *arg)
{
	struct find *f = arg;
	char pat[PATH_MAX * 2];
	json_t *pats;

	if (f->rule || strcmp(r->name, f->name))
		return;
	pats = json_array();
	for (size_t i = 0; i < r->npatterns; i++) {
		unexpand(f->o, r->patterns[i], pat, sizeof(pat));
		json_array_append_new(pats, json_string(pat));
	}
	f->rule = json_pack(
	    "{s:s, s:s, s:s, s:o, s:{}}", "section", r->section, "access",
	    r->access == HX_ACCESS_READ	   ? "read"
	    : r->access == HX_ACCESS_WRITE ? "write"
					   : "",
	    "verdict", hx_verdict_name(r->verdict), "pats", pats, "open");
}

/* What rec did, as the head's comment names it. */
static void example_of(json_t *rec, char *buf, size_t size)
{
	json_t *a = json_object_get(rec, "args"), *w;
	size_t k, i;

	k = (size_t)snprintf(buf, size, "%s %s", str(rec, "op"),
			     str(a, "path")	    ?: str(a, "addr")
			     ?: str(a, "host") ?: "");
	json_array_foreach(json_object_get(a, "argv"), i, w)
	{
		if (i == 0 || i > 6 || k >= size)
			continue;
		k += (size_t)snprintf(buf + k, size - k, " %s",
				      json_string_value(w) ?: "");
	}
}

/* d, a protection's verdict on rec: its rule and pattern noted. */
static void note(struct hx_learn_open *o, json_t *rec,
		 const struct hx_decision *d)
{
	struct find f = {.o = o, .name = d->rule};
	char pat[PATH_MAX * 2], ex[PATH_MAX];
	json_t *open, *exs;

	if (d->verdict == HX_VERDICT_ALLOW || !d->rule || !d->pattern ||
	    !strncmp(d->rule, "default:", 8) ||
	    !strncmp(d->rule, "harness:", 8))
		return;
	if (!(f.rule = json_object_get(o->rules, d->rule))) {
		hx_policy_foreach_rule(o->p, find_rule, &f);
		if (!f.rule)
			return;
		json_object_set_new(o->rules, d->rule, f.rule);
	}
	unexpand(o, d->pattern, pat, sizeof(pat));
	open = json_object_get(f.rule, "open");
	if (!(exs = json_object_get(open, pat))) {
		exs = json_array();
		json_object_set_new(open, pat, exs);
	}
	example_of(rec, ex, sizeof(ex));
	if (json_array_size(exs) < MAX_EXAMPLES)
		json_array_append_new(exs, json_string(ex));
}

void hx_learn_open_note(struct hx_learn_open *o, json_t *rec)
{
	const char *argv[HX_REPLAY_ARGV], *names[HX_REPLAY_NAMES];
	json_t *a = json_object_get(rec, "args");
	struct hx_event_storage st;
	struct hx_event ev;
	struct hx_decision d;

	if (!o->p || hx_replay_event(rec, &ev, argv, names, &st))
		return;
	/* the path as named and as resolved, each: the pipeline judged
	 * both, and a pattern that refuses either is opened */
	hx_policy_decide(o->p, &ev, &d);
	note(o, rec, &d);
	if (!str(a, "path_resolved") && !str(a, "path2_resolved"))
		return;
	ev.path = str(a, "path_resolved") ?: ev.path;
	ev.path2 = str(a, "path2_resolved") ?: ev.path2;
	hx_policy_decide(o->p, &ev, &d);
	note(o, rec, &d);
}

void hx_learn_open_disable(const struct hx_learn_open *o, FILE *out)
{
	const char *id, *pat;
	json_t *r, *exs, *e;
	size_t i, n = 0;

	if (!json_object_size(o->rules))
		return;
	fputs("# The sessions' own policy allowed these calls, which the "
	      "default refuses\n# or asks (rule: pattern: call): each rule "
	      "is disabled, and copied below\n# as ID-kept but for those "
	      "patterns. Read what else they opened:\n",
	      out);
	json_object_foreach(o->rules, id, r)
	    json_object_foreach(json_object_get(r, "open"), pat, exs)
		json_array_foreach(exs, i, e)
	{
		fprintf(out, "#   %s: ", id);
		hx_yaml_quoted(out, pat);
		fputs(": ", out);
		hx_yaml_quoted(out, json_string_value(e));
		fputc('\n', out);
	}
	fputs("disable: [", out);
	json_object_foreach(o->rules, id, r)
	    fprintf(out, "%s%s", n++ ? ", " : "", id);
	fputs("]\n", out);
}

/* Adds pattern to kept but when it was opened or is there already. The
 * session's $WORKTREE was its $CWD (unexpand names it so): a $CWD
 * pattern kept is kept for $WORKTREE too, as the default has most. */
static void keep(json_t *kept, json_t *open, const char *pattern)
{
	char twin[PATH_MAX * 2];
	json_t *p;
	size_t i;
	bool have = false;

	if (json_object_get(open, pattern))
		return;
	json_array_foreach(kept, i, p)
	{
		have = have || !strcmp(json_string_value(p), pattern);
	}
	if (!have)
		json_array_append_new(kept, json_string(pattern));
	if (!strncmp(pattern, "$CWD", 4) &&
	    (pattern[4] == '/' || !pattern[4]) &&
	    snprintf(twin, sizeof(twin), "$WORKTREE%s", pattern + 4) <
		(int)sizeof(twin))
		keep(kept, open, twin);
}

size_t hx_learn_open_rules(const struct hx_learn_open *o, FILE *out,
			   const char *section)
{
	const char *id;
	json_t *r, *p, *open, *kept;
	size_t n = 0, i;

	json_object_foreach(o->rules, id, r)
	{
		const char *access = str(r, "access");

		if (strcmp(str(r, "section"), section))
			continue;
		open = json_object_get(r, "open");
		kept = json_array();
		json_array_foreach(json_object_get(r, "pats"), i, p)
		{
			keep(kept, open, json_string_value(p));
		}
		if (json_array_size(kept)) {
			fprintf(out,
				"  - id: %s-kept\n    description: the "
				"default's rule %s, copied at learn time, but "
				"for what the sessions' policy allowed\n",
				id, id);
			if (access[0])
				fprintf(out, "    access: %s\n", access);
			hx_yaml_list(out, str(r, "verdict"), kept);
			n++;
		}
		json_decref(kept);
	}
	return n;
}
