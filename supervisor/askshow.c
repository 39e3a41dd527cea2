/* The questions for people and programs (ask.h): what waits, one line
 * of it, its description, and the ask socket's requests, answered
 * through ask.c. */
#define _GNU_SOURCE
#include "supervisor/ask_int.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/names.h"
#include "common/sbuf.h"
#include "supervisor/envdiff.h"
#include "supervisor/fmt.h"
#include "supervisor/grants.h"
#include "supervisor/record.h"

/* Bytes of the agent's text on a question's one line. */
#define LINE_TEXT_MAX 300

/* The longest directory all of batch b's paths are beneath. */
static void batch_dir(const struct hx_ask *a, unsigned b, unsigned upto,
		      char *dir, size_t size)
{
	const struct question *h = hx_ask_head(a, b);
	char *slash;
	size_t n;

	snprintf(dir, size, "%s", h && h->s.path ? h->s.path : "/");
	if ((slash = strrchr(dir, '/')))
		*(slash == dir ? slash + 1 : slash) = '\0';
	for (const struct question *q = a->qs; q; q = q->next) {
		if (q->batch != b || !q->recorded || !q->s.path || q->id > upto)
			continue;
		while (strcmp(dir, "/") &&
		       (strncmp(q->s.path, dir, (n = strlen(dir))) ||
			q->s.path[n] != '/')) {
			slash = strrchr(dir, '/');
			*(slash == dir ? slash + 1 : slash) = '\0';
		}
	}
}

size_t hx_ask_pending(const struct hx_ask *a, unsigned *ids, size_t n)
{
	size_t k = 0;

	for (const struct question *q = a ? a->qs : NULL; q; q = q->next)
		if (q->recorded && hx_ask_head(a, q->batch) == q) {
			if (k < n)
				ids[k] = q->batch;
			k++;
		}
	return k;
}

/* Bytes of one argv word on a question's line: a longer one is cut,
 * saying by how much, so that the words after it show (a 2,500-byte
 * "-o ci.skip=xxx..." pushed "--force main" past the line's end, and
 * the person approved a push it did not see). A long line (the
 * terminal's, LONG_LINE bytes or more) shows a word of a quarter of it
 * and an environment of half of it whole. */
#define WORD_MAX  120
#define LONG_LINE 4096

/* w as one word of b; true when it was cut. */
static bool put_word(struct hx_sbuf *b, const char *w)
{
	size_t room = b->cap >= LONG_LINE ? b->cap / 4 : WORD_MAX;
	size_t n = strlen(w), k = n > room ? room : n;
	bool plain = *w != '\0';

	for (const char *p = w; *p && plain; p++)
		plain = (*p > ' ' && *p < 0x7f &&
			 !strchr("'\"\\$`;&|<>(){}*?", *p));
	if (!plain)
		hx_sbuf_put(b, "'");
	hx_sbuf_put_escaped(b, w, k);
	if (k < n) {
		hx_sbuf_put(b, "...[");
		hx_sbuf_put_uint(b, n - k);
		hx_sbuf_put(b, " more bytes]");
	}
	if (!plain)
		hx_sbuf_put(b, "'");
	return k < n;
}

/* Bytes of a question's line an exec's environment takes at most: the
 * rest is counted, so that its argv still shows. A longer line (the
 * terminal's) gives it half of itself. */
#define ENV_LINE_MAX 640

/* The entries of s's environment difference that set (unset: those that
 * unset) a name a question shows (no shell bookkeeping), up to
 * ENV_LINE_MAX bytes of b past start (half of a long line); the ones
 * left out counted in *left, *cut set when a word was cut. */
static void put_env_part(struct hx_sbuf *b, const struct hx_ask_subject *s,
			 bool unset, size_t start, bool *any, size_t *left,
			 bool *cut)
{
	size_t room = b->cap >= LONG_LINE ? b->cap / 2 : ENV_LINE_MAX;

	for (size_t i = 0; s->env && i < s->env_len;) {
		const char *e = s->env + i;

		i += strlen(e) + 1;
		if (hx_envdiff_bookkeeping(e) || (e[0] == '-') != unset)
			continue;
		if (b->len > start + room) {
			(*left)++;
			continue;
		}
		hx_sbuf_put(b, *any ? " " : " env ");
		*any = true;
		if (unset)
			hx_sbuf_put(b, "-u ");
		*cut |= put_word(b, unset ? e + 1 : e);
	}
}

/* An exec's environment as it differs from the session's, before its
 * argv as env(1) would take it ("env GIT_DIR=/x -u HOME git push"): what
 * it sets first, then what it unsets, a shell's bookkeeping (PWD,
 * SHLVL...) left out (envdiff.h), and cut short of pushing the argv off
 * the line. true when all of it shows. */
static bool put_env(struct hx_sbuf *b, const struct hx_ask_subject *s)
{
	size_t start = b->len, left = 0;
	bool any = false, cut = false;

	/* unread, s->env holds a loader's options only (pipeline_env.c) */
	if (s->env_unread)
		hx_sbuf_put(b, " [environment not read]");
	put_env_part(b, s, false, start, &any, &left, &cut);
	put_env_part(b, s, true, start, &any, &left, &cut);
	if (left) {
		hx_sbuf_put(b, " ...[");
		hx_sbuf_put_uint(b, left);
		hx_sbuf_put(b, " more variables]");
	}
	return !left && !cut;
}

