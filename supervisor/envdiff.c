/* An exec's environment as it differs from the session's; see
 * envdiff.h. */
#define _GNU_SOURCE
#include "supervisor/envdiff.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "supervisor/sha256.h"

struct hx_envbase {
	char **e; /* normalized entries, sorted (entry_cmp) */
	size_t n;
	char *shim; /* the shim's path, as harness-exec gives it */
};

/* The length of entry's name (all of it when it has no '='). */
static size_t name_len(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq ? (size_t)(eq - s) : strlen(s);
}

/* By name, then whole: one name's entries are together. */
static int entry_cmp(const void *x, const void *y)
{
	const char *a = *(const char *const *)x, *b = *(const char *const *)y;
	size_t na = name_len(a), nb = name_len(b);
	int c = memcmp(a, b, na < nb ? na : nb);

	if (c)
		return c;
	if (na != nb)
		return na < nb ? -1 : 1;
	return strcmp(a, b);
}

static bool has_name(const char *s, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(s, name, n) && s[n] == '=';
}

/* An LD_PRELOAD entry that is the shim: its very path. Not its file
 * name, as the shim's own rebuild takes it (shim/env.c, which drops a
 * second copy so): a raw execve with LD_PRELOAD naming the agent's own
 * PROJECT/libharness-shim.so was then harness's own entry, neither shown
 * in the question nor recorded nor held by the exec gate, and its code
 * ran inside the approved program (twenty-second attack review). The
 * shim puts back the path harness-exec gave (dladdr of what ld.so
 * loaded from it). */
static bool is_shim(const struct hx_envbase *b, const char *p, size_t n)
{
	size_t sl = strlen(b->shim);

	return sl && n == sl && !memcmp(p, b->shim, sl);
}

/* s normalized into *out (malloc'd), or *out NULL when it is harness's
 * own: its socket and connection names (the shim puts them back on each
 * exec), LD_PRELOAD less the shim (dropped when nothing is left). 0 or
 * -ENOMEM. */
static int normalize(const struct hx_envbase *b, const char *s, char **out)
{
	const char *p;
	char *o;
	size_t k;

	*out = NULL;
	if (has_name(s, HX_ENV_SOCKET) || has_name(s, HX_ENV_CONN))
		return 0;
	if (!has_name(s, HX_ENV_PRELOAD))
		return (*out = strdup(s)) ? 0 : -ENOMEM;
	if (!(o = malloc(strlen(s) + 1)))
		return -ENOMEM;
	k = strlen(HX_ENV_PRELOAD "=");
	memcpy(o, s, k);
	for (p = s + k; *p;) {
		size_t n = strcspn(p, ": ");

		if (n && !is_shim(b, p, n)) {
			if (o[k - 1] != '=')
				o[k++] = ':';
			memcpy(o + k, p, n);
			k += n;
		}
		p += n;
		if (*p)
			p++;
	}
	o[k] = '\0';
	if (o[k - 1] == '=')
		free(o); /* only the shim */
	else
		*out = o;
	return 0;
}

static void strs_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* envc strings normalized and sorted into *out (*n of them). */
static int norm_all(const struct hx_envbase *b, const char *const *env,
		    size_t envc, char ***out, size_t *n)
{
	char **v = calloc(envc + 1, sizeof(*v));
	size_t k = 0;

	*out = NULL;
	*n = 0;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < envc; i++)
		if (normalize(b, env[i], &v[k]) < 0) {
			strs_free(v, k);
			return -ENOMEM;
		} else if (v[k]) {
			k++;
		}
	qsort(v, k, sizeof(*v), entry_cmp);
	*out = v;
	*n = k;
	return 0;
}

struct hx_envbase *hx_envbase_new(const char *const *env, const char *shim)
{
	struct hx_envbase *b = calloc(1, sizeof(*b));
	size_t n = 0;

	if (!b || !(b->shim = strdup(shim))) {
		free(b);
		return NULL;
	}
	while (env[n])
		n++;
	if (norm_all(b, env, n, &b->e, &b->n)) {
		hx_envbase_free(b);
		return NULL;
	}
	return b;
}

