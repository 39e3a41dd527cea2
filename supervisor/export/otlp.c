/* A session as OpenTelemetry traces; see otlp.h. The messages and
 * field numbers are opentelemetry-proto's (trace/v1/trace.proto,
 * common/v1/common.proto, resource/v1/resource.proto, collector/trace/
 * v1/trace_service.proto). */
#define _GNU_SOURCE
#include "supervisor/export/otlp.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/sbuf.h"
#include "supervisor/record.h"
#include "supervisor/sha256.h"
#include "supervisor/export/proctree.h"
#include "supervisor/export/protobuf.h"

enum { KIND_INTERNAL = 1 };
enum { STATUS_OK = 1, STATUS_ERROR = 2 };

/* argv[0]'s bytes at most in a span's name */
#define NAME_A0_MAX 120

/* A record's time (ISO 8601, UTC) in ns since the epoch; 0: none. */
static uint64_t unix_ns(const char *iso)
{
	struct tm tm = {0};
	const char *rest = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	uint64_t ns = 0, scale = 100000000;

	if (!rest)
		return 0;
	if (*rest == '.')
		for (rest++; *rest >= '0' && *rest <= '9' && scale; rest++) {
			ns += (uint64_t)(*rest - '0') * scale;
			scale /= 10;
		}
	return (uint64_t)timegm(&tm) * 1000000000ull + ns;
}

/* n bytes of the SHA-256 of "a:b": ids that the same log always gives. */
static void id_of(const char *a, const char *b, unsigned char *out, size_t n)
{
	char in[512], hex[65];
	int len = snprintf(in, sizeof(in), "%s:%s", a, b);

	hx_sha256_hex(in, (size_t)len, hex);
	hx_hex_decode(hex, out, n); /* hex digits: cannot fail */
}

static void attr_str(struct hx_pb *msg, unsigned field, const char *k,
		     const char *v)
{
	struct hx_pb kv = {0}, any = {0};

	if (!v)
		return;
	hx_pb_string(&any, 1, v); /* string_value */
	hx_pb_string(&kv, 1, k);
	hx_pb_message(&kv, 2, &any);
	hx_pb_message(msg, field, &kv);
	hx_pb_free(&any);
	hx_pb_free(&kv);
}

/* A string array (ArrayValue of string AnyValues) from a JSON array. */
static void attr_strv(struct hx_pb *msg, unsigned field, const char *k,
		      json_t *v)
{
	struct hx_pb kv = {0}, any = {0}, arr = {0};
	size_t i;
	json_t *w;

	if (!json_array_size(v))
		return;
	json_array_foreach(v, i, w)
	{
		struct hx_pb one = {0};

		hx_pb_string(&one, 1, json_string_value(w));
		hx_pb_message(&arr, 1, &one);
		hx_pb_free(&one);
	}
	hx_pb_message(&any, 5, &arr); /* array_value */
	hx_pb_string(&kv, 1, k);
	hx_pb_message(&kv, 2, &any);
	hx_pb_message(msg, field, &kv);
	hx_pb_free(&arr);
	hx_pb_free(&any);
	hx_pb_free(&kv);
}

static void attr_bool(struct hx_pb *msg, unsigned field, const char *k, bool v)
{
	struct hx_pb kv = {0}, any = {0};

	hx_pb_uint(&any, 2, v); /* bool_value */
	hx_pb_string(&kv, 1, k);
	hx_pb_message(&kv, 2, &any);
	hx_pb_message(msg, field, &kv);
	hx_pb_free(&any);
	hx_pb_free(&kv);
}

static void attr_int(struct hx_pb *msg, unsigned field, const char *k,
		     long long v)
{
	struct hx_pb kv = {0}, any = {0};

	hx_pb_uint(&any, 3, (uint64_t)v); /* int_value: two's complement */
	hx_pb_string(&kv, 1, k);
	hx_pb_message(&kv, 2, &any);
	hx_pb_message(msg, field, &kv);
	hx_pb_free(&any);
	hx_pb_free(&kv);
}

static void status(struct hx_pb *span, int code, const char *message)
{
	struct hx_pb st = {0};

	hx_pb_string(&st, 2, message);
	hx_pb_uint(&st, 3, (uint64_t)code);
	hx_pb_message(span, 15, &st);
	hx_pb_free(&st);
}

/* A refused call, as an event of its process's span. */
static void event(struct hx_pb *span, const struct hx_ptree_refusal *r)
{
	struct hx_pb ev = {0};

	hx_pb_fixed64(&ev, 1, unix_ns(r->time));
	hx_pb_string(&ev, 2,
		     r->approved ? "harness.approved" : "harness.refused");
	attr_str(&ev, 3, "harness.verdict", r->verdict);
	attr_str(&ev, 3, "harness.op", r->op);
	attr_str(&ev, 3, "harness.target", r->what);
	attr_str(&ev, 3, "harness.rule", r->rule);
	if (r->count > 1) /* a group past the audit rate: its calls */
		attr_int(&ev, 3, "harness.count", r->count);
	hx_pb_message(span, 11, &ev);
	hx_pb_free(&ev);
}

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* At most max bytes of s, cut back to a character's start (a proto3
 * string that is no UTF-8 makes a collector refuse the whole request:
 * an argv[0] cut inside a character lost its batch), "..." when cut. */
