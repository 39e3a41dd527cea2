/* Secrets in what harness-mcp returns; see secrets.h. */
#define _GNU_SOURCE
#include "supervisor/mcp/secrets.h"

#include <jansson.h>
#include <nettle/base64.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/redact.h"

static void note(json_t *redacted, const char *key)
{
	json_t *x;
	size_t i;

	json_array_foreach(redacted, i,
			   x) if (!strcmp(json_string_value(x), key)) return;
	json_array_append_new(redacted, json_string(key));
}

char *hx_mcp_redact_copy(const struct hx_redact *r, const char *s)
{
	char *red = NULL;

	if (!r || !s || hx_redact_text(r, s, &red) != 1)
		return NULL;
	return red;
}

static bool skipped(const char *key, const char *const *skip)
{
	if (!strcmp(key, "sha256") || !strcmp(key, "actual_sha256"))
		return true;
	for (; skip && *skip; skip++)
		if (!strcmp(key, *skip))
			return true;
	return false;
}

/* A string member or element x under key: its redacted copy, or NULL
 * when unchanged. */
static json_t *redacted_of(json_t *x, const char *key,
			   const struct hx_redact *r, json_t *redacted)
{
	char *red;
	json_t *v;

	if (!json_is_string(x) ||
	    !(red = hx_mcp_redact_copy(r, json_string_value(x))))
		return NULL;
	v = json_string(red);
	free(red);
	if (v)
		note(redacted, key);
	return v;
}

void hx_mcp_redact_tree(json_t *v, const struct hx_redact *r,
			const char *const *skip, json_t *redacted)
{
	const char *k;
	json_t *x, *n;
	size_t i;

	if (!r)
		return;
	if (json_is_object(v)) {
		json_object_foreach(v, k, x)
		{
			if (skipped(k, skip))
				continue;
			if ((n = redacted_of(x, k, r, redacted)))
				json_object_set_new(v, k, n);
			else
				hx_mcp_redact_tree(x, r, skip, redacted);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
		{
			if ((n = redacted_of(x, "", r, redacted)))
				json_array_set_new(v, i, n);
			else
				hx_mcp_redact_tree(x, r, skip, redacted);
		}
	}
}

/* base64 (nettle's): the worker's content decoded, NUL-terminated past
 * *len; NULL when it is not base64. */
static unsigned char *decode(const char *s, size_t n, size_t *len)
{
	struct base64_decode_ctx c;
	unsigned char *out = malloc(BASE64_DECODE_LENGTH(n) + 1);

	*len = BASE64_DECODE_LENGTH(n);
	base64_decode_init(&c);
	if (out && (!base64_decode_update(&c, len, out, n, s) ||
		    !base64_decode_final(&c))) {
		free(out);
		return NULL;
	}
	if (out)
		out[*len] = '\0';
	return out;
}

static char *encode(const unsigned char *p, size_t n)
{
	struct base64_encode_ctx c;
	char *out =
	    malloc(BASE64_ENCODE_LENGTH(n) + BASE64_ENCODE_FINAL_LENGTH + 1);
	size_t done;

	if (!out)
		return NULL;
	base64_encode_init(&c);
	done = base64_encode_update(&c, out, n, p);
	done += base64_encode_final(&c, out + done);
	out[done] = '\0';
	return out;
}

/* The runs of bytes between NULs of p (NUL-terminated past n),
 * redacted into a new buffer; NULL when none held a secret. */
static unsigned char *redact_bytes(const struct hx_redact *r,
				   const unsigned char *p, size_t n,
				   size_t *out_len)
{
	unsigned char *out = NULL, *nb;
	size_t len = 0, at = 0;
	bool changed = false;

	while (at <= n) {
		const char *seg = (const char *)p + at;
		size_t sl = strlen(seg);
		char *red = hx_mcp_redact_copy(r, seg);
		const char *use = red ? red : seg;
		size_t ul = red ? strlen(red) : sl;
		bool nul = at + sl < n;

		changed |= red != NULL;
		nb = realloc(out, len + ul + 2);
		if (!nb) {
			free(red);
			free(out);
			return NULL;
		}
		out = nb;
		memcpy(out + len, use, ul);
		len += ul;
		if (nul)
			out[len++] = '\0';
		free(red);
		at += sl + 1;
	}
	if (!changed) {
		free(out);
		return NULL;
	}
	*out_len = len;
	return out;
}

bool hx_mcp_redact_base64(json_t *o, const char *key, const struct hx_redact *r,
			  json_t *redacted)
{
	json_t *v = json_object_get(o, key);
	unsigned char *raw, *red = NULL;
	size_t n = 0, rn = 0;
	char *text = NULL;

	if (!r || !json_is_string(v))
		return false;
	raw = decode(json_string_value(v), json_string_length(v), &n);
	if (raw)
		red = redact_bytes(r, raw, n, &rn);
	if (red)
		text = encode(red, rn);
	free(raw);
	free(red);
	if (!text)
		return false;
	json_object_set_new(o, key, json_string(text));
	free(text);
	note(redacted, key);
	return true;
}
