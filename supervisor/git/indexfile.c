/* An index file's untracked cache, read from its bytes (indexfile.h). */
#define _GNU_SOURCE
#include "supervisor/git/indexfile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH_LEN    20
#define ENTRY_FIXED 62 /* stat data, object id, flags */
#define STAT_LEN    36 /* a cached directory's stat data */

struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* git's varint (varint.c's decode_varint): base 128, most significant
 * group first, each continuation adding one; a value past 2^64 is 0,
 * the cursor left where it was, as git leaves it. */
static uint64_t varint(struct cursor *c)
{
	const unsigned char *p = c->p;
	uint64_t v;
	unsigned char b;

	if (p >= c->end)
		return c->bad = true, 0;
	b = *p++;
	v = b & 127;
	while (b & 128) {
		if (!++v || v >> 57)
			return 0;
		if (p >= c->end)
			return c->bad = true, 0;
		b = *p++;
		v = (v << 7) + (b & 127);
	}
	c->p = p;
	return v;
}

/* The NUL-terminated string at c, or NULL (none before the end). */
static const char *string(struct cursor *c)
{
	const unsigned char *nul;
	const char *s = (const char *)c->p;

	if (c->p >= c->end || !(nul = memchr(c->p, 0, (size_t)(c->end - c->p))))
		return c->bad = true, NULL;
	c->p = nul + 1;
	return s;
}

static void skip(struct cursor *c, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		c->bad = true, c->p = c->end;
	else
		c->p += n;
}

/* Past the entries of an index of version v: 0 or -1. */
static int skip_entries(struct cursor *c, uint32_t v, uint32_t count)
{
	for (uint32_t i = 0; i < count && !c->bad; i++) {
		const unsigned char *start = c->p;
		size_t fixed = ENTRY_FIXED;

		if ((size_t)(c->end - c->p) < ENTRY_FIXED)
			return -1;
		if (v >= 3 && (c->p[60] & 0x40)) /* extended flags */
			fixed += 2;
		skip(c, fixed);
		if (v == 4) {
			varint(c); /* bytes of the previous name dropped */
			string(c);
		} else {
			string(c);
			/* 1 to 8 NULs: the entry's length a multiple of 8 */
			size_t used = (size_t)(c->p - start);
			size_t pad = (8 - used % 8) % 8;

			skip(c, pad);
		}
	}
	return c->bad ? -1 : 0;
}

/* The nth (from 0) extension named sig among those from c on: 1, 0 or
 * -1. */
static int find_extension(struct cursor *c, const char *sig, size_t nth,
			  const unsigned char **ext, size_t *extlen)
{
	while ((size_t)(c->end - c->p) >= 8) {
		uint32_t n = be32(c->p + 4);

		if ((size_t)(c->end - c->p) - 8 < n)
			return -1;
		if (!memcmp(c->p, sig, 4) && !nth--) {
			*ext = c->p + 8;
			*extlen = n;
			return 1;
		}
		c->p += 8 + (size_t)n;
	}
	return 0;
}

int hx_index_extension(const unsigned char *buf, size_t len, const char *sig,
		       size_t nth, const unsigned char **ext, size_t *extlen)
{
	struct cursor c = {buf + 12, buf + len, false};
	uint32_t v;

	if (len < 12 + HASH_LEN || memcmp(buf, "DIRC", 4))
		return -1;
	v = be32(buf + 4);
	if (v < 2 || v > 4)
		return -1;
	c.end -= HASH_LEN;
	if (skip_entries(&c, v, be32(buf + 8)))
		return -1;
	return find_extension(&c, sig, nth, ext, extlen);
}

/* An EOIE extension: its header, an offset and a hash. */
#define EOIE_LEN (8 + 4 + HASH_LEN)

int hx_index_extension_eoie(const unsigned char *buf, size_t len,
			    const char *sig, size_t nth,
			    const unsigned char **ext, size_t *extlen)
{
	struct cursor c;
	size_t end, off, p;

	if (len < 12 + EOIE_LEN + HASH_LEN || memcmp(buf, "DIRC", 4))
		return -1;
	end = len - HASH_LEN - EOIE_LEN;
	if (memcmp(buf + end, "EOIE", 4) || be32(buf + end + 4) != 4 + HASH_LEN)
		return 0;
	off = be32(buf + end + 8);
	if (off < 12 || off >= end)
		return 0;
	/* git's read_eoie_extension: the headers from off lead to it */
	for (p = off; p < end; p += 8 + (size_t)be32(buf + p + 4))
		if (end - p < 8)
			return 0;
	if (p != end)
		return 0;
	c = (struct cursor){buf + off, buf + end, false};
	return find_extension(&c, sig, nth, ext, extlen);
}