static void put_cut(struct hx_sbuf *b, const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max) {
		hx_sbuf_put_n(b, s, n);
		return;
	}
	while (max && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	hx_sbuf_put_n(b, s, max);
	hx_sbuf_put(b, "...");
}

/* True when argv[0] names the executable that ran: the very path, or,
 * a bare word (a shell's PATH look-up), its base name. A path of the
 * caller's with the same base (exec -a /usr/bin/git /tmp/x/git) is
 * not. */
static bool a0_is_path(const char *a0, const char *path)
{
	if (strchr(a0, '/'))
		return !strcmp(a0, path);
	return !strcmp(a0, base_of(path));
}

/* The span's name: argv[0], cut, then the executable it ran when that
 * is not it, whole (argv[0] is the caller's word: exec -a git
 * /usr/bin/curl; a long one pushed the executable off the name). */
static void span_name(const struct hx_ptree_proc *p, json_t *argv, size_t n,
		      char *out, size_t size)
{
	struct hx_sbuf b = {.p = out, .cap = size};
	const char *path =
	    json_string_value(json_array_get(p->image_paths, n ? n - 1 : 0));
	const char *a0 =
	    argv ? json_string_value(json_array_get(argv, 0)) : NULL;

	out[0] = '\0';
	if (!a0) {
		put_cut(&b, p->exe ? p->exe : "?", size - 8);
		return;
	}
	put_cut(&b, a0, NAME_A0_MAX);
	if (path && !a0_is_path(a0, path)) {
		hx_sbuf_put(&b, " (");
		put_cut(&b, path, size - b.len - 8);
		hx_sbuf_put(&b, ")");
	}
}

static void proc_span(struct hx_pb *spans, const char *sid,
		      const unsigned char trace[16],
		      const unsigned char root[8],
		      const struct hx_ptree_proc *p)
{
	struct hx_pb span = {0};
	unsigned char id[8], parent[8];
	char key[96], name[NAME_A0_MAX + PATH_MAX + 16];
	size_t n = json_array_size(p->images);
	json_t *argv = n ? json_array_get(p->images, n - 1) : NULL;

	snprintf(key, sizeof(key), "%lld:%s", p->pid, p->start);
	id_of(sid, key, id, 8);
	if (p->parent) {
		snprintf(key, sizeof(key), "%lld:%s", p->parent->pid,
			 p->parent->start);
		id_of(sid, key, parent, 8);
	} else {
		memcpy(parent, root, 8);
	}
	span_name(p, argv, n, name, sizeof(name));
	hx_pb_bytes(&span, 1, trace, 16);
	hx_pb_bytes(&span, 2, id, 8);
	hx_pb_bytes(&span, 4, parent, 8);
	hx_pb_string(&span, 5, name);
	hx_pb_uint(&span, 6, KIND_INTERNAL);
	hx_pb_fixed64(&span, 7, unix_ns(p->start));
	hx_pb_fixed64(&span, 8, unix_ns(p->end));
	attr_int(&span, 9, "process.pid", p->pid);
	attr_int(&span, 9, "process.parent_pid", p->ppid);
	attr_str(&span, 9, "process.executable.path", p->exe);
	attr_strv(&span, 9, "process.command_args", argv);
	attr_int(&span, 9, "harness.events", (long long)p->events);
	attr_int(&span, 9, "harness.refused", (long long)p->refused);
	if (p->exited && json_is_integer(p->how))
		attr_int(&span, 9, "process.exit.code",
			 (long long)json_integer_value(p->how));
	if (p->exited && json_is_string(p->how))
		attr_str(&span, 9, "process.exit.signal",
			 json_string_value(p->how));
	for (const struct hx_ptree_refusal *r = p->ref; r; r = r->next)
		event(&span, r);
	if (p->exited)
		status(&span,
		       json_is_integer(p->how) && !json_integer_value(p->how)
			   ? STATUS_OK
			   : STATUS_ERROR,
		       json_is_string(p->how) ? json_string_value(p->how)
					      : NULL);
	hx_pb_message(spans, 2, &span);
	hx_pb_free(&span);
}

/* The session's own span, from session_start to session_end: the
 * parent of its first processes. */
