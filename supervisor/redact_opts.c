/* Options that take a password, of any tool (--password W, --token W;
 * --NAME=W is an assignment, redact.c) and of the common tools that
 * spell theirs otherwise, named only after the tool, where the letter
 * means something else elsewhere (mkdir -p, docker run -p); see
 * redact_int.h. */
#define _GNU_SOURCE
#include "supervisor/redact_int.h"

#include <string.h>

enum { NEXT = 1, ATTACHED = 2 };

static const struct opt {
	const char *tools; /* basenames, '|'-separated */
	const char *needs; /* a word that must come before it too, or NULL */
	const char *name;
	size_t len;
	unsigned char form;
	char after;	  /* the secret follows this in the value (u:SECRET) */
	const char *lead; /* the value is a secret only after this lead */
} opts[] = {
#define O(tools, needs, name, form, after, lead)                               \
	{                                                                      \
		tools, needs, name, sizeof(name) - 1, form, after, lead        \
	}
    O("sshpass", NULL, "-p", NEXT | ATTACHED, 0, NULL),
    /* -p alone asks; -p W is -p then a database */
    O("mysql|mysqldump|mysqladmin|mysqlcheck|mysqlimport|mysqlshow|"
      "mariadb|mariadb-dump|mariadb-admin",
      NULL, "-p", ATTACHED, 0, NULL),
    O("redis-cli", NULL, "-a", NEXT, 0, NULL),
    O("zip|unzip", NULL, "-P", NEXT, 0, NULL),
    O("7z|7za|7zr", NULL, "-p", ATTACHED, 0, NULL),
    O("docker|podman|nerdctl|buildah|skopeo|helm|oras|crane", "login", "-p",
      NEXT, 0, NULL),
    O("curl", NULL, "-u", NEXT | ATTACHED, ':', NULL),
    O("curl", NULL, "--user", NEXT | ATTACHED, ':', NULL),
    O("curl", NULL, "-U", NEXT | ATTACHED, ':', NULL),
    O("curl", NULL, "--proxy-user", NEXT | ATTACHED, ':', NULL),
    O("smbclient|rpcclient|smbcacls|smbget", NULL, "-U", NEXT | ATTACHED, '%',
      NULL),
    O("smbclient|rpcclient|smbcacls|smbget", NULL, "--user", NEXT | ATTACHED,
      '%', NULL),
    O("ldapsearch|ldapadd|ldapmodify|ldapdelete|ldapwhoami|ldappasswd|"
      "ldapcompare|ldapmodrdn|ldapexop",
      NULL, "-w", NEXT, 0, NULL),
    O("openssl", NULL, "-passin", NEXT, 0, "pass:"),
    O("openssl", NULL, "-passout", NEXT, 0, "pass:"),
    O("openssl", NULL, "-pass", NEXT, 0, "pass:"),
    O("openssl", NULL, "-k", NEXT, 0, NULL),
    O("mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport", NULL,
      "-p", NEXT, 0, NULL),
#undef O
};

/* Any tool's --password W: a long option whose last words name a
 * secret (--http-password, --auth-token), but not a switch (--no-...,
 * --with-token, which reads stdin, --password-stdin). */
static const struct opt any = {NULL, NULL, NULL, 0, NEXT, 0, NULL};

static bool generic(const char *w, size_t n)
{
#define E(s)                                                                   \
	{                                                                      \
		s, sizeof(s) - 1                                               \
	}
	static const struct {
		const char *s;
		size_t n;
	} ends[] = {E("password"),  E("passwd"), E("passphrase"),
		    E("pass"),	    E("token"),	 E("secret"),
		    E("api-key"),   E("apikey"), E("access-key"),
		    E("secret-key")};
#undef E

	if (n < 4 || w[0] != '-' || w[1] != '-' || memchr(w, '=', n) ||
	    !strncmp(w, "--no-", 5) || !strncmp(w, "--with-", 7))
		return false;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t el = ends[i].n;

		if (n - 2 >= el && !memcmp(w + n - el, ends[i].s, el) &&
		    (n - 2 == el || w[n - el - 1] == '-'))
			return true;
	}
	return false;
}

static bool in_list(const char *list, const char *w, size_t n)
{
	const char *slash = memrchr(w, '/', n);

	if (slash) {
		n -= (size_t)(slash + 1 - w);
		w = slash + 1;
	}
	for (const char *p = list; *p;) {
		size_t k = strcspn(p, "|");

		if (k == n && !memcmp(p, w, n))
			return true;
		p += k + !!p[k];
	}
	return false;
}

