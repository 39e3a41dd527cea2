/* The audit log: JSON Lines chained by SHA-256 (DESIGN.md section 6).
 *
 * Each record gets "seq" (from 1, continuing an existing log), "prev" (the
 * previous record's hash, 64 zeros for the first) and "hash": the SHA-256
 * of the record serialized compactly without its hash, that is the line
 * minus its trailing `,"hash":"<hex>"}` plus a closing '}'. A record is
 * written with one write(2) on an O_APPEND fd, so a crash never leaves
 * half a record followed by another.
 *
 * Lifecycle: hx_audit_open -> hx_audit_append ... (hx_audit_sync on a
 * timer) -> hx_audit_close. Appends are serialized by a mutex, so that
 * any thread may log. */
#ifndef HX_AUDIT_H
#define HX_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hx_audit;
struct json_t; /* jansson object; no jansson header here */

/* Opens (creating 0600) path for appending. When the file already holds
 * records the chain continues from its last one; -EBADMSG if that last
 * line is not a complete record; -EBUSY while another handle (another
 * session) has it open (flock). Returns 0 or -errno. */
int hx_audit_open(const char *path, struct hx_audit **out);

/* Appends one record. record is a JSON object without seq/prev/hash; it
 * is borrowed (not modified, not freed). "time" is put first (now, unless
 * record has one), then "seq", the record's other keys in order, "prev"
 * and "hash". Sets *seq (may be NULL). Returns 0, or -errno (-ENOSPC
 * on a short write, cut off again; -ENOSPC or -EFBIG also when the
 * space kept past the end for the last records cannot be renewed,
 * before anything is written; -EIO once a torn line could not be cut
 * off). The chain is not advanced on failure. */
int hx_audit_append(struct hx_audit *a, struct json_t *record, uint64_t *seq);

/* From now on appends may use up the space kept for the last records
 * (the session is ending: audit_failed, session_end). */
void hx_audit_closing(struct hx_audit *a);
/* Bytes appended through this handle (the session's share of a log). */
uint64_t hx_audit_written(struct hx_audit *a);

/* fdatasync when records were written since the last sync; puts back
 * the log's mode when it was changed. */
int hx_audit_sync(struct hx_audit *a);
/* The same, with how long the fdatasync took in *ns (0: none was
 * needed). */
int hx_audit_sync_timed(struct hx_audit *a, uint64_t *ns);
/* Only the latter, without waiting for the device: before the count of
 * hx_audit_mode_restored goes into a record. */
void hx_audit_check_mode(struct hx_audit *a);
/* Starts the final sync on a thread of its own, so that the caller's
 * teardown overlaps the device flush (about 0.5 ms on a VM);
 * hx_audit_close waits for it. NULL is a no-op. */
void hx_audit_sync_start(struct hx_audit *a);
/* fd (owned from here) is synced after the log's last sync, on the
 * same thread, and closed by hx_audit_close: a file written with the
 * log's end (the session's anchor) costs no second flush of the
 * device. Before hx_audit_sync_start. */
void hx_audit_sync_also(struct hx_audit *a, int fd);
/* Syncs (or waits for hx_audit_sync_start, then syncs what came after)
 * and closes; returns the sync result. NULL is a no-op. */
int hx_audit_close(struct hx_audit *a);

const char *hx_audit_path(const struct hx_audit *a);
/* How often hx_audit_sync found the log's mode changed (fchmod through
 * a read-only fd) and put it back. */
unsigned hx_audit_mode_restored(const struct hx_audit *a);
/* The log's fd (borrowed: for fstat). */
int hx_audit_fd(const struct hx_audit *a);
uint64_t hx_audit_last_seq(const struct hx_audit *a);
/* Hex hash of the last record (64 zeros before the first). */
const char *hx_audit_last_hash(const struct hx_audit *a);

/* Result of a verification. */
struct hx_audit_verify {
	uint64_t records; /* complete, valid records before any break */
	uint64_t last_seq;
	char first_hash[65], last_hash[65];
	bool last_is_end; /* the last record is a session_end */
	/* records a compacted record at the start stands for, or 0 */
	uint64_t compacted;
	/* first broken record (when hx_audit_verify returns 1) */
	uint64_t bad_line;  /* 1-based */
	uint64_t bad_seq;   /* 0 when the record has no readable seq */
	const char *reason; /* static string */
};

/* record as the log's line (with its '\n', *len bytes, malloc'd) when
 * it is record seq after the record whose hash is prev; its own hash
 * into hex. NULL: out of memory. */
char *hx_audit_line(struct json_t *record, uint64_t seq, const char *prev,
		    size_t *len, char hex[65]);

/* Verifies the chain of the log at path. Returns 0 when intact, 1 with
 * the first broken record described in *v, -errno when unreadable. */
int hx_audit_verify(const char *path, struct hx_audit_verify *v);

/* Hash check of one line (without its '\n'): fills hex (65 bytes) with
 * the recomputed hash and returns 0, or -1 when the line does not end
 * with a hash field. Exposed for tests. */
int hx_audit_line_hash(const char *line, size_t len, char *hex);

#endif
