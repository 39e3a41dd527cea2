/* Pure formatters for audit records: time stamps, open flags, modes and
 * bytes as text (socket addresses: common/sockaddr.h). No allocation; each
 * writes into a caller buffer and returns it (always NUL-terminated, truncated
 * if too small). */
#ifndef HX_FMT_H
#define HX_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define HX_FMT_TIME_LEN 32

/* RFC 3339 UTC with microseconds: "2026-12-01T07:40:00.123456Z". */
char *hx_fmt_time(const struct timespec *ts, char *buf, size_t size);
/* open(2) flags as "O_WRONLY|O_CREAT|O_TRUNC"; unknown bits as hex. */
char *hx_fmt_open_flags(uint32_t flags, char *buf, size_t size);
/* A mode as an octal string, "0644". */
char *hx_fmt_mode(uint32_t mode, char *buf, size_t size);
/* Lowercase hex of n bytes into buf (2n+1 bytes). */
char *hx_fmt_hex(const uint8_t *p, size_t n, char *buf);
/* Whether s is UTF-8 that a JSON string can hold (no overlong forms,
 * surrogates or code points above U+10FFFF). */
bool hx_utf8_valid(const char *s);
/* The length of the valid UTF-8 character at s (n bytes left; no
 * overlong form, surrogate or code point above U+10FFFF) and, into cp,
 * its code point; 0 when there is none. */
size_t hx_utf8_char(const char *s, size_t n, uint32_t *cp);
/* How much of the n bytes at s to keep to hold at most max, cut where a
 * character starts (never inside one). */
size_t hx_utf8_cut(const char *s, size_t n, size_t max);
/* s with each byte that is not part of valid UTF-8 as "\xNN" and each
 * backslash doubled, so that the bytes can be read back exactly (an
 * audit record lists the fields it escaped this way). Returns the
 * length it needs, NUL excluded; writes at most size bytes. */
size_t hx_fmt_escape_bytes(const char *s, char *buf, size_t size);
/* The bytes hx_fmt_escape_bytes wrote s for, into buf (NUL-terminated,
 * cut at size): text that crossed a JSON channel escaped is recorded as
 * the bytes it stands for. Returns the length written. */
size_t hx_fmt_unescape_bytes(const char *s, char *buf, size_t size);

/* An age as people write it: N followed by s, m, h, d or w ("30m",
 * "12h", "7d"). Returns seconds, or -1 when malformed. */
long long hx_fmt_parse_age(const char *s);

#endif
