/* Pure text helpers of the worker: UTF-8 checks and repair, base64, and
 * the selection of a byte or line range from a file read in chunks. No
 * system calls: unit-tested without the OS. */
#ifndef HX_MW_TEXT_H
#define HX_MW_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when the n bytes at p are valid UTF-8 (no overlong forms, no
 * surrogates, nothing past U+10FFFF); otherwise false, and *bad (when
 * not NULL) set to the offset of the first byte of the bad sequence. */
bool hx_mw_text_utf8_valid(const char *p, size_t n, size_t *bad);

/* The largest m <= n such that p[0..m) does not end inside a multibyte
 * sequence that would be complete past n: where to cut valid text. */
size_t hx_mw_text_utf8_cut(const char *p, size_t n);

/* A malloc'd NUL-terminated copy of the n bytes at p in which each byte
 * that is not part of valid UTF-8 is U+FFFD; *outn its length. Returns
 * 1 when something was replaced, 0 when not, -ENOMEM. */
int hx_mw_text_lossy(const char *p, size_t n, char **out, size_t *outn);

/* Base64 (RFC 4648, padded) of n bytes: malloc'd, NUL-terminated, its
 * length in *outn; NULL when out of memory. */
char *hx_mw_text_b64_encode(const void *p, size_t n, size_t *outn);

/* The bytes that base64 text s (n bytes) spells, malloc'd into *out
 * (*outn bytes): 0, -EINVAL on bad text, -ENOMEM. */
int hx_mw_text_b64_decode(const char *s, size_t n, char **out, size_t *outn);

/* A range of a file, chosen as its bytes stream past: bytes [a, b) or
 * lines a..b (1-based, inclusive; a line is its bytes up to and with
 * its '\n'). At most max bytes are kept; the caller sets the first five
 * members (the rest zero) and feeds every byte of the file in order. */
struct hx_mw_text_sel {
	bool lines;
	uint64_t a, b; /* b = UINT64_MAX: to the end */
	size_t max;
	char *buf; /* the kept bytes (malloc'd, the caller frees) */
	size_t len;
	bool over;	/* a selected byte did not fit */
	uint64_t first; /* offset of the first kept byte */
	bool any;	/* some byte was selected */
	uint64_t pos;	/* bytes seen */
	uint64_t line;	/* 0-based line of the next byte */
	char last;	/* the last byte seen */
	size_t cap;
};

/* Feeds n more bytes of the file: 0 or -ENOMEM. */
int hx_mw_text_sel_feed(struct hx_mw_text_sel *s, const char *p, size_t n);

/* The file's line count once every byte was fed (a last line without
 * '\n' counts). */
uint64_t hx_mw_text_sel_total_lines(const struct hx_mw_text_sel *s);

#endif
