/* harness-policy test; see policytest_cli.h. */
#define _GNU_SOURCE
#include "tools/policytest_cli.h"
#include "tools/logverify.h"
#include "tools/replay_event.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/names.h"
#include "common/notice.h"
#include "policy/policy.h"
#include "supervisor/export/logline.h"

#define MAX_CHANGES  512 /* groups: (then, now, rule) */
#define MAX_EXAMPLES 3
#define MAX_PROFILES 8

static const char usage[] =
    "Usage: harness-policy test [--json] [--denials] [--no-profiles] "
    "[--unverified] POLICY LOG...\n"
    "\n"
    "Replays every decision recorded in the audit logs LOG... through\n"
    "the candidate POLICY (a file, or 'default' for the embedded one),\n"
    "with each session's $CWD, $HOME, $TMPDIR and profiles, and prints\n"
    "what would change: calls allowed then and denied (or asked) now,\n"
    "and the reverse, grouped by the rule that decides now, with counts\n"
    "and examples. Decisions the harness made at run time (rules\n"
    "harness:*, such as the session's own sockets and listeners) are\n"
    "not the policy's and are counted apart.\n"
    "\n"
    "  --json         one JSON object per change group\n"
    "  --denials      also every call the policy refused then and refuses\n"
    "                 now (deny or ask), by rule: the run's refusals\n"
    "  --no-profiles  the policy alone, without the sessions' profiles\n"
    "  --unverified   replay a LOG that does not verify (below)\n"
    "\n"
    "Each LOG is verified first as harness-audit verify does (its chain\n"
    "and its sessions' anchors): records added to a run's log after it\n"
    "would show what the run never did. One that does not verify is not\n"
    "replayed (exit 2) unless --unverified.\n"
    "\n"
    "Exit status: 0 nothing allowed then would be refused now, 1 some\n"
    "would, 2 usage, policy or log error.\n";

struct change {
	enum hx_verdict then, now;
	char rule[128], origin[128];
	size_t count;
	char *examples[MAX_EXAMPLES];
};

struct replay {
	const char *policy_file; /* NULL: the default */
	bool profiles, json, denials;
	struct hx_policy *p;
	char cwd[PATH_MAX], home[PATH_MAX], tmpdir[PATH_MAX], session[80];
	size_t records, decisions, same, harness, unreadable;
	struct change changes[MAX_CHANGES];
	size_t nchanges;
	FILE *err;
	/* decisions judged, by hx_logline_key: what each gave (see
	 * outcome_of), so that the same decision again is not parsed */
	json_t *seen;
};

#define SEEN_MAX 200000

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void copy(char *dst, size_t size, const char *s)
{
	snprintf(dst, size, "%s", s ? s : "");
}

/* The candidate as the session would have composed it: its variables,
 * its profiles. */
static int load_for(struct replay *r, json_t *start)
{
	const char *incs[MAX_PROFILES];
	struct hx_policy_vars v = {0};
	struct hx_policy_error e;
	json_t *profs = json_object_get(start, "profiles"), *pr;
	char buf[1024];
	size_t i, n = 0;

	if (str(start, "cwd"))
		copy(r->cwd, sizeof(r->cwd), str(start, "cwd"));
	else if (!getcwd(r->cwd, sizeof(r->cwd)))
		r->cwd[0] = '\0';
	copy(r->home, sizeof(r->home),
	     str(start, "home") ? str(start, "home") : getenv("HOME"));
	copy(r->tmpdir, sizeof(r->tmpdir), str(start, "tmpdir"));
	copy(r->session, sizeof(r->session), str(start, "session"));
	v.cwd = r->cwd;
	v.home = r->home[0] ? r->home : NULL;
	v.tmpdir = r->tmpdir[0] ? r->tmpdir : "/tmp";
	v.worktree = r->cwd;
	v.session = r->session;
	json_array_foreach(profs, i, pr) if (r->profiles && n < MAX_PROFILES &&
					     str(pr, "name")) incs[n++] =
	    str(pr, "name");
	v.include = incs;
	v.ninclude = n;
	hx_policy_free(r->p);
	r->p = NULL;
	if ((r->policy_file ? hx_policy_load_file(r->policy_file, &v, &r->p, &e)
			    : hx_policy_load_default(&v, &r->p, &e)) == 0)
		return 0;
	fprintf(r->err, "harness-policy test: %s\n",
		hx_policy_error_format(&e, buf, sizeof(buf)));
	return -1;
}