void hx_envbase_free(struct hx_envbase *b)
{
	if (!b)
		return;
	strs_free(b->e, b->n);
	free(b->shim);
	free(b);
}

static bool in(char *const *v, size_t n, const char *s)
{
	return bsearch(&s, v, n, sizeof(*v), entry_cmp) != NULL;
}

/* Whether any of v's n entries has the name of s. */
static bool named(char *const *v, size_t n, const char *s)
{
	size_t lo = 0, hi = n, sn = name_len(s);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, mn = name_len(v[mid]);
		int c = memcmp(v[mid], s, mn < sn ? mn : sn);

		if (!c && mn == sn)
			return true;
		if (c < 0 || (!c && mn < sn))
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int put(struct hx_envdiff *d, size_t *cap, const char *pre,
	       const char *s, size_t n)
{
	size_t pl = strlen(pre);

	if (d->len + pl + n + 1 > *cap) {
		size_t nc = (d->len + pl + n + 1) * 2;
		char *np = realloc(d->p, nc);

		if (!np)
			return -ENOMEM;
		d->p = np;
		*cap = nc;
	}
	memcpy(d->p + d->len, pre, pl);
	memcpy(d->p + d->len + pl, s, n);
	d->p[d->len + pl + n] = '\0';
	d->len += pl + n + 1;
	d->n++;
	return 0;
}

int hx_envdiff_make(const struct hx_envbase *b, const char *const *envp,
		    size_t envc, struct hx_envdiff *d)
{
	char **v = NULL;
	size_t n = 0, cap = 0, i = 0, j = 0;
	int e = 0;

	*d = (struct hx_envdiff){NULL, 0, 0};
	if (!b || (e = norm_all(b, envp, envc, &v, &n)))
		return e;
	/* Both sorted alike: what is set other than the session's, and the
	 * session's names left out, in one order. */
	while (!e && (i < n || j < b->n)) {
		int c = i >= n	    ? 1
			: j >= b->n ? -1
				    : entry_cmp(&v[i], &b->e[j]);

		if (c < 0) {
			if (!in(b->e, b->n, v[i]))
				e = put(d, &cap, "", v[i], strlen(v[i]));
			i++;
		} else if (c > 0) {
			if (!named(v, n, b->e[j]))
				e = put(d, &cap, "-", b->e[j],
					name_len(b->e[j]));
			j++;
		} else {
			i++;
			j++;
		}
	}
	strs_free(v, n);
	if (e)
		hx_envdiff_free(d);
	return e;
}

int hx_envdiff_append(struct hx_envdiff *d, const char *entry)
{
	size_t cap = d->len; /* exact: put grows it as needed */

	return put(d, &cap, "", entry, strlen(entry));
}

void hx_envdiff_free(struct hx_envdiff *d)
{
	free(d->p);
	*d = (struct hx_envdiff){NULL, 0, 0};
}

bool hx_envdiff_sets(const struct hx_envdiff *d, const char *const *prefixes)
{
	/* Entries set or changed are NAME=VALUE; one taken away, "-NAME". */
	for (const char *e = d->p; e && e < d->p + d->len; e += strlen(e) + 1)
		for (const char *const *p = prefixes; *p; p++)
			if (!strncmp(e, *p, strlen(*p)))
				return true;
	return false;
}

bool hx_envdiff_bookkeeping(const char *entry)
{
	static const char *const names[] = {"PWD", "OLDPWD", "SHLVL", "_"};
	const char *s = entry[0] == '-' ? entry + 1 : entry;
	size_t n = name_len(s);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && !memcmp(s, names[i], n))
			return true;
	return false;
}

void hx_envdiff_shown_sum(const char *p, size_t len, char *hex)
{
	char *buf = malloc(len + 1);
	size_t k = 0;

	hex[0] = '\0';
	for (size_t i = 0; p && i < len;) {
		size_t n = strlen(p + i) + 1;

		if (!hx_envdiff_bookkeeping(p + i) && buf) {
			memcpy(buf + k, p + i, n);
			k += n;
		}
		i += n;
	}
	if (k)
		hx_sha256_hex(buf, k, hex);
	else if (!buf && len)
		hx_sha256_hex(p, len,
			      hex); /* no memory: holds for nothing shown */
	free(buf);
}
