/* A second mount of what a rule names (hx_policy_vars.aliases): the
 * rule's patterns rebased onto the other mount point, so the policy, the
 * Landlock ruleset and the masks (all derived from the patterns) hold it
 * there too. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/glob.h"
#include "policy/load_int.h"

#define MAX_OUT 256 /* rebased forms of one pattern through its aliases */

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
 * into lit (PATH_MAX): "/home/u/.ssh" of "/home/u/.ssh/" and its "**";
 * *wild the component after them that is not literal (NULL: none).
 * False for none (a relative pattern, "**" first). */
static bool literal_prefix(const char *p, char *lit, const char **wild)
{
	const char *comp = p;
	size_t n = 0, keep = 0;

	*wild = NULL;
	if (p[0] != '/')
		return false;
	for (; *p && n + 1 < PATH_MAX; p++) {
		if (*p == '/') {
			keep = n;
			comp = p + 1;
		}
		if (*p == '*' || *p == '?' || *p == '[')
			break;
		if (*p == '\\' && p[1])
			p++;
		lit[n++] = *p;
	}
	if (*p && n + 1 >= PATH_MAX)
		return false;
	if (*p) {
		n = keep; /* the component with a wildcard is not literal */
		*wild = comp;
	}
	while (n > 1 && lit[n - 1] == '/')
		n--;
	lit[n] = '\0';
	return n > 1;
}

/* The symbolic links of directories, each listed once a load. */
struct linkdir {
	char *dir;
	char *names; /* each NUL-ended, then an empty one */
};

struct linkdirs {
	struct linkdir *d;
	size_t n, cap;
	void *seen;	/* tsearch(3) tree of struct seen */
	void *listings; /* tsearch(3) tree of struct listing */
};

/* The names of dir's entries that are symbolic links ("" for none, or
 * a directory that cannot be listed); NULL when out of memory. */
static const char *links_of(struct linkdirs *c, const char *dir)
{
	struct linkdir *e;
	struct dirent *de;
	size_t len = 0, cap = 64;
	DIR *d;

	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->d[i].dir, dir))
			return c->d[i].names;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 16;
		struct linkdir *nd = realloc(c->d, ncap * sizeof(*nd));

		if (!nd)
			return NULL;
		c->d = nd;
		c->cap = ncap;
	}
	e = &c->d[c->n];
	if (!(e->dir = strdup(dir)) || !(e->names = malloc(cap))) {
		free(e->dir);
		return NULL;
	}
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		struct stat st;
		size_t k = strlen(de->d_name) + 1;
		char *nn;

		if (de->d_type != DT_LNK &&
		    (de->d_type != DT_UNKNOWN ||
		     fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		     !S_ISLNK(st.st_mode)))
			continue;
		if (len + k + 1 > cap) {
			if (!(nn = realloc(e->names, 2 * cap + k)))
				break; /* the links so far */
			e->names = nn;
			cap = 2 * cap + k;
		}
		memcpy(e->names + len, de->d_name, k);
		len += k;
	}
	if (d)
		closedir(d);
	e->names[len] = '\0';
	c->n++;
	return e->names;
}

/* What lstat(2) said of a path, asked once a load: most patterns share
 * their first directories ($HOME, ~/.config), and a walk down each
 * pattern's own asked the kernel twice as often. */
struct seen {
	char *path;
	char state; /* 'd': walked on, 'l': a link, 'x': the walk ends */
};

static int seen_cmp(const void *a, const void *b)
{
	return strcmp(((const struct seen *)a)->path,
		      ((const struct seen *)b)->path);
}

static void seen_free(void *p)
{
	free(((struct seen *)p)->path);
	free(p);
}

/* A directory's entries, listed once a load after a few of its names
 * were asked: most patterns name what is absent ($HOME's and
 * ~/.config's files of tools not installed), each asked by an lstat(2)
 * that failed ENOENT, about 1,000 a start. */
