/* The parts of a git index file that libgit2 does not read, read from
 * its bytes: the untracked cache (extension UNTR), which git status
 * trusts for a directory whose stat data still matches. The index is
 * the agent's to write: a cache that leaves out a new file of such a
 * directory hides that file from the user's git status. Pure parsing,
 * no I/O; every length is checked against the buffer (the bytes are
 * the agent's). Format: git's Documentation/gitformat-index.txt. */
#ifndef HX_GIT_INDEXFILE_H
#define HX_GIT_INDEXFILE_H

#include <stdbool.h>
#include <stddef.h>

/* The payload of the nth (from 0) extension named sig (4 bytes) of the
 * index in buf (SHA-1: a 20-byte checksum ends it): 1 with *ext and
 * *extlen, 0 when it has none, -1 when buf is not an index this reads
 * (version 2 to 4). git takes the last of an extension named twice. */
int hx_index_extension(const unsigned char *buf, size_t len, const char *sig,
		       size_t nth, const unsigned char **ext, size_t *extlen);

/* As hx_index_extension, among the extensions from the offset an EOIE
 * extension at the end of the index gives (git reads them from there
 * when it loads them in a thread of their own: index.threads, or 20000
 * entries on two CPUs), its hash not checked; 0 when there is none. */
int hx_index_extension_eoie(const unsigned char *buf, size_t len,
			    const char *sig, size_t nth,
			    const unsigned char **ext, size_t *extlen);

/* The positions of the bits set in the EWAH bitmap at p (git's
 * ewah_io.c: bit count, word count, the words, the last run-length
 * word's position; big-endian), at most max of them, in *bits (malloc'd,
 * ascending) and *n; *used: the bitmap's bytes. 0 or -1 (malformed). */
int hx_ewah_bits(const unsigned char *p, size_t len, size_t max, size_t **bits,
		 size_t *n, size_t *used);

/* A directory of the untracked cache, in the cache's depth-first order
 * (the root first). */
struct hx_untr_dir {
	char *path;	/* "" for the root, else "a/b/" */
	char *name;	/* as the block names it */
	size_t parent;	/* its parent's block (the root's: 0) */
	bool reachable; /* git can look it up: each name on the way one a
			   directory can have (not "", ".", "..", no '/') */
	char **names;	/* its untracked entries; a directory's ends in '/' */
	size_t nnames;
	bool valid;		/* git trusts names while stat matches */
	bool check_only;	/* names says only "something is there" */
	unsigned char stat[36]; /* when valid: ctime, mtime (s, ns), dev,
				   ino, uid, gid, size, big-endian */
};

struct hx_untr {
	struct hx_untr_dir *dirs;
	size_t n;
	unsigned dir_flags;
};

/* The UNTR payload at p into *u (zeroed first). 0; -1 when it is
 * malformed, as git's reader says (git then ignores the cache; nothing
 * git reads is refused here: not a depth, not a name); -2 out of
 * memory. *u is then empty. */
int hx_untr_parse(const unsigned char *p, size_t len, struct hx_untr *u);

void hx_untr_free(struct hx_untr *u);

#endif