struct bitvec {
	size_t *bits, n, cap, max;
};

/* pos onto v (while below its max). 0 or -1 (memory). */
static int push(struct bitvec *v, uint64_t pos)
{
	size_t *nb;

	if (v->n >= v->max)
		return 0;
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 64;
		if (!(nb = realloc(v->bits, v->cap * sizeof(*nb))))
			return -1;
		v->bits = nb;
	}
	v->bits[v->n++] = (size_t)pos;
	return 0;
}

int hx_ewah_bits(const unsigned char *p, size_t len, size_t max, size_t **bits,
		 size_t *n, size_t *used)
{
	struct bitvec v = {.max = max};
	uint32_t nbits, nwords;
	uint64_t w = 0;

	*bits = NULL;
	*n = 0;
	if (len < 12)
		return -1;
	nbits = be32(p);
	nwords = be32(p + 4);
	if ((len - 12) / 8 < nwords)
		return -1;
	*used = 12 + (size_t)nwords * 8;
	p += 8;
	/* Each run-length word: its bit 0 the running bit, the next 32 the
	 * run's length in words, the top 31 the literal words after it. */
	for (size_t i = 0; i < nwords;) {
		uint64_t rlw = be64(p + 8 * i++);
		uint64_t run = (rlw >> 1) & 0xffffffffu, lits = rlw >> 33;

		/* A run's ones: at most nbits, at most max of them (a run
		 * may claim 2^38 bits). */
		for (uint64_t pos = w * 64; (rlw & 1) && pos < (w + run) * 64 &&
					    pos < nbits && v.n < v.max;
		     pos++)
			if (push(&v, pos))
				goto bad;
		w += run;
		if (lits > nwords - i)
			goto bad;
		for (uint64_t l = 0; l < lits; l++, w++) {
			uint64_t word = be64(p + 8 * i++);

			for (unsigned b = 0; b < 64; b++)
				if ((word >> b & 1) && w * 64 + b < nbits &&
				    push(&v, w * 64 + b))
					goto bad;
		}
	}
	*bits = v.bits;
	*n = v.n;
	return 0;
bad:
	free(v.bits);
	return -1;
}

/* Whether git can reach a directory block of this name from its
 * parent's: it looks a block up by a name read from the directory. */
static bool reachable_name(const char *name)
{
	return *name && !strchr(name, '/') && strcmp(name, ".") &&
	       strcmp(name, "..");
}

/* One directory block, the child of parent (or the root): its counts,
 * name and untracked names. 0, -1 malformed, -2 out of memory. */
static int read_block(struct cursor *c, struct hx_untr *u, size_t parent,
		      uint64_t *nsub)
{
	/* git holds both counts in 32 bits (read_one_dir's unsigned int):
	 * 2^32 names are none to it (the check took such a cache for
	 * malformed and looked at nothing: twentieth attack review) */
	uint64_t nnames = (uint32_t)varint(c);
	const char *name;
	struct hx_untr_dir *d = &u->dirs[u->n];

	*nsub = (uint32_t)varint(c);
	name = string(c);
	if (c->bad || nnames > (uint64_t)(c->end - c->p) ||
	    *nsub > (uint64_t)(c->end - c->p))
		return -1;
	u->n++;
	d->parent = parent;
	if (u->n == 1) {
		d->reachable = true; /* the root: its name is not looked at */
		d->path = strdup("");
	} else {
		const struct hx_untr_dir *p = &u->dirs[parent];

		d->reachable = p->reachable && reachable_name(name);
		if (asprintf(&d->path, "%s%s/", p->path, name) < 0)
			d->path = NULL;
	}
	if (!d->path || !(d->name = strdup(name)) ||
	    (nnames && !(d->names = calloc((size_t)nnames, sizeof(char *)))))
		return -2;
	for (uint64_t i = 0; i < nnames; i++) {
		const char *s = string(c);

		if (!s)
			return -1;
		if (!(d->names[d->nnames++] = strdup(s)))
			return -2;
	}
	return 0;
}

