/* The part of the Landlock derivation that needs no Landlock: what a
 * policy path pattern can be turned into, and the "grant siblings" walk
 * that makes a deny inside an allowed tree out of grants only.
 *
 * Landlock rules only grant, and a rule on a directory grants its whole
 * subtree. To hide D = /root/.ssh while / stays readable, the walk grants
 * every entry of / except root, then every entry of /root except .ssh.
 * All denied paths go into one tree first so that several denies under
 * one directory share one enumeration of it. Entries created in those
 * ancestor directories after the walk have no rule and are refused:
 * that fails safe, and docs/landlock.md says so.
 *
 * Private to supervisor/landlock*.c and the unit tests. */
#ifndef HX_LANDLOCK_TREE_H
#define HX_LANDLOCK_TREE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* What a path pattern (expanded, glob syntax of policy/glob.h) denotes
 * for a mechanism that only knows "this inode and what is beneath". */
enum hx_ll_kind {
	/* No wildcard: exactly prefix (a rule on it also covers what is
	 * beneath, which over-approximates a deny: fails safe). */
	HX_LL_EXACT = 0,
	/* prefix followed by "/" "**": prefix and everything beneath. */
	HX_LL_SUBTREE,
	/* prefix/GLOB or prefix/GLOB/ **: the entries of the directory
	 * prefix whose name matches glob, and what is beneath them. */
	HX_LL_NAMEGLOB,
	/* A wildcard before the last literal segment ("**" "/.env",
	 * "$HOME/" "*" "/secret"): no finite set of inodes. prefix is the
	 * literal directory before the first wildcard ("/" at least). */
	HX_LL_INEXPRESSIBLE,
};

struct hx_ll_pat {
	enum hx_ll_kind kind;
	char prefix[PATH_MAX];	 /* absolute, unescaped, no trailing '/' */
	char glob[NAME_MAX + 1]; /* HX_LL_NAMEGLOB: one segment, glob syntax */
};

/* Classifies an expanded pattern. Pure. Returns 0, -EINVAL for a
 * pattern that is neither absolute nor "**" "/..." or that holds "." or
 * ".." segments (never matches a normalized path), -ENAMETOOLONG. */
int hx_ll_classify(const char *pattern, struct hx_ll_pat *out);

/* True when path is root or beneath it, by whole components. Pure. */
bool hx_ll_within(const char *path, const char *root);

/* The canonical form of an absolute path: symlinks resolved in its
 * longest existing prefix, the rest appended as written. A deny must be
 * placed on the real directory, or a symlinked ancestor (~/.config ->
 * /data/cfg) would leave the real one granted. 0 or -errno. */
int hx_ll_canon(const char *path, char *out, size_t size);

/* What hx_ll_canon found for each prefix it looked up, for one
 * derivation: the rules share their prefixes ($HOME, ~/.local, a
 * missing ~/.npm), each then looked up once. A snapshot: what changes
 * on disk meanwhile is not seen, as in any one derivation. */
struct hx_ll_memo;
struct hx_ll_memo *hx_ll_memo_new(void); /* NULL: out of memory */
void hx_ll_memo_free(struct hx_ll_memo *m);
/* hx_ll_canon through m (NULL: none). */
int hx_ll_canon_memo(struct hx_ll_memo *m, const char *path, char *out,
		     size_t size);
/* Whether m knows path (canonical) is not there, from a listing of its
 * directory: then it need not be looked up. */
bool hx_ll_memo_absent(struct hx_ll_memo *m, const char *path);

/* Whether path is known absent from a directory that is there (listed:
 * its name is not in it), with no system call once the directory is. */
bool hx_ll_memo_absent_in_dir(struct hx_ll_memo *m, const char *path);
/* Calls fn for each entry of the directory dir (canonical) whose name
 * matches glob, with its d_type, "." and ".." aside, from one listing of
 * dir through m (NULL: none): the device rules ask /dev thirty times. */
typedef void (*hx_ll_entry_fn)(const char *name, unsigned char type, void *arg);
void hx_ll_memo_each(struct hx_ll_memo *m, const char *dir, const char *glob,
		     hx_ll_entry_fn fn, void *arg);

/* The deny tree: paths whose subtree is withheld, and per directory the
 * name globs whose matching entries are withheld. */
struct hx_ll_node;
struct hx_ll_tree {
	struct hx_ll_node *root; /* "/", NULL while empty */
};

/* Both copy their arguments; path and dir are canonical absolute
 * paths. 0 or -ENOMEM / -EINVAL. */
int hx_ll_tree_deny(struct hx_ll_tree *t, const char *path);
int hx_ll_tree_deny_glob(struct hx_ll_tree *t, const char *dir,
			 const char *glob);
bool hx_ll_tree_empty(const struct hx_ll_tree *t);
void hx_ll_tree_free(struct hx_ll_tree *t);

/* Called for each granted inode: fd is an O_PATH descriptor of it
 * (closed by the walk after the call), path its name under root. A
 * non-zero return stops the walk and is returned. */
typedef int (*hx_ll_grant_fn)(int fd, const char *path, bool is_dir, void *arg);

/* Grants root (canonical) minus the tree: root itself when no deny is
 * at or beneath it, nothing when root is denied, otherwise the siblings
 * along every path down to the denied entries. Symlinks are never
 * granted (a rule on a link is not on the path of its target) and never
 * followed; a directory that cannot be listed is withheld whole. When
 * ancestors is not NULL it is called (fd -1) for each directory that
 * was enumerated, so the caller can say where new entries are refused.
 * Returns 0, fn's non-zero value, or -errno when root cannot be opened
 * (-ENOENT: nothing to grant). */
int hx_ll_walk(const struct hx_ll_tree *t, const char *root, hx_ll_grant_fn fn,
	       hx_ll_grant_fn ancestors, void *arg);

#endif