/* Whether the tool (and the word it needs) come before s[p]: in the
 * argv before it, or in the shell's text back to the command's start. */
static bool after_tool(const struct hx_rx_scan *sc, size_t p,
		       const struct opt *o)
{
	bool tool = false, needed = !o->needs;

	if (sc->v) {
		for (size_t k = 0; k < sc->i; k++) {
			size_t n = sc->v[k] ? strlen(sc->v[k]) : 0;

			tool |= n && in_list(o->tools, sc->v[k], n);
			needed |= n && o->needs && !strcmp(sc->v[k], o->needs);
		}
		return tool && needed;
	}
	while (p > 0 &&
	       !(sc->r->cls[(unsigned char)sc->s[p - 1]] & (HX_RC_SEP))) {
		size_t e = p, b;

		while (
		    e > 0 &&
		    (sc->r->cls[(unsigned char)sc->s[e - 1]] & HX_RC_BLANK) &&
		    sc->s[e - 1] != '\n')
			e--;
		for (b = e; b > 0 && !(sc->r->cls[(unsigned char)sc->s[b - 1]] &
				       (HX_RC_BLANK | HX_RC_SEP));)
			b--;
		if (b == e)
			break;
		tool |= in_list(o->tools, sc->s + b, e - b);
		needed |= o->needs && e - b == strlen(o->needs) &&
			  !memcmp(sc->s + b, o->needs, e - b);
		p = b;
	}
	return tool && needed;
}

/* The option the word s[p..e) is, and where an attached value starts
 * (*att; e when the value is the next word). */
static const struct opt *lookup(const struct hx_rx_scan *sc, size_t p, size_t e,
				size_t *att)
{
	const char *w = sc->s + p;
	size_t n = e - p;

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		const struct opt *o = &opts[i];
		size_t nl = o->len;
		bool next = n == nl && (o->form & NEXT);
		bool long_opt = o->name[1] == '-';

		if (nl > n || o->name[1] != w[1] || memcmp(w, o->name, nl) ||
		    (!next && (!(o->form & ATTACHED) || n == nl ||
			       (long_opt && w[nl] != '='))))
			continue;
		if (!after_tool(sc, p, o))
			continue;
		*att = next ? e : p + nl + long_opt;
		return o;
	}
	*att = e;
	return generic(w, n) ? &any : NULL;
}

/* The value s[a..b) of o: after its lead and its separator. */
static void value(struct hx_rx_scan *sc, size_t a, size_t b,
		  const struct opt *o)
{
	const char *s = sc->s;
	const char *c;

	if (b - a >= 2 && (s[a] == '\'' || s[a] == '"') && s[b - 1] == s[a]) {
		a++;
		b--;
	}
	if (o->lead) {
		size_t ll = strlen(o->lead);

		if (b - a < ll || memcmp(s + a, o->lead, ll))
			return;
		a += ll;
	}
	if (o->after) {
		if (!(c = memchr(s + a, o->after, b - a)))
			return;
		a = (size_t)(c - s) + 1;
	}
	hx_redact_span_add(sc, a, b, "password", HX_RX_NAMED);
}

void hx_redact_opts_word(struct hx_rx_scan *sc, size_t p)
{
	size_t e = sc->text ? hx_redact_span_word_end(sc->s, sc->n, p) : sc->n;
	size_t att, v;
	const struct opt *o = lookup(sc, p, e, &att);

	if (!o)
		return;
	if (att < e) {
		value(sc, att, e, o);
		return;
	}
	if (!sc->text)
		return; /* an argv's next word: hx_redact_opts_next */
	for (v = e; v < sc->n && (sc->s[v] == ' ' || sc->s[v] == '\t'); v++)
		;
	/* no value there: a switch after all, or an operator */
	if (v == e || v == sc->n || sc->s[v] == '-' ||
	    (sc->r->cls[(unsigned char)sc->s[v]] & (HX_RC_SEP | HX_RC_BLANK)))
		return;
	value(sc, v, hx_redact_span_word_end(sc->s, sc->n, v), o);
}

bool hx_redact_opts_next(struct hx_rx_scan *sc, const char *const *v, size_t i)
{
	struct hx_rx_scan prev;
	size_t att;
	const struct opt *o;

	if (v[i][0] != '-' || sc->s[0] == '-')
		return false;
	hx_redact_span_init(&prev, sc->r, v[i]);
	prev.v = v;
	prev.i = i;
	o = lookup(&prev, 0, prev.n, &att);
	if (!o || att < prev.n)
		return false;
	value(sc, 0, sc->n, o);
	return true;
}
