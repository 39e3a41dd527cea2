/* harness-exec pending | approve | deny; see askcli.h. */
#define _GNU_SOURCE
#include "supervisor/askcli.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/ask.h"
#include "supervisor/askuser.h"
#include "supervisor/grants.h"
#include "supervisor/control.h"
#include "supervisor/session.h"

#define MAX_LIVE  64
#define REPLY_MAX 65536 /* pending: the agent's questions' text */
#define WAIT_MS	  5000

static const char usage[] =
    "Usage: harness-exec pending [--session ID] [--json]\n"
    "       harness-exec approve ID [--scope once|session|always]\n"
    "                            [--prefix N] [--session ID]\n"
    "       harness-exec deny ID [--scope once|session|always]\n"
    "                            [--session ID]\n"
    "       harness-exec answer ID [--session ID] [--] TEXT\n"
    "       harness-exec resume [--session ID]\n"
    "\n"
    "pending  what the running sessions ask and wait for: one JSON\n"
    "         object per question and line (session, id, what, the\n"
    "         processes that asked, rule, seconds waited and left; a\n"
    "         question of the agent's: op \"question\", its call_id,\n"
    "         question and choices), or, on a terminal without --json,\n"
    "         one line each\n"
    "approve  allows question ID (a batch: all of its calls) of the\n"
    "         session (--session, needed when more than one runs):\n"
    "         once (the default), for the session, or always (kept in\n"
    "         the grants file: harness-policy grants); --prefix N grants\n"
    "         an exec with its first N arguments and any after them\n"
    "         ('git push' for 'git push origin main' with --prefix 1)\n"
    "deny     refuses it, once or for the session or always; a\n"
    "         question of the agent's is declined (once: no --scope)\n"
    "answer   answers the agent's own question ID (harness-mcp's\n"
    "         ask_user, when its client cannot show it) with TEXT: one\n"
    "         line of 1 to 2048 bytes of UTF-8 without control\n"
    "         characters; a question with choices takes one of them,\n"
    "         by its text or its number. Put -- before a TEXT that\n"
    "         begins with '-'\n"
    "resume   thaws the agent of a session an alert paused (the\n"
    "         policy's alerts:, action pause); the session records\n"
    "         who resumed it\n"
    "\n"
    "Exit status: 0 done, 1 refused (the reply says why) or no such\n"
    "session or question, 2 usage.\n";

bool hx_askcli_is_command(const char *name)
{
	return !strcmp(name, "pending") || !strcmp(name, "approve") ||
	       !strcmp(name, "deny") || !strcmp(name, "answer") ||
	       !strcmp(name, "resume");
}

struct live {
	char id[HX_SESSION_ID_MAX + 1];
	char path[108];
};

/* A session's ask socket that answers (the session runs). */
static bool answers(const char *path)
{
	char reply[64];

	return hx_control_request(path, "pending", reply, sizeof(reply),
				  1000) == 0;
}

/* The running sessions (their ask socket answers), or the one named. */
static size_t find_live(const char *only, struct live *out, size_t max)
{
	char state[PATH_MAX], dir[PATH_MAX + 16], p[PATH_MAX + 128];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if (hx_session_state_dir(state, sizeof(state)))
		return 0;
	snprintf(dir, sizeof(dir), "%s/sessions", state);
	if (!(d = opendir(dir)))
		return 0;
	while ((de = readdir(d)) && n < max) {
		if (!hx_session_name_valid(de->d_name) ||
		    (only && strcmp(only, de->d_name)))
			continue;
		/* As the session placed it: its dir, or the run dir when
		 * that path is too long for a socket. */
		if ((size_t)snprintf(p, sizeof(p), "%s/%s/ask", dir,
				     de->d_name) >= sizeof(out->path))
			snprintf(p, sizeof(p), "/tmp/harness-%u/%s.ask",
				 (unsigned)getuid(), de->d_name);
		if (strlen(p) >= sizeof(out->path) || !answers(p))
			continue;
		memcpy(out[n].id, de->d_name, strlen(de->d_name) + 1);
		memcpy(out[n].path, p, strlen(p) + 1); /* fits: checked */
		n++;
	}
	closedir(d);
	return n;
}

