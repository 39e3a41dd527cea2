/* Reading a policy's YAML nodes for the loader (load_int.h): positions,
 * errors naming them, typed scalars, key checks, string lists. */
#include "policy/load_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hx_pos hx_node_pos(const yaml_node_t *n)
{
	struct hx_pos pos = {(unsigned)n->start_mark.line + 1,
			     (unsigned)n->start_mark.column + 1};

	if (n->type == YAML_SCALAR_NODE &&
	    (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
	     n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE))
		pos.column++;
	return pos;
}

int hx_node_fail(struct hx_ld *l, const yaml_node_t *n, const char *hint,
		 const char *msg)
{
	struct hx_pos pos = n ? hx_node_pos(n) : (struct hx_pos){0, 0};

	return hx_policy_fail(l->err, l->file, pos.line, pos.column, hint, "%s",
			      msg);
}

static void join_words(char *buf, size_t size, const char *lead,
		       const char *const *words)
{
	size_t n = (size_t)snprintf(buf, size, "%s", lead);

	for (size_t i = 0; words[i] && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
				      words[i]);
}

int hx_node_get(struct hx_ld *l, int id, yaml_node_t **out)
{
	yaml_node_t *n = yaml_document_get_node(&l->doc, id);
	size_t i;

	if (!n)
		return hx_policy_fail(l->err, l->file, 1, 1, NULL,
				      "internal error: bad YAML node");
	i = (size_t)(n - l->doc.nodes.start);
	if (l->seen[i])
		return hx_node_fail(
		    l, n, "write the value out instead of *alias",
		    "YAML aliases are not supported in a policy");
	l->seen[i] = 1;
	*out = n;
	return 0;
}

int hx_node_scalar(struct hx_ld *l, const yaml_node_t *n, const char *what,
		   const char **out)
{
	char msg[128];

	if (n->type != YAML_SCALAR_NODE) {
		snprintf(msg, sizeof(msg), "%s must be a %s", what,
			 "string, not a list or a mapping");
		return hx_node_fail(l, n, NULL, msg);
	}
	if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length)
		return hx_node_fail(l, n, NULL, "NUL byte in a string");
	*out = (const char *)n->data.scalar.value;
	return 0;
}

int hx_node_word(struct hx_ld *l, const yaml_node_t *n, const char *what,
		 const char *const *words, int *out)
{
	char msg[128], hint[256];
	const char *s;
	int ret = hx_node_scalar(l, n, what, &s);

	if (ret)
		return ret;
	for (int i = 0; words[i]; i++) {
		if (!strcmp(words[i], s)) {
			*out = i;
			return 0;
		}
	}
	snprintf(msg, sizeof(msg), "invalid %s '%.60s'", what, s);
	join_words(hint, sizeof(hint), "valid values: ", words);
	return hx_node_fail(l, n, hint, msg);
}

int hx_node_bool(struct hx_ld *l, const yaml_node_t *n, const char *what,
		 bool *out)
{
	static const char *const words[] = {"false", "true", "no", "yes", NULL};
	int i, ret = hx_node_word(l, n, what, words, &i);

	if (!ret)
		*out = i & 1;
	return ret;
}

int hx_node_keys(struct hx_ld *l, const yaml_node_t *map, const char *where,
		 const char *const *valid)
{
	char msg[160], hint[256];

	if (map->type != YAML_MAPPING_NODE) {
		snprintf(msg, sizeof(msg), "%s must be a mapping", where);
		join_words(hint, sizeof(hint), "keys: ", valid);
		return hx_node_fail(l, map, hint, msg);
	}
	for (yaml_node_pair_t *a = map->data.mapping.pairs.start;
	     a < map->data.mapping.pairs.top; a++) {
		yaml_node_t *k = yaml_document_get_node(&l->doc, a->key);
		const char *s;
		bool ok = false;
		int ret;

		if (!k)
			return hx_policy_fail(l->err, l->file, 1, 1, NULL,
					      "internal error: bad YAML node");
		ret = hx_node_scalar(l, k, "a key", &s);
		if (ret)
			return ret;
		for (size_t i = 0; valid[i]; i++)
			ok |= !strcmp(valid[i], s);
		if (!ok) {
			snprintf(msg, sizeof(msg), "unknown key '%.60s' in %s",
				 s, where);
			join_words(hint, sizeof(hint), "valid keys: ", valid);
			return hx_node_fail(l, k, hint, msg);
		}
		for (yaml_node_pair_t *b = map->data.mapping.pairs.start; b < a;
		     b++) {
			yaml_node_t *kb =
			    yaml_document_get_node(&l->doc, b->key);

			if (kb && kb->type == YAML_SCALAR_NODE &&
			    !strcmp((const char *)kb->data.scalar.value, s)) {
				snprintf(msg, sizeof(msg),
					 "duplicate key '%.60s' in %s", s,
					 where);
				return hx_node_fail(l, k, NULL, msg);
			}
		}
	}
	return 0;
}

const char *hx_node_key(struct hx_ld *l, const yaml_node_pair_t *pair)
{
	yaml_node_t *k = yaml_document_get_node(&l->doc, pair->key);

	return (const char *)k->data.scalar.value;
}

int hx_node_strings(struct hx_ld *l, yaml_node_t *n, const char *what,
		    yaml_node_t ***items, size_t *count)
{
	char msg[128];
	size_t cnt;
	yaml_node_t **v;
	int ret;

	if (n->type == YAML_MAPPING_NODE) {
		snprintf(msg, sizeof(msg),
			 "%s must be a string or a list of strings", what);
		return hx_node_fail(l, n, NULL, msg);
	}
	cnt = n->type == YAML_SCALAR_NODE
		  ? 1
		  : (size_t)(n->data.sequence.items.top -
			     n->data.sequence.items.start);
	v = hx_arena_alloc(&l->p->arena, (cnt ? cnt : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (n->type == YAML_SCALAR_NODE) {
		v[0] = n;
	} else {
		for (size_t i = 0; i < cnt; i++) {
			ret = hx_node_get(l, n->data.sequence.items.start[i],
					  &v[i]);
			if (ret)
				return ret;
		}
	}
	for (size_t i = 0; i < cnt; i++) {
		const char *s;

		ret = hx_node_scalar(l, v[i], what, &s);
		if (ret)
			return ret;
	}
	*items = v;
	*count = cnt;
	return 0;
}

size_t hx_node_len(const yaml_node_t *n)
{
	if (n->type == YAML_SEQUENCE_NODE)
		return (size_t)(n->data.sequence.items.top -
				n->data.sequence.items.start);
	return 1;
}

/* 10 for K, 20 for M, 30 for G, 40 for T, else 0. */
static unsigned size_shift(char c)
{
	static const char units[] = "KMGT";
	const char *u = c ? strchr(units, c) : NULL;

	return u ? 10u * (unsigned)(u - units + 1) : 0;
}

int hx_load_quantity(const char *s, bool bytes, uint64_t *out)
{
	unsigned shift = 0;
	char *end;
	uint64_t v;

	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (bytes && end[0] && !end[1])
		shift = size_shift(end[0]);
	if (errno || (end[0] && !shift) || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = v << shift;
	return 0;
}
