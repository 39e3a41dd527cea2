/* The credential formats the redaction knows by their look, and the
 * places a secret sits in by convention (a URL's password, an
 * Authorization header, a JSON field); see redact_int.h. Each format is
 * its documented prefix and body, long enough that a file name such as
 * /usr/lib/sk-foo or a git sha is no match. */
#define _GNU_SOURCE
#include "supervisor/redact_int.h"

#include <string.h>
#include <strings.h>

enum body { B_NAME, B_ALNUM, B_UPNUM };
enum {
	F_EXACT = 1, /* the body is min long, not a longer word */
	F_UL = 2,    /* the body mixes upper and lower case */
	F_ULD = 4,   /* ... and digits: sk- alone is a common prefix */
};

static const struct shape {
	const char *prefix;
	unsigned char len, body, flags;
	unsigned short min;
	const char *tag;
} shapes[] = {
#define S(prefix, tag, body, flags, min)                                       \
	{                                                                      \
		prefix, sizeof(prefix) - 1, body, flags, min, tag              \
	}
    S("sk-ant-", "anthropic-key", B_NAME, 0, 32),
    S("sk-proj-", "openai-key", B_NAME, 0, 32),
    S("sk-svcacct-", "openai-key", B_NAME, 0, 32),
    S("sk-admin-", "openai-key", B_NAME, 0, 32),
    S("sk-", "openai-key", B_ALNUM, F_ULD, 32),
    S("sk_live_", "stripe-key", B_ALNUM, 0, 16),
    S("sk_test_", "stripe-key", B_ALNUM, 0, 16),
    S("rk_live_", "stripe-key", B_ALNUM, 0, 16),
    S("rk_test_", "stripe-key", B_ALNUM, 0, 16),
    S("ghp_", "github-token", B_ALNUM, 0, 30),
    S("gho_", "github-token", B_ALNUM, 0, 30),
    S("ghu_", "github-token", B_ALNUM, 0, 30),
    S("ghs_", "github-token", B_ALNUM, 0, 30),
    S("ghr_", "github-token", B_ALNUM, 0, 30),
    S("github_pat_", "github-token", B_NAME, 0, 30),
    S("glpat-", "gitlab-token", B_NAME, 0, 20),
    S("AKIA", "aws-access-key-id", B_UPNUM, F_EXACT, 16),
    S("ASIA", "aws-access-key-id", B_UPNUM, F_EXACT, 16),
    S("ABIA", "aws-access-key-id", B_UPNUM, F_EXACT, 16),
    S("ACCA", "aws-access-key-id", B_UPNUM, F_EXACT, 16),
    S("AIza", "google-api-key", B_NAME, F_EXACT, 35),
    S("xoxa-", "slack-token", B_NAME, 0, 10),
    S("xoxb-", "slack-token", B_NAME, 0, 10),
    S("xoxp-", "slack-token", B_NAME, 0, 10),
    S("xoxr-", "slack-token", B_NAME, 0, 10),
    S("xoxs-", "slack-token", B_NAME, 0, 10),
    S("xapp-", "slack-token", B_NAME, 0, 10),
    S("npm_", "npm-token", B_ALNUM, 0, 36),
    S("pypi-", "pypi-token", B_NAME, 0, 50),
    S("hf_", "huggingface-token", B_ALNUM, F_UL, 30),
#undef S
};

static size_t run_of(const struct hx_rx_scan *sc, size_t i, unsigned cls)
{
	size_t k = i;

	while (k < sc->n && (sc->r->cls[(unsigned char)sc->s[k]] & cls))
		k++;
	return k - i;
}

static bool mixed(const char *s, size_t n, unsigned flags)
{
	bool up = false, low = false, dig = false;

	for (size_t i = 0; i < n; i++) {
		up |= s[i] >= 'A' && s[i] <= 'Z';
		low |= s[i] >= 'a' && s[i] <= 'z';
		dig |= s[i] >= '0' && s[i] <= '9';
	}
	return up && low && (dig || !(flags & F_ULD));
}

