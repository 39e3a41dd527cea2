/* The redactor (redact.h): one scan of a string's bytes for what the
 * other files recognize (redact_int.h), NAME=value assignments, the
 * policy's patterns, then the copy with each secret as its tag. */
#define _GNU_SOURCE
#include "supervisor/redact_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "supervisor/fmt.h"

static void classes(unsigned char *cls)
{
	for (int c = 0; c < 256; c++) {
		bool up = c >= 'A' && c <= 'Z', dig = c >= '0' && c <= '9';
		bool al = up || dig || (c >= 'a' && c <= 'z');

		cls[c] =
		    (unsigned char)((al || c == '_' || c == '-' ? HX_RC_NAME
								: 0) |
				    (al ? HX_RC_ALNUM : 0) |
				    (up || dig ? HX_RC_UPNUM : 0));
	}
	/* the first bytes of the formats of redact_shapes.c */
	for (const char *p = "srgAxnphe-"; *p; p++)
		cls[(unsigned char)*p] |= HX_RC_START;
	cls['='] = cls[':'] = HX_RC_MARK;
	for (const char *p = " \t\n"; *p; p++)
		cls[(unsigned char)*p] |= HX_RC_BLANK;
	for (const char *p = ";&|<>()`"; *p; p++)
		cls[(unsigned char)*p] |= HX_RC_SEP;
}

/* A literal every match of re holds (its leading one), for memmem to
 * rule most strings out before regexec; none with an alternation. */
static void literal(struct hx_rx_pattern *pt, const char *re)
{
	size_t n = 0;

	if (strchr(re, '|'))
		return;
	if (*re == '^')
		re++;
	while (re[n] && !strchr(".[]()*+?{}|^$\\", re[n]) &&
	       n < sizeof(pt->lit) - 1)
		n++;
	if (n && re[n] && strchr("*?{", re[n]))
		n--; /* the last may be repeated 0 times */
	if (n < 2)
		return;
	memcpy(pt->lit, re, n);
	pt->lit[n] = '\0';
	pt->nlit = n;
}

static int copy_conf(struct hx_redact *r, const struct hx_redact_conf *c)
{
	if (c->nenv_names &&
	    !(r->env_names = calloc(c->nenv_names, sizeof(*r->env_names))))
		return -ENOMEM;
	for (size_t i = 0; i < c->nenv_names; i++, r->nenv_names++)
		if (!(r->env_names[i] = strdup(c->env_names[i])))
			return -ENOMEM;
	if (c->npatterns && !(r->pats = calloc(c->npatterns, sizeof(*r->pats))))
		return -ENOMEM;
	for (size_t i = 0; i < c->npatterns; i++, r->npats++) {
		struct hx_rx_pattern *pt = &r->pats[i];

		if (!(pt->name = strdup(c->patterns[i].name)))
			return -ENOMEM;
		if (regcomp(&pt->rx, c->patterns[i].regex, REG_EXTENDED)) {
			free(pt->name);
			return -EINVAL;
		}
		literal(pt, c->patterns[i].regex);
	}
	return 0;
}

int hx_redact_new(const struct hx_redact_conf *conf, const uint8_t *key,
		  struct hx_redact **out)
{
	struct hx_redact *r = calloc(1, sizeof(*r));
	int e;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	classes(r->cls);
	hx_redact_shapes_init(r);
	hmac_sha256_set_key(&r->mac, HX_REDACT_KEY_LEN, key);
	if (conf && (e = copy_conf(r, conf))) {
		hx_redact_free(r);
		return e;
	}
	*out = r;
	return 0;
}

void hx_redact_free(struct hx_redact *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nenv_names; i++)
		free(r->env_names[i]);
	free(r->env_names);
	for (size_t i = 0; i < r->npats; i++) {
		regfree(&r->pats[i].rx);
		free(r->pats[i].name);
	}
	free(r->pats);
	free(r);
}

void hx_redact_hash(const struct hx_redact *r, const char *s, size_t n,
		    char *hex)
{
	struct hmac_sha256_ctx c = r->mac;
	uint8_t md[HX_REDACT_HASH_LEN / 2];

	hmac_sha256_update(&c, n, (const uint8_t *)s);
	hmac_sha256_digest(&c, sizeof(md), md);
	hx_fmt_hex(md, sizeof(md), hex);
}

/* NAME=value where NAME names a secret (PASSWORD=, --api-key=, a URL's
 * ?access_token=, a config's "password = x"): the value to the end of
 * its shell word; in an argv word that is the assignment, all the rest
 * (env 'PASSWORD=a b'). */
static void assignment(struct hx_rx_scan *sc, size_t p)
{
	const char *s = sc->s, *tag;
	size_t e = p, k, v = p + 1, end;

	if ((p + 1 < sc->n && s[p + 1] == '=') ||
	    (p && strchr("=!<>", s[p - 1])))
		return; /* a comparison */
	while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	for (k = e; k > 0 && (sc->r->cls[(unsigned char)s[k - 1]] & HX_RC_NAME);
	     k--)
		;
	if (k == e || !(tag = hx_redact_span_name(sc->r, s + k, e - k)))
		return;
	if (e < p) /* "password = x": no shell's, a config's */
		while (v < sc->n && (s[v] == ' ' || s[v] == '\t'))
			v++;
	end = sc->word && !k ? sc->n : hx_redact_span_word_end(s, sc->n, v);
	hx_redact_span_value(sc, v, end, tag, HX_RX_NAMED);
}

