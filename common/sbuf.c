/* Bounded text; see sbuf.h. */
#include "common/sbuf.h"

#include <string.h>

#include "common/path.h"

static const char hex[] = "0123456789abcdef";

void hx_sbuf_put_n(struct hx_sbuf *b, const char *s, size_t n)
{
	if (b->cap == 0 || b->len + 1 >= b->cap)
		return;
	if (n > b->cap - 1 - b->len)
		n = b->cap - 1 - b->len;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void hx_sbuf_put(struct hx_sbuf *b, const char *s)
{
	hx_sbuf_put_n(b, s, strlen(s));
}

void hx_sbuf_put_uint(struct hx_sbuf *b, uint64_t v)
{
	char d[20];

	hx_sbuf_put_n(b, d, hx_utoa(v, d));
}

void hx_sbuf_put_hex(struct hx_sbuf *b, uint64_t v)
{
	char d[16];
	size_t n = 0;

	do
		d[sizeof(d) - ++n] = hex[v & 15];
	while ((v >>= 4));
	hx_sbuf_put_n(b, d + sizeof(d) - n, n);
}

void hx_sbuf_put_escaped(struct hx_sbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n && b->len + 1 < b->cap; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};

		if (c == '\\')
			hx_sbuf_put_n(b, "\\\\", 2);
		else if (c < 0x20 || c >= 0x7f)
			hx_sbuf_put_n(b, e, sizeof(e));
		else
			hx_sbuf_put_n(b, (const char *)&c, 1);
	}
}

int hx_hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hx_hex_decode(const char *digits, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hx_hex_value((unsigned char)digits[2 * i]),
		    lo = hi < 0
			     ? -1
			     : hx_hex_value((unsigned char)digits[2 * i + 1]);

		if (lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
