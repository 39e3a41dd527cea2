/* Members of a record read from its line's bytes, without building it:
 * what harness-audit summary and tree need of each of a million records
 * (a few fields) costs a pass over the line instead of a parse into
 * objects, which is most of their time. The line is the log's compact
 * JSON; a value is its raw text (a string with its quotes). */
#ifndef HX_LOGSCAN_H
#define HX_LOGSCAN_H

#include <stdbool.h>
#include <stddef.h>

struct hx_span {
	const char *p; /* NULL: absent */
	size_t n;
};

/* The top-level members of the object in text (n bytes) named keys[0..k)
 * into out[0..k). Returns 0, or -1 when text is not an object. */
int hx_scan_members(const char *text, size_t n, const char *const *keys,
		    size_t k, struct hx_span *out);

/* Whether s is the string lit (a string with no escape in it). */
bool hx_span_is(const struct hx_span *s, const char *lit);
/* s as a string, unescaped, into out (cut at size); "" when it is no
 * string. Returns out. */
char *hx_span_str(const struct hx_span *s, char *out, size_t size);
/* s as an integer; def when it is none. */
long long hx_span_int(const struct hx_span *s, long long def);

#endif
