/* A bounded text buffer that never overflows and stays NUL-terminated:
 * what the notice and the address spelling write into. No allocation,
 * no stdio: safe in the shim. */
#ifndef HX_COMMON_SBUF_H
#define HX_COMMON_SBUF_H

#include <stddef.h>
#include <stdint.h>

struct hx_sbuf {
	char *p;
	size_t cap, len; /* cap 0: nothing is written, not even the NUL */
};

/* Appends n bytes of s (as many as fit). */
void hx_sbuf_put_n(struct hx_sbuf *b, const char *s, size_t n);
void hx_sbuf_put(struct hx_sbuf *b, const char *s);
/* v in decimal, or in lowercase hex. */
void hx_sbuf_put_uint(struct hx_sbuf *b, uint64_t v);
void hx_sbuf_put_hex(struct hx_sbuf *b, uint64_t v);
/* n bytes of s as terminal-safe text: each byte that is not printable
 * ASCII (NUL included) as \xNN, a backslash doubled. A path, an argv or
 * an abstract socket name is the agent's choice, and such text is
 * printed on the user's terminal, where an escape sequence would move
 * the cursor, retitle the window or write over what happened. */
void hx_sbuf_put_escaped(struct hx_sbuf *b, const char *s, size_t n);

/* The value of hex digit c (0-15), -1 when c is none: for reading back
 * what is written in hex. */
int hx_hex_value(int c);
/* The n bytes that 2n hex digits spell into out; -1 (out partly
 * written) at the first byte that is no hex digit, NUL included. */
int hx_hex_decode(const char *digits, uint8_t *out, size_t n);

#endif