#define LIST_AFTER   4	  /* names asked in a directory before it is listed */
#define LIST_ENTRIES 4096 /* a larger directory is asked name by name */

struct listing {
	char *dir;
	unsigned asked;
	bool tried;
	size_t n;
	char **names; /* sorted; each name's d_type in the byte before it */
};

static int listing_cmp(const void *a, const void *b)
{
	return strcmp(((const struct listing *)a)->dir,
		      ((const struct listing *)b)->dir);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i] - 1);
	free(l->names);
	l->names = NULL;
	l->n = 0;
}

static void listing_free(void *p)
{
	struct listing *l = p;

	names_free(l);
	free(l->dir);
	free(l);
}

/* Lists l->dir: only where the kernel's walk may look in it (searchable:
 * a name there is otherwise EACCES, as the lstat it stands for), and
 * whole (a name left out would read as absent). */
static void list_dir(struct listing *l)
{
	DIR *d = opendir(l->dir);
	struct dirent *de;
	size_t cap = 0;
	bool whole = false;

	l->tried = true;
	if (!d || faccessat(dirfd(d), ".", X_OK, AT_EACCESS))
		goto out;
	errno = 0;
	while ((de = readdir(d))) {
		size_t k = strlen(de->d_name);
		char *e, **nn;

		if (l->n == LIST_ENTRIES)
			goto out;
		if (l->n == cap) {
			cap = cap ? 2 * cap : 32;
			if (!(nn = realloc(l->names, cap * sizeof(*nn))))
				goto out;
			l->names = nn;
		}
		if (!(e = malloc(k + 2)))
			goto out;
		e[0] = (char)de->d_type;
		memcpy(e + 1, de->d_name, k + 1);
		l->names[l->n++] = e + 1;
	}
	whole = !errno;
out:
	if (d)
		closedir(d);
	if (whole)
		qsort(l->names, l->n, sizeof(*l->names), name_cmp);
	else
		names_free(l);
}

/* What the listing of path's directory says of it (as state_of), or 0
 * where only an lstat can say: not listed (yet), or no d_type. */
static char listed_state(struct linkdirs *c, const char *path)
{
	const char *slash = strrchr(path, '/'), *name = slash + 1, **hit;
	struct listing key, *l, **found;
	char dir[PATH_MAX];
	size_t n;
	unsigned char type;

	if (!slash || !*name || (size_t)(slash - path) >= sizeof(dir))
		return 0;
	n = slash == path ? 1 : (size_t)(slash - path); /* "/x": "/" */
	memcpy(dir, path, n);
	dir[n] = '\0';
	key.dir = dir;
	if (!(found = tfind(&key, &c->listings, listing_cmp))) {
		if (!(l = calloc(1, sizeof(*l))) || !(l->dir = strdup(dir))) {
			free(l);
			return 0;
		}
		if (!(found = tsearch(l, &c->listings, listing_cmp)) ||
		    *found != l) {
			listing_free(l);
			return 0;
		}
	}
	l = *found;
	if (!l->tried && ++l->asked >= LIST_AFTER)
		list_dir(l);
	if (!l->names)
		return 0;
	hit = bsearch(&name, l->names, l->n, sizeof(*l->names), name_cmp);
	if (!hit)
		return 'x';
	type = (unsigned char)(*hit)[-1];
	return type == DT_UNKNOWN ? 0 : type == DT_LNK ? 'l' : 'd';
}

/* 'l' for a symbolic link, 'x' for what the kernel's walk stops at
 * (absent, not a directory's child, not searchable: no link before it),
 * 'd' otherwise. */