/* A line that did not fit ends saying so, never cut silently; true
 * when it was cut. */
static bool mark_cut(struct hx_sbuf *b)
{
	static const char tail[] = " ...[cut: harness-exec pending --json "
				   "has all of it]";

	if (b->len + 1 < b->cap)
		return false;
	if (b->cap > sizeof(tail)) {
		b->len = b->cap - sizeof(tail);
		b->p[b->len] = '\0';
		hx_sbuf_put(b, tail);
	}
	return true;
}

/* s redacted (record.h), cut at max bytes on a character with "...",
 * made terminal-safe into b. */
static void put_agent_text(struct hx_sbuf *b, const char *s, size_t max)
{
	json_t *r = hx_record_text(NULL, "", s);
	const char *t = json_string_value(r) ? json_string_value(r) : "";
	char cut[LINE_TEXT_MAX + 4];
	size_t n = strlen(t);

	if (max > LINE_TEXT_MAX)
		max = LINE_TEXT_MAX;
	if (n > max) {
		n = hx_utf8_cut(t, n, max);
		memcpy(cut, t, n);
		memcpy(cut + n, "...", 4);
		t = cut;
	}
	hx_askuser_put_text(b, t, NULL);
	json_decref(r);
}

/* The agent's question q on one line: "the agent asks: Push? [1) yes,
 * 2) no]". */
static void agent_line(const struct question *q, struct hx_sbuf *b)
{
	hx_sbuf_put(b, "the agent asks: ");
	put_agent_text(b, q->uq.text, LINE_TEXT_MAX);
	for (size_t i = 0; i < q->uq.nchoices; i++) {
		hx_sbuf_put(b, i ? ", " : " [");
		hx_sbuf_put_uint(b, i + 1);
		hx_sbuf_put(b, ") ");
		put_agent_text(b, q->uq.choices[i], LINE_TEXT_MAX / 4);
	}
	hx_sbuf_put(b, q->uq.nchoices ? "]" : "");
}

bool hx_ask_line(const struct hx_ask *a, unsigned id, char *buf, size_t size)
{
	const struct question *h = hx_ask_head(a, id);
	struct hx_sbuf b = {buf, size, 0};
	size_t n = hx_ask_batch_size(a, id, UINT_MAX);
	char dir[PATH_MAX];
	bool whole = true;

	if (size)
		buf[0] = '\0';
	if (!h)
		return true;
	if (h->agent) {
		agent_line(h, &b);
		return true;
	}
	hx_sbuf_put(&b, hx_op_name(h->s.op));
	hx_sbuf_put(&b, " ");
	if (h->s.op == HX_OP_EXEC) {
		hx_sbuf_put_escaped(&b, h->s.path, strlen(h->s.path));
		hx_sbuf_put(&b, ":");
		whole = put_env(&b, &h->s);
		for (size_t i = 0; i < h->s.argc; i++) {
			hx_sbuf_put(&b, " ");
			whole = !put_word(&b, h->s.argv[i]) && whole;
		}
		if (h->cwd) {
			hx_sbuf_put(&b, " (in ");
			hx_sbuf_put_escaped(&b, h->cwd, strlen(h->cwd));
			hx_sbuf_put(&b, ")");
		}
		if (h->s.judged_as) {
			hx_sbuf_put(&b, ", which runs ");
			hx_sbuf_put_escaped(&b, h->s.judged_as,
					    strlen(h->s.judged_as));
		}
		whole = !mark_cut(&b) && whole;
	} else if (h->s.addr) {
		if (h->s.nnames) {
			hx_sbuf_put_escaped(&b, h->s.names[0],
					    strlen(h->s.names[0]));
			hx_sbuf_put(&b, ":");
			hx_sbuf_put_uint(&b, h->s.port);
			hx_sbuf_put(&b, " (");
		}
		hx_sbuf_put_escaped(&b, h->s.addr, strlen(h->s.addr));
		if (h->s.nnames)
			hx_sbuf_put(&b, ")");
	} else if (n > 1) {
		batch_dir(a, id, UINT_MAX, dir, sizeof(dir));
		hx_sbuf_put_uint(&b, n);
		hx_sbuf_put(&b, " files in ");
		hx_sbuf_put_escaped(&b, dir, strlen(dir));
		hx_sbuf_put(&b, strcmp(dir, "/") ? "/" : "");
	} else {
		hx_sbuf_put_escaped(&b, h->s.path ? h->s.path : "?",
				    strlen(h->s.path ? h->s.path : "?"));
		if (h->s.path2) {
			hx_sbuf_put(&b, " -> ");
			hx_sbuf_put_escaped(&b, h->s.path2, strlen(h->s.path2));
		}
	}
	return whole;
}

