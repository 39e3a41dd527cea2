/* Packed YAML documents; see yamlpack.h. */
#include "policy/yamlpack.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC	"HXYP"
#define VERSION 1
#define NO_TAG	UINT32_MAX

struct pk_mark {
	uint32_t index, line, column;
};

struct pk_head {
	char magic[4];
	uint32_t version, nnodes, nitems, npairs, npool;
	uint32_t start_implicit, end_implicit;
	struct pk_mark start, end;
};

/* a, b: a scalar's value (pool offset) and length; a sequence's first
 * item and count; a mapping's first pair and count. */
struct pk_node {
	uint32_t type, style, tag, a, b;
	struct pk_mark start, end;
};

struct pk_pair {
	uint32_t key, value;
};

/* ---- packing (at build time, and in the tests) ---- */

struct packer {
	struct pk_head h;
	struct pk_node *nodes;
	uint32_t *items;
	struct pk_pair *pairs;
	char *pool;
	size_t pool_cap;
	bool oom;
};

static struct pk_mark mark_of(yaml_mark_t m)
{
	return (struct pk_mark){(uint32_t)m.index, (uint32_t)m.line,
				(uint32_t)m.column};
}

static uint32_t pool_add(struct packer *k, const void *s, size_t n)
{
	uint32_t off = k->h.npool;

	if (k->h.npool + n + 1 > k->pool_cap) {
		size_t cap = (k->h.npool + n + 1) * 2;
		char *p = realloc(k->pool, cap);

		if (!p) {
			k->oom = true;
			return 0;
		}
		k->pool = p;
		k->pool_cap = cap;
	}
	memcpy(k->pool + off, s, n);
	k->pool[off + n] = '\0';
	k->h.npool += (uint32_t)n + 1;
	return off;
}

/* The few tags there are (libyaml's resolved ones), each once. */
static uint32_t tag_add(struct packer *k, const char *tag)
{
	for (uint32_t i = 0; i < k->h.nnodes; i++)
		if (k->nodes[i].tag != NO_TAG &&
		    !strcmp(k->pool + k->nodes[i].tag, tag))
			return k->nodes[i].tag;
	return pool_add(k, tag, strlen(tag));
}

static void pack_node(struct packer *k, const yaml_node_t *n,
		      struct pk_node *out)
{
	*out = (struct pk_node){.type = (uint32_t)n->type,
				.tag = NO_TAG,
				.start = mark_of(n->start_mark),
				.end = mark_of(n->end_mark)};
	if (n->tag)
		out->tag = tag_add(k, (const char *)n->tag);
	switch (n->type) {
	case YAML_SCALAR_NODE:
		out->style = (uint32_t)n->data.scalar.style;
		out->a =
		    pool_add(k, n->data.scalar.value, n->data.scalar.length);
		out->b = (uint32_t)n->data.scalar.length;
		break;
	case YAML_SEQUENCE_NODE:
		out->style = (uint32_t)n->data.sequence.style;
		out->a = k->h.nitems;
		for (yaml_node_item_t *i = n->data.sequence.items.start;
		     i < n->data.sequence.items.top; i++)
			k->items[k->h.nitems++] = (uint32_t)*i;
		out->b = k->h.nitems - out->a;
		break;
	case YAML_MAPPING_NODE:
		out->style = (uint32_t)n->data.mapping.style;
		out->a = k->h.npairs;
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++)
			k->pairs[k->h.npairs++] = (struct pk_pair){
			    (uint32_t)p->key, (uint32_t)p->value};
		out->b = k->h.npairs - out->a;
		break;
	default:
		break;
	}
}

static void *emit(struct packer *k, size_t *size)
{
	size_t n = sizeof(k->h) + k->h.nnodes * sizeof(*k->nodes) +
		   k->h.nitems * sizeof(*k->items) +
		   k->h.npairs * sizeof(*k->pairs) + k->h.npool;
	char *out = k->oom ? NULL : malloc(n), *p = out;

	if (!out)
		return NULL;
#define PUT(src, len)                                                          \
	do {                                                                   \
		memcpy(p, src, len);                                           \
		p += len;                                                      \
	} while (0)
	PUT(&k->h, sizeof(k->h));
	PUT(k->nodes, k->h.nnodes * sizeof(*k->nodes));
	PUT(k->items, k->h.nitems * sizeof(*k->items));
	PUT(k->pairs, k->h.npairs * sizeof(*k->pairs));
	PUT(k->pool, k->h.npool);
#undef PUT
	*size = n;
	return out;
}

