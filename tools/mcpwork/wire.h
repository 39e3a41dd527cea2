/* The worker's protocol with the front (docs/mcp.md, "The worker"): one
 * compact JSON object per '\n'-terminated line each way, over fd 3.
 * Framing and decoding are pure (no system call but the send), so the
 * unit tests drive them with any bytes. */
#ifndef HX_MW_WIRE_H
#define HX_MW_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;

/* Lines of at most max bytes (without the '\n') out of a byte stream.
 * Zero it, set max, feed it; hx_mw_wire_framer_free at the end. */
struct hx_mw_wire_framer {
	size_t max;
	char *buf;
	size_t len, cap;
	bool skipping; /* inside a line found too long: dropped to its end */
};

/* Called for each complete line (p, n: without its '\n'; p is writable
 * and NUL-terminated at n) and, with too_long, once for each line
 * longer than max with p, n its first bytes only. */
typedef void (*hx_mw_wire_line_fn)(void *ctx, char *p, size_t n, bool too_long);

/* Feeds n bytes: 0, or -ENOMEM (the framer is then reset). */
int hx_mw_wire_feed(struct hx_mw_wire_framer *f, const char *p, size_t n,
		    hx_mw_wire_line_fn fn, void *ctx);
void hx_mw_wire_framer_free(struct hx_mw_wire_framer *f);

/* The id a line starts with, read without parsing the rest: `{"id":N`
 * (white space allowed), for a line too long or too broken to decode,
 * so that its error reply still reaches its caller. 0 and *id (below
 * 2^63, as every id), or -1. */
int hx_mw_wire_peek_id(const char *p, size_t n, uint64_t *id);

enum hx_mw_msg_kind {
	HX_MW_MSG_BAD, /* why says why; has_id when an id was found */
	HX_MW_MSG_REQUEST,
	HX_MW_MSG_CANCEL,
	HX_MW_MSG_EXIT,
};

struct hx_mw_msg {
	enum hx_mw_msg_kind kind;
	bool has_id;
	uint64_t id;	     /* request's id, the cancelled id */
	const char *tool;    /* borrowed from root */
	struct json_t *args; /* borrowed from root */
	struct json_t *root; /* owned: hx_mw_wire_msg_clear */
	char why[256];
};

/* Decodes one line from the front: a request {"id", "tool", "args"}, a
 * cancel {"cancel": id}, an exit {"exit": true}; anything else, extra
 * members included, is HX_MW_MSG_BAD. Ids are integers in [0, 2^63). */
void hx_mw_wire_parse(const char *p, size_t n, struct hx_mw_msg *m);
void hx_mw_wire_msg_clear(struct hx_mw_msg *m);

/* Writes msg (not consumed) as one compact line to fd, whole (EINTR
 * retried; SIGPIPE not raised). 0, -E2BIG when it would be longer than
 * HX_MW_LINE_MAX (nothing sent), -ENOMEM, or the write's -errno. */
int hx_mw_wire_send(int fd, struct json_t *msg);

/* Sends {"id": id, "result"|"error": body} (takes body); an answer too
 * long to send becomes an E2BIG error for id. 0 or -errno of the send. */
int hx_mw_wire_reply(int fd, uint64_t id, bool error, struct json_t *body);

#endif
