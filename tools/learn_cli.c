/* harness-policy learn; see learn_cli.h. */
#define _GNU_SOURCE
#include "common/glob.h"
#include "tools/learn_cli.h"
#include "tools/learn_open.h"
#include "tools/logverify.h"
#include "tools/yaml_out.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "supervisor/fmt.h"
#include "supervisor/session.h"
#include "policy/policy.h"
#include "supervisor/export/logline.h"

#define MAX_EXAMPLES 3
#define MAX_SUBCMDS  6	    /* an executable's argv[1] words kept apart */
#define SEEN_MAX     200000 /* decisions remembered, to skip repeats */
#define MAX_FLAGGED  20	    /* flagged audit calls named at the head */

static const char usage[] =
    "Usage: harness-policy learn [--unverified] LOG... > policy.yaml\n"
    "\n"
    "Writes the smallest commented policy that allows what the recorded\n"
    "sessions did: writes (and other changes to files) as directory\n"
    "globs under $CWD, $TMPDIR and $HOME (elsewhere the file itself),\n"
    "programs by their executable\n"
    "and first argument, connects by host:port (the name the address\n"
    "was resolved from), lookups by name (NAME:0, which allows no\n"
    "connect); everything else denied by\n"
    "default. What a session in enforce mode was refused stays refused\n"
    "(a deny rule per call), and so does what a rule refused in audit mode\n"
    "(flagged at the head, with what a rule asked). The default policy's\n"
    "deny and ask rules are included (include: default-protections) but\n"
    "for the patterns that refuse a call the sessions' own policy allowed\n"
    "(the rule disabled, the rest of it copied). Run an agent with --mode\n"
    "audit first, learn, read and edit the policy, check it with\n"
    "'harness-policy check' and 'harness-policy test POLICY LOG...',\n"
    "then enforce it.\n"
    "\n"
    "Each LOG is verified first as harness-audit verify does (its chain\n"
    "and its sessions' anchors): one that does not verify is not learned\n"
    "from (exit 2) unless --unverified.\n"
    "\n"
    "Exit status: 0 written, 2 usage or log error.\n";

/* A rule being learned: patterns, in first-seen order, with examples. */
struct learned {
	json_t *pats;	  /* array of strings */
	json_t *examples; /* object: pattern -> [examples] */
};

struct learn {
	struct learned exec, write, connect, resolve;
	struct learned deny_exec, deny_write, deny_read, deny_net;
	/* [op, what, rule, verdict]: an audit call a rule refused or asked */
	json_t *flagged;
	json_t *flagged_seen;	    /* object: flagged's entries as keys */
	struct hx_learn_open *open; /* the default's rules the runs open */
	FILE *err;
	json_t *subcmds;  /* object: exe path -> [argv[1] words] */
	json_t *answered; /* object: seq of an ask a person allowed -> true */
	json_t *unmade;	  /* object: seq of a claim never made -> true */
	/* object: op and paths of a claim never made whose own record was
	 * coalesced (no seq to name it by) -> true */
	json_t *unmade_named;
	size_t unmade_coalesced; /* coalesced calls not learned for that */
	char cwd[PATH_MAX], home[PATH_MAX], tmpdir[PATH_MAX];
	size_t sessions, records;
	size_t spaced; /* programs whose path no exec pattern can name */
};

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* A host name as a pattern names one host: nothing but a name's
 * characters (a '*' is every host). */
static bool plain_host(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("-._", *s)))
			return false;
	return true;
}

/* Whether example can be written as a match: example: a '$' past its
 * root variable would be read as a variable ("unknown variable $b": a
 * write of "a$b" made the whole learned policy fail to load). */
static bool example_ok(const char *example)
{
	const char *p = example;

	if (!p || !*p)
		return false;
	if (*p == '$')
		p += strcspn(p, "/");
	return !strchr(p, '$');
}