/* Counts a document's items and pairs, for the arrays to hold them. */
static void count(const yaml_document_t *d, size_t *items, size_t *pairs)
{
	*items = *pairs = 0;
	for (yaml_node_t *n = d->nodes.start; n < d->nodes.top; n++)
		if (n->type == YAML_SEQUENCE_NODE)
			*items += (size_t)(n->data.sequence.items.top -
					   n->data.sequence.items.start);
		else if (n->type == YAML_MAPPING_NODE)
			*pairs += (size_t)(n->data.mapping.pairs.top -
					   n->data.mapping.pairs.start);
}

void *hx_yamlpack_pack(const char *text, size_t len, size_t *size)
{
	yaml_parser_t ps;
	yaml_document_t d, extra;
	struct packer k = {0};
	size_t nitems, npairs, nnodes;
	void *out = NULL;
	bool ok;

	if (!yaml_parser_initialize(&ps))
		return NULL;
	yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
	ok = yaml_parser_load(&ps, &d);
	if (ok && !yaml_parser_load(&ps, &extra)) {
		yaml_document_delete(&d);
		ok = false;
	} else if (ok) {
		/* One document, as the loader wants. */
		ok = !yaml_document_get_root_node(&extra) &&
		     yaml_document_get_root_node(&d);
		yaml_document_delete(&extra);
		if (!ok)
			yaml_document_delete(&d);
	}
	yaml_parser_delete(&ps);
	if (!ok)
		return NULL;
	nnodes = (size_t)(d.nodes.top - d.nodes.start);
	count(&d, &nitems, &npairs);
	k.nodes = calloc(nnodes + 1, sizeof(*k.nodes));
	k.items = calloc(nitems + 1, sizeof(*k.items));
	k.pairs = calloc(npairs + 1, sizeof(*k.pairs));
	if (k.nodes && k.items && k.pairs) {
		memcpy(k.h.magic, MAGIC, 4);
		k.h.version = VERSION;
		k.h.start_implicit = (uint32_t)d.start_implicit;
		k.h.end_implicit = (uint32_t)d.end_implicit;
		k.h.start = mark_of(d.start_mark);
		k.h.end = mark_of(d.end_mark);
		for (size_t i = 0; i < nnodes; i++) {
			pack_node(&k, d.nodes.start + i, &k.nodes[i]);
			k.h.nnodes++;
		}
		out = emit(&k, size);
	}
	yaml_document_delete(&d);
	free(k.nodes);
	free(k.items);
	free(k.pairs);
	free(k.pool);
	return out;
}

/* ---- unpacking (at every load of an embedded text) ---- */

static yaml_mark_t mark_to(struct pk_mark m)
{
	return (yaml_mark_t){m.index, m.line, m.column};
}

/* Whether [off, off + len] (its NUL) lies in the pool and ends there. */
static bool in_pool(const char *pool, uint32_t npool, uint32_t off,
		    uint32_t len)
{
	return off < npool && len < npool - off && !pool[off + len];
}

static bool node_ok(const struct pk_head *h, const struct pk_node *n,
		    const char *pool)
{
	if (n->tag != NO_TAG && (n->tag >= h->npool ||
				 !memchr(pool + n->tag, 0, h->npool - n->tag)))
		return false;
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return in_pool(pool, h->npool, n->a, n->b);
	case YAML_SEQUENCE_NODE:
		return n->a <= h->nitems && n->b <= h->nitems - n->a;
	case YAML_MAPPING_NODE:
		return n->a <= h->npairs && n->b <= h->npairs - n->a;
	default:
		return false;
	}
}

