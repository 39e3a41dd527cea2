/* The way to a name: what a lookup of a path passes through. */
#ifndef HX_PATHWAY_H
#define HX_PATHWAY_H

#include <sys/types.h>

/* Gives fn (dev, ino) of every object a lookup of the absolute path
 * passes on its way to the last component, as the kernel walks it now:
 * "/", each directory below it, and each symlink (then followed, at
 * most 40). Renamed, removed or replaced, any of them would re-point
 * path while its last component stays untouched. The last component
 * itself is not given. Stops at fn's first non-zero return, which it
 * returns; else 0 or -errno of the walk (-ELOOP, -ENOTDIR, -EINVAL for
 * a relative path, -ENAMETOOLONG). */
int hx_path_way(const char *path, int (*fn)(dev_t dev, ino_t ino, void *arg),
		void *arg);

#endif
