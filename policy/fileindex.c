/* The file rules' patterns by the directory their literal start names
 * (common/globindex.h), so that a decision matches the few that can
 * match a path rather than every one: the default policy has about 500,
 * and the scan of them took 10 to 17 us a write, made two or three
 * times a notified call. Decisions keep their order (ties go to the
 * first rule written): the candidates are marked in a bitmap of the
 * patterns in rule order and judged in that order. */
#include "policy/policy_int.h"

#include <stdlib.h>
#include <string.h>

struct hx_file_index {
	struct hx_glob_group *groups;
	size_t ngroups;
	uint32_t *ids;	     /* each group's ordinals, ascending */
	struct hx_fref *ord; /* ordinal -> rule, pattern, need */
	size_t npats;
};

struct entry {
	const char *key;
	size_t len;
	uint32_t id;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = hx_glob_key_cmp(x->key, x->len, y->key, y->len);

	return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* Each distinct key once, its ordinals in order. */
static int group(struct hx_arena *a, struct hx_file_index *ix)
{
	size_t n = ix->npats ? ix->npats : 1;
	struct entry *all = calloc(n, sizeof(*all));

	ix->groups = hx_arena_alloc(a, n * sizeof(*ix->groups));
	ix->ids = hx_arena_alloc(a, n * sizeof(*ix->ids));
	if (!all || !ix->groups || !ix->ids) {
		free(all);
		return -1;
	}
	for (uint32_t i = 0; i < ix->npats; i++)
		all[i] = (struct entry){ix->ord[i].pat->text,
					ix->ord[i].need.key, i};
	qsort(all, ix->npats, sizeof(*all), cmp_entry);
	ix->ngroups = 0;
	for (size_t i = 0; i < ix->npats; i++) {
		struct hx_glob_group *g = &ix->groups[ix->ngroups];

		if (!i || hx_glob_key_cmp(g[-1].key, g[-1].klen, all[i].key,
					  all[i].len)) {
			*g = (struct hx_glob_group){
			    all[i].key, (uint32_t)all[i].len, (uint32_t)i, 0};
			ix->ngroups++;
		}
		ix->groups[ix->ngroups - 1].count++;
		ix->ids[i] = all[i].id;
	}
	free(all);
	return 0;
}

int hx_file_index_build(struct hx_policy *p)
{
	struct hx_file_index *ix;
	size_t n = 0;

	p->files = NULL;
	for (size_t i = 0; i < p->nrules[HX_SEC_FILES]; i++)
		n += p->rules[HX_SEC_FILES][i].npats;
	if (n > HX_FILE_INDEX_MAX)
		return 0; /* decided by the scan */
	ix = hx_arena_alloc(&p->arena, sizeof(*ix));
	if (!ix || !(ix->ord = hx_arena_alloc(&p->arena,
					      (n ? n : 1) * sizeof(*ix->ord))))
		return -1;
	ix->npats = 0;
	for (size_t i = 0; i < p->nrules[HX_SEC_FILES]; i++) {
		const struct hx_rule *r = &p->rules[HX_SEC_FILES][i];

		for (size_t k = 0; k < r->npats; k++, ix->npats++) {
			ix->ord[ix->npats].rule = r;
			ix->ord[ix->npats].pat = &r->pats[k];
			hx_glob_need_of(r->pats[k].text,
					&ix->ord[ix->npats].need);
		}
	}
	if (group(&p->arena, ix))
		return -1;
	p->files = ix;
	return 0;
}

struct marking {
	const struct hx_file_index *ix;
	uint64_t *bits;
};

static void mark(const struct hx_glob_group *g, void *arg)
{
	struct marking *m = arg;

	for (uint32_t i = g->first; i < g->first + g->count; i++) {
		uint32_t id = m->ix->ids[i];

		m->bits[id / 64] |= 1ull << (id % 64);
	}
}

size_t hx_file_index_mark(const struct hx_file_index *ix, const char *path,
			  uint64_t bits[HX_FILE_INDEX_WORDS])
{
	struct marking m = {ix, bits};
	size_t words = (ix->npats + 63) / 64;

	memset(bits, 0, words * sizeof(*bits)); /* the patterns', not all */
	hx_glob_groups_visit(ix->groups, ix->ngroups, path, strlen(path), mark,
			     &m);
	return words;
}

const struct hx_fref *hx_file_index_ref(const struct hx_file_index *ix,
					size_t ordinal)
{
	return &ix->ord[ordinal];
}
