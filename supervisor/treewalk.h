/* A walk of a directory tree that a process writing in it meanwhile
 * cannot steer elsewhere: each directory is opened O_NOFOLLOW relative
 * to its parent, held open, and every entry is named to the callbacks
 * by that directory's fd and its own name, never by a path; a symlink
 * is an entry like a file, never followed; no other file system is
 * entered. For harness-exec's removals in trees the agent wrote (its
 * TMPDIR, /dev/shm), which nftw made by path. */
#ifndef HX_TREEWALK_H
#define HX_TREEWALK_H

#include <stdbool.h>

struct hx_treewalk {
	/* An entry that is no directory (a symlink included). */
	void (*file)(int dfd, const char *name, void *arg);
	/* A directory, once its entries were walked, or one that could
	 * not be opened (mode 0: an empty mask cover); NULL: none. */
	void (*dir_done)(int dfd, const char *name, void *arg);
	/* A directory deeper than the walk goes (128 levels below the
	 * top; each level holds an fd), given with the top's fd; NULL:
	 * left unwalked. A removal moves it up (rmtree.c). */
	void (*too_deep)(int dfd, const char *name, int top, void *arg);
	/* A removal's: each directory of the caller's uid is made
	 * searchable, readable and writable by its owner before it is
	 * entered (a directory of mode 0 or 0500 kept its entries; its
	 * mode is changed through an fd held on it, never by name). */
	bool own_modes;
	void *arg;
};

/* Walks the tree of directory name in dfd (opened O_NOFOLLOW too; the
 * callbacks are not called for it). Deeper than 128 levels is left
 * unwalked, or given to too_deep. 0, or -errno of its own opening (-ENOTDIR,
 * -ELOOP: it is no directory). */
int hx_treewalk_at(int dfd, const char *name, const struct hx_treewalk *w);

#endif