static void add(struct learned *l, const char *pat, const char *example)
{
	json_t *ex, *p;
	size_t i;

	if (!l->pats) {
		l->pats = json_array();
		l->examples = json_object();
	}
	/* examples doubles as the set of patterns: one lookup each */
	ex = json_object_get(l->examples, pat);
	if (!ex) {
		json_array_append_new(l->pats, json_string(pat));
		ex = json_array();
		json_object_set_new(l->examples, pat, ex);
	}
	if (example_ok(example) && json_array_size(ex) < MAX_EXAMPLES) {
		json_array_foreach(ex, i, p) if (!strcmp(json_string_value(p),
							 example)) return;
		json_array_append_new(ex, json_string(example));
	}
}

/* path with the session's $CWD, $TMPDIR or $HOME put back for its
 * start (the longest that holds): into out the rest glob-escaped (a
 * pattern), into plain as it is (an example); *root gets which ("" for
 * none) and *rest what follows it. -1 when the rest is too long to
 * name. */
static int with_vars(const struct learn *l, const char *path, char *out,
		     size_t size, char *plain, size_t psize, const char **root,
		     const char **rest)
{
	static const char *const names[] = {"$CWD", "$TMPDIR", "$HOME"};
	const char *vals[] = {l->cwd, l->tmpdir, l->home};
	char esc[PATH_MAX * 2];
	size_t best = 0;
	int which = -1;

	for (int i = 0; i < 3; i++) {
		size_t n = strlen(vals[i]);

		if (n > best && !strncmp(path, vals[i], n) &&
		    (path[n] == '/' || !path[n])) {
			best = n;
			which = i;
		}
	}
	*root = which < 0 ? "" : names[which];
	*rest = path + best;
	if (hx_glob_escape(*rest, esc, sizeof(esc)))
		return -1;
	snprintf(out, size, "%s%s", *root, esc);
	snprintf(plain, psize, "%s%s", *root, *rest);
	return 0;
}

/* The glob a write is learned as: the project and the private temp dir
 * whole, a directory of $HOME by its first name, elsewhere (a device, a
 * file of $HOME's top, a system file) the file itself. -1: none. */
static int write_glob(const struct learn *l, const char *path, char *glob,
		      size_t gsize, char *example, size_t esize)
{
	const char *root, *rest;
	char first[PATH_MAX], pat[PATH_MAX * 2];
	size_t n;

	if (with_vars(l, path, pat, sizeof(pat), example, esize, &root, &rest))
		return -1;
	if (!strcmp(root, "$CWD") || !strcmp(root, "$TMPDIR")) {
		snprintf(glob, gsize, "%s/**", root);
		return 0;
	}
	if (!strcmp(root, "$HOME") && rest[0] == '/' &&
	    (n = strcspn(rest + 1, "/")) && rest[1 + n] == '/') {
		char esc[PATH_MAX * 2];

		snprintf(first, sizeof(first), "%.*s", (int)n, rest + 1);
		if (hx_glob_escape(first, esc, sizeof(esc)) == 0 &&
		    snprintf(glob, gsize, "$HOME/%s/**", esc) < (int)gsize)
			return 0;
	}
	/* Elsewhere the file itself: its directory's files were learned
	 * (/etc/x as every file of /etc), so a root agent's audited write of
	 * /etc/hosts let the enforced one write /etc/ld.so.preload, /etc/passwd
	 * and /etc/crontab, which no protection of the default names (they are
	 * outside every write root; twenty-ninth attack review). */
	snprintf(glob, gsize, "%s", pat);
	return 0;
}

static bool plain_words(json_t *argv)
{
	size_t i;
	json_t *w;

	json_array_foreach(argv, i, w)
	{
		const char *s = json_string_value(w);

		if (!s || !*s || strpbrk(s, " \t\n\r\"'\\*?[]$"))
			return false;
	}
	return true;
}

/* An exec example as the policy's examples are written: the path, then
 * argv after argv[0]; none when a word could not be written so. */