static char state_of(struct linkdirs *c, const char *path)
{
	struct seen key = {.path = (char *)path}, *s, **found;
	struct stat st;

	if ((found = tfind(&key, &c->seen, seen_cmp)))
		return (*found)->state;
	if (!(key.state = listed_state(c, path)))
		key.state = lstat(path, &st)	  ? 'x'
			    : S_ISLNK(st.st_mode) ? 'l'
						  : 'd';
	s = malloc(sizeof(*s));
	if (s && (s->path = strdup(path))) {
		s->state = key.state;
		if (!tsearch(s, &c->seen, seen_cmp))
			seen_free(s);
	} else {
		free(s);
	}
	return key.state;
}

/* Whether the kernel meets a symbolic link on the way to absolute path
 * (or at it): each directory on the way asked once a load. */
static bool has_link(struct linkdirs *c, const char *path)
{
	char pre[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(pre))
		return false; /* ENAMETOOLONG: the kernel walks nothing */
	memcpy(pre, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		char state;

		if (i < n && pre[i] != '/')
			continue;
		if (pre[i - 1] == '/')
			continue; /* "//": no component */
		pre[i] = '\0';
		state = state_of(c, pre);
		pre[i] = path[i];
		if (state != 'd')
			return state == 'l';
	}
	return false;
}

/* Rebases p from the literal directory from onto its real path. */
static void rebase_to_real(const char *p, const char *from, struct out *o)
{
	char to[PATH_MAX], *real = realpath(from, NULL);

	if (real && strcmp(real, from) && !hx_glob_escape(real, to, sizeof(to)))
		rebase(p, from, to, o);
	free(real);
}

/* Links below a "**": a bounded walk of a read deny's literal
 * directories when its first wildcard component is "**"
 * ($HOME/.ssh/<...>, $HOME/.minikube/<...>/x.key): each symbolic link met
 * (to a file or a directory) rebases p onto its real path. A static
 * program of root's read ~/.ssh/keys/id_x through ~/.ssh/keys ->
 * /secure/keys, judged (and granted by Landlock) by the real path,
 * which the rule did not name (twenty-ninth attack review, part a). */
#define DEEP_ENTRIES 4096 /* entries looked at, a pattern */
#define DEEP_DEPTH   6
#define DEEP_DIRS    512 /* directories waiting to be walked */

/* The directories still to walk, a level at a time: a link near the
 * top is met whatever lies beside it. Walked depth first, a directory
 * listed before it (~/.kube/cache, thousands of files) used up the
 * budget, and ~/.kube/config, a link to a dotfiles checkout, was not
 * seen: a static busybox of root's read the file it names (thirtieth
 * attack review, part a). */
struct deep_q {
	char *dir[DEEP_DIRS];
	int depth[DEEP_DIRS];
	size_t head, n;
};

static void deep_push(struct deep_q *q, const char *dir, int depth)
{
	size_t i = (q->head + q->n) % DEEP_DIRS;

	if (depth > DEEP_DEPTH || q->n == DEEP_DIRS ||
	    !(q->dir[i] = strdup(dir)))
		return;
	q->depth[i] = depth;
	q->n++;
}

/* Looks at dir's entries: each link rebases p, each directory waits. */
static void deep_list(struct deep_q *q, const char *dir, int depth,
		      size_t *budget, const char *p, struct out *o)
{
	char sub[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (!(d = opendir(dir)))
		return;
	while (*budget && (e = readdir(d))) {
		unsigned char t = e->d_type;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", dir,
				     e->d_name) >= sizeof(sub))
			continue;
		(*budget)--;
		if (t == DT_UNKNOWN && !lstat(sub, &st))
			t = S_ISLNK(st.st_mode)	  ? DT_LNK
			    : S_ISDIR(st.st_mode) ? DT_DIR
						  : DT_REG;
		if (t == DT_LNK)
			rebase_to_real(p, sub, o);
		else if (t == DT_DIR)
			deep_push(q, sub, depth + 1);
	}
	closedir(d);
}

