/* JSON text as jansson writes it; see jsontext.h. */
#include "supervisor/jsontext.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper than any record: past it jansson writes the rest (and finds a
 * loop, if one there were). */
#define MAX_DEPTH 32

static bool grow(struct hx_jtext *t, size_t n)
{
	size_t cap = t->cap ? t->cap : 512;
	char *p;

	if (t->failed)
		return false;
	while (cap < t->len + n)
		cap *= 2;
	if (!(p = realloc(t->p, cap))) {
		t->failed = true;
		return false;
	}
	t->p = p;
	t->cap = cap;
	return true;
}

void hx_jtext_put(struct hx_jtext *t, const char *s, size_t n)
{
	if (t->len + n <= t->cap || grow(t, n)) {
		memcpy(t->p + t->len, s, n);
		t->len += n;
	}
}

/* The length of the UTF-8 sequence at s (at most n bytes), 0 when it
 * is none: overlong, a surrogate, past U+10FFFF, cut short. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0xc2   ? 0
		     : s[0] < 0xe0 ? 2
		     : s[0] < 0xf0 ? 3
		     : s[0] < 0xf5 ? 4
				   : 0;
	uint32_t cp;

	if (!len || len > n)
		return 0;
	cp = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* jansson's dump_string without JSON_ENSURE_ASCII or JSON_ESCAPE_SLASH:
 * '"', '\\' and the controls below 0x20 escaped, valid UTF-8 as it is;
 * a string that is not UTF-8 (only json_stringn_nocheck makes one) fails
 * the text, as it fails jansson's dump. */
void hx_jtext_string(struct hx_jtext *t, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t run = 0;

	hx_jtext_put(t, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6] = {'\\', 0};
		size_t len = 2;

		if (c >= 0x80) {
			size_t u =
			    utf8_len((const unsigned char *)s + i, n - i);

			if (!u) {
				t->failed = true;
				return;
			}
			i += u - 1;
			continue;
		}
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		hx_jtext_put(t, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"':
			esc[1] = '"';
			break;
		case '\\':
			esc[1] = '\\';
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			len = 6;
		}
		hx_jtext_put(t, esc, len);
	}
	hx_jtext_put(t, s + run, n - run);
	hx_jtext_put(t, "\"", 1);
}

/* What this file does not write the way jansson does (a real's digits,
 * a value past MAX_DEPTH): jansson's own text. */
static void by_jansson(struct hx_jtext *t, const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	if (!s) {
		t->failed = true;
		return;
	}
	hx_jtext_put(t, s, strlen(s));
	free(s);
}

static void value(struct hx_jtext *t, const json_t *v, int depth)
{
	char num[24];
	const char *key;
	json_t *item;
	size_t i;
	int n;

	if (depth > MAX_DEPTH) {
		by_jansson(t, v);
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		hx_jtext_put(t, "{", 1);
		i = 0;
		/* json_object_foreach is not for a const object. */
		for (void *it = json_object_iter((json_t *)v);
		     it && (key = json_object_iter_key(it)) &&
		     (item = json_object_iter_value(it));
		     it = json_object_iter_next((json_t *)v, it), i++) {
			if (i)
				hx_jtext_put(t, ",", 1);
			hx_jtext_string(t, key, strlen(key));
			hx_jtext_put(t, ":", 1);
			value(t, item, depth + 1);
		}
		hx_jtext_put(t, "}", 1);
		return;
	case JSON_ARRAY:
		hx_jtext_put(t, "[", 1);
		json_array_foreach(v, i, item)
		{
			if (i)
				hx_jtext_put(t, ",", 1);
			value(t, item, depth + 1);
		}
		hx_jtext_put(t, "]", 1);
		return;
	case JSON_STRING:
		hx_jtext_string(t, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			     json_integer_value(v));
		hx_jtext_put(t, num, (size_t)n);
		return;
	case JSON_TRUE:
		hx_jtext_put(t, "true", 4);
		return;
	case JSON_FALSE:
		hx_jtext_put(t, "false", 5);
		return;
	case JSON_NULL:
		hx_jtext_put(t, "null", 4);
		return;
	default: /* JSON_REAL */
		by_jansson(t, v);
	}
}

void hx_jtext_value(struct hx_jtext *t, const json_t *v)
{
	value(t, v, 0);
}
