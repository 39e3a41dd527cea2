/* Secrets in what harness-mcp returns; see secrets.h. */
#define _GNU_SOURCE
#include "supervisor/mcp/secrets.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/redact.h"

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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

static int value_of(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

/* Standard base64, padded (as the worker writes it); NULL when s is
 * not. NUL-terminated past *len. */
static unsigned char *decode(const char *s, size_t n, size_t *len)
{
	unsigned char *out = n % 4 ? NULL : malloc(n / 4 * 3 + 1);
	size_t o = 0;

	for (size_t i = 0; out && i < n; i += 4) {
		int v[4], pad = 0;

		for (int k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
			} else if (pad || (v[k] = value_of(s[i + k])) < 0) {
				free(out);
				return NULL;
			}
		}
		out[o++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[o++] =
			    (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
		if (pad < 1)
			out[o++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
	}
	if (out)
		out[o] = '\0';
	*len = o;
	return out;
}

static char *encode(const unsigned char *p, size_t n)
{
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	for (size_t i = 0; out && i < n; i += 3) {
		uint32_t w = (uint32_t)p[i] << 16 |
			     (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);

		*o++ = b64[w >> 18 & 63];
		*o++ = b64[w >> 12 & 63];
		*o++ = i + 1 < n ? b64[w >> 6 & 63] : '=';
		*o++ = i + 2 < n ? b64[w & 63] : '=';
	}
	if (out)
		*o = '\0';
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
