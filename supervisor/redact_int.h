/* What the redaction's files share (redact.h): redact.c (the redactor,
 * the scan, assignments, the user's patterns, the output),
 * redact_shapes.c (the credential formats, URLs, headers, JSON fields),
 * redact_opts.c (the options of tools that take a password) and
 * redact_span.c (the spans found, below them all). */
#ifndef HX_REDACT_INT_H
#define HX_REDACT_INT_H

#include <nettle/hmac.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor/redact.h"

/* Byte classes (hx_redact.cls). */
enum {
	HX_RC_NAME = 1,	  /* [A-Za-z0-9_-]: names, keys, base64url */
	HX_RC_ALNUM = 2,  /* [A-Za-z0-9] */
	HX_RC_UPNUM = 4,  /* [A-Z0-9] */
	HX_RC_START = 8,  /* may begin a known format (redact_shapes.c) */
	HX_RC_BLANK = 16, /* space, tab, newline */
	HX_RC_SEP = 32,	  /* ends a shell word: ; & | < > ( ) ` */
	HX_RC_MARK = 64,  /* '=' and ':', where a value follows a name */
};

/* Which tag wins where two findings overlap: the more specific. */
enum hx_rx_prio {
	HX_RX_NAMED,   /* a value by its name: PASSWORD=, --token, -p */
	HX_RX_CONTEXT, /* by where it is: Authorization:, a URL's password */
	HX_RX_SHAPE,   /* a known format: ghp_..., a JWT */
	HX_RX_USER,    /* the policy's patterns */
};

struct hx_rx_pattern {
	char *name;
	regex_t rx;
	char lit[16]; /* a literal every match holds, or "": a prefilter */
	size_t nlit;
};

struct hx_redact {
	unsigned char cls[256];
	/* the first two bytes of a known format, a bit each: most words
	 * that begin with a format's first letter are ruled out by two */
	uint8_t pairs[256 * 256 / 8];
	struct hmac_sha256_ctx mac; /* keyed once, copied for each hash */
	char **env_names;
	size_t nenv_names;
	struct hx_rx_pattern *pats;
	size_t npats;
};

#define HX_RX_PAIR_BIT(a, b)                                                   \
	((unsigned)(unsigned char)(a) << 8 | (unsigned char)(b))
#define HX_RX_PAIR_SET(r, a, b)                                                \
	((r)->pairs[HX_RX_PAIR_BIT(a, b) >> 3] |=                              \
	 (uint8_t)(1u << (HX_RX_PAIR_BIT(a, b) & 7)))
#define HX_RX_PAIR(r, a, b)                                                    \
	((r)->pairs[HX_RX_PAIR_BIT(a, b) >> 3] &                               \
	 (1u << (HX_RX_PAIR_BIT(a, b) & 7)))

#define HX_RX_SPANS 32 /* held in the scan; more are allocated */
struct hx_rx_span {
	size_t a, b; /* s[a..b) is the secret */
	const char *tag;
	int prio;
	size_t seq; /* the order found: of two equal prios the later tells */
};

/* One string being scanned. */
struct hx_rx_scan {
	const struct hx_redact *r;
	const char *s;
	size_t n;
	/* An argv word: a leading NAME= takes all the rest. */
	bool word;
	/* A shell's text: options are looked for at each word. */
	bool text;
	/* A path: no secret goes past its name ('/'). */
	bool path;
	/* The argv s is v[i] of, for the tools named before it (NULL:
	 * those are looked for in s). */
	const char *const *v;
	size_t i;
	struct hx_rx_span in[HX_RX_SPANS];
	struct hx_rx_span *sp; /* in, or past HX_RX_SPANS a heap array */
	size_t nsp, cap;
	/* No memory for more spans: all of s is redacted. (It was past 32
	 * spans, and a script of 33 PASSWORD= words was one tag in its
	 * exec's record, its commands with it: twenty-fourth attack
	 * review.) */
	bool full;
};

/* ---- redact_span.c ---- */

/* sc for s (whole), no span yet; the rest of it false and NULL. Not an
 * initializer: that would clear the spans, the most of the scan's cost
 * for a clean path. */
void hx_redact_span_init(struct hx_rx_scan *sc, const struct hx_redact *r,
			 const char *s);

/* Records s[a..b) as a secret of type tag (hx_redact_span_settle
 * joins overlaps). */
void hx_redact_span_add(struct hx_rx_scan *sc, size_t a, size_t b,
			const char *tag, int prio);
/* The spans found, settled: sorted, in a shell's text each cut where
 * its command ends, overlaps joined into one span of the higher prio's
 * tag. */
void hx_redact_span_settle(struct hx_rx_scan *sc);
/* Frees what the spans took. */
void hx_redact_span_done(struct hx_rx_scan *sc);
/* hx_redact_span_add of a value s[a..b): inside its quotes when it is
 * one quoted string; nothing when empty. */
void hx_redact_span_value(struct hx_rx_scan *sc, size_t a, size_t b,
			  const char *tag, int prio);
/* The end of the shell word that starts at s[i]: an unquoted blank or
 * one of ;&|<>()` (an unclosed quote: the end of s). */
size_t hx_redact_span_word_end(const char *s, size_t n, size_t i);
/* The type tag of a value named name[0..n) (a variable, an option, a
 * header, a JSON key): "aws-secret-key", "secret", or NULL when the name
 * says nothing of a secret. Case and '-' for '_' do not matter. */
const char *hx_redact_span_name(const struct hx_redact *r, const char *name,
				size_t n);

/* ---- redact_shapes.c ---- */

/* Sets r->pairs from the formats. */
void hx_redact_shapes_init(struct hx_redact *r);
/* A known format starting at s[p] (p at a word's start): recorded, and
 * its end returned; 0 when none starts there. */
size_t hx_redact_shapes_at(struct hx_rx_scan *sc, size_t p);
/* At s[p] == ':': a URL's password, a header's value (Authorization,
 * Cookie, a secret's name), a JSON or Python field of a secret's name. */
void hx_redact_shapes_colon(struct hx_rx_scan *sc, size_t p);

/* ---- redact_opts.c ---- */

/* An option word at s[p] (p at a word's start): a value attached to it
 * (-pSECRET, --user=u:SECRET) or, in a shell's text, the next word
 * (sshpass -p SECRET). */
void hx_redact_opts_word(struct hx_rx_scan *sc, size_t p);
/* Whether the argv word v[i] is an option that takes the next word as
 * its password; records that word (all of sc->s, sc being v[i + 1]). */
bool hx_redact_opts_next(struct hx_rx_scan *sc, const char *const *v, size_t i);

#endif