static void patterns(struct hx_rx_scan *sc)
{
	regmatch_t m;

	for (size_t i = 0; i < sc->r->npats; i++) {
		const struct hx_rx_pattern *pt = &sc->r->pats[i];
		size_t off = 0;

		if (pt->nlit && !memmem(sc->s, sc->n, pt->lit, pt->nlit))
			continue;
		while (off < sc->n && !regexec(&pt->rx, sc->s + off, 1, &m,
					       off ? REG_NOTBOL : 0)) {
			size_t a = off + (size_t)m.rm_so,
			       b = off + (size_t)m.rm_eo;

			if (b > a)
				hx_redact_span_add(sc, a, b, pt->name,
						   HX_RX_USER);
			off = b > a ? b : a + 1;
		}
	}
}

/* The one pass over the bytes, by words: a known format can only start
 * a word (after a byte that is no part of a name), and '=' and ':' are
 * no part of one; the rest of a word is skipped at a table lookup a
 * byte (the NUL ends each run). */
static void scan(struct hx_rx_scan *sc)
{
	const unsigned char *cls = sc->r->cls;
	const unsigned char *s = (const unsigned char *)sc->s;
	size_t p = 0, e, n = sc->n;

	while (p < n) {
		if ((cls[s[p]] & HX_RC_START) &&
		    HX_RX_PAIR(sc->r, s[p], s[p + 1]) &&
		    (e = hx_redact_shapes_at(sc, p)))
			p = e;
		else if (s[p] == '-' &&
			 (!p || (sc->text &&
				 (cls[s[p - 1]] & (HX_RC_BLANK | HX_RC_SEP)))))
			hx_redact_opts_word(sc, p);
		while (cls[s[p]] & HX_RC_NAME)
			p++;
		for (; p < n && !(cls[s[p]] & HX_RC_NAME); p++)
			if (!(cls[s[p]] & HX_RC_MARK))
				continue;
			else if (s[p] == '=')
				assignment(sc, p);
			else
				hx_redact_shapes_colon(sc, p);
	}
	patterns(sc);
}

/* The copy of s with each span as its tag. */
static int emit(struct hx_rx_scan *sc, char **out)
{
	static const size_t fixed = sizeof(HX_REDACT_OPEN) - 1 + 1 +
				    HX_REDACT_HASH_LEN +
				    sizeof(HX_REDACT_CLOSE) - 1;
	struct hx_rx_span many = {0, sc->n, "many", 0, 0};
	struct hx_rx_span *v = sc->full ? &many : sc->sp;
	size_t n = sc->full ? 1 : sc->nsp, len = sc->n, at = 0;
	char *o, *w;

	for (size_t i = 0; i < n; i++)
		len += fixed + strlen(v[i].tag) - (v[i].b - v[i].a);
	if (!(o = w = malloc(len + 1)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		memcpy(w, sc->s + at, v[i].a - at);
		w = stpcpy(w + (v[i].a - at), HX_REDACT_OPEN);
		w = stpcpy(w, v[i].tag);
		*w++ = ':';
		hx_redact_hash(sc->r, sc->s + v[i].a, v[i].b - v[i].a, w);
		w = stpcpy(w + HX_REDACT_HASH_LEN, HX_REDACT_CLOSE);
		at = v[i].b;
	}
	memcpy(w, sc->s + at, sc->n - at + 1);
	*out = o;
	return 1;
}

static int run(struct hx_rx_scan *sc, char **out)
{
	int r;

	scan(sc);
	hx_redact_span_settle(sc);
	r = sc->nsp || sc->full ? emit(sc, out) : 0;
	hx_redact_span_done(sc);
	return r;
}

int hx_redact_text(const struct hx_redact *r, const char *s, char **out)
{
	struct hx_rx_scan sc;

	hx_redact_span_init(&sc, r, s);
	sc.text = true;
	return run(&sc, out);
}

int hx_redact_path(const struct hx_redact *r, const char *s, char **out)
{
	struct hx_rx_scan sc;

	hx_redact_span_init(&sc, r, s);
	sc.text = sc.path = true;
	return run(&sc, out);
}

/* -c, -lc, -ce, --command: the next word is code (sh -c, python3 -c,
 * su -c), not one argument. */
static bool code_flag(const char *w)
{
	size_t n = strlen(w);

	if (!strcmp(w, "--command"))
		return true;
	if (n < 2 || n > 4 || w[0] != '-' || !memchr(w, 'c', n))
		return false;
	for (size_t k = 1; k < n; k++)
		if (!isalpha((unsigned char)w[k]))
			return false;
	return true;
}

int hx_redact_argv(const struct hx_redact *r, const char *const *v, size_t i,
		   char **out)
{
	struct hx_rx_scan sc;

	hx_redact_span_init(&sc, r, v[i]);
	if (i > 0 && v[i - 1] && code_flag(v[i - 1])) {
		sc.text = true;
		return run(&sc, out);
	}
	sc.word = true;
	sc.v = v;
	sc.i = i;
	if (i > 0 && v[i - 1])
		hx_redact_opts_next(&sc, v, i - 1);
	return run(&sc, out);
}