static size_t by_prefix(struct hx_rx_scan *sc, size_t p)
{
	static const unsigned cls[] = {HX_RC_NAME, HX_RC_ALNUM, HX_RC_UPNUM};
	const char *s = sc->s + p;

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct shape *f = &shapes[i];
		size_t pl = f->len, bl;

		if (f->prefix[0] != s[0] || f->prefix[1] != s[1] ||
		    sc->n - p < pl + f->min || memcmp(s, f->prefix, pl))
			continue;
		bl = run_of(sc, p + pl, cls[f->body]);
		if (bl < f->min ||
		    ((f->flags & F_EXACT) &&
		     (bl != f->min ||
		      (sc->r->cls[(unsigned char)s[pl + bl]] & HX_RC_NAME))) ||
		    ((f->flags & (F_UL | F_ULD)) &&
		     !mixed(s + pl, bl, f->flags)))
			return 0; /* the longer prefixes came first */
		hx_redact_span_add(sc, p, p + pl + bl, f->tag, HX_RX_SHAPE);
		return p + pl + bl;
	}
	return 0;
}

/* header.payload.signature, the first two base64url JSON ("eyJ"). */
static size_t jwt(struct hx_rx_scan *sc, size_t p)
{
	size_t k = p, seg;

	for (int part = 0; part < 3; part++) {
		if (part < 2 && strncmp(sc->s + k, "eyJ", 3))
			return 0;
		seg = run_of(sc, k, HX_RC_NAME);
		if (part < 2 && (seg < 10 || sc->s[k + seg] != '.'))
			return 0;
		k += seg + (part < 2);
	}
	hx_redact_span_add(sc, p, k, "jwt", HX_RX_SHAPE);
	return k;
}

/* -----BEGIN ... PRIVATE KEY----- to its END line, or, with none (an
 * argv cut short), to the first byte no key's body or header holds: to
 * the string's end, it hid the commands of a shell's text after an
 * unclosed BEGIN line from their record (twenty-fourth attack review). */
static size_t pem(struct hx_rx_scan *sc, size_t p)
{
	const char *s = sc->s, *head = s + p + 11, *eol, *end;
	size_t left = sc->n - p;

	if (left < 27 || memcmp(s + p, "-----BEGIN ", 11))
		return 0;
	eol = memmem(head, sc->n - (size_t)(head - s), "-----", 5);
	if (!eol || eol - head > 64 || eol - head < 11 ||
	    memcmp(eol - 11, "PRIVATE KEY", 11))
		return 0;
	end = memmem(eol + 5, sc->n - (size_t)(eol + 5 - s), "-----END ", 9);
	if (end)
		end =
		    memmem(end + 9, sc->n - (size_t)(end + 9 - s), "-----", 5);
	if (end)
		left = (size_t)(end + 5 - s);
	else
		for (left = (size_t)(eol + 5 - s);
		     left < sc->n &&
		     ((sc->r->cls[(unsigned char)s[left]] & HX_RC_ALNUM) ||
		      strchr("+/=:,- \t\r\n", s[left]));
		     left++)
			;
	hx_redact_span_add(sc, p, left, "private-key", HX_RX_SHAPE);
	return left;
}

void hx_redact_shapes_init(struct hx_redact *r)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		HX_RX_PAIR_SET(r, shapes[i].prefix[0], shapes[i].prefix[1]);
	HX_RX_PAIR_SET(r, 'e', 'y'); /* a JWT */
	HX_RX_PAIR_SET(r, '-', '-'); /* -----BEGIN */
}

size_t hx_redact_shapes_at(struct hx_rx_scan *sc, size_t p)
{
	switch (sc->s[p]) {
	case 'e':
		return jwt(sc, p);
	case '-':
		return pem(sc, p);
	default:
		return by_prefix(sc, p);
	}
}

