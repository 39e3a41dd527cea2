/* What a glob's matches must hold, so that many globs can be indexed
 * and most of them dismissed without matching (policy/fileindex.c, the
 * shim's read rules). Pure functions over the caller's arrays: no
 * allocation, no locks, no errno; safe in the shim.
 *
 * Why nothing that matches is dismissed: a glob's literal start L (up to
 * its first '*', '?', '[' or '\') matches itself only, byte for byte, so
 * a path it matches starts with L, or is L less its last '/' (glob.h:
 * "X/" "**" matches X). Its key, L up to its last '/', is then the path
 * up to one of its '/', or the whole path: hx_glob_groups_visit looks
 * up exactly these (and the empty key of a glob with no '/' in L). A
 * glob that is all literal matches only the path it spells: its key is
 * the whole of it.
 * Its literal end T (after its last metacharacter) ends the path: the
 * matcher takes T's bytes one for one and then wants the path's end.
 * The run R before a last "/" "**" is in the path (X/"**" matches X: R
 * is still there). */
#ifndef HX_COMMON_GLOBINDEX_H
#define HX_COMMON_GLOBINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hx_glob_need {
	uint32_t key;	    /* bytes of the glob that are its key */
	uint32_t len, tail; /* the glob's length; its literal end's */
	uint32_t inner_off, inner_len; /* a run any match holds; 0: none */
};

/* Globs with one key, members [first, first + count) of the caller's
 * list; the groups sorted by hx_glob_key_cmp. */
struct hx_glob_group {
	const char *key;
	uint32_t klen, first, count;
};

void hx_glob_need_of(const char *glob, struct hx_glob_need *n);
/* False when glob (whose need is n) cannot match path, an absolute
 * one of plen bytes ("**" "/x" matches the relative "x" too). */
bool hx_glob_need_holds(const char *glob, const struct hx_glob_need *n,
			const char *path, size_t plen);
/* Bytes, then length. */
int hx_glob_key_cmp(const char *a, size_t alen, const char *b, size_t blen);
/* fn on each group whose globs may match the absolute path. */
void hx_glob_groups_visit(const struct hx_glob_group *g, size_t ngroups,
			  const char *path, size_t plen,
			  void (*fn)(const struct hx_glob_group *, void *),
			  void *arg);

#endif
