/* Pattern classification, the deny tree and the sibling walk; see
 * landlock_tree.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/landlock_tree.h"

#include "common/glob.h"
#include "supervisor/path_resolve.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct hx_ll_node {
	char *name;
	struct hx_ll_node *kids, *next;
	bool deny;    /* this entry and its subtree are withheld */
	char **globs; /* entries of this directory matching one are withheld */
	size_t nglobs;
};

/* --- classification (pure) --- */

static bool seg_has_wildcard(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	}
	return false;
}

/* Appends "/" + the unescaped segment to out. */
static int append_seg(char *out, size_t size, const char *s, size_t n)
{
	size_t o = strlen(out);

	if (o == 1) /* "/" */
		o = 0;
	if (o + 1 >= size)
		return -ENAMETOOLONG;
	out[o++] = '/';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n)
			i++;
		if (o + 1 >= size)
			return -ENAMETOOLONG;
		out[o++] = s[i];
	}
	out[o] = '\0';
	return 0;
}

int hx_ll_classify(const char *pattern, struct hx_ll_pat *out)
{
	const char *segs[PATH_MAX / 2];
	size_t lens[PATH_MAX / 2], n = 0, wild = (size_t)-1, lit;
	const char *s = pattern;

	memset(out, 0, sizeof(*out));
	strcpy(out->prefix, "/");
	if (s[0] != '/' && strncmp(s, "**/", 3))
		return -EINVAL;
	while (*s) {
		const char *e;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		e = strchr(s, '/');
		if (!e)
			e = s + strlen(s);
		if (n == sizeof(segs) / sizeof(segs[0]))
			return -ENAMETOOLONG;
		if ((e - s == 1 && s[0] == '.') ||
		    (e - s == 2 && s[0] == '.' && s[1] == '.'))
			return -EINVAL;
		segs[n] = s;
		lens[n] = (size_t)(e - s);
		if (wild == (size_t)-1 && seg_has_wildcard(s, lens[n]))
			wild = n;
		n++;
		s = e;
	}
	lit = wild == (size_t)-1 ? n : wild;
	for (size_t i = 0; i < lit; i++)
		if (append_seg(out->prefix, sizeof(out->prefix), segs[i],
			       lens[i]))
			return -ENAMETOOLONG;
	if (wild == (size_t)-1) {
		out->kind = HX_LL_EXACT;
		return 0;
	}
#define IS_STARSTAR(i) (lens[i] == 2 && segs[i][0] == '*' && segs[i][1] == '*')
	/* "P/GLOB" or "P/GLOB/ **": the last wildcard is in the last
	 * directory segment, so a listing of P decides it. */
	if (wild == n - 1 || (wild == n - 2 && IS_STARSTAR(n - 1))) {
		if (IS_STARSTAR(wild)) {
			out->kind = HX_LL_SUBTREE;
			return 0;
		}
		if (lens[wild] >= sizeof(out->glob))
			return -ENAMETOOLONG;
		memcpy(out->glob, segs[wild], lens[wild]);
		out->glob[lens[wild]] = '\0';
		out->kind = HX_LL_NAMEGLOB;
		return 0;
	}
#undef IS_STARSTAR
	out->kind = HX_LL_INEXPRESSIBLE;
	return 0;
}

bool hx_ll_within(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return path[0] == '/';
	while (n > 1 && root[n - 1] == '/')
		n--;
	return !strncmp(path, root, n) && (path[n] == '\0' || path[n] == '/');
}

/* --- the tree --- */

static struct hx_ll_node *node_new(const char *name, size_t n)
{
	struct hx_ll_node *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->name = strndup(name, n);
	if (!x->name) {
		free(x);
		return NULL;
	}
	return x;
}

static struct hx_ll_node *kid(const struct hx_ll_node *x, const char *name,
			      size_t n)
{
	for (struct hx_ll_node *k = x->kids; k; k = k->next)
		if (strlen(k->name) == n && !memcmp(k->name, name, n))
			return k;
	return NULL;
}

/* The node for dir, created with its ancestors. */
static int node_for(struct hx_ll_tree *t, const char *dir,
		    struct hx_ll_node **out)
{
	struct hx_ll_node *x;
	const char *s = dir;

	if (dir[0] != '/')
		return -EINVAL;
	if (!t->root && !(t->root = node_new("/", 1)))
		return -ENOMEM;
	x = t->root;
	while (*s) {
		const char *e;
		struct hx_ll_node *k;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		e = strchrnul(s, '/');
		k = kid(x, s, (size_t)(e - s));
		if (!k) {
			k = node_new(s, (size_t)(e - s));
			if (!k)
				return -ENOMEM;
			k->next = x->kids;
			x->kids = k;
		}
		x = k;
		s = e;
	}
	*out = x;
	return 0;
}

int hx_ll_tree_deny(struct hx_ll_tree *t, const char *path)
{
	struct hx_ll_node *x;
	int r = node_for(t, path, &x);

	if (!r)
		x->deny = true;
	return r;
}

int hx_ll_tree_deny_glob(struct hx_ll_tree *t, const char *dir,
			 const char *glob)
{
	struct hx_ll_node *x;
	char **g, *copy;
	int r = node_for(t, dir, &x);

	if (r)
		return r;
	copy = strdup(glob);
	g = copy ? realloc(x->globs, (x->nglobs + 1) * sizeof(*g)) : NULL;
	if (!g) {
		free(copy);
		return -ENOMEM;
	}
	g[x->nglobs++] = copy;
	x->globs = g;
	return 0;
}