/* The blocks, in git's depth-first order (read_one_dir in git's dir.c),
 * without recursion: git takes any depth. 0, -1 or -2. */
static int read_tree(struct cursor *c, struct hx_untr *u, size_t ndirs)
{
	struct frame {
		size_t idx;
		uint64_t left;
	} *stack = calloc(ndirs, sizeof(*stack));
	size_t depth = 0;
	uint64_t nsub;
	int r = 0;

	if (!stack)
		return -2;
	do {
		size_t parent = depth ? stack[depth - 1].idx : 0;

		if (u->n >= ndirs || depth >= ndirs) {
			r = -1;
			break;
		}
		if (depth)
			stack[depth - 1].left--;
		if ((r = read_block(c, u, parent, &nsub)))
			break;
		stack[depth++] = (struct frame){u->n - 1, nsub};
		while (depth && !stack[depth - 1].left)
			depth--;
	} while (depth);
	free(stack);
	return r;
}

/* The bitmap at c, its bits below n, into *bits: 0 or -1. */
static int bitmap(struct cursor *c, size_t n, size_t **bits, size_t *nbits)
{
	size_t used;

	if (hx_ewah_bits(c->p, (size_t)(c->end - c->p), n, bits, nbits, &used))
		return -1;
	c->p += used;
	for (size_t i = 0; i < *nbits; i++)
		if ((*bits)[i] >= n)
			return -1;
	return 0;
}

int hx_untr_parse(const unsigned char *p, size_t len, struct hx_untr *u)
{
	struct cursor c = {p, p + len, false};
	size_t *valid = NULL, *check = NULL, *hashed = NULL, nv = 0, nc = 0,
	       nh = 0;
	uint64_t ident, ndirs;
	int r = -1;

	memset(u, 0, sizeof(*u));
	ident = varint(&c);
	if (c.bad || ident > len)
		return -1;
	skip(&c, (size_t)ident);
	if ((size_t)(c.end - c.p) < 2 * STAT_LEN + 4 + 2 * HASH_LEN)
		return -1;
	u->dir_flags = be32(c.p + 2 * STAT_LEN);
	skip(&c, 2 * STAT_LEN + 4 + 2 * HASH_LEN);
	string(&c); /* the per-directory exclude file's name */
	ndirs = varint(&c);
	/* A block is three bytes at least: more than that is not read by
	 * git either. */
	if (c.bad || ndirs > (uint64_t)(c.end - c.p) / 3)
		return -1;
	if (!ndirs)
		return 0;
	/* The blocks (names), then three bitmaps over them: valid,
	 * check-only, .gitignore hashed; then the valid ones' stat data. */
	if (!(u->dirs = calloc((size_t)ndirs, sizeof(*u->dirs)))) {
		r = -2;
		goto out;
	}
	if ((r = read_tree(&c, u, (size_t)ndirs)) || (r = -1, u->n != ndirs) ||
	    bitmap(&c, u->n, &valid, &nv) || bitmap(&c, u->n, &check, &nc) ||
	    bitmap(&c, u->n, &hashed, &nh) ||
	    (size_t)(c.end - c.p) / STAT_LEN < nv)
		goto out;
	for (size_t i = 0; i < nc; i++)
		u->dirs[check[i]].check_only = true;
	for (size_t i = 0; i < nv; i++, c.p += STAT_LEN) {
		u->dirs[valid[i]].valid = true;
		memcpy(u->dirs[valid[i]].stat, c.p, STAT_LEN);
	}
	r = 0;
out:
	free(valid);
	free(check);
	free(hashed);
	if (r)
		hx_untr_free(u);
	return r;
}

void hx_untr_free(struct hx_untr *u)
{
	for (size_t i = 0; u->dirs && i < u->n; i++) {
		for (size_t k = 0; k < u->dirs[i].nnames; k++)
			free(u->dirs[i].names[k]);
		free(u->dirs[i].names);
		free(u->dirs[i].path);
		free(u->dirs[i].name);
	}
	free(u->dirs);
	memset(u, 0, sizeof(*u));
}
