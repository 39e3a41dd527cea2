/* The spans a scan finds, shell words and secrets' names: what the
 * other files of the redaction share (redact_int.h). */
#define _GNU_SOURCE
#include "supervisor/redact_int.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

void hx_redact_span_init(struct hx_rx_scan *sc, const struct hx_redact *r,
			 const char *s)
{
	sc->r = r;
	sc->s = s;
	sc->n = strlen(s);
	sc->word = sc->text = sc->path = sc->full = false;
	sc->v = NULL;
	sc->i = sc->nsp = 0;
	sc->sp = sc->in;
	sc->cap = HX_RX_SPANS;
}

void hx_redact_span_add(struct hx_rx_scan *sc, size_t a, size_t b,
			const char *tag, int prio)
{
	if (a >= b || sc->full)
		return;
	if (sc->nsp == sc->cap) {
		/* at most one a byte of s, a few more for overlaps: a
		 * string's own length bounds them */
		size_t cap = sc->cap * 2;
		struct hx_rx_span *v = NULL;

		if (cap <= 4 * sc->n + HX_RX_SPANS)
			v = sc->sp == sc->in
				? malloc(cap * sizeof(*v))
				: realloc(sc->sp, cap * sizeof(*v));
		if (!v) { /* sc->sp as it was: freed by the caller */
			sc->full = true;
			return;
		}
		if (sc->sp == sc->in)
			memcpy(v, sc->in, sizeof(sc->in));
		sc->sp = v;
		sc->cap = cap;
	}
	sc->sp[sc->nsp] = (struct hx_rx_span){a, b, tag, prio, sc->nsp};
	sc->nsp++;
}

static int by_start(const void *x, const void *y)
{
	const struct hx_rx_span *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* In a shell's text no value found by its name or place (a header's,
 * a JSON field's, an option's) goes past the end of the command it
 * starts in: an unquoted ; & | < > ( ) ` or a line's end, and in
 * double quotes the code of a $( or `. A header's value was taken to
 * the line's end, a JSON field's to a quote never closed, and so the
 * commands after it were not in the record (twenty-fourth attack
 * review). A known format ends where its own text does (a key's END
 * line, past line ends). sc's spans are sorted by start. */
static void cut_at_commands(struct hx_rx_scan *sc)
{
	const char *s = sc->s;
	size_t first = 0, k = 0;
	char q = 0;

	for (size_t i = 0; i < sc->n && first < sc->nsp; i++) {
		char c = s[i];
		bool end;

		while (k < sc->nsp && sc->sp[k].a <= i)
			k++; /* begun: cut at the next end */
		if (q == '\'') {
			if (c == q)
				q = 0;
			continue;
		}
		if (c == '\\' && i + 1 < sc->n) {
			i++;
			continue;
		}
		if (q) /* '"' */
			end = c == '`' || (c == '$' && s[i + 1] == '(');
		else
			end = c == '\n' || (c && strchr(";&|<>()`", c));
		if (c == '"' || (c == '\'' && !q))
			q = q ? 0 : c;
		if (!end)
			continue;
		for (; first < k; first++)
			if (sc->sp[first].b > i &&
			    sc->sp[first].prio <= HX_RX_CONTEXT)
				sc->sp[first].b = i;
	}
}

/* In a path a secret is one name at most: a directory PASSWORD=x took
 * the rest of the path as its value, and every record of a file
 * beneath it named that directory only (twenty-fourth attack
 * review). */
static void cut_at_names(struct hx_rx_scan *sc)
{
	for (size_t i = 0; i < sc->nsp; i++) {
		struct hx_rx_span *e = &sc->sp[i];
		const char *slash = memchr(sc->s + e->a, '/', e->b - e->a);

		if (slash)
			e->b = (size_t)(slash - sc->s);
	}
}

void hx_redact_span_settle(struct hx_rx_scan *sc)
{
	size_t n = 0;

	if (sc->full || !sc->nsp)
		return;
	qsort(sc->sp, sc->nsp, sizeof(*sc->sp), by_start);
	if (sc->text)
		cut_at_commands(sc);
	if (sc->path)
		cut_at_names(sc);
	/* one secret, told by its most specific finder */
	for (size_t i = 0; i < sc->nsp; i++) {
		struct hx_rx_span *e = &sc->sp[i], *o;

		if (e->a >= e->b)
			continue;
		if (!n || e->a >= (o = &sc->sp[n - 1])->b) {
			sc->sp[n++] = *e;
			continue;
		}
		if (e->b > o->b)
			o->b = e->b;
		if (e->prio > o->prio ||
		    (e->prio == o->prio && e->seq > o->seq)) {
			o->prio = e->prio;
			o->tag = e->tag;
			o->seq = e->seq;
		}
	}
	sc->nsp = n;
}

void hx_redact_span_done(struct hx_rx_scan *sc)
{
	if (sc->sp != sc->in)
		free(sc->sp);
	sc->sp = sc->in;
	sc->nsp = 0;
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