static bool exec_example(const char *path, json_t *argv, char *buf, size_t size)
{
	size_t k, i;
	json_t *w;

	if (!plain_words(argv) || strpbrk(path, " \t\n\r*?[]"))
		return false;
	k = (size_t)snprintf(buf, size, "%s", path);
	json_array_foreach(argv, i, w)
	{
		if (i == 0 || i > 6)
			continue;
		k += (size_t)snprintf(buf + k, k < size ? size - k : 0, " %s",
				      json_string_value(w));
	}
	return k < size;
}

static void learn_exec(struct learn *l, const char *path, json_t *a,
		       bool refused)
{
	json_t *argv = json_object_get(a, "argv"), *subs;
	const char *sub = json_string_value(json_array_get(argv, 1));
	char pat[PATH_MAX * 3], ex[PATH_MAX * 2], esc[PATH_MAX * 2];

	if (!path || hx_glob_escape(path, esc, sizeof(esc)))
		return;
	/* An exec pattern's words are split at whitespace, which a glob
	 * cannot escape: "/p/a b *" allowed the program /p/a with "b"
	 * first (one the agent makes later), not /p/a b (the eleventh
	 * attack review). Such a program is not learned: refused. */
	if (strpbrk(path, " \t\n\r")) {
		l->spaced++;
		return;
	}
	if (refused) { /* exactly what was refused */
		if (exec_example(path, argv, ex, sizeof(ex)))
			add(&l->deny_exec, ex, ex);
		return;
	}
	subs = json_object_get(l->subcmds, path);
	if (!subs) {
		subs = json_array();
		json_object_set_new(l->subcmds, path, subs);
	}
	/* A program used with a few subcommands (git status, git log) is
	 * learned by them; one used many ways, whole. */
	if (sub && sub[0] != '-' &&
	    plain_words(json_array_get(argv, 1) ? argv : NULL) &&
	    json_array_size(subs) < MAX_SUBCMDS) {
		size_t i;
		json_t *s;
		bool have = false;

		json_array_foreach(subs, i, s) have =
		    have || !strcmp(json_string_value(s), sub);
		if (!have)
			json_array_append_new(subs, json_string(sub));
		snprintf(pat, sizeof(pat), "%s %s *", esc, sub);
	} else {
		snprintf(pat, sizeof(pat), "%s *", esc);
	}
	add(&l->exec, pat,
	    exec_example(path, argv, ex, sizeof(ex)) ? ex : NULL);
}

static void learn_net(struct learn *l, const char *op, json_t *a, bool refused)
{
	const char *addr = str(a, "addr"), *host = str(a, "host"),
		   *name = json_string_value(
		       json_array_get(json_object_get(a, "names"), 0));
	const char *colon = addr ? strrchr(addr, ':') : NULL;
	char target[600], esc[300];

	if (!strcmp(op, "resolve")) {
		/* A name the pipeline judged (a '*' is malformed there). A
		 * lookup matches a rule of its name whatever its ports, and
		 * a network rule allows connects too: "NAME:*" let the agent
		 * whose DNS the name is reach every port of what it answers
		 * (127.0.0.1), where the run only looked it up (seventeenth
		 * attack review). Port 0 is the lookup's alone: no connect
		 * reaches it. */
		if (plain_host(host)) {
			snprintf(target, sizeof(target), "%s:%s", host,
				 refused ? "*" : "0");
			add(refused ? &l->deny_net : &l->resolve, target,
			    target);
		}
		return;
	}
	/* A listen is allowed by the learned defaults (net_listen); one a
	 * rule refused stays refused, as the head says: it was flagged
	 * and then allowed. */
	if (addr && !strcmp(op, "listen") && refused &&
	    strncmp(addr, "unix:", 5)) {
		snprintf(target, sizeof(target), "listen:%s", addr);
		add(&l->deny_net, target, target);
	}
	if (!addr || !strcmp(op, "listen"))
		return;
	if (!strncmp(addr, "unix:", 5)) {
		/* the socket's path (or @name) is the agent's: a glob's
		 * text taken literally */
		if (hx_glob_escape(addr + 5, esc, sizeof(esc)) ||
		    snprintf(target, sizeof(target), "unix:%s", esc) >=
			(int)sizeof(target))
			return;
		add(refused ? &l->deny_net : &l->connect, target, addr);
		return;
	}
	if (plain_host(name) && colon)
		snprintf(target, sizeof(target), "%s%s", name, colon);
	else
		snprintf(target, sizeof(target), "%s", addr);
	add(refused ? &l->deny_net : &l->connect, target, target);
}

