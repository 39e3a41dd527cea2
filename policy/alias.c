/* A second mount of what a rule names (hx_policy_vars.aliases): the
 * rule's patterns rebased onto the other mount point, so the policy, the
 * Landlock ruleset and the masks (all derived from the patterns) hold it
 * there too. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* path as a network rule's pattern: "unix:" and the path, parsed. */
static int net_pattern(struct hx_ld *l, const char *path, struct hx_pattern *pt)
{
	char text[PATH_MAX + 8];
	const char *why;
	size_t bad;

	snprintf(text, sizeof(text), "unix:%s", path);
	if (!(pt->text = hx_arena_strdup(&l->p->arena, text)))
		return -ENOMEM;
	if (hx_netpat_parse(&l->p->arena, text, &pt->u.net, &bad, &why))
		return -ENOMEM; /* put() validated the glob */
	pt->spec = hx_netpat_specificity(&pt->u.net);
	return 0;
}

/* The literal directories pattern p begins with, its escapes undone,
 * into lit (PATH_MAX): "/home/u/.ssh" of "/home/u/.ssh/" and its "**". False
 * for none (a relative pattern, "**" first). */
static bool literal_prefix(const char *p, char *lit)
{
	size_t n = 0, keep = 0;

	if (p[0] != '/')
		return false;
	for (; *p && n + 1 < PATH_MAX; p++) {
		if (*p == '/')
			keep = n;
		if (*p == '*' || *p == '?' || *p == '[')
			break;
		if (*p == '\\' && p[1])
			p++;
		lit[n++] = *p;
	}
	if (*p && n + 1 >= PATH_MAX)
		return false;
	if (*p)
		n = keep; /* the component with a wildcard is not literal */
	while (n > 1 && lit[n - 1] == '/')
		n--;
	lit[n] = '\0';
	return n > 1;
}

/* Whether the kernel meets a symbolic link on the way to path (or at
 * it): one lookup, for the common answer "no" (ENOENT before any link
 * is "no" too). */
static bool has_link(const char *path)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd >= 0) {
		struct stat st;
		bool link = !fstat(fd, &st) && S_ISLNK(st.st_mode);

		close(fd);
		return link;
	}
	return errno == ELOOP;
}

/* Rebases pattern p onto the real path of its literal directories when
 * a symbolic link is on their way: every path judged is judged resolved
 * too, and a rule that names a place through a link ($HOME of /home/u
 * -> /var/home/u, ~/.ssh -> ~/dotfiles/ssh) matched none of them. The
 * deepest one there now is resolved. */
static void rebase_real(const char *p, struct out *o)
{
	char lit[PATH_MAX], to[PATH_MAX], *real = NULL, *slash;

	if (!literal_prefix(p, lit) || !has_link(lit))
		return;
	while (!(real = realpath(lit, NULL)) && (slash = strrchr(lit, '/')) &&
	       slash != lit)
		*slash = '\0';
	if (real && strcmp(real, lit) && !hx_glob_escape(real, to, sizeof(to)))
		rebase(p, lit, to, o);
	free(real);
}

/* Appends to r the patterns of r rebased through every alias; a
 * network rule's unix socket paths (not abstract names, not hosts). */
static int alias_rule(struct hx_ld *l, struct hx_rule *r, bool net)
{
	const struct hx_policy_vars *v = l->vars;
	struct hx_pattern *pats;
	size_t n = r->npats, n0 = r->npats;
	int ret = 0;

	/* The rule's own patterns only: an alias of an alias (two binds
	 * of one directory) is an alias of the directory too. */
	for (size_t i = 0; i < n0; i++) {
		const struct hx_netpat *np = &r->pats[i].u.net;
		const char *text = net ? np->name : r->pats[i].text;
		struct out *o;

		if (net && (np->kind != HX_NH_UNIX || text[0] != '/'))
			continue;
		if (!(o = malloc(sizeof(*o))))
			return -ENOMEM;
		o->n = 0;
		for (size_t a = 0; a < v->nalias; a++)
			rebase(text, v->alias_from[a], v->alias_to[a], o);
		if (v->real_prefixes)
			rebase_real(text, o);
		pats = o->n ? hx_arena_alloc(&l->p->arena,
					     (n + o->n) * sizeof(*pats))
			    : NULL;
		if (o->n && !pats)
			ret = -ENOMEM;
		if (pats) {
			memcpy(pats, r->pats, n * sizeof(*pats));
			for (size_t k = 0; !ret && k < o->n; k++, n++) {
				memset(&pats[n], 0, sizeof(pats[n]));
				if (net) {
					ret = net_pattern(l, o->pats[k],
							  &pats[n]);
					continue;
				}
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
	static const int secs[] = {HX_SEC_FILES, HX_SEC_NET};
	struct hx_policy *p = l->p;
	int ret = 0;

	if (!l->vars->nalias && !l->vars->real_prefixes)
		return 0;
	if (p->protect.npats)
		ret = alias_rule(l, &p->protect, false);
	if (!ret && p->protect_write.npats)
		ret = alias_rule(l, &p->protect_write, false);
	/* What is refused or asked; an allow stays where it is. A unix
	 * socket's path too: the system bus denied at /run/dbus was
	 * reached under a second mount of /run/dbus (twenty-fourth attack
	 * review, part b). */
	for (size_t k = 0; !ret && k < sizeof(secs) / sizeof(*secs); k++) {
		int sec = secs[k];

		for (size_t i = 0; !ret && i < p->nrules[sec]; i++) {
			struct hx_rule *r = &p->rules[sec][i];

			if (r->verdict != HX_VERDICT_ALLOW)
				ret = alias_rule(l, r, sec == HX_SEC_NET);
		}
	}
	return ret;
}
