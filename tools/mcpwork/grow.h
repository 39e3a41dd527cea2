/* A growing byte buffer's room, for the worker's buffers (the wire's
 * framer, a selection of text, a patched file, a child's output). */
#ifndef HX_MW_GROW_H
#define HX_MW_GROW_H

#include <stddef.h>

/* Makes *buf (of *cap bytes) hold at least need: doubled from 4096, cut
 * to limit when that is larger than need (0: no limit). 0, or -ENOMEM
 * with *buf and *cap as they were. */
int hx_mw_grow(char **buf, size_t *cap, size_t need, size_t limit);

#endif