static const char *seq_key(json_t *rec, const char *k)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "%lld",
		 (long long)json_integer_value(json_object_get(rec, k)));
	return buf;
}

/* First pass: the asks a person allowed (ask_answer records after
 * them): those calls happened; and the claims that did not: a request
 * the kernel layer never saw made (kernel_unconfirmed) or one taken
 * back (revoked). A program that speaks the protocol asked, in an
 * audit run, for a write of ~/.ssh/authorized_keys it never made, and
 * learn allowed all of $HOME/.ssh (seventeenth attack review). So a
 * call allowed and then refused by the kernel (failed: nothing was
 * done): an ordinary user's agent tried, in an audit run, to write
 * /etc/profile.d/x (EACCES), and learn allowed all of /etc/profile.d for
 * the enforced runs after it, a root agent's too (twentieth attack
 * review, part b). */
/* A call by its op and paths, for a claim whose record has no seq. */
static char *call_key(json_t *rec)
{
	json_t *a = json_object_get(rec, "args");
	json_t *k = json_pack("[sss]", str(rec, "op") ?: "",
			      str(a, "path") ?: "", str(a, "path2") ?: "");
	char *s = k ? json_dumps(k, JSON_COMPACT) : NULL;

	json_decref(k);
	return s;
}

static void note_answer(struct learn *l, json_t *rec)
{
	const char *ev = str(rec, "event"), *v = str(rec, "verdict");
	char *key;

	if (ev && !strcmp(ev, "ask_answer") && v && !strcmp(v, "allow"))
		json_object_set_new(l->answered, seq_key(rec, "ref_seq"),
				    json_true());
	if (!ev || (strcmp(ev, "kernel_unconfirmed") && strcmp(ev, "revoked") &&
		    strcmp(ev, "failed")))
		return;
	if (json_object_get(rec, "ref_seq")) {
		json_object_set_new(l->unmade, seq_key(rec, "ref_seq"),
				    json_true());
		return;
	}
	/* its decision was coalesced: every such call of that object */
	if ((key = call_key(rec)))
		json_object_set_new(l->unmade_named, key, json_true());
	free(key);
}

/* Whether rec, a call coalesced past the audit rate (no seq), has a
 * claim never made on its object, also coalesced: which of the group's
 * calls failed is not known, so none is learned (said at the head). */
static bool unmade_coalesced(struct learn *l, json_t *rec)
{
	char *key;
	bool hit;

	if (json_object_get(rec, "seq") || !json_object_size(l->unmade_named))
		return false;
	key = call_key(rec);
	hit = key && json_object_get(l->unmade_named, key);
	free(key);
	if (hit)
		l->unmade_coalesced++;
	return hit;
}

/* A call a rule refused or asked that an audit session made, for the
 * head. */
static void flag(struct learn *l, const char *op, json_t *a, const char *rule,
		 const char *verdict)
{
	const char *what = str(a, "path") ?: str(a, "addr") ?: str(a, "host");
	json_t *argv = json_object_get(a, "argv"), *f;
	char ex[PATH_MAX * 2], *key;

	if (!strcmp(op, "exec") && what &&
	    exec_example(what, argv, ex, sizeof(ex)))
		what = ex;
	/* a write through /proc/self/fd/3: the file it reached too */
	else if (what && str(a, "path_resolved") &&
		 snprintf(ex, sizeof(ex), "%s (resolved %s)", what,
			  str(a, "path_resolved")) < (int)sizeof(ex))
		what = ex;
	if (!what)
		return;
	f = json_pack("[ssss]", op, what, rule, verdict);
	key = json_dumps(f, JSON_COMPACT);
	/* each once: an open and its retry are two records */
	if (key && !json_object_get(l->flagged_seen, key)) {
		json_object_set_new(l->flagged_seen, key, json_true());
		json_array_append(l->flagged, f);
	}
	free(key);
	json_decref(f);
}