bool hx_ll_tree_empty(const struct hx_ll_tree *t)
{
	return !t->root;
}

static void node_free(struct hx_ll_node *x)
{
	while (x) {
		struct hx_ll_node *next = x->next;

		node_free(x->kids);
		for (size_t i = 0; i < x->nglobs; i++)
			free(x->globs[i]);
		free(x->globs);
		free(x->name);
		free(x);
		x = next;
	}
}

void hx_ll_tree_free(struct hx_ll_tree *t)
{
	node_free(t->root);
	t->root = NULL;
}

/* --- the walk --- */

static bool glob_hit(const struct hx_ll_node *x, const char *name)
{
	for (size_t i = 0; i < x->nglobs; i++)
		if (hx_glob_match(x->globs[i], name))
			return true;
	return false;
}

struct walk {
	hx_ll_grant_fn fn, anc;
	void *arg;
	char path[PATH_MAX];
};

static int grant_fd(struct walk *w, int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return 0; /* vanished: nothing to grant */
	if (S_ISLNK(st.st_mode))
		return 0;
	return w->fn(fd, w->path, S_ISDIR(st.st_mode), w->arg);
}

/* The entry's type as its directory lists it, from the inode when the
 * file system does not say (DT_UNKNOWN) or when the entry leads to a
 * deny (listed: whether the listing may be trusted): one fstat less per
 * entry of a large /tmp. Another entry replaced since the listing fails
 * safe: a rule with directory rights on a file is refused by the kernel
 * (withheld), a directory listed as a file gets file rights only, and
 * O_NOFOLLOW keeps a new symlink's target out of reach. On the way to a
 * deny the opened inode decides: granting a directory that holds the
 * deny would lift it. */
static unsigned char entry_type(const struct dirent *de, int fd, bool listed)
{
	struct stat st;

	if (listed && de->d_type != DT_UNKNOWN)
		return de->d_type;
	if (fstat(fd, &st))
		return DT_UNKNOWN;
	return S_ISDIR(st.st_mode)   ? DT_DIR
	       : S_ISLNK(st.st_mode) ? DT_LNK
				     : DT_REG;
}

/* dirfd is an open (readable) directory for w->path, whose node x is an
 * ancestor of some deny. Takes ownership of dirfd. */
static int walk_dir(struct walk *w, int dirfd, const struct hx_ll_node *x)
{
	size_t base = strlen(w->path);
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (w->anc && (r = w->anc(-1, w->path, true, w->arg))) {
		close(dirfd);
		return r;
	}
	d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return 0; /* withheld whole: fails safe */
	}
	while (!r && (errno = 0, de = readdir(d))) {
		const char *nm = de->d_name;
		const struct hx_ll_node *k;
		unsigned char type;
		int fd;

		if (!strcmp(nm, ".") || !strcmp(nm, ".."))
			continue;
		if (glob_hit(x, nm))
			continue;
		k = kid(x, nm, strlen(nm));
		if ((k && k->deny) || de->d_type == DT_LNK)
			continue; /* a symlink is never granted */
		if ((size_t)snprintf(w->path + base, sizeof(w->path) - base,
				     "%s%s", base == 1 ? "" : "/",
				     nm) >= sizeof(w->path) - base)
			continue; /* unnameable: withheld */
		fd = openat(dirfd, nm, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			goto next;
		type = entry_type(de, fd, !k);
		if (k && type == DT_DIR) {
			/* On the way to a deny: descend instead of granting. */
			int sub = openat(dirfd, nm,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					     O_CLOEXEC);

			close(fd);
			if (sub >= 0)
				r = walk_dir(w, sub, k);
			goto next;
		}
		/* A file where a deny expects a directory holds nothing
		 * beneath: grant it as any other entry. */
		if (type != DT_LNK && type != DT_UNKNOWN)
			r = w->fn(fd, w->path, type == DT_DIR, w->arg);
		close(fd);
	next:
		w->path[base] = '\0';
	}
	closedir(d);
	return r;
}

int hx_ll_walk(const struct hx_ll_tree *t, const char *root, hx_ll_grant_fn fn,
	       hx_ll_grant_fn ancestors, void *arg)
{
	struct walk w = {.fn = fn, .anc = ancestors, .arg = arg};
	const struct hx_ll_node *x = t->root;
	const char *s = root;
	int fd, r;

	if (root[0] != '/' || strlen(root) >= sizeof(w.path))
		return -EINVAL;
	/* Find root's node; stop early when root is denied or off-tree. */
	while (x && *s) {
		const char *e;
		char name[NAME_MAX + 1];

		if (x->deny)
			return 0;
		while (*s == '/')
			s++;
		if (!*s)
			break;
		e = strchrnul(s, '/');
		if ((size_t)(e - s) > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, s, (size_t)(e - s));
		name[e - s] = '\0';
		if (glob_hit(x, name))
			return 0;
		x = kid(x, s, (size_t)(e - s));
		s = e;
	}
	if (x && x->deny)
		return 0;
	snprintf(w.path, sizeof(w.path), "%s", root);
	if (!x) {
		fd = open(root, O_PATH | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		r = grant_fd(&w, fd);
		close(fd);
		return r;
	}
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOTDIR) {
		/* A file where a deny expects a directory: nothing beneath. */
		fd = open(root, O_PATH | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		r = grant_fd(&w, fd);
		close(fd);
		return r;
	}
	if (fd < 0)
		return -errno;
	return walk_dir(&w, fd, x);
}
