/* A bounded walk of a directory tree for list_dir and search: entries
 * in sorted order (each directory's names sorted, a directory before
 * what it holds), symlinks not followed, at most HX_MW_DEPTH_MAX deep
 * and HX_MW_DIR_NAMES_MAX names a directory; a directory that cannot be
 * read is reported and skipped, not fatal. Also list_dir itself. */
#ifndef HX_MW_WALK_H
#define HX_MW_WALK_H

#include <stdbool.h>
#include <stdint.h>

struct json_t;

struct hx_mw_walk_entry {
	const char *rel;  /* path relative to the root */
	const char *name; /* its last part, in dirfd */
	int dirfd;
	char type; /* 'f' file, 'd' dir, 'l' symlink, 'o' other */
	uint64_t size;
};

struct hx_mw_walk {
	unsigned depth; /* 1: the root's entries only */
	bool hidden;	/* names starting with '.' too */
	/* Each entry: 0 goes on, 1 stops the walk. */
	int (*entry)(void *ctx, const struct hx_mw_walk_entry *e);
	/* An entry that could not be examined or a directory that could not
	 * be opened (errno err). */
	void (*error)(void *ctx, const char *rel, int err);
	void *ctx;
	bool capped; /* out: a directory had more names than were read */
};

/* Walks the tree at root (a symlink as root is followed). 0 when done,
 * 1 when stopped, -errno (and *res) when root cannot be read. */
int hx_mw_walk_run(const char *root, struct hx_mw_walk *w, struct json_t **res);

/* The list_dir tool (fileops.h's convention). */
int hx_mw_walk_list_dir(struct json_t *args, struct json_t **res);

#endif
