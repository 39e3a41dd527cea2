/* The agent's questions' pure helpers; see askuser.h. */
#define _GNU_SOURCE
#include "supervisor/askuser.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/sbuf.h"
#include "supervisor/fmt.h"

static char *opt_dup(const char *s, bool *bad)
{
	char *d = s ? strdup(s) : NULL;

	*bad |= s && !d;
	return d;
}

int hx_askuser_dup(const struct hx_ask_question *in,
		   struct hx_ask_question *out)
{
	char **v = NULL;
	bool bad = false;

	memset(out, 0, sizeof(*out));
	if (in->nchoices && !(v = calloc(in->nchoices, sizeof(*v))))
		return -ENOMEM;
	out->choices = (const char *const *)v;
	out->nchoices = in->nchoices;
	for (size_t i = 0; i < in->nchoices; i++)
		v[i] = opt_dup(in->choices[i], &bad);
	out->text = opt_dup(in->text, &bad);
	out->call_id = opt_dup(in->call_id, &bad);
	if (bad) {
		hx_askuser_free(out);
		return -ENOMEM;
	}
	return 0;
}

void hx_askuser_free(struct hx_ask_question *q)
{
	for (size_t i = 0; q->choices && i < q->nchoices; i++)
		free((char *)q->choices[i]);
	free((char **)q->choices);
	free((char *)q->text);
	free((char *)q->call_id);
	memset(q, 0, sizeof(*q));
}

static bool is_control(uint32_t c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0);
}

/* U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069: text after them
 * is shown in another order than it is read ("Trojan Source"). */
static bool is_bidi(uint32_t c)
{
	return c == 0x61c || c == 0x200e || c == 0x200f ||
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

int hx_askuser_check(const struct hx_ask_question *q, const char *answer,
		     char *why, size_t wlen)
{
	struct hx_sbuf b = {why, wlen, 0};
	size_t n = strlen(answer), k;
	uint32_t c;

	if (wlen)
		why[0] = '\0';
	if (!n) {
		hx_sbuf_put(&b, "an empty answer");
		return -EINVAL;
	}
	if (n > HX_ASK_ANSWER_MAX) {
		hx_sbuf_put(&b, "an answer of more than ");
		hx_sbuf_put_uint(&b, HX_ASK_ANSWER_MAX);
		hx_sbuf_put(&b, " bytes");
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i += k) {
		if (!(k = hx_utf8_char(answer + i, n - i, &c))) {
			hx_sbuf_put(&b, "an answer that is not UTF-8");
			return -EINVAL;
		}
		if (is_control(c)) {
			hx_sbuf_put(&b, "a control character in the answer");
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < q->nchoices; i++)
		if (!strcmp(q->choices[i], answer))
			return 0;
	if (!q->nchoices)
		return 0;
	hx_sbuf_put(&b, "not one of the question's choices:");
	for (size_t i = 0; i < q->nchoices; i++) {
		hx_sbuf_put(&b, i ? ", " : " ");
		hx_sbuf_put_uint(&b, i + 1);
		hx_sbuf_put(&b, ") ");
		hx_askuser_put_text(&b, q->choices[i], NULL);
	}
	return -EINVAL;
}

int hx_askuser_choice(const struct hx_ask_question *q, const char *typed)
{
	unsigned long n = 0;
	size_t i;

	for (i = 0; i < q->nchoices; i++)
		if (!strcmp(q->choices[i], typed))
			return (int)i;
	for (i = 0; typed[i] >= '0' && typed[i] <= '9' && i < 4; i++)
		n = n * 10 + (unsigned long)(typed[i] - '0');
	if (!i || typed[i] || typed[0] == '0' || n > q->nchoices)
		return -1;
	return (int)n - 1;
}

bool hx_askuser_digit_picks(const struct hx_ask_question *q)
{
	if (!q->nchoices || q->nchoices > 9)
		return false;
	for (size_t i = 0; i < q->nchoices; i++)
		if (q->choices[i][0] >= '0' && q->choices[i][0] <= '9')
			return false;
	return true;
}

void hx_askuser_put_text(struct hx_sbuf *b, const char *s, const char *nl)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(s), k;
	uint32_t c;

	for (size_t i = 0; i < n; i += k) {
		k = hx_utf8_char(s + i, n - i, &c);
		if (!k) {
			char e[4] = {'\\', 'x', hex[(unsigned char)s[i] >> 4],
				     hex[(unsigned char)s[i] & 15]};

			hx_sbuf_put_n(b, e, sizeof(e));
			k = 1;
		} else if (c == '\n' && nl) {
			hx_sbuf_put(b, nl);
		} else if (c == '\\') {
			hx_sbuf_put(b, "\\\\");
		} else if (c < 0x80 && is_control(c)) {
			char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};

			hx_sbuf_put_n(b, e, sizeof(e));
		} else if (is_control(c) || is_bidi(c)) {
			char e[6] = {'\\',
				     'u',
				     hex[c >> 12],
				     hex[(c >> 8) & 15],
				     hex[(c >> 4) & 15],
				     hex[c & 15]};

			hx_sbuf_put_n(b, e, sizeof(e));
		} else {
			hx_sbuf_put_n(b, s + i, k);
		}
	}
}
