/* The audit stage of the pipeline: records with the common leading
 * fields, agent text escaped (never dropped), appended under the
 * session's quota (coalesced beyond its rate, counted in audit_overflow
 * records), and the session failed closed when the log can take no more.
 * Every record of a session goes through here. */
#ifndef HX_RECORD_H
#define HX_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "supervisor/pipeline.h"

struct json_t;

/* A new record with the common leading fields (time, session, pid, ppid,
 * tid, exe, event). peer NULL means harness itself. The caller owns it. */
struct json_t *hx_record_new(const struct hx_pipeline *pl,
			     const struct hx_peer *peer, const char *event,
			     const struct timespec *when);

/* The session's redactor (redact.h), which hx_record_text and
 * hx_record_strings apply to every string; takes ownership, frees the
 * one before; NULL: none. Set before the first record and cleared after
 * the last: the threads that record read it unlocked. */
struct hx_redact;
void hx_record_redact(struct hx_redact *r);

/* s as a JSON string: each secret in it replaced by its tag (redact.h),
 * then, not UTF-8, escaped (hx_fmt_escape_bytes); field, the dotted name
 * of where it goes ("args.argv"), is added once to rec's "redacted" or
 * "escaped" list (rec may be NULL). Never drops the rest of s. */
struct json_t *hx_record_text(struct json_t *rec, const char *field,
			      const char *s);
/* o[k] = hx_record_text(rec, field, v), when v is not NULL. */
void hx_record_set_text(struct json_t *rec, struct json_t *o, const char *k,
			const char *field, const char *v);
/* An exec's environment as it differs from the session's (envdiff.h:
 * len bytes of entries at p) as o's "env", an array of texts (redacted
 * as field: a value may be a token), absent when none; unread: o's
 * "env_unread" true (and "env" only for what p holds then: a loader's
 * options). */
void hx_record_env(struct json_t *rec, struct json_t *o, const char *field,
		   const char *p, size_t len, bool unread);
/* o[k] = v, trusted text (names, rules), when v is not NULL. */
void hx_record_set_str(struct json_t *o, const char *k, const char *v);
/* field, once, into rec's list list_name (rec may be NULL): "escaped",
 * "redacted", "cut". */
void hx_record_note(struct json_t *rec, const char *list_name,
		    const char *field);
/* The string member k of record (or object) o, "" when it has none: for
 * the readers of a log (harness-audit). */
const char *hx_record_field(struct json_t *o, const char *k);
/* A DNS question's type and what it was answered (unotify_dns.c) into
 * args: qtype, rcode, answers, ttl; answered_by "harness" for a connect
 * or send that reached the supervisor's resolver, not its address. */
void hx_record_dns(struct json_t *rec, struct json_t *args,
		   const struct hx_request *rq);

/* The n strings of v as an array of hx_record_text, each redacted as a
 * word of an argv (hx_redact_argv: sshpass -p W). */
struct json_t *hx_record_strings(struct json_t *rec, const char *field,
				 const char *const *v, size_t n);
/* An argv of n strings as args' key (redacted as field): the first 1,024
 * strings and 64 KiB; a longer one adds key_truncated (true), key_total
 * (n) and key_sha256 (of every string with its NUL, redacted as a record
 * writes it), which name what ran without a record of megabytes. */
void hx_record_argv(struct json_t *rec, struct json_t *args, const char *key,
		    const char *field, const char *const *v, size_t n);
/* The same of a NUL-separated command line of len bytes
 * (/proc/<pid>/cmdline). */
void hx_record_cmdline(struct json_t *rec, struct json_t *args, const char *key,
		       const char *field, const char *cmdline, size_t len);

/* A failure of the harness's own work (event, e.g. "checkpoint_failed")
 * as a record of category process: what it was doing (trigger) and the
 * error, appended (alerts.h watches for it). */
void hx_record_error(struct hx_pipeline *pl, const char *event,
		     const char *trigger, const char *error);
/* Appends a record (see hx_audit_append) and counts failures; a record
 * the log refused fails the session (hx_record_fail). */
int hx_record_append(struct hx_pipeline *pl, struct json_t *rec, uint64_t *seq);

/* hx_record_append for a record an agent can cause (a decision, a
 * process_start, a protocol error): beyond the quota's rate it is not
 * written but counted (*coalesced true, *seq 0) into the next
 * audit_overflow record, which hx_record_flush writes; past the quota's
 * size the session fails (hx_record_fail). coalesced may be NULL. */
int hx_record_append_event(struct hx_pipeline *pl, struct json_t *rec,
			   uint64_t *seq, bool *coalesced);

/* Writes the audit_overflow record of what was coalesced, once a second,
 * or now when all is true. */
void hx_record_flush(struct hx_pipeline *pl, bool all);

/* The log can take no more (err -errno, why for people): records
 * audit_failed with what is coalesced, using the space the log keeps
 * for its last records, and marks the pipeline failed. Idempotent. */
void hx_record_fail(struct hx_pipeline *pl, int err, const char *why);

#endif