static int fill(const struct pk_head *h, const struct pk_node *pn,
		const uint32_t *pi, const struct pk_pair *pp, const char *pool,
		yaml_document_t *doc)
{
	/* One block, the nodes first: hx_yamlpack_free frees it. */
	yaml_node_t *nodes =
	    calloc(1, h->nnodes * sizeof(*nodes) +
			  h->npairs * sizeof(yaml_node_pair_t) +
			  h->nitems * sizeof(yaml_node_item_t));
	yaml_node_pair_t *pairs = (yaml_node_pair_t *)(nodes + h->nnodes);
	yaml_node_item_t *items = (yaml_node_item_t *)(pairs + h->npairs);

	if (!nodes)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->nitems; i++)
		items[i] = (yaml_node_item_t)pi[i];
	for (uint32_t i = 0; i < h->npairs; i++)
		pairs[i] = (yaml_node_pair_t){(int)pp[i].key, (int)pp[i].value};
	for (uint32_t i = 0; i < h->nnodes; i++) {
		const struct pk_node *p = pn + i;
		yaml_node_t *n = nodes + i;

		n->type = (yaml_node_type_t)p->type;
		/* libyaml's types are not const; nothing writes them. */
		n->tag =
		    p->tag == NO_TAG ? NULL : (yaml_char_t *)(pool + p->tag);
		n->start_mark = mark_to(p->start);
		n->end_mark = mark_to(p->end);
		if (p->type == YAML_SCALAR_NODE) {
			n->data.scalar.value = (yaml_char_t *)(pool + p->a);
			n->data.scalar.length = p->b;
			n->data.scalar.style = (yaml_scalar_style_t)p->style;
		} else if (p->type == YAML_SEQUENCE_NODE) {
			n->data.sequence.items.start = items + p->a;
			n->data.sequence.items.top =
			    n->data.sequence.items.end = items + p->a + p->b;
			n->data.sequence.style =
			    (yaml_sequence_style_t)p->style;
		} else {
			n->data.mapping.pairs.start = pairs + p->a;
			n->data.mapping.pairs.top = n->data.mapping.pairs.end =
			    pairs + p->a + p->b;
			n->data.mapping.style = (yaml_mapping_style_t)p->style;
		}
	}
	memset(doc, 0, sizeof(*doc));
	doc->nodes.start = nodes;
	doc->nodes.top = doc->nodes.end = nodes + h->nnodes;
	doc->start_implicit = (int)h->start_implicit;
	doc->end_implicit = (int)h->end_implicit;
	doc->start_mark = mark_to(h->start);
	doc->end_mark = mark_to(h->end);
	return 0;
}

int hx_yamlpack_unpack(const void *blob, size_t size, yaml_document_t *doc)
{
	const char *b = blob;
	struct pk_head h;
	const struct pk_node *pn;
	const uint32_t *pi;
	const struct pk_pair *pp;
	const char *pool;
	size_t need;

	if (size < sizeof(h) || ((uintptr_t)b & 3))
		return -EINVAL;
	memcpy(&h, b, sizeof(h));
	need = sizeof(h) + (size_t)h.nnodes * sizeof(*pn) +
	       (size_t)h.nitems * sizeof(*pi) + (size_t)h.npairs * sizeof(*pp) +
	       h.npool;
	if (memcmp(h.magic, MAGIC, 4) || h.version != VERSION || !h.nnodes ||
	    h.nnodes > INT32_MAX || need != size)
		return -EINVAL;
	pn = (const struct pk_node *)(b + sizeof(h));
	pi = (const uint32_t *)(pn + h.nnodes);
	pp = (const struct pk_pair *)(pi + h.nitems);
	pool = (const char *)(pp + h.npairs);
	for (uint32_t i = 0; i < h.nnodes; i++)
		if (!node_ok(&h, pn + i, pool))
			return -EINVAL;
	for (uint32_t i = 0; i < h.nitems; i++)
		if (!pi[i] || pi[i] > h.nnodes)
			return -EINVAL;
	for (uint32_t i = 0; i < h.npairs; i++)
		if (!pp[i].key || pp[i].key > h.nnodes || !pp[i].value ||
		    pp[i].value > h.nnodes)
			return -EINVAL;
	return fill(&h, pn, pi, pp, pool, doc);
}

void hx_yamlpack_free(yaml_document_t *doc)
{
	free(doc->nodes.start);
	memset(doc, 0, sizeof(*doc));
}
