/* The audit record stage of the pipeline: building a record (agent text
 * escaped, never dropped), appending it under the session's quota, and
 * failing closed when the log can take no more. See record.h. */
#define _GNU_SOURCE
#include "supervisor/record.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "supervisor/audit.h"
#include "supervisor/fmt.h"
#include "supervisor/metrics.h"
#include "supervisor/pidset.h"
#include "supervisor/redact.h"
#include "supervisor/sha256.h"

/* Records coalesced beyond the rate: each group is one record's
 * content (who, what, on what object, how decided; its time, seq, tid
 * and latency aside) and how many times it came. A group was keyed on
 * who and how decided only, with its first record's arguments: a flood
 * of reads of /etc/hostname made an audit run's read of a private file
 * one more of those, its name nowhere (twenty-ninth attack review).
 * When the groups are full the overflow record is written at once, so
 * nothing coalesced is counted without its object. */
#define CO_GROUPS 64
struct co_group {
	uint64_t hash;
	json_t *o; /* the group as written, count aside */
	uint64_t n;
};

struct hx_pl_coalesce {
	double tokens;
	uint64_t last_ns, since_ms;
	char first[HX_FMT_TIME_LEN], last[HX_FMT_TIME_LEN];
	struct co_group g[CO_GROUPS];
	size_t ng;
	uint64_t total;
};

/* The session's redactor (hx_record_redact): set before the first
 * record and freed after the last, so the workers that record read it
 * without a lock. */
static struct hx_redact *redactor;

void hx_record_redact(struct hx_redact *r)
{
	hx_redact_free(redactor);
	redactor = r;
}

void hx_record_note(json_t *rec, const char *list_name, const char *field)
{
	json_t *list, *e;
	size_t i;

	if (!rec || !field)
		return;
	list = json_object_get(rec, list_name);
	if (!list) {
		list = json_array();
		json_object_set_new(rec, list_name, list);
	}
	json_array_foreach(list, i, e)
	{
		if (!strcmp(json_string_value(e), field))
			return;
	}
	json_array_append_new(list, json_string(field));
}

/* s as a JSON string, escaped when it is not UTF-8: jansson takes UTF-8
 * only and returns NULL otherwise (one byte of Latin-1 in a `sh -c` would
 * have dropped the whole argv). */
static json_t *as_json(json_t *rec, const char *field, const char *s)
{
	json_t *v;
	size_t n;
	char *buf;

	if (hx_utf8_valid(s))
		return json_string(s);
	n = hx_fmt_escape_bytes(s, NULL, 0);
	buf = malloc(n + 1);
	if (!buf)
		return NULL;
	hx_fmt_escape_bytes(s, buf, n + 1);
	v = json_string(buf);
	free(buf);
	hx_record_note(rec, "escaped", field);
	return v;
}

static const char unknown[] = HX_REDACT_OPEN "unknown" HX_REDACT_CLOSE;

/* Whether a record's field (its last part) holds a path, where a
 * secret ends with its name (hx_redact_path). */
static bool path_field(const char *field)
{
	static const char *const names[] = {
	    "path", "path2", "path_resolved", "path2_resolved", "claimed_path",
	    "cwd",  "exe",   "loader",	      "home",		"repository",
	    NULL};
	const char *last = field ? strrchr(field, '.') : NULL;

	last = last ? last + 1 : field;
	for (size_t i = 0; last && names[i]; i++)
		if (!strcmp(last, names[i]))
			return true;
	return false;
}

/* s, or v[i] of an argv when v is not NULL, as a record writes it
 * before escaping: redacted (*red, to free), or the tag "unknown" when
 * redaction had no memory (nothing of s, rather than all of it). *r:
 * the redactor's answer (0: nothing hidden). */
static const char *redacted(const char *field, const char *s,
			    const char *const *v, size_t i, char **red, int *r)
{
	*red = NULL;
	*r = 0;
	if (redactor)
		*r = v			 ? hx_redact_argv(redactor, v, i, red)
		     : path_field(field) ? hx_redact_path(redactor, s, red)
					 : hx_redact_text(redactor, s, red);
	return *r < 0 ? unknown : *red ? *red : s;
}

/* s, or v[i] of an argv, redacted, then as JSON. The redaction sees the
 * bytes as the agent gave them (a secret's hash is of those), the
 * escaping what is left. */
static json_t *text_of(json_t *rec, const char *field, const char *s,
		       const char *const *v, size_t i)
{
	char *red;
	int r;
	const char *w = redacted(field, s, v, i, &red, &r);
	json_t *j;

	if (r)
		hx_record_note(rec, "redacted", field);
	j = r < 0 ? json_string(w) : as_json(rec, field, w);
	free(red);
	return j;
}