static void learn_record(struct learn *l, json_t *rec)
{
	const char *op = str(rec, "op"), *v = str(rec, "verdict"),
		   *rule = str(rec, "rule"), *ev = str(rec, "event");
	json_t *a = json_object_get(rec, "args");
	bool refused, enforced = json_is_true(json_object_get(rec, "enforced"));
	char glob[PATH_MAX * 2], ex[PATH_MAX * 2];
	const char *root, *rest, *path;

	if (ev && !strcmp(ev, "session_start")) {
		l->sessions++;
		snprintf(l->cwd, sizeof(l->cwd), "%s", str(rec, "cwd") ?: "");
		snprintf(l->home, sizeof(l->home), "%s",
			 str(rec, "home") ?: getenv("HOME") ?: "");
		snprintf(l->tmpdir, sizeof(l->tmpdir), "%s",
			 str(rec, "tmpdir") ?: "");
		hx_learn_open_session(l->open, rec, l->err);
		return;
	}
	/* The harness's own refusals are not the policy's to learn; one
	 * audit mode let past (a neighbour's socket, the user's terminal,
	 * a file linked from outside) is the team's to review: flagged. */
	if (op && v && a && rule && !strncmp(rule, "harness:", 8) &&
	    strcmp(v, "allow") &&
	    json_is_false(json_object_get(rec, "enforced")))
		flag(l, op, a, rule, v);
	if (!op || !v || !a || (ev && !strcmp(ev, "ask_answer")) ||
	    (rule && !strncmp(rule, "harness:", 8)) ||
	    (json_object_get(rec, "seq") &&
	     json_object_get(l->unmade, seq_key(rec, "seq"))) ||
	    unmade_coalesced(l, rec))
		return;
	l->records++;
	/* What was refused did not happen: it stays refused. In audit mode
	 * everything happened; what a rule of the run's policy refused
	 * there (a read of ~/.ssh/id_rsa) is what the team reviews, not a
	 * need to learn: flagged, refused as if enforced. What a rule
	 * asked is flagged and learned: a person would have decided, and
	 * the default's ask rules ask again (default-protections). What
	 * only a category's default refused is learned. */
	refused = strcmp(v, "allow") && !str(rec, "grant") &&
		  !json_object_get(l->answered, seq_key(rec, "seq"));
	/* What the run's policy allowed stays allowed, a default's
	 * protection that refuses it too (learn_open.h) */
	if (!strcmp(v, "allow"))
		hx_learn_open_note(l->open, rec);
	if (refused && !enforced) {
		if (!rule || !strncmp(rule, "default:", 8))
			refused = false;
		else if (flag(l, op, a, rule, v), !strcmp(v, "ask"))
			refused = false;
	}
	/* The pipeline judges the path as named and as resolved: both. */
	if (!strcmp(op, "exec")) {
		learn_exec(l, str(a, "path"), a, refused);
		if (str(a, "path_resolved"))
			learn_exec(l, str(a, "path_resolved"), a, refused);
		return;
	}
	if (str(a, "addr") || str(a, "host")) {
		learn_net(l, op, a, refused);
		return;
	}
	for (int k = 0; k < 4; k++) {
		static const char *const keys[] = {"path", "path_resolved",
						   "path2", "path2_resolved"};

		/* a symlink's path2 is its text, a link's what it names */
		if (!(path = str(a, keys[k])) ||
		    (k >= 2 && (!strcmp(op, "symlink") || !strcmp(op, "link"))))
			continue;
		if (refused || !strcmp(op, "read")) {
			/* reads are allowed by default: refusals only */
			if (!refused)
				continue;
			if (with_vars(l, path, glob, sizeof(glob), ex,
				      sizeof(ex), &root, &rest))
				continue;
			add(strcmp(op, "read") ? &l->deny_write : &l->deny_read,
			    glob, ex);
			continue;
		}
		if (!write_glob(l, path, glob, sizeof(glob), ex, sizeof(ex)))
			add(&l->write, glob, ex);
	}
}

