/* The spans a scan finds, shell words and secrets' names: what the
 * other files of the redaction share (redact_int.h). */
#define _GNU_SOURCE
#include "supervisor/redact_int.h"

#include <fnmatch.h>
#include <string.h>

void hx_redact_span_init(struct hx_rx_scan *sc, const struct hx_redact *r,
			 const char *s)
{
	sc->r = r;
	sc->s = s;
	sc->n = strlen(s);
	sc->word = sc->text = sc->full = false;
	sc->v = NULL;
	sc->i = sc->nsp = 0;
}

void hx_redact_span_add(struct hx_rx_scan *sc, size_t a, size_t b,
			const char *tag, int prio)
{
	size_t k = 0;

	if (a >= b)
		return;
	while (k < sc->nsp) {
		struct hx_rx_span *e = &sc->sp[k];

		if (a >= e->b || e->a >= b) {
			k++;
			continue;
		}
		/* one secret, told by its most specific finder */
		a = a < e->a ? a : e->a;
		b = b > e->b ? b : e->b;
		if (e->prio > prio) {
			prio = e->prio;
			tag = e->tag;
		}
		*e = sc->sp[--sc->nsp];
		k = 0; /* the union may reach one seen before */
	}
	if (sc->nsp == HX_RX_SPANS) {
		sc->full = true;
		return;
	}
	sc->sp[sc->nsp++] = (struct hx_rx_span){a, b, tag, prio};
}

void hx_redact_span_value(struct hx_rx_scan *sc, size_t a, size_t b,
			  const char *tag, int prio)
{
	const char *s = sc->s;

	if (b - a >= 2 && (s[a] == '\'' || s[a] == '"') && s[b - 1] == s[a] &&
	    hx_redact_span_word_end(s, b, a) == b &&
	    !memchr(s + a + 1, s[a], b - a - 2)) {
		a++;
		b--;
	}
	hx_redact_span_add(sc, a, b, tag, prio);
}

size_t hx_redact_span_word_end(const char *s, size_t n, size_t i)
{
	char q = 0;

	for (; i < n; i++) {
		char c = s[i];

		if (q) {
			if (c == q)
				q = 0;
			else if (c == '\\' && q == '"' && i + 1 < n)
				i++;
		} else if (c == '\'' || c == '"') {
			q = c;
		} else if (c == '\\' && i + 1 < n) {
			i++;
		} else if (c == ' ' || c == '\t' || c == '\n' ||
			   (c && strchr(";&|<>()`", c))) {
			break;
		}
	}
	return i;
}

/* Where w occurs in name (upper case, '_' for '-') not as a part of
 * a longer word it does not mean: TOKENS and TOKENIZER are counts and
 * settings (MAX_TOKENS, TOKENIZERS_PARALLELISM), AUTHOR is a name
 * (GIT_AUTHOR_NAME, XAUTHORITY); AUTHORIZATION is not. */
static bool holds(const char *name, const char *w)
{
	size_t wl = strlen(w);

	for (const char *p = strstr(name, w); p; p = strstr(p + 1, w)) {
		const char *after = p + wl;

		if (!strcmp(w, "TOKEN") &&
		    (!strncmp(after, "IZ", 2) ||
		     (after[0] == 'S' && (!after[1] || after[1] == '_'))))
			continue;
		if (!strcmp(w, "AUTH") && !strncmp(after, "OR", 2) &&
		    strncmp(after, "ORIZ", 4))
			continue;
		return true;
	}
	return false;
}

const char *hx_redact_span_name(const struct hx_redact *r, const char *name,
				size_t n)
{
	static const char *const words[] = {
	    "TOKEN",	   "SECRET",	 "PASSWORD", "PASSWD",
	    "PASSPHRASE",  "API_KEY",	 "APIKEY",   "ACCESS_KEY",
	    "PRIVATE_KEY", "CREDENTIAL", "AUTH",     NULL};
	char up[128];
	size_t i;

	while (n && *name == '-') { /* --api-key */
		name++;
		n--;
	}
	if (!n)
		return NULL;
	if (n >= sizeof(up)) { /* its end, where _TOKEN and the like are */
		name += n - (sizeof(up) - 1);
		n = sizeof(up) - 1;
	}
	for (i = 0; i < n; i++) {
		char c = name[i];

		up[i] = c == '-' ? '_' : c >= 'a' && c <= 'z' ? c - 32 : c;
	}
	up[n] = '\0';
	/* SSH_AUTH_SOCK and the like: where an agent listens, no secret */
	if (n > 5 && !strcmp(up + n - 5, "_SOCK"))
		return NULL;
	if (strstr(up, "SECRET_ACCESS_KEY"))
		return "aws-secret-key";
	for (i = 0; words[i]; i++)
		if (holds(up, words[i]))
			return "secret";
	for (i = 0; i < r->nenv_names; i++) {
		memcpy(up, name, n); /* the policy's globs, on the name */
		up[n] = '\0';
		if (!fnmatch(r->env_names[i], up, FNM_CASEFOLD))
			return "secret";
	}
	return NULL;
}
