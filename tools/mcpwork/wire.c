/* Framing and decoding of the worker's protocol; see wire.h. */
#include "tools/mcpwork/wire.h"
#include "tools/mcpwork/grow.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tools/mcpwork/args.h"
#include "tools/mcpwork/bounds.h"

/* What a too-long line's callback sees of it: enough for its id. */
#define PEEK 64

void hx_mw_wire_framer_free(struct hx_mw_wire_framer *f)
{
	free(f->buf);
	f->buf = NULL;
	f->len = f->cap = 0;
	f->skipping = false;
}

static int append(struct hx_mw_wire_framer *f, const char *p, size_t n)
{
	if (hx_mw_grow(&f->buf, &f->cap, f->len + n + 1, 0))
		return -ENOMEM;
	memcpy(f->buf + f->len, p, n);
	f->len += n;
	return 0;
}

/* The buffer went past max without a '\n': report it, drop it. */
static void overflow(struct hx_mw_wire_framer *f, hx_mw_wire_line_fn fn,
		     void *ctx)
{
	size_t n = f->len < PEEK ? f->len : PEEK;

	f->buf[n] = 0;
	fn(ctx, f->buf, n, true);
	f->skipping = true;
	hx_mw_wire_framer_free(f);
	f->skipping = true;
}

int hx_mw_wire_feed(struct hx_mw_wire_framer *f, const char *p, size_t n,
		    hx_mw_wire_line_fn fn, void *ctx)
{
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t part = nl ? (size_t)(nl - p) : n;

		if (f->skipping) {
			if (nl)
				f->skipping = false;
		} else if (f->len + part > f->max) {
			/* Only what fits is kept for the peek. */
			size_t room = f->max - f->len;

			if (append(f, p, part < room ? part : room) < 0)
				goto nomem;
			overflow(f, fn, ctx);
			if (nl)
				f->skipping = false;
		} else {
			if (append(f, p, part) < 0)
				goto nomem;
			if (nl) {
				size_t len = f->len;

				f->buf[len] = 0;
				f->len = 0;
				fn(ctx, f->buf, len, false);
				/* One huge line does not pin its buffer. */
				if (f->cap > (1u << 20))
					hx_mw_wire_framer_free(f);
			}
		}
		if (!nl)
			break;
		n -= part + 1;
		p = nl + 1;
	}
	return 0;
nomem:
	hx_mw_wire_framer_free(f);
	return -ENOMEM;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

int hx_mw_wire_peek_id(const char *p, size_t n, uint64_t *id)
{
	const char *end = p + n;
	uint64_t v = 0;
	int digits = 0;

	p = skip_ws(p, end);
	if (p >= end || *p++ != '{')
		return -1;
	p = skip_ws(p, end);
	if (end - p < 4 || memcmp(p, "\"id\"", 4))
		return -1;
	p = skip_ws(p + 4, end);
	if (p >= end || *p++ != ':')
		return -1;
	p = skip_ws(p, end);
	for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
		if (v > (UINT64_MAX - 9) / 10 || (digits && !v))
			return -1; /* too big, or a leading zero */
		v = v * 10 + (uint64_t)(*p - '0');
	}
	/* Past jansson's integers no reply could carry the id back. */
	if (!digits || v > INT64_MAX ||
	    (p < end && *p != ',' && *p != '}' && *p != ' '))
		return -1;
	*id = v;
	return 0;
}

void hx_mw_wire_msg_clear(struct hx_mw_msg *m)
{
	json_decref(m->root);
	memset(m, 0, sizeof(*m));
}

static int get_id(json_t *v, uint64_t *id)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*id = (uint64_t)json_integer_value(v);
	return 0;
}

static void bad(struct hx_mw_msg *m, const char *why)
{
	m->kind = HX_MW_MSG_BAD;
	snprintf(m->why, sizeof(m->why), "%s", why);
}

static void parse_request(struct hx_mw_msg *m)
{
	json_t *tool = json_object_get(m->root, "tool");
	json_t *args = json_object_get(m->root, "args");

	if (json_object_size(m->root) != 3 || !tool || !args)
		return bad(m, "a request has exactly \"id\", \"tool\" and "
			      "\"args\"");
	if (!json_is_string(tool) ||
	    strlen(json_string_value(tool)) != json_string_length(tool))
		return bad(m, "\"tool\" must be a string");
	if (!json_is_object(args))
		return bad(m, "\"args\" must be an object");
	m->kind = HX_MW_MSG_REQUEST;
	m->tool = json_string_value(tool);
	m->args = args;
}

void hx_mw_wire_parse(const char *p, size_t n, struct hx_mw_msg *m)
{
	json_error_t err;
	json_t *v;

	memset(m, 0, sizeof(*m));
	/* NUL is let through the decoder so that the tools refuse it with
	 * their own error (a path with NUL is EINVAL, with the caller's id)
	 * instead of the whole line failing anonymously. */
	m->root =
	    json_loadb(p, n, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &err);
	if (!m->root) {
		m->has_id = hx_mw_wire_peek_id(p, n, &m->id) == 0;
		snprintf(m->why, sizeof(m->why), "invalid JSON: %s", err.text);
		return;
	}
	if (!json_is_object(m->root))
		return bad(m, "a message must be a JSON object");
	v = json_object_get(m->root, "id");
	if (v) {
		if (get_id(v, &m->id) < 0)
			return bad(m, "\"id\" must be an integer >= 0");
		m->has_id = true;
		return parse_request(m);
	}
	v = json_object_get(m->root, "cancel");
	if (v) {
		if (json_object_size(m->root) != 1 || get_id(v, &m->id) < 0)
			return bad(m, "a cancel is {\"cancel\": id}");
		m->kind = HX_MW_MSG_CANCEL;
		return;
	}
	v = json_object_get(m->root, "exit");
	if (v && json_is_true(v) && json_object_size(m->root) == 1) {
		m->kind = HX_MW_MSG_EXIT;
		return;
	}
	bad(m, "not a request, cancel or exit");
}

int hx_mw_wire_send(int fd, json_t *msg)
{
	size_t len = json_dumpb(msg, NULL, 0, JSON_COMPACT);
	char *buf;
	size_t off = 0;
	ssize_t w;
	int rc = 0;

	if (!len)
		return -ENOMEM;
	if (len > HX_MW_LINE_MAX)
		return -E2BIG;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	if (json_dumpb(msg, buf, len, JSON_COMPACT) != len) {
		free(buf);
		return -ENOMEM;
	}
	buf[len++] = '\n';
	while (off < len) {
		/* MSG_NOSIGNAL: a front gone is an EPIPE, not a death. */
		w = send(fd, buf + off, len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = -errno;
			break;
		}
		off += (size_t)w;
	}
	free(buf);
	return rc;
}

int hx_mw_wire_reply(int fd, uint64_t id, bool error, json_t *body)
{
	json_t *msg, *e;
	int rc;

	msg = json_pack("{s:I, s:o}", "id", (json_int_t)id,
			error ? "error" : "result", body);
	if (!msg)
		return -ENOMEM;
	rc = hx_mw_wire_send(fd, msg);
	json_decref(msg);
	if (rc != -E2BIG)
		return rc;
	hx_mw_args_error(&e, E2BIG, "the reply is longer than %u bytes",
			 HX_MW_LINE_MAX);
	msg = json_pack("{s:I, s:o}", "id", (json_int_t)id, "error", e);
	if (!msg)
		return -ENOMEM;
	rc = hx_mw_wire_send(fd, msg);
	json_decref(msg);
	return rc;
}
