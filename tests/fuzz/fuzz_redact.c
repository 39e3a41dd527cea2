/* libFuzzer target over the redaction of a record's strings
 * (supervisor/redact.h), agent text all of it: the input, cut at NUL
 * bytes into an argv, is redacted as a text and word by word; nothing
 * may crash, and what is left around the tags is the input's bytes in
 * their order (a redaction replaces, never garbles). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define WORDS 16

/* The length of the tag at s, or 0: «redacted:TYPE:HASH». */
static size_t tag_len(const char *s)
{
	size_t ol = strlen(HX_REDACT_OPEN), k;

	if (strncmp(s, HX_REDACT_OPEN, ol))
		return 0;
	k = ol + strspn(s + ol, "abcdefghijklmnopqrstuvwxyz0123456789-");
	if (k == ol || s[k] != ':' ||
	    strspn(s + k + 1, "0123456789abcdef") != HX_REDACT_HASH_LEN)
		return 0;
	k += 1 + HX_REDACT_HASH_LEN;
	return strncmp(s + k, HX_REDACT_CLOSE, strlen(HX_REDACT_CLOSE))
		   ? 0
		   : k + strlen(HX_REDACT_CLOSE);
}

/* out without its tags is a subsequence of in. */
static void check(const char *in, const char *out)
{
	while (*out) {
		size_t t = tag_len(out);

		if (t) {
			out += t;
			continue;
		}
		while (*in && *in != *out)
			in++;
		if (!*in)
			abort();
		in++;
		out++;
	}
}

static void one(const struct hx_redact *r, const char *const *v, size_t i,
		bool argv)
{
	char *out = NULL;
	int ret = argv ? hx_redact_argv(r, v, i, &out)
		       : hx_redact_text(r, v[i], &out);

	if (ret < 0 || (ret == 0) != (out == NULL))
		abort();
	if (out)
		check(v[i], out);
	free(out);
	out = NULL;
	/* a path: no tag takes a '/' */
	ret = hx_redact_path(r, v[i], &out);
	if (ret < 0 || (ret == 0) != (out == NULL))
		abort();
	if (out) {
		size_t a = 0, b = 0;

		check(v[i], out);
		for (const char *p = v[i]; *p; p++)
			a += *p == '/';
		for (const char *p = out; *p; p++)
			b += *p == '/';
		if (a != b)
			abort();
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hx_redact *r;
	static const uint8_t key[HX_REDACT_KEY_LEN];
	const char *v[WORDS];
	char *buf = malloc(size + 1);
	size_t n = 0;

	if (!buf)
		return 0;
	if (!r && hx_redact_new(NULL, key, &r))
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (size_t i = 0; i <= size && n < WORDS; i += strlen(buf + i) + 1)
		v[n++] = buf + i;
	for (size_t i = 0; i < n; i++) {
		one(r, v, i, false);
		one(r, v, i, true);
	}
	free(buf);
	return 0;
}