static void rule(FILE *out, const char *id, const char *what,
		 const char *verdict, const char *access, struct learned *l)
{
	json_t *ex = json_array(), *p, *e;
	const char *k;
	size_t i;

	if (!l->pats || !json_array_size(l->pats)) {
		json_decref(ex);
		return;
	}
	fprintf(out, "  - id: %s\n    description: %s\n", id, what);
	if (access)
		fprintf(out, "    access: %s\n", access);
	hx_yaml_list(out, verdict, l->pats);
	json_object_foreach(l->examples, k, p) json_array_foreach(p, i, e)
	    json_array_append(ex, e);
	if (json_array_size(ex))
		hx_yaml_list(out, "match", ex);
	json_decref(ex);
}

/* The calls of audit sessions that a rule of their policy refused or
 * asked, said at the head. */
static void flagged(struct learn *l, FILE *out)
{
	size_t n = json_array_size(l->flagged), i;
	json_t *f;

	if (!n)
		return;
	fprintf(
	    out,
	    "# Flagged: %zu call%s of audit sessions that a rule of their "
	    "policy (or the\n# harness's own, harness:*) refused or asked "
	    "(done only because nothing\n# was enforced). A refusal is not "
	    "learned: it stays refused. An ask is\n# learned: the default's "
	    "ask rules ask again, another policy's do not.\n# Review them:\n",
	    n, n == 1 ? "" : "s");
	json_array_foreach(l->flagged, i, f)
	{
		if (i == MAX_FLAGGED) {
			fprintf(out, "#   ... and %zu more\n", n - i);
			break;
		}
		fprintf(out, "#   %s ",
			json_string_value(json_array_get(f, 0)));
		hx_yaml_quoted(out, json_string_value(json_array_get(f, 1)));
		fprintf(out, " (%s by ",
			json_string_value(json_array_get(f, 3)));
		hx_yaml_quoted(out, json_string_value(json_array_get(f, 2)));
		fputs(")\n", out);
	}
}