json_t *hx_ask_describe(const struct hx_ask *a, unsigned id)
{
	const struct question *h = hx_ask_head(a, id);
	json_t *o, *paths;
	struct timespec now;
	char line[2048];

	if (!h || !(o = json_object()))
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &now);
	hx_ask_line(a, id, line, sizeof(line));
	json_object_set_new(o, "id", json_integer(id));
	json_object_set_new(
	    o, "op", json_string(h->agent ? "question" : hx_op_name(h->s.op)));
	json_object_set_new(o, "what", hx_record_text(NULL, "", line));
	if (h->agent) {
		json_object_set_new(o, "from", json_string("agent"));
		hx_record_set_str(o, "call_id", h->uq.call_id);
		json_object_set_new(o, "question",
				    hx_record_text(NULL, "", h->uq.text));
		paths = json_array();
		for (size_t i = 0; i < h->uq.nchoices; i++)
			json_array_append_new(
			    paths, hx_record_text(NULL, "", h->uq.choices[i]));
		json_object_set_new(o, "choices", paths);
	} else if (h->s.op == HX_OP_EXEC) {
		hx_record_set_text(NULL, o, "path", "", h->s.path);
		json_object_set_new(
		    o, "argv",
		    hx_record_strings(NULL, "", h->s.argv, h->s.argc));
		hx_record_set_text(NULL, o, "cwd", "", h->cwd);
		hx_record_env(NULL, o, "", h->s.env, h->s.env_len,
			      h->s.env_unread);
		hx_record_set_text(NULL, o, "judged_as", "", h->s.judged_as);
	} else if (h->s.addr) {
		json_object_set_new(o, "addr",
				    hx_record_text(NULL, "", h->s.addr));
		json_object_set_new(
		    o, "names",
		    hx_record_strings(NULL, "", h->s.names, h->s.nnames));
	} else {
		paths = json_array();
		for (const struct question *q = a->qs; q; q = q->next)
			if (q->batch == id && q->recorded && q->s.path)
				json_array_append_new(
				    paths, hx_record_text(NULL, "", q->s.path));
		json_object_set_new(o, "paths", paths);
		hx_record_set_text(NULL, o, "path2", "", h->s.path2);
	}
	json_object_set_new(o, "processes", json_incref(h->chain));
	hx_record_set_str(o, "rule", h->s.rule);
	json_object_set_new(o, "waiting_s",
			    json_integer(now.tv_sec - h->asked.tv_sec));
	json_object_set_new(o, "timeout_s",
			    json_integer((json_int_t)a->timeout_s -
					 (now.tv_sec - h->asked.tv_sec)));
	return o;
}

/* "pending": one JSON object per line, then "ok N". */
static void control_pending(struct hx_ask *a, char *reply, size_t size)
{
	unsigned ids[32];
	size_t n = hx_ask_pending(a, ids, 32), len = 0;

	for (size_t i = 0; i < n && i < 32; i++) {
		json_t *o = hx_ask_describe(a, ids[i]);
		char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

		if (s && len + strlen(s) + 2 < size - 16)
			len += (size_t)snprintf(reply + len, size - len, "%s\n",
						s);
		free(s);
		json_decref(o);
	}
	snprintf(reply + len, size - len, "ok %zu", n);
}

/* The text of "answer ID TEXT": what follows the id and one space. */
static const char *answer_text(const char *req)
{
	const char *p = req + strlen("answer");

	p += strspn(p, " ");
	p += strspn(p, "0123456789");
	return *p == ' ' ? p + 1 : NULL;
}

void hx_ask_control(struct hx_ask *a, const char *req, pid_t pid, char *reply,
		    size_t size)
{
	char verb[16] = "", scope[16] = "once", msg[1024], by[48];
	unsigned id = 0, prefix = 0;
	const char *text = NULL;
	int k, sc = HX_ASK_ONCE, e;

	k = sscanf(req, "%15s %u %15s %u", verb, &id, scope, &prefix);
	if (k >= 1 && !strcmp(verb, "pending")) {
		control_pending(a, reply, size);
		return;
	}
	if (k >= 2 && !strcmp(verb, "answer") && !(text = answer_text(req))) {
		snprintf(reply, size, "error an answer needs its text");
		return;
	}
	if (k < 2 ||
	    (strcmp(verb, "approve") && strcmp(verb, "deny") && !text)) {
		snprintf(reply, size, "error unknown request");
		return;
	}
	if (!text && (sc = hx_grant_scope_parse(scope)) < 0) {
		snprintf(reply, size, "error unknown scope '%s'", scope);
		return;
	}
	snprintf(by, sizeof(by), "control pid %d", (int)pid);
	msg[0] = '\0';
	if (text)
		e = hx_ask_reply(a, id, text, by, msg, sizeof(msg));
	else
		e = hx_ask_answer(
		    a, id, 0,
		    strcmp(verb, "deny") ? HX_VERDICT_ALLOW : HX_VERDICT_DENY,
		    (enum hx_ask_scope)sc, by, prefix, msg, sizeof(msg));
	if (e == -ENOENT)
		snprintf(reply, size, "error no question %u waits", id);
	else if (e)
		snprintf(reply, size, "error %s",
			 e == -EINVAL && msg[0] ? msg : strerror(-e));
	else
		snprintf(reply, size, "ok %s", msg);
}