/* The verdict the policy gave when the call was made: an ask answered
 * by an earlier grant was the policy's ask. */
static int recorded_verdict(json_t *rec, enum hx_verdict *v)
{
	const char *s = str(rec, "verdict");

	if (!s)
		return -1;
	*v = !strcmp(s, "allow") ? HX_VERDICT_ALLOW
	     : !strcmp(s, "ask") ? HX_VERDICT_ASK
				 : HX_VERDICT_DENY;
	if (str(rec, "grant"))
		*v = HX_VERDICT_ASK;
	return 0;
}

static void example_of(json_t *rec, const struct hx_event *ev, char *buf,
		       size_t size)
{
	json_t *a = json_object_get(rec, "args");
	int n = snprintf(buf, size, "%s ", str(rec, "op"));

	if (n < 0 || (size_t)n >= size)
		return;
	if (ev->op == HX_OP_EXEC) {
		size_t k = (size_t)n;

		for (size_t i = 0; i < ev->argc && k < size; i++)
			k += (size_t)snprintf(buf + k, size - k, "%s%s",
					      i ? " " : "", ev->argv[i]);
		return;
	}
	snprintf(buf + n, size - (size_t)n, "%s%s%s",
		 str(a, "addr")	  ? str(a, "addr")
		 : str(a, "host") ? str(a, "host")
				  : ev->path,
		 ev->path2 ? " " : "", ev->path2 ? ev->path2 : "");
}

static int count(struct replay *r, enum hx_verdict then,
		 const struct hx_decision *d, json_t *rec,
		 const struct hx_event *ev)
{
	struct change *c = NULL;
	char ex[1024];

	for (size_t i = 0; i < r->nchanges && !c; i++)
		if (r->changes[i].then == then &&
		    r->changes[i].now == d->verdict &&
		    !strcmp(r->changes[i].rule, d->rule))
			c = &r->changes[i];
	if (!c) {
		if (r->nchanges == MAX_CHANGES)
			c = &r->changes[MAX_CHANGES - 1]; /* counted there */
		else
			c = &r->changes[r->nchanges++];
		if (!c->count) {
			c->then = then;
			c->now = d->verdict;
			copy(c->rule, sizeof(c->rule), d->rule);
			copy(c->origin, sizeof(c->origin), d->origin);
		}
	}
	for (size_t k = 0; k < MAX_EXAMPLES; k++)
		if (!c->examples[k]) {
			example_of(rec, ev, ex, sizeof(ex));
			c->examples[k] = strdup(ex);
			break;
		}
	c->count++;
	return (int)(c - r->changes);
}

/* What replay_one made of a record, to count it again: */
enum {
	O_NONE = -1,	/* no decision: nothing counted */
	O_SAME = -2,	/* the same verdict */
	O_HARNESS = -3, /* a run-time judge of the harness's */
	O_UNREAD = -4,	/* not judged again */
	O_SESSION = -5, /* a session start: never cached */
			/* >= 0: counted in changes[k] */
};

static int replay_one(struct replay *r, json_t *rec, int *outcome)
{
	const char *argv[HX_REPLAY_ARGV], *names[HX_REPLAY_NAMES];
	struct hx_event_storage st;
	struct hx_event ev;
	struct hx_decision d;
	enum hx_verdict then;
	const char *rule = str(rec, "rule"), *event = str(rec, "event");

	*outcome = O_NONE;
	if (event && !strcmp(event, "session_start")) {
		*outcome = O_SESSION;
		return load_for(r, rec);
	}
	if (!str(rec, "op") || recorded_verdict(rec, &then) || !event ||
	    !strcmp(event, "ask_answer"))
		return 0;
	r->decisions++;
	/* The harness's judges at run time (the session's own sockets,
	 * listeners, protected files by inode): not the policy's. */
	if (rule && !strncmp(rule, "harness:", 8)) {
		r->harness++;
		*outcome = O_HARNESS;
		return 0;
	}
	if (!r->p && load_for(r, NULL))
		return -1;
	if (hx_replay_event(rec, &ev, argv, names, &st)) {
		r->unreadable++;
		*outcome = O_UNREAD;
		return 0;
	}
	hx_replay_decide(r->p, rec, &ev, &d);
	if (d.verdict == then) {
		r->same++;
		*outcome = O_SAME;
		/* --denials: every refusal, changed or not */
		if (r->denials && then != HX_VERDICT_ALLOW)
			*outcome = count(r, then, &d, rec, &ev);
		return 0;
	}
	*outcome = count(r, then, &d, rec, &ev);
	return 0;
}