static void write_policy(struct learn *l, int nlogs, char *const *logs,
			 FILE *out)
{
	char when[32];
	time_t now = time(NULL);

	strftime(when, sizeof(when), "%Y-%m-%d", gmtime(&now));
	fprintf(out,
		"# Learned by harness-policy learn on %s from %zu session%s "
		"(%zu decisions):\n",
		when, l->sessions, l->sessions == 1 ? "" : "s", l->records);
	for (int i = 0; i < nlogs; i++)
		fprintf(out, "#   %s\n", logs[i]);
	if (l->spaced)
		fprintf(out,
			"# Not learned: %zu execs of programs whose path holds "
			"whitespace, which an\n# exec pattern cannot name "
			"(its words are split there): refused.\n",
			l->spaced);
	if (l->unmade_coalesced)
		fprintf(out,
			"# Not learned: %zu calls coalesced past the audit "
			"rate on an object of which\n# one such call failed "
			"(also coalesced): which did is not known. Refused.\n",
			l->unmade_coalesced);
	fputs("# It allows what they did and nothing else; what a session in "
	      "enforce mode\n# was refused stays refused. Read it, edit it, "
	      "then: harness-policy check\n# FILE; harness-policy test FILE "
	      "LOG...\n",
	      out);
	flagged(l, out);
	fputs("version: 1\nmode: enforce\n", out);
	fputs("# What the default policy refuses or asks stays so, whatever "
	      "the sessions did:\n# its deny and ask rules (credentials, "
	      "shell startup files, git hooks, files\n# that run code later, "
	      "privilege, neighbours' sockets...), by reference, as\n# this "
	      "harness's default has them ('harness-policy show --policy "
	      "FILE' lists\n# them). A deny wins over every allow below.\n"
	      "include: [" HX_DEFAULT_PROTECTIONS "]\n",
	      out);
	hx_learn_open_disable(l->open, out);
	fputs("defaults:\n  exec: deny\n  file_read: allow\n  file_write: "
	      "deny\n  net_connect: deny\n  net_send: deny\n  net_resolve: "
	      "deny\n  net_listen: allow\n",
	      out);
	fputs("files:\n", out);
	rule(out, "learned-writes",
	     "the files the sessions wrote, made or removed", "allow", "write",
	     &l->write);
	rule(out, "learned-refused-writes",
	     "what the sessions were refused to change (in audit mode, by a "
	     "rule)",
	     "deny", "write", &l->deny_write);
	rule(out, "learned-refused-reads",
	     "what the sessions were refused to read (in audit mode, by a "
	     "rule)",
	     "deny", "read", &l->deny_read);
	if (!hx_learn_open_rules(l->open, out, "files") && !l->write.pats &&
	    !l->deny_write.pats && !l->deny_read.pats)
		fputs("  []\n", out);
	fputs("exec:\n", out);
	rule(out, "learned-programs",
	     "the programs the sessions ran, by executable and first argument",
	     "allow", NULL, &l->exec);
	rule(out, "learned-refused-programs",
	     "what the sessions were refused to run (in audit mode, by a "
	     "rule)",
	     "deny", NULL, &l->deny_exec);
	if (!hx_learn_open_rules(l->open, out, "exec") && !l->exec.pats &&
	    !l->deny_exec.pats)
		fputs("  []\n", out);
	fputs("network:\n", out);
	rule(out, "learned-connects", "where the sessions connected and sent",
	     "allow", NULL, &l->connect);
	rule(out, "learned-lookups",
	     "names the sessions looked up (a name in any rule may be looked "
	     "up; port 0 allows no connect)",
	     "allow", NULL, &l->resolve);
	rule(out, "learned-refused-network",
	     "what the sessions were refused on the network (in audit mode, "
	     "by a rule)",
	     "deny", NULL, &l->deny_net);
	if (!hx_learn_open_rules(l->open, out, "network") && !l->connect.pats &&
	    !l->resolve.pats && !l->deny_net.pats)
		fputs("  []\n", out);
}

static void learned_free(struct learned *l)
{
	json_decref(l->pats);
	json_decref(l->examples);
}

/* An audit_overflow record's groups, each the record of calls coalesced
 * past the audit rate (one object each, a count), given to fn as those
 * calls' record: without a seq, its arguments as args. They were not
 * learned from: an audit run's flood made every later write a count. */
static bool each_coalesced(json_t *rec, void (*fn)(struct learn *l, json_t *),
			   struct learn *l)
{
	const char *ev = str(rec, "event");
	json_t *g, *c;
	size_t i;

	if (!ev || strcmp(ev, "audit_overflow"))
		return false;
	json_array_foreach(json_object_get(rec, "groups"), i, g)
	{
		if (!json_is_object(g) || !(c = json_copy(g)))
			continue;
		json_object_del(c, "seq");
		json_object_set(c, "args", json_object_get(g, "first_args"));
		fn(l, c);
		json_decref(c);
	}
	return true;
}

