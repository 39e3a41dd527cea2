/* An audit log line without its stack; see logline.h. */
#define _GNU_SOURCE
#include "supervisor/export/logline.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/export/logscan.h"

/* The end of the JSON array that starts at p ('['), strings skipped as
 * JSON writes them, or NULL. */
static char *array_end(char *p, const char *end)
{
	bool in_str = false;

	for (; p < end; p++) {
		if (in_str) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				in_str = false;
		} else if (*p == '"') {
			in_str = true;
		} else if (*p == ']') {
			return p;
		}
	}
	return NULL;
}

json_t *hx_logline_parse(char *line, size_t n)
{
	static const char key[] = ",\"stack\":[";
	char *s = memmem(line, n, key, sizeof(key) - 1), *e;

	/* Cut to ",\"stack\":[]": a key the agent's text cannot forge here,
	 * since the record's own strings are escaped ('"' is \\"). */
	if (s && (e = array_end(s + sizeof(key) - 1, line + n))) {
		memmove(s + sizeof(key) - 1, e, (size_t)(line + n - e));
		n -= (size_t)(e - (s + sizeof(key) - 1));
	}
	return json_loadb(line, n, 0, NULL);
}

/* The end of the JSON value that starts at p: past the closing quote of
 * a string, or the matching brace of an object; NULL when it does not
 * end before end. */
static const char *value_end(const char *p, const char *end)
{
	int depth = 0;
	bool in_str = false;

	for (const char *q = p; q < end; q++) {
		if (in_str) {
			if (*q == '\\') {
				q++;
			} else if (*q == '"') {
				in_str = false;
				if (depth == 0)
					return q + 1;
			}
		} else if (*q == '"') {
			in_str = true;
		} else if (*q == '{' || *q == '[') {
			depth++;
		} else if (*q == '}' || *q == ']') {
			if (depth == 0) /* a scalar, last of its object */
				return q;
			if (--depth == 0)
				return q + 1;
		} else if (*q == ',' && depth == 0) {
			return q;
		}
	}
	return NULL;
}

ssize_t hx_logline_key(const char *line, size_t n, char *key, size_t size)
{
	static const char *const keys[] = {
	    ",\"event\":", ",\"op\":", ",\"args\":", ",\"verdict\":",
	    ",\"rule\":", ",\"grant\":",
	    /* an exec's relative paths (rm -rf build) are its cwd's */
	    ",\"cwd\":"};
	const char *end = line + n;
	size_t len = 0;

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		size_t kl = strlen(keys[i]);
		const char *k = memmem(line, n, keys[i], kl), *v, *ve;

		/* Every record has an event: without it, this is not the
		 * log's own compact form, and nothing is keyed. Others may
		 * be absent ("grant" often is). */
		if (!k && i == 0)
			return -1;
		v = k ? k + kl : NULL;
		ve = v ? value_end(v, end) : NULL;
		if (k && !ve)
			return -1;
		if (len + (ve ? (size_t)(ve - v) : 0) + 2 > size)
			return -1;
		if (ve) {
			memcpy(key + len, v, (size_t)(ve - v));
			len += (size_t)(ve - v);
		}
		key[len++] = '\x1f';
	}
	key[len] = '\0';
	return (ssize_t)len;
}

bool hx_logline_is_session(const char *line, size_t n, const char *id)
{
	static const char *const key[] = {"session"};
	struct hx_span s;

	/* the id's bytes first: a line without them costs one memmem */
	return memmem(line, n, id, strlen(id)) &&
	       !hx_scan_members(line, n, key, 1, &s) && hx_span_is(&s, id);
}

int hx_logline_each(const char *path,
		    void (*fn)(void *arg, char *line, size_t n), void *arg)
{
	return hx_logline_each_of(path, NULL, fn, arg);
}

int hx_logline_each_of(const char *path, const char *only,
		       void (*fn)(void *arg, char *line, size_t n), void *arg)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int r = 0;

	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0)
		if (!only || hx_logline_is_session(line, (size_t)n, only))
			fn(arg, line, (size_t)n);
	if (ferror(f))
		r = -EIO;
	free(line);
	fclose(f);
	return r;
}