static void deep_walk(const char *dir, const char *p, struct out *o)
{
	struct deep_q *q = calloc(1, sizeof(*q));
	size_t budget = DEEP_ENTRIES;

	if (!q)
		return;
	deep_push(q, dir, 0);
	while (q->n) {
		char *d = q->dir[q->head];
		int depth = q->depth[q->head];

		q->head = (q->head + 1) % DEEP_DIRS;
		q->n--;
		if (budget)
			deep_list(q, d, depth, &budget, p, o);
		free(d);
	}
	free(q);
}

/* Rebases pattern p onto the real path of its literal directories when
 * a symbolic link is on their way (the deepest one there now resolved),
 * or onto that of each link its first wildcard component ("**" aside)
 * names there: every path judged is judged resolved too, and a rule
 * that names a place through a link ($HOME of /home/u -> /var/home/u,
 * ~/.ssh or ~/.config/gh -> a dotfiles checkout) matched none of them.
 * Links made later are not seen. */
static void rebase_real(const char *p, struct out *o, struct linkdirs *c,
			bool deep)
{
	char lit[PATH_MAX], from[PATH_MAX], *slash;
	const char *wild, *names;
	size_t wlen;

	if (!literal_prefix(p, lit, &wild))
		return;
	if (deep && wild && !strncmp(wild, "**", 2) &&
	    (!wild[2] || wild[2] == '/'))
		deep_walk(lit, p, o);
	if (has_link(c, lit)) {
		snprintf(from, sizeof(from), "%s", lit);
		while (access(from, F_OK) && (slash = strrchr(from, '/')) &&
		       slash != from)
			*slash = '\0';
		rebase_to_real(p, from, o);
	}
	if (!wild || !(wlen = strcspn(wild, "/")) ||
	    memmem(wild, wlen, "**", 2) || !(names = links_of(c, lit)))
		return;
	for (; *names; names += strlen(names) + 1)
		if (comp_match(wild, wlen, names, strlen(names)) &&
		    (size_t)snprintf(from, sizeof(from), "%s/%s", lit, names) <
			sizeof(from))
			rebase_to_real(p, from, o);
}

/* Appends to r the patterns of r rebased through every alias; a
 * network rule's unix socket paths (not abstract names, not hosts). */
static int alias_rule(struct hx_ld *l, struct hx_rule *r, bool net,
		      struct linkdirs *c)
{
	const struct hx_policy_vars *v = l->vars;
	struct hx_pattern *pats;
	size_t n = r->npats, n0 = r->npats;
	int ret = 0;
	/* a read deny of the policy's (not the harness's own places) */
	bool deep = !net && (r->access & HX_ACCESS_READ) &&
		    strncmp(r->name, "harness:", 8);

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
			rebase_real(text, o, c, deep);
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
	struct linkdirs c = {0};
	int ret = 0;

	if (!l->vars->nalias && !l->vars->real_prefixes)
		return 0;
	if (p->protect.npats)
		ret = alias_rule(l, &p->protect, false, &c);
	if (!ret && p->protect_write.npats)
		ret = alias_rule(l, &p->protect_write, false, &c);
	/* What is refused or asked; an allow stays where it is. A unix
	 * socket's path too: the system bus denied at /run/dbus was
	 * reached under a second mount of /run/dbus (twenty-fourth attack
	 * review, part b). */
	for (size_t k = 0; !ret && k < sizeof(secs) / sizeof(*secs); k++) {
		int sec = secs[k];

		for (size_t i = 0; !ret && i < p->nrules[sec]; i++) {
			struct hx_rule *r = &p->rules[sec][i];

			if (r->verdict != HX_VERDICT_ALLOW)
				ret = alias_rule(l, r, sec == HX_SEC_NET, &c);
		}
	}
	for (size_t i = 0; i < c.n; i++) {
		free(c.d[i].dir);
		free(c.d[i].names);
	}
	free(c.d);
	tdestroy(c.seen, seen_free);
	tdestroy(c.listings, listing_free);
	return ret;
}
