/* An audit log line without its stack; see logline.h. */
#define _GNU_SOURCE
#include "tools/logline.h"

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

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
