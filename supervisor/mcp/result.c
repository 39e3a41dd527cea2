/* The end of a harness-mcp call: its record and its result; see
 * result.h. */
#define _GNU_SOURCE
#include "supervisor/mcp/result.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/names.h"
#include "policy/policy.h"
#include "supervisor/mcp/secrets.h"
#include "supervisor/mcp/tools.h"
#include "supervisor/fmt.h"
#include "supervisor/record.h"
#include "supervisor/redact.h"
#include "supervisor/sha256.h"

#define TEXT_DEFAULT (1ul << 20)
#define CODE_KEPT    4096 /* of a command or snippet, in the record */
#define CLAIM_KEPT   256  /* of a client's name, version, capability */
#define CAPS_KEPT    16	  /* capability names in the record */

static const char *outcome_of(const struct hx_mcp_end *e)
{
	json_t *r = e->result;

	if (e->outcome)
		return e->outcome;
	if (e->error || !r)
		return "error";
	if (json_is_true(json_object_get(r, "cancelled")))
		return "cancelled";
	if (json_is_true(json_object_get(r, "timed_out")))
		return "timed_out";
	return "ok";
}

static long long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)(now.tv_sec - t0->tv_sec) * 1000 +
	       (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* o[K_bytes] and o[K_sha256]: a text the record does not hold whole,
 * pinned by its size and hash. */
static void pin(json_t *o, const char *k, json_t *v)
{
	char field[64], hex[65];

	hx_sha256_hex(json_string_value(v), json_string_length(v), hex);
	snprintf(field, sizeof(field), "%s_bytes", k);
	json_object_set_new(o, field,
			    json_integer((json_int_t)json_string_length(v)));
	snprintf(field, sizeof(field), "%s_sha256", k);
	json_object_set_new(o, field, json_string(hex));
}

/* The record's "args": what the call named, redacted; contents by size
 * and hash (a file's text is no part of the audit trail), long code cut,
 * the environment by names only. */
static json_t *args_summary(json_t *rec, json_t *args)
{
	json_t *o = json_object(), *v;
	const char *k;
	char field[64], *cut;

	json_object_foreach(args, k, v)
	{
		snprintf(field, sizeof(field), "args.%s", k);
		if (!strcmp(k, "content") || !strcmp(k, "stdin") ||
		    !strcmp(k, "patch")) {
			pin(o, k, v);
		} else if (!strcmp(k, "edits")) {
			json_object_set_new(
			    o, "edits",
			    json_integer((json_int_t)json_array_size(v)));
		} else if (!strcmp(k, "env")) {
			const char *name;
			json_t *x, *names = json_array();

			json_object_foreach(v, name, x) json_array_append_new(
			    names, hx_record_text(rec, "args.env", name));
			json_object_set_new(o, "env_names", names);
		} else if (!strcmp(k, "argv")) {
			size_t i, n = json_array_size(v);
			const char **w = calloc(n + 1, sizeof(*w));
			json_t *x;

			json_array_foreach(v, i, x) if (w) w[i] =
			    json_string_value(x);
			if (w)
				json_object_set_new(
				    o, "argv",
				    hx_record_strings(rec, field, w, n));
			free(w);
		} else if (json_is_string(v)) {
			cut = strndup(json_string_value(v), CODE_KEPT);
			json_object_set_new(o, k,
					    hx_record_text(rec, field, cut));
			free(cut);
			if (json_string_length(v) <= CODE_KEPT)
				continue;
			/* What ran past the cut is pinned: its size and
			 * hash, as content's (the prefix alone could show
			 * a harmless command and hide the rest). */
			json_object_set_new(o, "cut", json_true());
			pin(o, k, v);
		} else {
			json_object_set(o, k, v);
		}
	}
	return o;
}

/* The result's numbers and flags: what it did, not what it read. */
static json_t *result_summary(json_t *r)
{
	static const char *const keep[] = {
	    "bytes",	     "size",	     "exit_code",    "signal",
	    "timed_out",     "cancelled",    "hunks",	     "sha256",
	    "created",	     "stdout_bytes", "stderr_bytes", "truncated",
	    "files_scanned", "unreadable",   "duration_ms",  "pid",
	    "action",	     "reason",	     "checkpoint",   "commit",
	    "changed",	     NULL,
	};
	json_t *o = json_object(), *v;

	for (size_t i = 0; keep[i]; i++)
		if ((v = json_object_get(r, keep[i])))
			json_object_set(o, keep[i], v);
	if ((v = json_object_get(r, "matches")))
		json_object_set_new(
		    o, "matches", json_integer((json_int_t)json_array_size(v)));
	if ((v = json_object_get(r, "entries")))
		json_object_set_new(
		    o, "entries", json_integer((json_int_t)json_array_size(v)));
	return o;
}

void hx_mcp_record_call(struct hx_pipeline *pl, const struct hx_mcp_end *e)
{
	json_t *rec = hx_record_new(pl, NULL, "tool_call", NULL);
	const struct hx_decision *d = e->d;
	const char *outcome = outcome_of(e);

	if (!rec)
		return;
	hx_record_set_str(rec, "call_id", e->call_id);
	hx_record_set_str(rec, "tool", e->tool->name);
	json_object_set_new(rec, "args", args_summary(rec, e->args));
	hx_record_set_str(rec, "category", hx_category_name(e->tool->category));
	hx_record_set_str(rec, "verdict", hx_verdict_name(d->verdict));
	json_object_set_new(
	    rec, "enforced",
	    json_boolean(e->mode == HX_MODE_ENFORCE ||
			 !strncmp(d->rule ? d->rule : "", "harness:", 8)));
	hx_record_set_str(rec, "rule", d->rule);
	hx_record_set_str(rec, "origin", d->origin);
	if (d->judged_as[0])
		hx_record_set_text(rec, rec, "judged_as", "judged_as",
				   d->judged_as);
	hx_record_set_str(rec, "layer", "mcp");
	hx_record_set_str(rec, "outcome", outcome);
	if (e->error) {
		hx_record_set_str(rec, "errno",
				  hx_record_field(e->error, "errno"));
		json_object_set_new(
		    rec, "error",
		    hx_record_text(rec, "error",
				   hx_record_field(e->error, "message")));
	}
	if (e->result) {
		json_t *sum = result_summary(e->result);

		/* ask_user: the person's word is part of the trail */
		hx_record_set_text(
		    rec, sum, "answer", "result.answer",
		    json_string_value(json_object_get(e->result, "answer")));
		json_object_set_new(rec, "result", sum);
	}
	if (e->refusals)
		json_object_set_new(
		    rec, "refusals",
		    json_integer((json_int_t)json_array_size(e->refusals)));
	if (e->leftovers)
		json_object_set_new(rec, "leftovers_killed",
				    json_integer((json_int_t)e->leftovers));
	json_object_set_new(rec, "duration_ms", json_integer(ms_since(e->t0)));
	hx_record_append(pl, rec, NULL);
	json_decref(rec);
}

/* A claim of the client's (initialize's params) as recorded text: at
 * most keep bytes, cut at a character's edge and before a NUL (a C
 * string ends there: the rest would be hidden); *cut says it was. NULL
 * for what is not a string. */
static json_t *claim_text(json_t *rec, const char *field, json_t *v,
			  size_t keep, bool *cut)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), p;
	json_t *t;
	char *part;

	*cut = false;
	if (!s)
		return NULL;
	p = hx_utf8_cut(s, strnlen(s, n), keep);
	if (!(part = strndup(s, p)))
		return NULL;
	t = hx_record_text(rec, field, part);
	free(part);
	*cut = p < n;
	return t;
}

