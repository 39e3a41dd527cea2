/* What a glob's matches must hold; see globindex.h. */
#define _GNU_SOURCE /* memmem */
#include "common/globindex.h"

#include <string.h>

/* A byte that is no literal of a glob ('[' and ']' both: a class's
 * bytes are not the path's). A switch, not strchr: the shim indexes a
 * HELLO's rules in every process that reads. */
static bool meta(char c)
{
	switch (c) {
	case '*':
	case '?':
	case '[':
	case ']':
	case '\\':
		return true;
	default:
		return false;
	}
}

/* 1 when the run of n bytes at off starts "//" right after a "**": the
 * first '/' is the "**" "/" of zero or more names, which the path may
 * not hold before the second ("**" "//n" matches "/n"). Any other run
 * there starts with a '/' the path has: the one before the "**", or
 * the one after the names it takes. */
static size_t construct_slash(const char *glob, size_t off, size_t n)
{
	return n >= 2 && off >= 2 && glob[off - 1] == '*' &&
	       glob[off - 2] == '*' && glob[off] == '/' && glob[off + 1] == '/';
}

void hx_glob_need_of(const char *glob, struct hx_glob_need *n)
{
	size_t len = 0, key = 0, t = 0, r = 0;
	bool in_lit = true, literal = true;

	/* one pass: the literal start (to the first '*', '?', '[' or '\\'),
	 * its last '/', the length */
	for (; glob[len]; len++) {
		char c = glob[len];

		if (in_lit && meta(c) && c != ']')
			in_lit = false;
		if (in_lit && c == '/')
			key = len;
		literal = literal && !meta(c);
	}
	/* A glob with no metacharacter matches itself only: its key is the
	 * whole of it, so the many literal files of one directory ($HOME's
	 * start files) are not each a candidate for every path beneath. */
	if (literal)
		key = len;
	*n = (struct hx_glob_need){.len = (uint32_t)len};
	if (glob[0] == '/')
		n->key = (uint32_t)key;
	while (t < len && !meta(glob[len - 1 - t]))
		t++;
	t -= construct_slash(glob, len - t, t);
	n->tail = (uint32_t)t;
	if (t || len < 3 || strcmp(glob + len - 3, "/**"))
		return;
	while (r < len - 3 && !meta(glob[len - 4 - r]))
		r++;
	if (r < len - 3) { /* after a metacharacter: not the key's */
		size_t drop = construct_slash(glob, len - 3 - r, r);

		n->inner_off = (uint32_t)(len - 3 - r + drop);
		n->inner_len = (uint32_t)(r - drop);
	}
}

/* Whether path holds the run r; one that starts a name is looked for
 * at each '/' only (memmem's set-up was most of a decision). */
static bool has_run(const char *path, size_t plen, const char *r, size_t rlen)
{
	const char *end = path + plen;

	if (r[0] != '/')
		return memmem(path, plen, r, rlen);
	for (const char *p = path; p && (size_t)(end - p) >= rlen;
	     p = memchr(p + 1, '/', (size_t)(end - p - 1)))
		if (!memcmp(p, r, rlen))
			return true;
	return false;
}

bool hx_glob_need_holds(const char *glob, const struct hx_glob_need *n,
			const char *path, size_t plen)
{
	/* the last byte first: most candidates differ there */
	if (n->tail &&
	    (plen < n->tail || path[plen - 1] != glob[n->len - 1] ||
	     memcmp(path + plen - n->tail, glob + n->len - n->tail, n->tail)))
		return false;
	return !n->inner_len ||
	       has_run(path, plen, glob + n->inner_off, n->inner_len);
}

int hx_glob_key_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c ? c : (alen > blen) - (alen < blen);
}

static const struct hx_glob_group *find(const struct hx_glob_group *g, size_t n,
					const char *key, size_t len)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = hx_glob_key_cmp(g[mid].key, g[mid].klen, key, len);

		if (!c)
			return &g[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void hx_glob_groups_visit(const struct hx_glob_group *g, size_t ngroups,
			  const char *path, size_t plen,
			  void (*fn)(const struct hx_glob_group *, void *),
			  void *arg)
{
	const struct hx_glob_group *k = find(g, ngroups, "", 0);

	if (k)
		fn(k, arg);
	for (size_t e = 1; e <= plen; e++)
		if ((e == plen || path[e] == '/') &&
		    (k = find(g, ngroups, path, e)))
			fn(k, arg);
}
