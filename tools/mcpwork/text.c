/* Pure text helpers; see text.h. */
#include "tools/mcpwork/text.h"
#include "tools/mcpwork/grow.h"

#include <errno.h>
#include <nettle/base64.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 when the
 * bytes there are not one (RFC 3629's table). */
static size_t seq_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f; /* no surrogates */
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f; /* nothing past U+10FFFF */
	if (n < len)
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

bool hx_mw_text_utf8_valid(const char *p, size_t n, size_t *bad)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i = 0, l;

	while (i < n) {
		if (u[i] < 0x80) {
			i++;
			continue;
		}
		l = seq_len(u + i, n - i);
		if (!l) {
			if (bad)
				*bad = i;
			return false;
		}
		i += l;
	}
	return true;
}

size_t hx_mw_text_utf8_cut(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i, back;

	/* A lead byte within the last three whose sequence runs past n. */
	for (back = 1; back <= 4 && back <= n; back++) {
		i = n - back;
		if ((u[i] & 0xc0) == 0x80)
			continue;
		if (u[i] >= 0xc2 && u[i] <= 0xf4) {
			size_t need = u[i] >= 0xf0 ? 4 : u[i] >= 0xe0 ? 3 : 2;

			if (need > back)
				return i;
		}
		break;
	}
	return n;
}

int hx_mw_text_lossy(const char *p, size_t n, char **out, size_t *outn)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i = 0, o = 0, l;
	int lossy = 0;
	char *b;

	/* Each bad byte grows to 3 bytes at most. */
	if (n > (SIZE_MAX - 1) / 3)
		return -ENOMEM;
	b = malloc(n * 3 + 1);
	if (!b)
		return -ENOMEM;
	while (i < n) {
		l = u[i] < 0x80 ? 1 : seq_len(u + i, n - i);
		if (l) {
			memcpy(b + o, p + i, l);
			o += l;
			i += l;
			continue;
		}
		memcpy(b + o, "\xef\xbf\xbd", 3);
		o += 3;
		i++;
		lossy = 1;
	}
	b[o] = 0;
	*out = b;
	*outn = o;
	return lossy;
}

char *hx_mw_text_b64_encode(const void *p, size_t n, size_t *outn)
{
	struct base64_encode_ctx c;
	size_t len, done;
	char *b;

	if (n > (SIZE_MAX / 4) * 3 - 8)
		return NULL;
	b = malloc(BASE64_ENCODE_LENGTH(n) + BASE64_ENCODE_FINAL_LENGTH + 1);
	if (!b)
		return NULL;
	base64_encode_init(&c);
	done = base64_encode_update(&c, b, n, p);
	done += base64_encode_final(&c, b + done);
	len = done;
	b[len] = 0;
	*outn = len;
	return b;
}

int hx_mw_text_b64_decode(const char *s, size_t n, char **out, size_t *outn)
{
	struct base64_decode_ctx c;
	size_t len = BASE64_DECODE_LENGTH(n);
	char *b = malloc(len + 1);

	if (!b)
		return -ENOMEM;
	base64_decode_init(&c);
	/* Nettle skips white space, as RFC 2045 readers do. */
	if (!base64_decode_update(&c, &len, (uint8_t *)b, n, s) ||
	    !base64_decode_final(&c)) {
		free(b);
		return -EINVAL;
	}
	*out = b;
	*outn = len;
	return 0;
}

static int keep(struct hx_mw_text_sel *s, const char *p, size_t n, uint64_t at)
{
	size_t room, take;

	if (!n)
		return 0;
	if (!s->any) {
		s->any = true;
		s->first = at;
	}
	room = s->max - s->len;
	take = n < room ? n : room;
	if (take < n)
		s->over = true;
	if (!take)
		return 0;
	if (hx_mw_grow(&s->buf, &s->cap, s->len + take, s->max))
		return -ENOMEM;
	memcpy(s->buf + s->len, p, take);
	s->len += take;
	return 0;
}

static int feed_lines(struct hx_mw_text_sel *s, const char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		const char *nl = memchr(p + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - p) + 1 : n;
		uint64_t lno = s->line + 1;

		if (lno >= s->a && lno <= s->b &&
		    keep(s, p + i, end - i, s->pos + i) < 0)
			return -ENOMEM;
		if (nl)
			s->line++;
		i = end;
	}
	return 0;
}

int hx_mw_text_sel_feed(struct hx_mw_text_sel *s, const char *p, size_t n)
{
	int rc = 0;

	if (!n)
		return 0;
	if (s->lines) {
		rc = feed_lines(s, p, n);
	} else {
		uint64_t lo = s->pos > s->a ? s->pos : s->a;
		uint64_t end = s->pos + n;
		uint64_t hi = end < s->b ? end : s->b;
		size_t nl;
		const char *q;

		if (lo < hi)
			rc = keep(s, p + (lo - s->pos), hi - lo, lo);
		for (q = p, nl = n; (q = memchr(q, '\n', nl)); nl = n - (q - p))
			s->line++, q++;
	}
	s->pos += n;
	s->last = p[n - 1];
	return rc;
}

uint64_t hx_mw_text_sel_total_lines(const struct hx_mw_text_sel *s)
{
	return s->line + (s->pos && s->last != '\n');
}