/* scheme://user:PASSWORD@host: the user and host kept. */
static void url(struct hx_rx_scan *sc, size_t p)
{
	const char *s = sc->s;
	size_t h = p + 3, e = h, at = 0, colon = 0;

	if (!p || !(sc->r->cls[(unsigned char)s[p - 1]] & HX_RC_ALNUM))
		return;
	for (; e < sc->n && !strchr("/?#'\" \t\n<>`", s[e]); e++)
		if (s[e] == '@')
			at = e; /* the last: an unencoded @ in the password */
	for (size_t k = h; k < at && !colon; k++)
		if (s[k] == ':')
			colon = k;
	if (colon)
		hx_redact_span_add(sc, colon + 1, at, "url-password",
				   HX_RX_CONTEXT);
}

/* The header's value, to the quote its name opened with, else to the
 * line's end; an Authorization's scheme (Bearer, Basic...) kept. */
static void header(struct hx_rx_scan *sc, size_t start, size_t p,
		   const char *tag)
{
	const char *s = sc->s;
	char q = start ? s[start - 1] : 0;
	size_t v = p + 1, e, w;

	if (q != '\'' && q != '"')
		q = 0;
	while (v < sc->n && (s[v] == ' ' || s[v] == '\t'))
		v++;
	for (e = v; e < sc->n && s[e] != '\n' && s[e] != '\r' && s[e] != q; e++)
		;
	if (!strcmp(tag, "authorization")) {
		w = v + run_of(sc, v, HX_RC_NAME);
		if (w > v && w < e && s[w] == ' ' && w + 1 < e) {
			if (w - v == 6 && !strncasecmp(s + v, "bearer", 6))
				tag = "bearer";
			else if (w - v == 5 && !strncasecmp(s + v, "basic", 5))
				tag = "basic";
			for (v = w; v < e && s[v] == ' '; v++)
				;
		}
	}
	hx_redact_span_add(sc, v, e, tag, HX_RX_CONTEXT);
}

/* "password": "x", 'token': 'x' (JSON, Python): the string's inside,
 * or a bare value (a number) to the next , } ] or blank. */
static void field(struct hx_rx_scan *sc, size_t p)
{
	const char *s = sc->s, *tag;
	char q = s[p - 1];
	size_t k = p - 1, v = p + 1, e;

	while (k && (sc->r->cls[(unsigned char)s[k - 1]] & HX_RC_NAME))
		k--;
	if (!k || s[k - 1] != q || k == p - 1 ||
	    !(tag = hx_redact_span_name(sc->r, s + k, p - 1 - k)))
		return;
	while (v < sc->n && (s[v] == ' ' || s[v] == '\t'))
		v++;
	if (v < sc->n && (s[v] == '"' || s[v] == '\'')) {
		for (e = v + 1; e < sc->n && s[e] != s[v]; e++)
			if (s[e] == '\\' && e + 1 < sc->n)
				e++;
		hx_redact_span_add(sc, v + 1, e, tag, HX_RX_NAMED);
		return;
	}
	for (e = v; e < sc->n && !strchr(",}] \t\n", s[e]); e++)
		;
	hx_redact_span_add(sc, v, e, tag, HX_RX_NAMED);
}

void hx_redact_shapes_colon(struct hx_rx_scan *sc, size_t p)
{
	const char *s = sc->s, *tag;
	size_t k = p;

	if (!p)
		return;
	if (p + 2 < sc->n && s[p + 1] == '/' && s[p + 2] == '/') {
		url(sc, p);
		return;
	}
	if (s[p - 1] == '"' || s[p - 1] == '\'') {
		field(sc, p);
		return;
	}
	while (k && (sc->r->cls[(unsigned char)s[k - 1]] & HX_RC_NAME))
		k--;
	if (k == p)
		return;
	if (p - k >= 13 && !strncasecmp(s + p - 13, "authorization", 13))
		tag = "authorization"; /* Proxy-Authorization too */
	else if (p - k == 6 && !strncasecmp(s + k, "cookie", 6))
		tag = "cookie";
	else if (p + 1 < sc->n && (s[p + 1] == ' ' || s[p + 1] == '\t'))
		tag = hx_redact_span_name(sc->r, s + k, p - k);
	else
		return;
	if (tag)
		header(sc, k, p, tag);
}
