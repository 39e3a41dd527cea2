/* Unified diffs and search/replace edits in memory; see patch.h. */
#define _GNU_SOURCE
#include "tools/mcpwork/patch.h"
#include "tools/mcpwork/grow.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/mcpwork/bounds.h"

/* How much of a line a message quotes. */
#define QUOTE 80

struct line {
	const char *p;
	size_t len; /* without the '\n' */
	bool nl;
};

struct lines {
	struct line *v;
	size_t n, cap;
};

struct op {
	char kind; /* ' ', '-', '+' */
	struct line l;
};

struct hunk {
	size_t a, b, c, d; /* @@ -a,b +c,d @@ */
	const char *head;
	size_t head_len;
	struct op *ops;
	size_t nops, cap;
};

struct buf {
	char *p;
	size_t len, cap, max;
	bool open; /* the last line written has no '\n' yet */
};

static void fail(struct hx_mw_patch_fail *f, unsigned hunk, size_t line,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void fail(struct hx_mw_patch_fail *f, unsigned hunk, size_t line,
		 const char *fmt, ...)
{
	va_list ap;

	f->hunk = hunk;
	f->line = line;
	va_start(ap, fmt);
	vsnprintf(f->why, sizeof(f->why), fmt, ap);
	va_end(ap);
}

static int push_line(struct lines *ls, const char *p, size_t len, bool nl)
{
	if (ls->n == ls->cap) {
		size_t cap = ls->cap ? ls->cap * 2 : 64;
		struct line *nv = reallocarray(ls->v, cap, sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		ls->v = nv;
		ls->cap = cap;
	}
	ls->v[ls->n++] = (struct line){p, len, nl};
	return 0;
}

/* The lines of n bytes; a last line without '\n' is one. */
static int split(const char *p, size_t n, struct lines *ls)
{
	size_t i = 0;

	while (i < n) {
		const char *nl = memchr(p + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - p) : n;

		if (push_line(ls, p + i, end - i, nl != NULL) < 0)
			return -ENOMEM;
		i = nl ? end + 1 : n;
	}
	return 0;
}

static int put(struct buf *b, const char *p, size_t n)
{
	if (!n)
		return 0;
	if (n > b->max || b->len > b->max - n)
		return -EFBIG;
	if (hx_mw_grow(&b->p, &b->cap, b->len + n, 0))
		return -ENOMEM;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

/* A NUL after the content (not counted, allowed past max). */
static int terminate(struct buf *b)
{
	int rc;

	b->max++;
	rc = put(b, "", 1);
	b->max--;
	if (!rc)
		b->len--;
	return rc;
}

/* A line written out; one that had no '\n' gets it once another
 * follows (a hunk that appends past a last line without one). */
static int put_line(struct buf *b, const struct line *l)
{
	int rc = 0;

	if (b->open)
		rc = put(b, "\n", 1);
	if (!rc)
		rc = put(b, l->p, l->len);
	if (!rc && l->nl)
		rc = put(b, "\n", 1);
	b->open = !l->nl;
	return rc;
}

static int parse_count(const char **p, const char *end, size_t *v)
{
	size_t x = 0;
	const char *s = *p;

	while (*p < end && **p >= '0' && **p <= '9') {
		if (x > (SIZE_MAX - 9) / 10)
			return -1;
		x = x * 10 + (size_t)(**p - '0');
		(*p)++;
	}
	*v = x;
	return *p > s ? 0 : -1;
}

/* "@@ -a[,b] +c[,d] @@[ text]" */
static int parse_head(const struct line *l, struct hunk *h)
{
	const char *p = l->p, *end = l->p + l->len;

	h->b = h->d = 1;
	if (l->len < 4 || memcmp(p, "@@ -", 4))
		return -1;
	p += 4;
	if (parse_count(&p, end, &h->a) < 0)
		return -1;
	if (p < end && *p == ',' && (p++, parse_count(&p, end, &h->b) < 0))
		return -1;
	if (end - p < 2 || memcmp(p, " +", 2))
		return -1;
	p += 2;
	if (parse_count(&p, end, &h->c) < 0)
		return -1;
	if (p < end && *p == ',' && (p++, parse_count(&p, end, &h->d) < 0))
		return -1;
	if (end - p < 3 || memcmp(p, " @@", 3))
		return -1;
	h->head = l->p;
	h->head_len = (size_t)(p + 3 - l->p);
	return 0;
}

static int push_op(struct hunk *h, char kind, const struct line *l)
{
	if (h->nops == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 16;
		struct op *no = reallocarray(h->ops, cap, sizeof(*no));

		if (!no)
			return -ENOMEM;
		h->ops = no;
		h->cap = cap;
	}
	h->ops[h->nops].kind = kind;
	h->ops[h->nops].l =
	    (struct line){l->p + (l->len > 0), l->len - (l->len > 0), true};
	h->nops++;
	return 0;
}

/* The body of hunk k from line *i of the diff on; *i left after it. */
static int parse_body(const struct lines *d, size_t *i, struct hunk *h,
		      unsigned k, struct hx_mw_patch_fail *f)
{
	size_t old = h->b, new = h->d;

	while (old || new) {
		const struct line *l;
		char c;

		if (*i >= d->n) {
			fail(f, k, 0,
			     "hunk %u (%.*s): the patch ends %zu old and %zu "
			     "new lines short of what its header counts",
			     k, (int)h->head_len, h->head, old, new);
			return -EINVAL;
		}
		l = &d->v[*i];
		c = l->len ? l->p[0] : ' '; /* an empty context line */
		if (c == '\\') {
			if (h->nops)
				h->ops[h->nops - 1].l.nl = false;
			(*i)++;
			continue;
		}
		if ((c != ' ' && c != '-' && c != '+') || (c != '+' && !old) ||
		    (c != '-' && !new)) {
			fail(f, k, 0,
			     "hunk %u (%.*s): patch line %zu (\"%.*s\") does "
			     "not fit the header's counts (%zu old and %zu new "
			     "lines were still due)",
			     k, (int)h->head_len, h->head, *i + 1,
			     (int)(l->len < QUOTE ? l->len : QUOTE), l->p, old,
			     new);
			return -EINVAL;
		}
		if (push_op(h, c, l) < 0)
			return -ENOMEM;
		old -= c != '+';
		new -= c != '-';
		(*i)++;
	}
	/* "\ No newline at end of file" after the last counted line. */
	if (*i < d->n && d->v[*i].len && d->v[*i].p[0] == '\\') {
		if (h->nops)
			h->ops[h->nops - 1].l.nl = false;
		(*i)++;
	}
	return 0;
}

static void free_hunks(struct hunk *hs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(hs[i].ops);
	free(hs);
}

/* A "--- a/f" or "+++ b/f" line: a second file's headers. */
static bool is_header(const struct line *l)
{
	return l->len >= 4 &&
	       (!memcmp(l->p, "--- ", 4) || !memcmp(l->p, "+++ ", 4));
}

/* Every hunk of the diff, in order; lines before the first ignored. */
static int parse_diff(const struct lines *d, struct hunk **out, size_t *nh,
		      struct hx_mw_patch_fail *f)
{
	struct hunk *hs = NULL, *nhs;
	size_t n = 0, i = 0;
	int rc;

	while (i < d->n && !(d->v[i].len >= 2 && !memcmp(d->v[i].p, "@@", 2)))
		i++;
	while (i < d->n) {
		const struct line *l = &d->v[i];

		if (!l->len) { /* blank lines after the last hunk */
			i++;
			continue;
		}
		if (n && strchr(" +-", l->p[0]) && !is_header(l)) {
			fail(f, (unsigned)n, 0,
			     "hunk %zu: patch line %zu (\"%.*s\") is past "
			     "the lines its header counts",
			     n, i + 1, (int)(l->len < QUOTE ? l->len : QUOTE),
			     l->p);
			rc = -EINVAL;
			goto out;
		}
		if (l->len < 2 || memcmp(l->p, "@@", 2)) {
			fail(f, (unsigned)n, 0,
			     "patch line %zu (\"%.*s\") is no hunk: the patch "
			     "must change one file only, with @@ hunks",
			     i + 1, (int)(l->len < QUOTE ? l->len : QUOTE),
			     l->p);
			rc = -EINVAL;
			goto out;
		}
		if (n == HX_MW_PATCH_HUNKS_MAX) {
			fail(f, (unsigned)n + 1, 0, "more than %u hunks",
			     HX_MW_PATCH_HUNKS_MAX);
			rc = -EINVAL;
			goto out;
		}
		nhs = reallocarray(hs, n + 1, sizeof(*hs));
		if (!nhs) {
			rc = -ENOMEM;
			goto out;
		}
		hs = nhs;
		memset(&hs[n], 0, sizeof(hs[n]));
		n++;
		if (parse_head(l, &hs[n - 1]) < 0) {
			fail(f, (unsigned)n, 0,
			     "hunk %zu: bad header \"%.*s\" (expected "
			     "\"@@ -a,b +c,d @@\")",
			     n, (int)(l->len < QUOTE ? l->len : QUOTE), l->p);
			rc = -EINVAL;
			goto out;
		}
		i++;
		rc = parse_body(d, &i, &hs[n - 1], (unsigned)n, f);
		if (rc < 0)
			goto out;
	}
	if (!n) {
		fail(f, 0, 0, "the patch has no @@ hunk");
		rc = -EINVAL;
		goto out;
	}
	*out = hs;
	*nh = n;
	return 0;
out:
	free_hunks(hs, n);
	return rc;
}

/* True when hunk h's old lines are the file's from line p on; *bad the
 * index of the first that is not. */
static bool matches(const struct lines *src, size_t p, const struct hunk *h,
		    size_t *bad)
{
	size_t i, j = 0;

	for (i = 0; i < h->nops; i++) {
		const struct op *o = &h->ops[i];
		const struct line *s;

		if (o->kind == '+')
			continue;
		if (p + j >= src->n) {
			*bad = j;
			return false;
		}
		s = &src->v[p + j];
		if (s->len != o->l.len || memcmp(s->p, o->l.p, s->len)) {
			*bad = j;
			return false;
		}
		j++;
	}
	return true;
}

/* Why hunk k does not apply at line want: the first line that differs. */
static void mismatch(const struct lines *src, size_t want, const struct hunk *h,
		     unsigned k, struct hx_mw_patch_fail *f)
{
	size_t bad = 0, i, j = 0;
	const struct line *e = NULL, *s;

	matches(src, want, h, &bad);
	for (i = 0; i < h->nops; i++) {
		if (h->ops[i].kind == '+')
			continue;
		if (j++ == bad) {
			e = &h->ops[i].l;
			break;
		}
	}
	if (!e)
		return fail(f, k, want + 1, "hunk %u (%.*s) does not apply", k,
			    (int)h->head_len, h->head);
	if (want + bad >= src->n)
		return fail(f, k, want + bad + 1,
			    "hunk %u (%.*s): expected \"%.*s\" at line %zu, "
			    "but the file has %zu lines; the hunk matches "
			    "nowhere else after the previous hunk",
			    k, (int)h->head_len, h->head,
			    (int)(e->len < QUOTE ? e->len : QUOTE), e->p,
			    want + bad + 1, src->n);
	s = &src->v[want + bad];
	fail(f, k, want + bad + 1,
	     "hunk %u (%.*s): expected \"%.*s\" at line %zu, found \"%.*s\"; "
	     "the hunk matches nowhere else after the previous hunk",
	     k, (int)h->head_len, h->head,
	     (int)(e->len < QUOTE ? e->len : QUOTE), e->p, want + bad + 1,
	     (int)(s->len < QUOTE ? s->len : QUOTE), s->p);
}

/* Where hunk h goes: the nearest line to want, not before lo, where its
 * old lines match. 0 and *at, or -1. */
static int place(const struct lines *src, size_t lo, size_t want,
		 const struct hunk *h, size_t *at)
{
	size_t old = h->b, hi, d, bad;

	if (old > src->n)
		return -1;
	hi = src->n - old; /* last start that fits */
	if (want < lo)
		want = lo;
	if (!old) {
		/* Nothing to match: an insertion goes where it says. */
		if (want > src->n)
			return -1;
		*at = want;
		return 0;
	}
	for (d = 0;; d++) {
		bool below = d <= want - lo, above = want + d <= hi;

		if (!below && !above)
			break;
		if (below && want - d <= hi &&
		    matches(src, want - d, h, &bad)) {
			*at = want - d;
			return 0;
		}
		if (d && above && matches(src, want + d, h, &bad)) {
			*at = want + d;
			return 0;
		}
	}
	return -1;
}

static int apply(const struct lines *src, const struct hunk *hs, size_t nh,
		 struct buf *b, struct hx_mw_patch_fail *f)
{
	size_t cur = 0, k, i, at, stated;
	long long delta = 0;
	int rc;

	for (k = 0; k < nh; k++) {
		const struct hunk *h = &hs[k];
		long long want;

		/* -a,0 inserts after line a; -a,b starts at line a. */
		stated = h->b ? (h->a ? h->a - 1 : 0) : h->a;
		want = (long long)stated + delta;
		if (want < (long long)cur)
			want = (long long)cur;
		if (place(src, cur, (size_t)want, h, &at) < 0) {
			mismatch(src, (size_t)want, h, (unsigned)k + 1, f);
			return -EINVAL;
		}
		for (; cur < at; cur++)
			if ((rc = put_line(b, &src->v[cur])) < 0)
				return rc;
		for (i = 0; i < h->nops; i++) {
			const struct op *o = &h->ops[i];

			if (o->kind == ' ')
				rc = put_line(b, &src->v[cur++]);
			else if (o->kind == '-')
				cur++, rc = 0;
			else
				rc = put_line(b, &o->l);
			if (rc < 0)
				return rc;
		}
		delta = (long long)at - (long long)stated;
	}
	for (; cur < src->n; cur++)
		if ((rc = put_line(b, &src->v[cur])) < 0)
			return rc;
	return 0;
}

int hx_mw_patch_diff(const char *src, size_t n, const char *diff, size_t dn,
		     size_t max, char **out, size_t *outn, unsigned *hunks,
		     struct hx_mw_patch_fail *f)
{
	struct lines s = {0}, d = {0};
	struct hunk *hs = NULL;
	struct buf b = {.max = max};
	size_t nh = 0;
	int rc;

	memset(f, 0, sizeof(*f));
	if ((rc = split(src, n, &s)) < 0 || (rc = split(diff, dn, &d)) < 0)
		goto out;
	if ((rc = parse_diff(&d, &hs, &nh, f)) < 0)
		goto out;
	if ((rc = apply(&s, hs, nh, &b, f)) < 0 || (rc = terminate(&b)) < 0)
		goto out;
	*out = b.p;
	*outn = b.len;
	*hunks = (unsigned)nh;
	b.p = NULL;
out:
	if (rc == -EFBIG)
		fail(f, 0, 0, "the patched file would exceed %zu bytes", max);
	free(b.p);
	free_hunks(hs, nh);
	free(s.v);
	free(d.v);
	return rc;
}

/* Offsets of the non-overlapping occurrences of e's search text in p,
 * up to the first two unless all. */
static size_t count(const char *p, size_t n, const struct hx_mw_patch_edit *e,
		    size_t *first)
{
	size_t c = 0, off = 0;
	const char *q;

	while (off + e->slen <= n &&
	       (q = memmem(p + off, n - off, e->search, e->slen))) {
		if (!c)
			*first = (size_t)(q - p);
		c++;
		off = (size_t)(q - p) + e->slen;
	}
	return c;
}

static size_t line_of(const char *p, size_t off)
{
	size_t l = 1, i;

	for (i = 0; i < off; i++)
		l += p[i] == '\n';
	return l;
}

static int edit_one(struct buf *cur, const struct hx_mw_patch_edit *e,
		    unsigned k, struct hx_mw_patch_fail *f)
{
	struct buf nb = {.max = cur->max};
	size_t c, first = 0, off = 0;
	const char *q;
	int rc = 0;
	size_t ql = e->slen < QUOTE ? e->slen : QUOTE;
	const char *nl = memchr(e->search, '\n', ql);

	if (nl)
		ql = (size_t)(nl - e->search);
	if (!e->slen) {
		fail(f, k, 0, "edit %u: the search text is empty", k);
		return -EINVAL;
	}
	c = count(cur->p, cur->len, e, &first);
	if (!c) {
		fail(f, k, 0,
		     "edit %u: the search text (starting \"%.*s\") was not "
		     "found in the file (it must match exactly, white space "
		     "included)",
		     k, (int)ql, e->search);
		return -EINVAL;
	}
	if (c > 1 && !e->all) {
		fail(f, k, line_of(cur->p, first),
		     "edit %u: the search text (starting \"%.*s\") was found "
		     "%zu times, first at line %zu; give more context to make "
		     "it unique, or set \"all\"",
		     k, (int)ql, e->search, c, line_of(cur->p, first));
		return -EINVAL;
	}
	while (off <= cur->len &&
	       (q = memmem(cur->p + off, cur->len - off, e->search, e->slen))) {
		size_t at = (size_t)(q - cur->p);

		if ((rc = put(&nb, cur->p + off, at - off)) < 0 ||
		    (rc = put(&nb, e->replace, e->rlen)) < 0)
			goto out;
		off = at + e->slen;
	}
	if ((rc = put(&nb, cur->p + off, cur->len - off)) < 0)
		goto out;
	free(cur->p);
	*cur = nb;
	nb.p = NULL;
out:
	free(nb.p);
	return rc;
}

int hx_mw_patch_edits(const char *src, size_t n,
		      const struct hx_mw_patch_edit *e, size_t ne, size_t max,
		      char **out, size_t *outn, struct hx_mw_patch_fail *f)
{
	struct buf cur = {.max = max};
	size_t k = 0;
	int rc;

	memset(f, 0, sizeof(*f));
	if ((rc = put(&cur, src, n)) < 0)
		goto out;
	for (k = 0; k < ne; k++)
		if ((rc = edit_one(&cur, &e[k], (unsigned)k + 1, f)) < 0)
			goto out;
	if ((rc = terminate(&cur)) < 0)
		goto out;
	*out = cur.p;
	*outn = cur.len;
	cur.p = NULL;
out:
	if (rc == -EFBIG && !f->why[0])
		fail(f, (unsigned)k + 1, 0,
		     "the edited file would exceed %zu bytes", max);
	free(cur.p);
	return rc;
}