/* o[k]: the claim v, what was cut of it pinned (its size and hash). */
static void claim(json_t *rec, json_t *o, const char *k, const char *field,
		  json_t *v)
{
	bool cut;
	json_t *t = claim_text(rec, field, v, CLAIM_KEPT, &cut);

	if (!t)
		return;
	json_object_set_new(o, k, t);
	if (cut) {
		pin(o, k, v);
		hx_record_note(rec, "cut", field);
	}
}

/* The names of the capabilities the client declared, each cut as a
 * claim, the first CAPS_KEPT of them (and how many there were). */
static void capabilities(json_t *rec, json_t *caps)
{
	json_t *names = json_array(), *v;
	const char *k;
	bool cut, any = false;

	json_object_foreach(caps, k, v)
	{
		json_t *name = json_string(k), *t = NULL;

		if (json_array_size(names) < CAPS_KEPT &&
		    (t = claim_text(rec, "capabilities", name, CLAIM_KEPT,
				    &cut)))
			json_array_append_new(names, t);
		any |= t && cut;
		json_decref(name);
	}
	json_object_set_new(rec, "capabilities", names);
	if (any)
		hx_record_note(rec, "cut", "capabilities");
	if (json_object_size(caps) > CAPS_KEPT)
		json_object_set_new(
		    rec, "capabilities_total",
		    json_integer((json_int_t)json_object_size(caps)));
}

