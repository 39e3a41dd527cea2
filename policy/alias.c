/* A second mount of what a rule names (hx_policy_vars.aliases): the
 * rule's patterns rebased onto the other mount point, so the policy, the
 * Landlock ruleset and the masks (all derived from the patterns) hold it
 * there too. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/glob.h"
#include "policy/load_int.h"

#define MAX_OUT 8 /* rebased forms of one pattern through one alias */

struct out {
	char pats[MAX_OUT][PATH_MAX];
	size_t n;
};

static void put(struct out *o, const char *to, const char *rest)
{
	size_t off;
	const char *why;

	if (o->n == MAX_OUT ||
	    snprintf(o->pats[o->n], PATH_MAX, "%s%s%s", to, *rest ? "/" : "",
		     rest) >= PATH_MAX ||
	    hx_glob_validate(o->pats[o->n], &off, &why))
		return;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->pats[i], o->pats[o->n]))
			return;
	o->n++;
}

/* Whether component c (of len n) of a pattern matches name (of len m). */
static bool comp_match(const char *c, size_t n, const char *name, size_t m)
{
	char pc[NAME_MAX + 1], nc[NAME_MAX + 1];

	if (n > NAME_MAX || m > NAME_MAX)
		return false;
	memcpy(pc, c, n);
	pc[n] = '\0';
	memcpy(nc, name, m);
	nc[m] = '\0';
	return hx_glob_match(pc, nc);
}

/* The paths of pattern p (what is left of it, at a component's start)
 * beneath the literal directory f (what is left of it), as named beneath
 * to. A "**" may take any number of f's components. */
static void rebase(const char *p, const char *f, const char *to, struct out *o)
{
	const char *pe, *fe;

	while (*p == '/')
		p++;
	while (*f == '/')
		f++;
	if (!*f) {
		put(o, to, p); /* the rest, beneath to */
		return;
	}
	if (!*p)
		return; /* names an ancestor of f: nothing beneath it */
	pe = p + strcspn(p, "/");
	fe = f + strcspn(f, "/");
	if (pe - p == 2 && !strncmp(p, "**", 2)) {
		put(o, to, p);	      /* it takes all of f and goes on */
		rebase(pe, f, to, o); /* it takes none */
		for (const char *s = fe; *s; s += strcspn(s + 1, "/") + 1)
			rebase(pe, s, to, o); /* it takes some */
		return;
	}
	if (comp_match(p, (size_t)(pe - p), f, (size_t)(fe - f)))
		rebase(pe, fe, to, o);
}

/* Appends to r the patterns of r rebased through every alias. */
static int alias_rule(struct hx_ld *l, struct hx_rule *r)
{
	const struct hx_policy_vars *v = l->vars;
	struct hx_pattern *pats;
	size_t n = r->npats, n0 = r->npats;
	int ret = 0;

	/* The rule's own patterns only: an alias of an alias (two binds
	 * of one directory) is an alias of the directory too. */
	for (size_t i = 0; i < n0; i++) {
		struct out *o = malloc(sizeof(*o));

		if (!o)
			return -ENOMEM;
		o->n = 0;
		for (size_t a = 0; a < v->nalias; a++)
			rebase(r->pats[i].text, v->alias_from[a],
			       v->alias_to[a], o);
		pats = o->n ? hx_arena_alloc(&l->p->arena,
					     (n + o->n) * sizeof(*pats))
			    : NULL;
		if (o->n && !pats)
			ret = -ENOMEM;
		if (pats) {
			memcpy(pats, r->pats, n * sizeof(*pats));
			for (size_t k = 0; !ret && k < o->n; k++, n++) {
				memset(&pats[n], 0, sizeof(pats[n]));
				pats[n].text =
				    hx_arena_strdup(&l->p->arena, o->pats[k]);
				pats[n].spec = hx_glob_specificity(o->pats[k]);
				if (!pats[n].text)
					ret = -ENOMEM;
			}
			r->pats = pats;
			r->npats = n;
		}
		free(o);
		if (ret)
			return ret;
	}
	return 0;
}

int hx_rules_aliases(struct hx_ld *l)
{
	struct hx_policy *p = l->p;
	int ret = 0;

	if (!l->vars->nalias)
		return 0;
	if (p->protect.npats)
		ret = alias_rule(l, &p->protect);
	if (!ret && p->protect_write.npats)
		ret = alias_rule(l, &p->protect_write);
	for (size_t i = 0; !ret && i < p->nrules[HX_SEC_FILES]; i++) {
		struct hx_rule *r = &p->rules[HX_SEC_FILES][i];

		/* What is refused or asked; an allow stays where it is. */
		if (r->verdict != HX_VERDICT_ALLOW)
			ret = alias_rule(l, r);
	}
	return ret;
}