static int each_record(const char *path,
		       void (*fn)(struct learn *l, json_t *rec),
		       struct learn *l, FILE *err)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f) {
		fprintf(err, "harness-policy learn: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	static char key[16384];
	json_t *seen = json_object();

	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *rec;
		const char *v, *ev;

		/* the first pass wants the answers only */
		if (fn == note_answer &&
		    !memmem(line, (size_t)n, "\"ask_answer\"", 12) &&
		    !memmem(line, (size_t)n, "\"kernel_unconfirmed\"", 20) &&
		    !memmem(line, (size_t)n, "\"revoked\"", 9) &&
		    !memmem(line, (size_t)n, "\"failed\"", 8))
			continue;
		/* The same decision again teaches nothing more. */
		if (hx_logline_key(line, (size_t)n, key, sizeof(key)) < 0)
			key[0] = '\0';
		if (key[0] && json_object_get(seen, key))
			continue;
		rec = hx_logline_parse(line, (size_t)n);
		if (!rec)
			continue;
		if (each_coalesced(rec, fn, l)) {
			json_decref(rec);
			continue;
		}
		fn(l, rec);
		v = str(rec, "verdict");
		ev = str(rec, "event");
		if (ev && !strcmp(ev, "session_start"))
			json_object_clear(seen); /* new variables */
		/* an ask's fate is its own (ask_answer, by seq); so is a
		 * call that was not made: the same one made later teaches */
		else if (key[0] && !(v && !strcmp(v, "ask")) &&
			 !json_object_get(l->unmade, seq_key(rec, "seq")) &&
			 json_object_size(seen) < SEEN_MAX)
			json_object_set_new_nocheck(seen, key, json_true());
		json_decref(rec);
	}
	json_decref(seen);
	free(line);
	fclose(f);
	return 0;
}

#define LEARN	"harness-policy learn"
#define SKIPPED "not learned from (--unverified learns from it)"

/* Each log of argv held open from its verification to its reads
 * (hx_log_hold); NULL when one does not verify (said). */
static struct hx_log_held *hold(int argc, char *const *argv, FILE *err)
{
	struct hx_log_held *h = calloc((size_t)argc, sizeof(*h));
	int i;

	if (!h)
		return NULL;
	for (i = 1; i < argc; i++)
		if (hx_log_hold(LEARN, argv[i], SKIPPED, &h[i], err) != 1)
			break;
	if (i == argc)
		return h;
	for (int k = 1; k <= i && k < argc; k++)
		if (h[k].fd >= 0)
			hx_log_release(LEARN, argv[k], NULL, &h[k], err);
	free(h);
	return NULL;
}

int hx_learn_cli(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct hx_log_held *held = NULL;
	struct learn l = {0};
	int status = 0;
	bool check = true;

	if (argc > 1 && !strcmp(argv[1], "--unverified")) {
		check = false;
		argv++;
		argc--;
	}
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, argc < 2 ? err : out);
		return argc < 2 ? 2 : 0;
	}
	if (!(l.open = hx_learn_open_new()))
		return 2;
	if (check && !(held = hold(argc, argv, err))) {
		hx_learn_open_free(l.open);
		return 2;
	}
	l.err = err;
	l.flagged = json_array();
	l.flagged_seen = json_object();
	l.subcmds = json_object();
	l.answered = json_object();
	l.unmade = json_object();
	l.unmade_named = json_object();
	for (int i = 1; i < argc && !status; i++) {
		const char *at = held ? held[i].at : argv[i];

		json_object_clear(l.answered); /* seqs are the log's own */
		json_object_clear(l.unmade);
		json_object_clear(l.unmade_named);
		if (each_record(at, note_answer, &l, err) ||
		    each_record(at, learn_record, &l, err))
			status = 2;
	}
	for (int i = 1; held && i < argc; i++)
		if (!hx_log_release(LEARN, argv[i], status ? NULL : SKIPPED,
				    &held[i], err))
			status = 2;
	free(held);
	if (!status)
		write_policy(&l, argc - 1, argv + 1, out);
	learned_free(&l.exec);
	learned_free(&l.write);
	learned_free(&l.connect);
	learned_free(&l.resolve);
	learned_free(&l.deny_exec);
	learned_free(&l.deny_write);
	learned_free(&l.deny_read);
	learned_free(&l.deny_net);
	json_decref(l.flagged);
	json_decref(l.flagged_seen);
	hx_learn_open_free(l.open);
	json_decref(l.subcmds);
	json_decref(l.answered);
	json_decref(l.unmade);
	json_decref(l.unmade_named);
	return status;
}