void hx_mcp_record_client(struct hx_pipeline *pl, json_t *params,
			  const char *protocol, bool http)
{
	json_t *rec = hx_record_new(pl, NULL, "mcp_client", NULL);
	json_t *info = json_object_get(params, "clientInfo");
	json_t *client = json_object();

	if (!rec)
		return;
	claim(rec, client, "name", "client.name",
	      json_object_get(info, "name"));
	claim(rec, client, "version", "client.version",
	      json_object_get(info, "version"));
	json_object_set_new(rec, "client", client);
	hx_record_set_str(rec, "transport", http ? "http" : "stdio");
	hx_record_set_str(rec, "protocol", protocol);
	claim(rec, rec, "protocol_asked", "protocol_asked",
	      json_object_get(params, "protocolVersion"));
	capabilities(rec, json_object_get(params, "capabilities"));
	hx_record_set_str(rec, "layer", "mcp");
	hx_record_append_event(pl, rec, NULL, NULL);
	json_decref(rec);
}

void hx_mcp_record_quota(struct hx_pipeline *pl, const struct hx_tool *t,
			 const char *what)
{
	json_t *rec = hx_record_new(pl, NULL, "tool_call", NULL);

	if (!rec)
		return;
	hx_record_set_str(rec, "tool", t->name);
	hx_record_set_str(rec, "category", hx_category_name(t->category));
	hx_record_set_str(rec, "verdict", "deny");
	json_object_set_new(rec, "enforced", json_true());
	hx_record_set_str(rec, "rule", "harness:mcp-quota");
	hx_record_set_str(rec, "quota", what);
	hx_record_set_str(rec, "layer", "mcp");
	hx_record_set_str(rec, "outcome", "refused");
	hx_record_append_event(pl, rec, NULL, NULL);
	json_decref(rec);
}

json_t *hx_mcp_refusal_of(json_t *rec, int64_t seq)
{
	json_t *a = json_object_get(rec, "args");
	json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:s}", "seq", (json_int_t)seq,
			      "op", hx_record_field(rec, "op"), "verdict",
			      hx_record_field(rec, "verdict"), "rule",
			      hx_record_field(rec, "rule"), "layer",
			      hx_record_field(rec, "layer"));
	const char *const what[] = {"path", "addr", "host", NULL};

	for (size_t i = 0; o && what[i]; i++)
		if (json_is_string(json_object_get(a, what[i])))
			json_object_set(o, what[i],
					json_object_get(a, what[i]));
	return o;
}

/* ---- the result ---- */

/* o[key]: secrets replaced, past max cut with a marker; flag names the
 * result's member that says it was cut. */
static void filter_text(json_t *o, const char *key, const char *flag,
			const struct hx_mcp_end *e, json_t *redacted)
{
	json_t *v = json_object_get(o, key);
	size_t max = e->max_output ? e->max_output : TEXT_DEFAULT, n, k;
	char *red = NULL, *buf;
	const char *s;

	if (!json_is_string(v))
		return;
	s = json_string_value(v);
	if (e->redact && hx_redact_text(e->redact, s, &red) == 1) {
		json_array_append_new(redacted, json_string(key));
		s = red;
	}
	n = strlen(s);
	k = hx_utf8_cut(s, n, max);
	if (k < n && (buf = malloc(k + 64))) {
		snprintf(buf, k + 64, "%.*s\n[harness: %zu bytes cut]", (int)k,
			 s, n - k);
		json_object_set_new(o, key, json_string(buf));
		json_object_set_new(o, flag, json_true());
		free(buf);
	} else if (red) {
		json_object_set_new(o, key, json_string(red));
	}
	free(red);
}

/* Every string the worker returns is redacted: the texts bounded here,
 * base64 content under its encoding, and all the rest (paths, names,
 * messages) wherever it is; not only the members that usually carry a
 * file's or a program's text. */
