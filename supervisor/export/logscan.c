/* Reading members off a record's line; see logscan.h. */
#include "supervisor/export/logscan.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The end of the string that starts at p (its opening quote): the next
 * quote not escaped by an odd run of backslashes. */
static const char *end_of_string(const char *p, const char *end)
{
	const char *q = p + 1;

	while (q < end && (q = memchr(q, '"', (size_t)(end - q)))) {
		const char *b = q;

		while (b > p + 1 && b[-1] == '\\')
			b--;
		if ((q - b) % 2 == 0)
			return q + 1;
		q++;
	}
	return NULL;
}

/* The end of the value that starts at p. */
static const char *end_of_value(const char *p, const char *end)
{
	int depth = 0;

	if (p < end && *p == '"')
		return end_of_string(p, end);
	for (; p < end; p++) {
		if (*p == '"') {
			if (!(p = end_of_string(p, end)))
				return NULL;
			p--;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (!depth)
				return p; /* the end of the enclosing object */
			if (!--depth)
				return p + 1;
		} else if (*p == ',' && !depth) {
			return p;
		}
	}
	return depth ? NULL : p;
}

int hx_scan_members(const char *text, size_t n, const char *const *keys,
		    size_t k, struct hx_span *out)
{
	const char *p = text, *end = text + n;

	memset(out, 0, k * sizeof(*out));
	while (p < end && (*p == ' ' || *p == '\n'))
		p++;
	if (p == end || *p != '{')
		return -1;
	p++;
	while (p < end && *p == '"') {
		const char *kend = end_of_string(p, end), *v, *vend;

		if (!kend || kend >= end || *kend != ':')
			return -1;
		v = kend + 1;
		if (!(vend = end_of_value(v, end)))
			return -1;
		/* A name may hold any byte, NUL too: its length first. */
		for (size_t i = 0, kn = (size_t)(kend - p - 2); i < k; i++)
			if (keys[i][0] == p[1] &&
			    strnlen(keys[i], kn + 1) == kn &&
			    !memcmp(p + 1, keys[i], kn))
				out[i] =
				    (struct hx_span){v, (size_t)(vend - v)};
		p = vend;
		if (p < end && *p == ',')
			p++;
	}
	return 0;
}

bool hx_span_is(const struct hx_span *s, const char *lit)
{
	size_t n = strlen(lit);

	return s->p && s->n == n + 2 && s->p[0] == '"' &&
	       !memcmp(s->p + 1, lit, n);
}

char *hx_span_str(const struct hx_span *s, char *out, size_t size)
{
	out[0] = '\0';
	if (!s->p || s->n < 2 || s->p[0] != '"')
		return out;
	if (!memchr(s->p, '\\', s->n)) {
		snprintf(out, size, "%.*s", (int)(s->n - 2), s->p + 1);
	} else { /* escapes: rare; jansson reads them */
		json_t *v = json_loadb(s->p, s->n, JSON_DECODE_ANY, NULL);

		snprintf(out, size, "%s",
			 json_is_string(v) ? json_string_value(v) : "");
		json_decref(v);
	}
	return out;
}

long long hx_span_int(const struct hx_span *s, long long def)
{
	char buf[24], *e;
	long long v;

	if (!s->p || !s->n || s->n >= sizeof(buf))
		return def;
	memcpy(buf, s->p, s->n);
	buf[s->n] = '\0';
	v = strtoll(buf, &e, 10);
	return *e || e == buf ? def : v;
}