json_t *hx_record_text(json_t *rec, const char *field, const char *s)
{
	return text_of(rec, field, s ? s : "", NULL, 0);
}

/* An agent-controlled string into o[k]; field names it in rec's
 * "escaped" and "redacted" lists when it had to be. */
void hx_record_set_text(json_t *rec, json_t *o, const char *k,
			const char *field, const char *v)
{
	if (v)
		json_object_set_new(o, k, hx_record_text(rec, field, v));
}

json_t *hx_record_strings(json_t *rec, const char *field, const char *const *v,
			  size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a,
				      v[i] ? text_of(rec, field, v[i], v, i)
					   : hx_record_text(rec, field, NULL));
	return a;
}

void hx_record_env(json_t *rec, json_t *o, const char *field, const char *p,
		   size_t len, bool unread)
{
	json_t *a;

	/* unread, p holds a loader's options only (pipeline.c) */
	if (unread)
		json_object_set_new(o, "env_unread", json_true());
	if (!p || !len || !(a = json_array()))
		return;
	for (size_t i = 0; i < len; i += strlen(p + i) + 1)
		json_array_append_new(a, hx_record_text(rec, field, p + i));
	json_object_set_new(o, "env", a);
}

void hx_record_set_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

const char *hx_record_field(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

json_t *hx_record_new(const struct hx_pipeline *pl, const struct hx_peer *peer,
		      const char *event, const struct timespec *when)
{
	json_t *o = json_object();
	char t[HX_FMT_TIME_LEN];
	struct timespec now;

	if (!o)
		return NULL;
	if (!when) {
		clock_gettime(CLOCK_REALTIME, &now);
		when = &now;
	}
	json_object_set_new(o, "time",
			    json_string(hx_fmt_time(when, t, sizeof(t))));
	hx_record_set_str(o, "session", pl->session);
	if (peer) {
		json_object_set_new(o, "pid", json_integer(peer->pid));
		if (peer->ppid)
			json_object_set_new(o, "ppid",
					    json_integer(peer->ppid));
		if (peer->tid)
			json_object_set_new(o, "tid", json_integer(peer->tid));
		hx_record_set_text(o, o, "exe", "exe", peer->exe);
		if (peer->claimed_pid && peer->claimed_pid != peer->pid)
			json_object_set_new(o, "claimed_pid",
					    json_integer(peer->claimed_pid));
		if (pl->call_of)
			hx_record_set_str(o, "call_id",
					  pl->call_of(pl->call_arg, peer->pid));
	} else {
		json_object_set_new(o, "pid", json_integer(getpid()));
		json_object_set_new(o, "ppid", json_integer(getppid()));
	}
	hx_record_set_str(o, "event", event);
	return o;
}

static int append_raw(struct hx_pipeline *pl, json_t *rec, uint64_t *seq)
{
	uint64_t n = 0;
	int r = rec ? hx_audit_append(pl->audit, rec, &n) : -ENOMEM;

	if (r) {
		pl->audit_errors++;
	} else {
		hx_pidset_add(pl->recorded, (pid_t)json_integer_value(
						json_object_get(rec, "pid")));
		hx_metrics_record(pl->metrics, rec, false);
		if (pl->observe)
			pl->observe(pl->observe_arg, rec, n);
		if (pl->watch)
			pl->watch(pl, rec);
	}
	if (seq)
		*seq = n;
	return r;
}

int hx_record_append(struct hx_pipeline *pl, json_t *rec, uint64_t *seq)
{
	int r = append_raw(pl, rec, seq);

	/* A record the log refused (not one never built): the log can
	 * take no more. */
	if (r && rec)
		hx_record_fail(pl, r, "the audit log cannot be written");
	return r;
}

void hx_record_error(struct hx_pipeline *pl, const char *event,
		     const char *trigger, const char *error)
{
	json_t *rec = hx_record_new(pl, NULL, event, NULL);

	if (!rec)
		return;
	hx_record_set_str(rec, "category", "process");
	hx_record_set_str(rec, "risk", "high");
	hx_record_set_str(rec, "trigger", trigger);
	hx_record_set_str(rec, "error", error);
	hx_record_append(pl, rec, NULL);
	json_decref(rec);
}

/* A token bucket: rate records a second, burst at once. */
static bool over_rate(struct hx_pipeline *pl)
{
	struct hx_pl_coalesce *co = pl->co;
	double cap =
	    (double)(pl->quota_burst ? pl->quota_burst : pl->quota_rate);
	uint64_t now = hx_mono_ns();

	if (!pl->quota_rate)
		return false;
	if (!co) {
		co = pl->co = calloc(1, sizeof(*co));
		if (!co)
			return false; /* written, then: never dropped */
		co->tokens = cap;
		co->last_ns = now;
	}
	co->tokens +=
	    (double)(now - co->last_ns) * (double)pl->quota_rate / 1e9;
	if (co->tokens > cap)
		co->tokens = cap;
	co->last_ns = now;
	if (co->tokens >= 1) {
		co->tokens -= 1;
		return false;
	}
	return true;
}

/* What went ahead (allowed, asked, or not enforced) and ran a program or
 * reached the network, and whatever went ahead against its verdict (not
 * enforced): written past the rate too. Coalesced into 16
 * groups and a count, a flood of refusals from 17 processes hid which
 * command ran next; what bounds these is max_size. Refusals and the
 * rest, files included, are still coalesced; so is a "failed" record
 * (no verdict: the kernel's refusal of an allowed call, whose allow was
 * written), which a loop of refused connects wrote past the rate. */
static bool always_written(json_t *rec)
{
	const char *cat = json_string_value(json_object_get(rec, "category"));
	const char *v = json_string_value(json_object_get(rec, "verdict"));
	const char *ev = json_string_value(json_object_get(rec, "event"));
	json_t *enf = json_object_get(rec, "enforced");

	/* What corrects a written record (a "shim+kernel" claim the kernel
	 * layer never saw, an allow taken back), named by its seq: coalesced,
	 * it was a count naming nothing, and a flood of refusals left an exec
	 * that never ran reading allowed by both layers (fifteenth attack
	 * review). At most one for each written record. */
	if (ev && json_object_get(rec, "ref_seq") &&
	    (!strcmp(ev, "kernel_unconfirmed") || !strcmp(ev, "revoked")))
		return true;
	/* How a process ended whose records are in the log (only those
	 * get one: the pidset marks written records): coalesced, a flood
	 * hid its exit code or the signal that killed it. */
	if (ev && !strcmp(ev, "process_exit"))
		return true;
	/* What the policy refuses, made all the same (audit mode): a decoy
	 * of the same rule first, and a write of ~/.bashrc past the rate
	 * was a count under the decoy's path (twenty-fourth attack
	 * review). max_size bounds these too. */
	if (v && strcmp(v, "allow") && json_is_false(enf))
		return true;
	if (!cat || (strcmp(cat, "exec") && strncmp(cat, "net_", 4)) ||
	    (ev && !strcmp(ev, "failed")))
		return false;
	return !v || strcmp(v, "deny") || json_is_false(enf);
}

/* What a group says of a record: all of its members but those that
 * differ from one sight of the same call to the next (time, seq, tid,
 * latency, call stack; the chain's links); "args" is written
 * "first_args", as it was, "count" "record_count". A list of the members kept
 * left out the rest: "escaped" (a name of bytes not UTF-8, written \xff, and a
 * name of those four characters were one group, which said neither),
 * "redacted", ppid, claimed_pid, call_id, why (thirtieth attack review,
 * part a). */
static const char *const co_skip[] = {"time",  "seq",  "tid",  "latency_ns",
				      "stack", "prev", "hash", "session"};

static bool skipped(const char *k)
{
	for (size_t i = 0; i < sizeof(co_skip) / sizeof(*co_skip); i++)
		if (!strcmp(k, co_skip[i]))
			return true;
	return false;
}

/* A record's own "count" (connection_refused's) is not the group's. */
static const char *out_name(const char *k)
{
	return !strcmp(k, "args")    ? "first_args"
	       : !strcmp(k, "count") ? "record_count"
				     : k;
}

static json_t *group_of(json_t *rec)
{
	json_t *o = json_object(), *v;
	const char *k;

	json_object_foreach(rec, k, v)
	{
		if (o && !skipped(k))
			json_object_set(o, out_name(k), v);
	}
	return o;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

/* A hash of one value: strings and numbers whole, an object's members
 * (args: path, flags...) one level down, an array's items' (argv,
 * "escaped"), anything else by its type; json_equal settles what the
 * hash does not. No allocation: this runs for each record of a flood. */
static uint64_t value_hash(uint64_t h, json_t *v, int depth)
{
	const char *k, *s;
	json_int_t n;
	size_t i;
	json_t *m;

	h = fnv(h, &(int){json_typeof(v)}, sizeof(int));
	if ((s = json_string_value(v)))
		return fnv(h, s, json_string_length(v));
	if (json_is_integer(v)) {
		n = json_integer_value(v);
		return fnv(h, &n, sizeof(n));
	}
	if (depth)
		return h;
	json_array_foreach(v, i, m) h = value_hash(h, m, depth + 1);
	json_object_foreach(v, k, m)
	{
		h = fnv(h, k, strlen(k));
		h = value_hash(h, m, depth + 1);
	}
	return h;
}

/* The members' hashes summed: the same record built in another order
 * is in the same group. */
static uint64_t rec_hash(json_t *rec)
{
	uint64_t h = 0;
	const char *k;
	json_t *v;

	json_object_foreach(rec, k, v)
	{
		if (!skipped(k))
			h += value_hash(
			    fnv(0xcbf29ce484222325ull, k, strlen(k)), v, 0);
	}
	return h;
}

static bool same_group(json_t *o, json_t *rec)
{
	size_t n = 0;
	const char *k;
	json_t *v;

	json_object_foreach(rec, k, v)
	{
		if (skipped(k))
			continue;
		if (!json_equal(json_object_get(o, out_name(k)), v))
			return false;
		n++;
	}
	return n == json_object_size(o);
}

/* Counts rec in its group, or makes one; false when the groups are full
 * (or memory ran out): the caller writes them and tries again. */
static bool coalesce(struct hx_pl_coalesce *co, json_t *rec)
{
	const char *t = json_string_value(json_object_get(rec, "time"));
	uint64_t h = rec_hash(rec);
	json_t *o = NULL;
	size_t i = 0;

	while (i < co->ng &&
	       (co->g[i].hash != h || !same_group(co->g[i].o, rec)))
		i++;
	if (i == co->ng && (co->ng == CO_GROUPS || !(o = group_of(rec))))
		return false;
	if (!co->total) {
		co->since_ms = hx_mono_ms();
		snprintf(co->first, sizeof(co->first), "%s", t ? t : "");
	}
	snprintf(co->last, sizeof(co->last), "%s", t ? t : "");
	co->total++;
	if (i < co->ng)
		co->g[i].n++;
	else
		co->g[co->ng++] = (struct co_group){.hash = h, .o = o, .n = 1};
	return true;
}

/* The audit_overflow record for what was coalesced since the last one:
 * once a second, and at the end (all). */
void hx_record_flush(struct hx_pipeline *pl, bool all)
{
	struct hx_pl_coalesce *co = pl->co;
	json_t *rec, *groups;

	if (!co || !co->total || (!all && hx_mono_ms() - co->since_ms < 1000))
		return;
	rec = hx_record_new(pl, NULL, "audit_overflow", NULL);
	groups = json_array();
	for (size_t i = 0; i < co->ng; i++) {
		struct co_group *g = &co->g[i];

		json_object_set_new(g->o, "count",
				    json_integer((json_int_t)g->n));
		json_array_append_new(groups, g->o);
		g->o = NULL;
	}
	if (rec) {
		hx_record_set_str(rec, "category", "process");
		hx_record_set_str(rec, "reason", "rate");
		json_object_set_new(rec, "rate",
				    json_integer((json_int_t)pl->quota_rate));
		json_object_set_new(rec, "burst",
				    json_integer((json_int_t)pl->quota_burst));
		json_object_set_new(rec, "coalesced",
				    json_integer((json_int_t)co->total));
		hx_record_set_str(rec, "since", co->first);
		hx_record_set_str(rec, "until", co->last);
		json_object_set_new(rec, "groups", groups);
		hx_record_append(pl, rec, NULL);
	} else {
		json_decref(groups);
	}
	json_decref(rec);
	co->total = 0;
	co->ng = 0;
}

int hx_record_append_event(struct hx_pipeline *pl, json_t *rec, uint64_t *seq,
			   bool *coalesced)
{
	int r;

	if (coalesced)
		*coalesced = false;
	if (seq)
		*seq = 0;
	if (pl->failed) {
		pl->audit_errors++;
		return pl->failed;
	}
	if (rec && over_rate(pl) && !always_written(rec) &&
	    (coalesce(pl->co, rec) ||
	     (hx_record_flush(pl, true), coalesce(pl->co, rec)))) {
		hx_metrics_record(pl->metrics, rec, true);
		if (pl->watch)
			pl->watch(pl, rec);
		if (coalesced)
			*coalesced = true;
		return 0;
	}
	r = hx_record_append(pl, rec, seq);
	if (!r && pl->quota_max_size &&
	    hx_audit_written(pl->audit) >= pl->quota_max_size)
		hx_record_fail(pl, -EDQUOT,
			       "the session's audit quota (audit: "
			       "max_size) is used up");
	return r;
}

void hx_record_fail(struct hx_pipeline *pl, int err, const char *why)
{
	json_t *rec;
	char e[64];

	if (pl->failed)
		return;
	pl->failed = err ? err : -EIO;
	pl->failed_why = why;
	if (pl->audit)
		hx_audit_closing(pl->audit);
	hx_record_flush(pl, true);
	rec = hx_record_new(pl, NULL, "audit_failed", NULL);
	if (rec) {
		hx_record_set_str(rec, "category", "process");
		hx_record_set_str(rec, "risk", "high");
		hx_record_set_str(rec, "reason", why);
		snprintf(e, sizeof(e), "%s", strerror(-pl->failed));
		hx_record_set_str(rec, "error", e);
		if (pl->quota_max_size)
			json_object_set_new(
			    rec, "max_size",
			    json_integer((json_int_t)pl->quota_max_size));
		if (pl->audit)
			json_object_set_new(
			    rec, "written",
			    json_integer(
				(json_int_t)hx_audit_written(pl->audit)));
		append_raw(pl, rec, NULL);
	}
	json_decref(rec);
	fprintf(stderr,
		"harness: %s (%s): every request is denied and the session "
		"ends\n",
		why, strerror(-pl->failed));
}

void hx_record_dns(json_t *rec, json_t *args, const struct hx_request *rq)
{
	if (rq->sealed)
		json_object_set_new(args, "answered_by",
				    json_string("harness"));
	if (!rq->dns_type)
		return;
	hx_record_set_str(args, "qtype", rq->dns_type);
	hx_record_set_str(args, "rcode", rq->dns_rcode);
	if (!rq->nanswers)
		return;
	json_object_set_new(
	    args, "answers",
	    hx_record_strings(rec, "args.answers", rq->answers, rq->nanswers));
	json_object_set_new(args, "ttl", json_integer(rq->dns_ttl));
}

/* What a record keeps of an argv; the kernel takes up to 6 MiB. */
#define REC_ARGV_MAX   1024
#define REC_ARGV_BYTES (64u << 10)

/* The digest of an argv as a record writes it, each word redacted: the
 * hash of a secret a record hides (env PASSWORD=W, sshpass -p W) with
 * the words around it would give it to a guess. false: no memory. */
static bool argv_digest(const char *const *v, size_t n, char *hex)
{
	char **red = calloc(n, sizeof(*red));
	const char **w = calloc(n, sizeof(*w));
	bool ok = red && w;
	int r;

	for (size_t i = 0; ok && i < n; i++)
		w[i] = redacted(NULL, v[i], v, i, &red[i], &r);
	if (ok)
		hx_sha256_strv_hex(w, n, hex);
	for (size_t i = 0; red && i < n; i++)
		free(red[i]);
	free(red);
	free(w);
	return ok;
}

void hx_record_argv(json_t *rec, json_t *args, const char *key,
		    const char *field, const char *const *v, size_t n)
{
	char name[64], hex[65];
	size_t keep = 0, bytes = 0;

	while (keep < n && keep < REC_ARGV_MAX &&
	       (bytes += strlen(v[keep]) + 1) <= REC_ARGV_BYTES)
		keep++;
	json_object_set_new(args, key, hx_record_strings(rec, field, v, keep));
	if (keep == n)
		return;
	snprintf(name, sizeof(name), "%s_truncated", key);
	json_object_set_new(args, name, json_true());
	snprintf(name, sizeof(name), "%s_total", key);
	json_object_set_new(args, name, json_integer((json_int_t)n));
	snprintf(name, sizeof(name), "%s_sha256", key);
	if (argv_digest(v, n, hex))
		json_object_set_new(args, name, json_string(hex));
}

void hx_record_cmdline(json_t *rec, json_t *args, const char *key,
		       const char *field, const char *p, size_t len)
{
	char *buf = malloc(len + 1);
	const char **v = NULL;
	size_t n = 0;

	if (buf) {
		memcpy(buf, p, len);
		buf[len] = '\0'; /* a rewritten last string may lack it */
		for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
			n++;
		v = calloc(n ? n : 1, sizeof(*v));
	}
	if (!v) {
		json_object_set_new(args, key, json_array());
		free(buf);
		return;
	}
	n = 0;
	for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
		v[n++] = buf + i;
	hx_record_argv(rec, args, key, field, v, n);
	free(v);
	free(buf);
}