static json_t *filtered(const struct hx_mcp_end *e)
{
	static const char *const done[] = {"content", "stdout", "stderr",
					   "text", NULL};
	json_t *o = json_deep_copy(e->result), *red = json_array(), *x;
	const char *enc = hx_record_field(o, "encoding");
	size_t i;

	if (!strcmp(enc, "") || !strcmp(enc, "utf-8"))
		filter_text(o, "content", "truncated", e, red);
	else if (!strcmp(enc, "base64"))
		hx_mcp_redact_base64(o, "content", e->redact, red);
	filter_text(o, "stdout", "stdout_truncated", e, red);
	filter_text(o, "stderr", "stderr_truncated", e, red);
	filter_text(o, "diff", "truncated", e, red);
	json_array_foreach(json_object_get(o, "matches"), i, x)
	    filter_text(x, "text", "cut", e, red);
	hx_mcp_redact_tree(o, e->redact, done, red);
	if (json_array_size(red))
		json_object_set_new(o, "redacted", red);
	else
		json_decref(red);
	if (e->refusals)
		json_object_set(o, "refusals", e->refusals);
	if (e->leftovers)
		json_object_set_new(o, "leftovers_killed",
				    json_integer((json_int_t)e->leftovers));
	return o;
}

static json_t *text_result(const char *text, bool is_error)
{
	return json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text",
			 "text", text, "isError", is_error);
}

/* What an error's text quotes (the worker's message, which may hold a
 * line of the file as found; the path): its secrets replaced, as in the
 * record. *keep is freed by the caller. */
static const char *quoted(const struct hx_mcp_end *e, const char *s,
			  char **keep)
{
	*keep = hx_mcp_redact_copy(e->redact, s);
	return *keep ? *keep : s;
}

/* What the refusals of the call's work say, for a person or a model. */
static void say_refusals(json_t *refusals, char *buf, size_t size)
{
	size_t i, at = 0;
	json_t *r;

	buf[0] = '\0';
	json_array_foreach(refusals, i, r)
	{
		int w = snprintf(
		    buf + at, size - at, "%s %s %s by rule %s (%s layer)",
		    i ? ";" : " Refused:", hx_record_field(r, "op"),
		    hx_record_field(r, "path")[0] ? hx_record_field(r, "path")
						  : hx_record_field(r, "addr"),
		    hx_record_field(r, "rule"), hx_record_field(r, "layer"));
		if (w < 0 || (size_t)w >= size - at)
			break;
		at += (size_t)w;
	}
}

static json_t *refused_result(const struct hx_mcp_end *e)
{
	const char *path = json_string_value(json_object_get(e->args, "path"));
	char text[1024], *kp = NULL;
	json_t *res;

	if (path)
		path = quoted(e, path, &kp);
	snprintf(text, sizeof(text),
		 "%s%s%s: refused by rule %s%s%s of the session's policy "
		 "(%s%s%s). This is the policy's answer, not an error: do not "
		 "retry it; call session_info for what is allowed, or ask "
		 "the user.",
		 e->tool->name, path ? " " : "", path ? path : "", e->d->rule,
		 e->d->origin ? " at " : "", e->d->origin ? e->d->origin : "",
		 hx_category_name(e->tool->category),
		 e->d->judged_as[0] ? "; it runs " : "", e->d->judged_as);
	res = text_result(text, true);
	free(kp);
	return res;
}

static json_t *error_result(const struct hx_mcp_end *e)
{
	const char *path = json_string_value(json_object_get(e->args, "path"));
	char text[2048], ref[1024], *kp = NULL, *km = NULL;
	const char *err =
	    e->error ? hx_record_field(e->error, "errno") : "ECANCELED";
	const char *msg = e->error ? hx_record_field(e->error, "message")
				   : "the call was ended";
	json_t *res;

	if (path)
		path = quoted(e, path, &kp);
	msg = quoted(e, msg, &km);
	say_refusals(e->refusals, ref, sizeof(ref));
	snprintf(text, sizeof(text), "%s%s%s: %s: %s.%s%s", e->tool->name,
		 path ? " " : "", path ? path : "", err, msg, ref,
		 ref[0] ? " The session's policy refused it: do not retry; "
			  "call session_info for what is allowed."
			: "");
	res = text_result(text, true);
	free(kp);
	free(km);
	return res;
}

json_t *hx_mcp_result(const struct hx_mcp_end *e)
{
	const char *outcome = outcome_of(e);
	json_t *o, *res;
	char *text;

	if (!strcmp(outcome, "refused"))
		return refused_result(e);
	if (!e->result)
		return error_result(e);
	o = filtered(e);
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	res = text ? text_result(text, strcmp(outcome, "ok") != 0) : NULL;
	free(text);
	if (res)
		json_object_set_new(res, "structuredContent", o);
	else
		json_decref(o);
	return res;
}