static void print_human(FILE *out, const char *session, json_t *q)
{
	/* what is terminal-safe: the agent's text escaped (askuser.h) */
	const char *op = json_string_value(json_object_get(q, "op"));

	if (op && !strcmp(op, "question")) {
		long long id = json_integer_value(json_object_get(q, "id"));

		fprintf(out,
			"%s  %lld  %s  (waiting %llds, %llds left; "
			"harness-exec answer %lld TEXT, or deny %lld)\n",
			session, id,
			json_string_value(json_object_get(q, "what")),
			(long long)json_integer_value(
			    json_object_get(q, "waiting_s")),
			(long long)json_integer_value(
			    json_object_get(q, "timeout_s")),
			id, id);
		return;
	}
	fprintf(out, "%s  %lld  %s  (rule %s, waiting %llds, %llds left)\n",
		session,
		(long long)json_integer_value(json_object_get(q, "id")),
		json_string_value(json_object_get(q, "what")),
		json_string_value(json_object_get(q, "rule")) ?: "?",
		(long long)json_integer_value(json_object_get(q, "waiting_s")),
		(long long)json_integer_value(json_object_get(q, "timeout_s")));
}

static int cmd_pending(const struct live *l, size_t n, bool json, FILE *out,
		       FILE *err)
{
	char reply[REPLY_MAX];
	int total = 0;

	for (size_t i = 0; i < n; i++) {
		char *line, *save = NULL;

		if (hx_control_request(l[i].path, "pending", reply,
				       sizeof(reply), WAIT_MS)) {
			fprintf(err, "harness-exec pending: %s: no answer\n",
				l[i].id);
			continue;
		}
		for (line = strtok_r(reply, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			json_t *q = json_loads(line, 0, NULL);

			if (!q)
				continue; /* the "ok N" line */
			json_object_set_new(q, "session", json_string(l[i].id));
			if (json) {
				char *s = json_dumps(q, JSON_COMPACT);

				fprintf(out, "%s\n", s);
				free(s);
			} else {
				print_human(out, l[i].id, q);
			}
			total++;
			json_decref(q);
		}
	}
	if (!total && !json)
		fprintf(out, "nothing waits\n");
	return 0;
}

/* One request and its reply: "ok ..." printed, "error ..." said. */
static int cmd_request(const char *verb, const struct live *l, const char *req,
		       FILE *out, FILE *err)
{
	char reply[REPLY_MAX];
	int r = hx_control_request(l->path, req, reply, sizeof(reply), WAIT_MS);

	if (r) {
		fprintf(err, "harness-exec %s: %s: %s\n", verb, l->id,
			strerror(-r));
		return 1;
	}
	if (strncmp(reply, "ok ", 3)) {
		fprintf(err, "harness-exec %s: %s: %s\n", verb, l->id,
			strncmp(reply, "error ", 6) ? reply : reply + 6);
		return 1;
	}
	fprintf(out, "%s: %s\n", l->id, reply + 3);
	return 0;
}

static int cmd_answer(const char *verb, const struct live *l, unsigned id,
		      const char *scope, unsigned prefix, const char *text,
		      FILE *out, FILE *err)
{
	char req[HX_ASK_ANSWER_MAX + 64];

	if (text)
		snprintf(req, sizeof(req), "answer %u %s", id, text);
	else
		snprintf(req, sizeof(req), "%s %u %s %u", verb, id, scope,
			 prefix);
	return cmd_request(verb, l, req, out, err);
}

struct args {
	const char *verb, *session, *scope, *text;
	bool json, has_id, dashes;
	unsigned long id, prefix;
};

/* One word of argv (at *i, which it may advance): -1 to go on, else the
 * exit status. */
static int parse_word(int argc, char *const *argv, int *i, struct args *o,
		      FILE *out, FILE *err)
{
	const char *a = argv[*i], *verb = o->verb;
	bool answer = !strcmp(verb, "answer");
	char *end;

	if (o->dashes || (answer && o->has_id && a[0] != '-')) {
		if (answer && o->text) {
			fprintf(err, "harness-exec answer: one TEXT: quote an "
				     "answer of several words\n");
			return 2;
		}
		if (!answer || !o->has_id)
			goto unexpected;
		o->text = a;
	} else if (!strcmp(a, "--") && answer) {
		o->dashes = true;
	} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
		fputs(usage, out);
		return 0;
	} else if (!strcmp(a, "--json")) {
		o->json = true;
	} else if (!strcmp(a, "--session") && *i + 1 < argc) {
		o->session = argv[++*i];
	} else if (!strcmp(a, "--scope") && *i + 1 < argc &&
		   strcmp(verb, "pending") && !answer) {
		o->scope = argv[++*i];
		if (hx_grant_scope_parse(o->scope) < 0) {
			fprintf(err,
				"harness-exec %s: --scope %s: expected once, "
				"session or always\n",
				verb, o->scope);
			return 2;
		}
	} else if (!strcmp(a, "--prefix") && *i + 1 < argc &&
		   !strcmp(verb, "approve")) {
		o->prefix = strtoul(argv[++*i], &end, 10);
		if (*end || o->prefix > 64) {
			fprintf(err, "harness-exec approve: --prefix expects 0 "
				     "to 64\n");
			return 2;
		}
	} else if (!o->has_id && strcmp(verb, "pending") &&
		   strcmp(verb, "resume") && a[0] >= '0' && a[0] <= '9') {
		o->id = strtoul(a, &end, 10);
		if (*end || !o->id || o->id > 0xffffffffUL) {
			fprintf(err, "harness-exec %s: %s is no question id\n",
				verb, a);
			return 2;
		}
		o->has_id = true;
	} else {
		goto unexpected;
	}
	return -1;
unexpected:
	fprintf(err, "harness-exec %s: unexpected '%s'\n\n%s", verb, a, usage);
	return 2;
}

