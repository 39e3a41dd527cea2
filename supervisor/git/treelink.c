/* Where a tree's symbolic links lead; see treelink.h. */
#define _GNU_SOURCE
#include "supervisor/git/treelink.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define MAX_COMPS 256
#define MAX_LINKS 40 /* the kernel's bound on links followed */

/* The text of the link at path (the first n components of comps) in
 * tree into buf; 1 when there is one, 0 when path is no link, -1 when
 * it cannot be looked at. */
static int link_at(git_repository *repo, git_tree *tree, char comps[][256],
		   size_t n, char *buf, size_t size)
{
	char path[PATH_MAX] = "";
	git_tree_entry *e = NULL;
	git_blob *b = NULL;
	size_t len = 0, k;
	int r = 0;

	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%s%s",
					i ? "/" : "", comps[i]);
	if (len >= sizeof(path))
		return -1;
	if (git_tree_entry_bypath(&e, tree, path))
		return 0; /* not in the tree: nothing of it to follow */
	if (git_tree_entry_filemode(e) == GIT_FILEMODE_LINK) {
		r = -1;
		if (!git_blob_lookup(&b, repo, git_tree_entry_id(e)) &&
		    (k = (size_t)git_blob_rawsize(b)) < size) {
			memcpy(buf, git_blob_rawcontent(b), k);
			buf[k] = '\0';
			r = 1;
		}
		git_blob_free(b);
	}
	git_tree_entry_free(e);
	return r;
}

/* One step: the component c followed from comps[0..*n). 0: go on; 1:
 * c was a link, its text (relative) now in text; -1: above the root;
 * 2: no more to say (an absolute link, too deep, cannot be read). */
static int step(git_repository *repo, git_tree *tree, char comps[][256],
		size_t *n, const char *c, char *text, size_t size)
{
	int r;

	if (!strcmp(c, "."))
		return 0;
	if (!strcmp(c, ".."))
		return *n ? ((*n)--, 0) : -1;
	if (*n == MAX_COMPS || strlen(c) >= 256)
		return 2;
	snprintf(comps[(*n)++], 256, "%s", c);
	r = link_at(repo, tree, comps, *n, text, size);
	if (r == 1 && text[0] != '/') {
		(*n)--; /* followed from the link's directory */
		return 1;
	}
	return r == 0 ? 0 : 2;
}

/* Follows todo (rewritten as links are met) from the root as a
 * checkout of tree would, the tree's own links followed: false when a
 * ".." climbs above the tree's root. */
static bool stays_in(git_repository *repo, git_tree *tree, char comps[][256],
		     char *todo, size_t size)
{
	char text[PATH_MAX], rest[PATH_MAX * 2], *save, *c;
	size_t n = 0;
	int links = 0, r;

restart:
	save = NULL;
	for (c = strtok_r(todo, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		r = step(repo, tree, comps, &n, c, text, sizeof(text));
		if (r < 0)
			return false;
		if (r == 2 || (r == 1 && ++links > MAX_LINKS))
			return true;
		if (r == 1) {
			if (snprintf(rest, sizeof(rest), "%s/%s", text,
				     save ? save : "") >= (int)size)
				return true;
			memcpy(todo, rest, strlen(rest) + 1);
			goto restart;
		}
	}
	return true;
}

bool hx_tree_link_leads_out(git_repository *repo, git_tree *tree,
			    const char *path)
{
	static __thread char comps[MAX_COMPS][256];
	char todo[PATH_MAX * 2];

	if (snprintf(todo, sizeof(todo), "%s", path) >= (int)sizeof(todo))
		return false;
	/* From the root: the link's own name is the first link followed. */
	return !stays_in(repo, tree, comps, todo, sizeof(todo));
}