/* A decision seen before, counted again as it was. */
static void again(struct replay *r, int out)
{
	if (out == O_NONE)
		return;
	r->decisions++;
	if (out == O_HARNESS)
		r->harness++;
	else if (out == O_UNREAD)
		r->unreadable++;
	else if (out == O_SAME)
		r->same++;
	else if (out >= 0) {
		if (r->changes[out].then == r->changes[out].now)
			r->same++; /* --denials: the same, listed */
		r->changes[out].count++;
	}
}

/* An audit_overflow record's groups: each the record of calls coalesced
 * past the audit rate (one call, counted), replayed as that record and
 * counted as many times (a coalesced call was in no replay). */
static int replay_groups(struct replay *r, json_t *rec)
{
	json_t *g, *c;
	size_t i;
	int e = 0, out;

	json_array_foreach(json_object_get(rec, "groups"), i, g)
	{
		if (e || !json_is_object(g) || !(c = json_copy(g)))
			continue;
		json_object_set(c, "args", json_object_get(g, "first_args"));
		e = replay_one(r, c, &out);
		for (json_int_t k = 1;
		     !e && k < json_integer_value(json_object_get(g, "count"));
		     k++)
			again(r, out);
		json_decref(c);
	}
	return e;
}

static int replay_file(struct replay *r, const char *path)
{
	static char key[16384];
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f = fopen(path, "re");
	int e = 0;

	if (!f) {
		fprintf(r->err, "harness-policy test: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	hx_policy_free(r->p); /* each log's sessions start afresh */
	r->p = NULL;
	json_object_clear(r->seen);
	while (!e && (n = getline(&line, &cap, f)) > 0) {
		json_t *rec, *hit;
		int out;

		r->records++;
		if (hx_logline_key(line, (size_t)n, key, sizeof(key)) < 0)
			key[0] = '\0';
		if (key[0] && (hit = json_object_get(r->seen, key))) {
			again(r, (int)json_integer_value(hit));
			continue;
		}
		rec = hx_logline_parse(line, (size_t)n);
		if (!rec) {
			r->unreadable++;
			continue;
		}
		if (!strcmp(str(rec, "event") ?: "", "audit_overflow")) {
			e = replay_groups(r, rec);
			json_decref(rec);
			continue;
		}
		e = replay_one(r, rec, &out);
		json_decref(rec);
		if (out == O_SESSION) /* new variables: judged anew */
			json_object_clear(r->seen);
		else if (key[0] && json_object_size(r->seen) < SEEN_MAX)
			json_object_set_new_nocheck(r->seen, key,
						    json_integer(out));
	}
	free(line);
	fclose(f);
	return e;
}

static const char *change_word(const struct change *c)
{
	static const char *const words[3][3] = {
	    [HX_VERDICT_ALLOW] = {[HX_VERDICT_ASK] = "allowed then, asked now",
				  [HX_VERDICT_DENY] =
				      "allowed then, denied now"},
	    [HX_VERDICT_ASK] = {[HX_VERDICT_ALLOW] = "asked then, allowed now",
				[HX_VERDICT_ASK] = "asked then and now",
				[HX_VERDICT_DENY] = "asked then, denied now"},
	    [HX_VERDICT_DENY] = {[HX_VERDICT_ALLOW] =
				     "denied then, allowed now",
				 [HX_VERDICT_ASK] = "denied then, asked now",
				 [HX_VERDICT_DENY] = "denied then and now"},
	};

	return words[c->then][c->now] ? words[c->then][c->now] : "?";
}

static void print(const struct replay *r, FILE *out)
{
	char safe[4 * PATH_MAX], safe2[1024];

	for (size_t i = 0; i < r->nchanges; i++) {
		const struct change *c = &r->changes[i];

		if (r->json) {
			json_t *o = json_object(), *ex = json_array();

			json_object_set_new(
			    o, "then", json_string(hx_verdict_name(c->then)));
			json_object_set_new(
			    o, "now", json_string(hx_verdict_name(c->now)));
			json_object_set_new(o, "rule", json_string(c->rule));
			if (c->origin[0])
				json_object_set_new(o, "origin",
						    json_string(c->origin));
			json_object_set_new(o, "count",
					    json_integer((json_int_t)c->count));
			for (size_t k = 0; k < MAX_EXAMPLES && c->examples[k];
			     k++)
				json_array_append_new(
				    ex, json_string(c->examples[k]));
			json_object_set_new(o, "examples", ex);
			char *s = json_dumps(o, JSON_COMPACT);

			fprintf(out, "%s\n", s);
			free(s);
			json_decref(o);
			continue;
		}
		fprintf(out, "%s: %zu, rule %s%s%s\n", change_word(c), c->count,
			hx_text_safe(safe, sizeof(safe), c->rule),
			c->origin[0] ? " at " : "",
			hx_text_safe(safe2, sizeof(safe2), c->origin));
		/* the agent's words: terminal-safe */
		for (size_t k = 0; k < MAX_EXAMPLES && c->examples[k]; k++)
			fprintf(
			    out, "    %s\n",
			    hx_text_safe(safe, sizeof(safe), c->examples[k]));
	}
	if (!r->json)
		fprintf(out,
			"%zu records, %zu decisions: %zu the same, %zu "
			"changed, %zu the harness's own, %zu not judged "
			"again\n",
			r->records, r->decisions, r->same,
			r->decisions - r->same - r->harness - r->unreadable,
			r->harness, r->unreadable);
}

/* The log at path replayed, verified first unless unverified: held
 * open from its verification to its replay (hx_log_hold), and one
 * changed in between is not taken. 0 or 2. */
static int replay_held(struct replay *r, const char *path, bool unverified,
		       FILE *err)
{
	static const char tool[] = "harness-policy test";
	static const char skipped[] = "not replayed (--unverified replays it)";
	struct hx_log_held h;
	int v;

	if (unverified)
		return replay_file(r, path) ? 2 : 0;
	if ((v = hx_log_hold(tool, path, skipped, &h, err)) != 1) {
		if (v == 0)
			hx_log_release(tool, path, NULL, &h, err);
		return 2;
	}
	v = replay_file(r, h.at);
	return hx_log_release(tool, path, v ? NULL : skipped, &h, err) && !v
		   ? 0
		   : 2;
}

int hx_policy_test_cli(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct replay *r = calloc(1, sizeof(*r));
	int i = 1, status = 0;
	bool unverified = false;

	if (!r)
		return 2;
	r->profiles = true;
	r->err = err;
	r->seen = json_object();
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, out);
			free(r);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			r->json = true;
		} else if (!strcmp(argv[i], "--denials")) {
			r->denials = true;
		} else if (!strcmp(argv[i], "--no-profiles")) {
			r->profiles = false;
		} else if (!strcmp(argv[i], "--unverified")) {
			unverified = true;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			fprintf(err,
				"harness-policy test: unknown option %s\n\n%s",
				argv[i], usage);
			free(r);
			return 2;
		}
	}
	if (argc - i < 2) {
		fputs(usage, err);
		free(r);
		return 2;
	}
	r->policy_file = strcmp(argv[i], "default") ? argv[i] : NULL;
	for (int k = i + 1; k < argc && status != 2; k++)
		status = replay_held(r, argv[k], unverified, err);
	if (status != 2) {
		print(r, out);
		for (size_t k = 0; k < r->nchanges; k++)
			if (r->changes[k].then == HX_VERDICT_ALLOW)
				status = 1;
	}
	for (size_t k = 0; k < r->nchanges; k++)
		for (size_t e = 0; e < MAX_EXAMPLES; e++)
			free(r->changes[k].examples[e]);
	hx_policy_free(r->p);
	json_decref(r->seen);
	free(r);
	return status;
}
