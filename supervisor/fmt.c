/* Formatters for audit records; see fmt.h. */
#define _GNU_SOURCE
#include "supervisor/fmt.h"

#include "common/sbuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

char *hx_fmt_time(const struct timespec *ts, char *buf, size_t size)
{
	struct tm tm;
	char base[24];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%06ldZ", base, ts->tv_nsec / 1000);
	return buf;
}

static void append(char *buf, size_t size, size_t *len, const char *s)
{
	int n = snprintf(buf + *len, size - *len, "%s%s", *len ? "|" : "", s);

	if (n > 0)
		*len = (size_t)n + *len >= size ? size - 1 : *len + (size_t)n;
}

/* glibc defines O_LARGEFILE as 0 on 64-bit targets, yet 32-bit style
 * open64 callers pass the kernel's bit; name it anyway. */
#if O_LARGEFILE == 0
#define HX_O_LARGEFILE 0100000
#else
#define HX_O_LARGEFILE O_LARGEFILE
#endif

char *hx_fmt_open_flags(uint32_t flags, char *buf, size_t size)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} bits[] = {
	    {O_CREAT, "O_CREAT"},
	    {O_EXCL, "O_EXCL"},
	    {O_NOCTTY, "O_NOCTTY"},
	    {O_TRUNC, "O_TRUNC"},
	    {O_APPEND, "O_APPEND"},
	    {O_NONBLOCK, "O_NONBLOCK"},
	    {O_DSYNC, "O_DSYNC"},
	    {O_ASYNC, "O_ASYNC"},
	    {O_DIRECT, "O_DIRECT"},
	    {HX_O_LARGEFILE, "O_LARGEFILE"},
	    {O_DIRECTORY, "O_DIRECTORY"},
	    {O_NOFOLLOW, "O_NOFOLLOW"},
	    {O_NOATIME, "O_NOATIME"},
	    {O_CLOEXEC, "O_CLOEXEC"},
	    {O_SYNC & ~O_DSYNC, "O_SYNC"},
	    {O_PATH, "O_PATH"},
	    {O_TMPFILE & ~O_DIRECTORY, "O_TMPFILE"},
	};
	static const char *const acc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR",
					  "O_ACCMODE"};
	size_t len = 0, i;
	uint32_t rest = flags & ~(uint32_t)O_ACCMODE;
	char hex[16];

	if (!size)
		return buf;
	buf[0] = '\0';
	append(buf, size, &len, acc[flags & O_ACCMODE]);
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		if (bits[i].bit && (rest & bits[i].bit) == bits[i].bit) {
			append(buf, size, &len, bits[i].name);
			rest &= ~bits[i].bit;
		}
	}
	if (rest) {
		snprintf(hex, sizeof(hex), "0x%x", rest);
		append(buf, size, &len, hex);
	}
	return buf;
}

char *hx_fmt_mode(uint32_t mode, char *buf, size_t size)
{
	snprintf(buf, size, "0%o", mode);
	return buf;
}

char *hx_fmt_hex(const uint8_t *p, size_t n, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		buf[2 * i] = digits[p[i] >> 4];
		buf[2 * i + 1] = digits[p[i] & 15];
	}
	buf[2 * n] = '\0';
	return buf;
}

size_t hx_utf8_char(const char *str, size_t n, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len, i;
	uint32_t c;

	if (!n)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	*cp = c;
	return len;
}

static size_t utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t c;

	return hx_utf8_char((const char *)s, n, &c);
}

size_t hx_utf8_cut(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	while (max && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

bool hx_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), k;

	for (size_t i = 0; i < n; i += k)
		if (!(k = utf8_seq(p + i, n - i)))
			return false;
	return true;
}

size_t hx_fmt_escape_bytes(const char *s, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), o = 0, k;
	char tmp[4];

	for (size_t i = 0; i < n; i += k) {
		const char *add = (const char *)p + i;
		size_t m;

		k = utf8_seq(p + i, n - i);
		if (!k) {
			tmp[0] = '\\', tmp[1] = 'x', tmp[2] = hex[p[i] >> 4],
			tmp[3] = hex[p[i] & 15];
			add = tmp, m = 4, k = 1;
		} else if (p[i] == '\\') {
			add = "\\\\", m = 2;
		} else {
			m = k;
		}
		if (o + m < size)
			memcpy(buf + o, add, m);
		o += m;
	}
	if (size)
		buf[o < size ? o : size - 1] = '\0';
	return o;
}

size_t hx_fmt_unescape_bytes(const char *s, char *buf, size_t size)
{
	size_t o = 0;
	int hi, lo;

	for (; *s && o + 1 < size; s++) {
		if (s[0] == '\\' && s[1] == '\\') {
			s++;
		} else if (s[0] == '\\' && s[1] == 'x' &&
			   (hi = hx_hex_value(s[2])) >= 0 &&
			   (lo = hx_hex_value(s[3])) >= 0) {
			buf[o++] = (char)(hi << 4 | lo);
			s += 3;
			continue;
		}
		buf[o++] = *s;
	}
	if (size)
		buf[o] = '\0';
	return o;
}

long long hx_fmt_parse_age(const char *s)
{
	char *end;
	long long n;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno || end == s || n < 0 || n > 100000000LL)
		return -1;
	switch (*end) {
	case 's':
		break;
	case 'm':
		n *= 60;
		break;
	case 'h':
		n *= 3600;
		break;
	case 'd':
		n *= 86400;
		break;
	case 'w':
		n *= 7 * 86400;
		break;
	default:
		return -1;
	}
	return end[1] ? -1 : n;
}
