/* The masks' walk's triggers; see masktrig.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/masktrig.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/glob.h"
#include "policy/policy.h"

struct trigger {
	char *name;
	char *dir; /* "" for "**" / ".env" */
	size_t dirlen;
};

struct hx_masktrig {
	struct trigger *lit, *wild; /* lit sorted by name */
	size_t nlit, nwild, caplit;
	bool all; /* no shortcut: decide each */
};

/* The part of pattern before seg (its last name) that every path it
 * matches starts with: up to its first wildcard or escape, cut after a
 * '/'. */
static size_t literal_dirs(const char *pattern, const char *seg)
{
	size_t n = strcspn(pattern, "*?[\\");

	if (n > (size_t)(seg - pattern))
		n = (size_t)(seg - pattern);
	while (n && pattern[n - 1] != '/')
		n--;
	return n;
}

static bool add(struct hx_masktrig *t, const char *name, size_t nlen,
		const char *dir, size_t dirlen)
{
	struct trigger *v,
	    x = {strndup(name, nlen), strndup(dir, dirlen), dirlen};

	if (!x.name || !x.dir)
		goto fail;
	if (x.name[strcspn(x.name, "*?[\\")]) {
		if (t->nwild == HX_MASKTRIG_WILD_MAX) {
			t->all = true;
			goto fail;
		}
		t->wild[t->nwild++] = x;
		return true;
	}
	if (t->nlit == t->caplit) {
		size_t cap = t->caplit ? 2 * t->caplit : 256;

		if (!(v = realloc(t->lit, cap * sizeof(*v))))
			goto fail;
		t->lit = v;
		t->caplit = cap;
	}
	t->lit[t->nlit++] = x;
	return true;
fail:
	free(x.name);
	free(x.dir);
	return false;
}

/* A pattern's trigger: its last segment that is not "**", and the
 * directories it lies in. */
static void add_trigger(enum hx_verdict v, const char *pattern, void *arg)
{
	struct hx_masktrig *t = arg;
	const char *end = pattern + strlen(pattern), *seg;

	if (v == HX_VERDICT_ALLOW || t->all)
		return;
	while (end - pattern >= 3 && !strncmp(end - 3, "/**", 3))
		end -= 3;
	for (seg = end; seg > pattern && seg[-1] != '/'; seg--)
		;
	if (end == seg || !strncmp(seg, "**", 2)) {
		t->all = true; /* "**" alone: decide each */
		return;
	}
	/* its name with what follows it cut ("x/" "**": x) */
	if (!add(t, seg, (size_t)(end - seg), pattern,
		 literal_dirs(pattern, seg)) &&
	    !t->all)
		t->all = true; /* out of memory: no shortcut */
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct trigger *)a)->name,
		      ((const struct trigger *)b)->name);
}

int hx_masktrig_build(const struct hx_policy *p, struct hx_masktrig **out)
{
	struct hx_masktrig *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t || !(t->wild = calloc(HX_MASKTRIG_WILD_MAX, sizeof(*t->wild)))) {
		free(t);
		return -ENOMEM;
	}
	t->all =
	    hx_policy_default_verdict(p, HX_CAT_FILE_READ) != HX_VERDICT_ALLOW;
	if (!t->all)
		hx_policy_foreach_read_rule(p, add_trigger, t);
	if (t->all) {
		hx_masktrig_free(t);
		return 0;
	}
	if (t->nlit)
		qsort(t->lit, t->nlit, sizeof(*t->lit), by_name);
	*out = t;
	return 0;
}

static bool applies(const struct trigger *x, const char *path, size_t len)
{
	return x->dirlen <= len + 1 && !memcmp(path, x->dir, x->dirlen);
}

size_t hx_masktrig_enter(const struct hx_masktrig *t, const char *dir,
			 size_t len, unsigned short *act)
{
	size_t n = 0;

	for (size_t i = 0; t && i < t->nwild; i++)
		if (applies(&t->wild[i], dir, len))
			act[n++] = (unsigned short)i;
	return n;
}

bool hx_masktrig_may_deny(const struct hx_masktrig *t,
			  const unsigned short *act, size_t nact,
			  const char *path, size_t len)
{
	const char *name = path + len + 1;
	size_t lo = 0, hi;

	if (!t)
		return true;
	for (size_t i = 0; i < nact; i++)
		if (hx_glob_match(t->wild[act[i]].name, name))
			return true;
	/* the first literal trigger of this name, then each of them */
	for (hi = t->nlit; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->lit[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < t->nlit && !strcmp(t->lit[lo].name, name); lo++)
		if (applies(&t->lit[lo], path, len))
			return true;
	return false;
}

void hx_masktrig_free(struct hx_masktrig *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nlit; i++) {
		free(t->lit[i].name);
		free(t->lit[i].dir);
	}
	for (size_t i = 0; i < t->nwild; i++) {
		free(t->wild[i].name);
		free(t->wild[i].dir);
	}
	free(t->lit);
	free(t->wild);
	free(t);
}