static void session_span(struct hx_pb *spans, const struct hx_ptree *t,
			 const unsigned char trace[16],
			 const unsigned char root[8])
{
	struct hx_pb span = {0};
	json_t *end = t->session_end;

	hx_pb_bytes(&span, 1, trace, 16);
	hx_pb_bytes(&span, 2, root, 8);
	hx_pb_string(&span, 5, "harness session");
	hx_pb_uint(&span, 6, KIND_INTERNAL);
	hx_pb_fixed64(&span, 7,
		      unix_ns(hx_record_field(t->session_start, "time")));
	hx_pb_fixed64(&span, 8,
		      unix_ns(end    ? hx_record_field(end, "time")
			      : t->n ? t->all[t->n - 1]->end
				     : NULL));
	attr_strv(&span, 9, "process.command_args",
		  json_object_get(t->session_start, "command"));
	attr_str(&span, 9, "harness.cwd",
		 hx_record_field(t->session_start, "cwd"));
	if (end) {
		attr_int(&span, 9, "process.exit.code",
			 (long long)json_integer_value(
			     json_object_get(end, "exit_code")));
		attr_int(&span, 9, "harness.events",
			 (long long)json_integer_value(
			     json_object_get(end, "events")));
		status(&span,
		       json_integer_value(json_object_get(end, "exit_code"))
			   ? STATUS_ERROR
			   : STATUS_OK,
		       NULL);
	}
	hx_pb_message(spans, 2, &span);
	hx_pb_free(&span);
}

/* The trace's id: the one session_start drew (random: no process of
 * the agent can add spans to the session's trace), else one derived
 * from the session id. The span ids derive from it. */
static const char *trace_of(const struct hx_ptree *t, unsigned char trace[16])
{
	const char *hex = hx_record_field(t->session_start, "trace_id");
	const char *sid = hx_record_field(t->session_start, "session");

	if (strlen(hex) != 32 || hx_hex_decode(hex, trace, 16)) {
		id_of("trace", sid, trace, 16);
		return sid;
	}
	return hex;
}

int hx_otlp_batch(const struct hx_ptree *t, struct hx_ptree_proc *const *procs,
		  size_t n, bool with_session, const char *scope_name,
		  struct hx_pb *out)
{
	struct hx_pb rs = {0}, res = {0}, ss = {0}, scope = {0};
	const char *sid = hx_record_field(t->session_start, "session"), *seed;
	unsigned char trace[16], root[8];

	if (!t->session_start || !sid[0])
		return -1;
	seed = trace_of(t, trace);
	id_of(seed, "session", root, 8);
	attr_str(&res, 1, "service.name", "harness");
	attr_str(&res, 1, "harness.session.id", sid);
	attr_str(&res, 1, "harness.policy.sha256",
		 hx_record_field(t->session_start, "policy_sha256"));
	attr_str(&res, 1, "harness.mode",
		 hx_record_field(t->session_start, "mode"));
	attr_str(&res, 1, "harness.version",
		 hx_record_field(t->session_start, "version"));
	if (t->log_verified)
		attr_bool(&res, 1, "harness.log.verified", t->log_verified > 0);
	attr_int(&res, 1, "process.owner.uid",
		 (long long)json_integer_value(
		     json_object_get(t->session_start, "uid")));
	hx_pb_string(&scope, 1, scope_name);
	hx_pb_message(&ss, 1, &scope);
	if (with_session)
		session_span(&ss, t, trace, root);
	for (size_t i = 0; i < n; i++)
		proc_span(&ss, seed, trace, root, procs[i]);
	hx_pb_message(&rs, 1, &res);
	hx_pb_message(&rs, 2, &ss);
	hx_pb_message(out, 1, &rs);
	hx_pb_free(&rs);
	hx_pb_free(&res);
	hx_pb_free(&ss);
	hx_pb_free(&scope);
	return out->oom ? -1 : 0;
}

int hx_otlp_batch_fit(const struct hx_ptree *t,
		      struct hx_ptree_proc *const *procs, size_t n,
		      bool with_session, const char *scope_name, size_t max,
		      struct hx_pb *out, size_t *taken)
{
	size_t k = n;

	/* halved until it fits: log2(n) encodings at most, in the
	 * exporter's thread or the CLI, never on a decision's path */
	for (;;) {
		memset(out, 0, sizeof(*out));
		if (hx_otlp_batch(t, procs, k, with_session && k == n,
				  scope_name, out))
			return -1;
		if (out->len <= max || k <= 1)
			break;
		hx_pb_free(out);
		k /= 2;
	}
	*taken = k;
	return 0;
}

int hx_otlp_traces(const struct hx_ptree *t, struct hx_pb *out)
{
	return hx_otlp_batch(t, t->all, t->n, true, "harness-audit export",
			     out);
}

char *hx_otlp_url(const char *base, char *out, size_t size)
{
	bool bare = !strncmp(base, "http://", 7) && !strchr(base + 7, '/');

	snprintf(out, size, "%s%s", base, bare ? "/v1/traces" : "");
	return out;
}
