/* A small regular file read whole, relative to a directory fd: what
 * harness-exec checks and then installs a copy of (a git config, an
 * agent's JSON config) is what it read, never what a symlink or a fifo
 * swapped in points at. */
#ifndef HX_COMMON_READAT_H
#define HX_COMMON_READAT_H

#include <sys/stat.h>
#include <sys/types.h>

/* Reads name in dirfd (not followed; opened without blocking) into buf,
 * up to cap bytes; *st is its fstat. Returns its length, -errno when it
 * cannot be opened, -EACCES when it is no regular file, cannot be read
 * or fills buf (longer than cap - 1 bytes). */
ssize_t hx_read_regular_at(int dirfd, const char *name, char *buf, size_t cap,
			   struct stat *st);

#endif