/* argv parsed into o: -1 to go on, else the exit status. */
static int parse(int argc, char *const *argv, struct args *o, FILE *out,
		 FILE *err)
{
	const char *verb = o->verb;
	int r;

	for (int i = 2; i < argc; i++)
		if ((r = parse_word(argc, argv, &i, o, out, err)) >= 0)
			return r;
	if (strcmp(verb, "pending") && strcmp(verb, "resume") && !o->has_id) {
		fprintf(err,
			"harness-exec %s: which question? (harness-exec "
			"pending)\n\n%s",
			verb, usage);
		return 2;
	}
	if (!strcmp(verb, "answer") && !o->text) {
		fprintf(err, "harness-exec answer: what answer? (TEXT)\n\n%s",
			usage);
		return 2;
	}
	if (o->text && strlen(o->text) > HX_ASK_ANSWER_MAX) {
		fprintf(err,
			"harness-exec answer: an answer of more than %d "
			"bytes\n",
			HX_ASK_ANSWER_MAX);
		return 2;
	}
	if (o->session && !hx_session_name_valid(o->session)) {
		fprintf(err, "harness-exec %s: '%s' is no session id\n", verb,
			o->session);
		return 2;
	}
	return -1;
}

int hx_askcli(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct args o = {.verb = argv[1], .scope = "once"};
	const char *verb = o.verb;
	struct live live[MAX_LIVE];
	size_t n;
	int r;

	o.json = !isatty(fileno(out));
	if ((r = parse(argc, argv, &o, out, err)) >= 0)
		return r;
	n = find_live(o.session, live, MAX_LIVE);
	if (!strcmp(verb, "pending"))
		return cmd_pending(live, n, o.json, out, err);
	if (n > 1) {
		fprintf(err,
			"harness-exec %s: %zu sessions run: say which with "
			"--session ID (harness-exec pending)\n",
			verb, n);
		return 2;
	}
	if (!n) {
		fprintf(err, "harness-exec %s: no running session%s\n", verb,
			o.session ? " of that id" : "");
		return 1;
	}
	if (!strcmp(verb, "resume"))
		return cmd_request(verb, &live[0], "resume", out, err);
	return cmd_answer(verb, &live[0], (unsigned)o.id, o.scope,
			  (unsigned)o.prefix, o.text, out, err);
}
