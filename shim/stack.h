/* Call stacks for requests (exec, connect/send, writes), from libunwind's
 * fast unw_backtrace, formatted "libname.so.6+0x1a2b3 symbol". Never used
 * on the stateless (vfork / signal) path: libunwind's per-thread cache
 * would land in the parent's memory. */
#ifndef HX_SHIM_STACK_H
#define HX_SHIM_STACK_H

#include <stddef.h>

#include "common/wire.h"

/* Appends up to HX_WIRE_MAX_FRAMES FRAME fields to w, skipping frames in
 * the object loaded at self_base (the shim). Returns the count added. */
int hx_stack_put(struct hx_wbuf *w, const void *self_base);

/* Formats one frame; returns the length. Pure. */
size_t hx_stack_format(char *buf, size_t cap, const char *module,
		       unsigned long off, const char *symbol);

/* One backtrace so that libunwind's first-call setup happens in the
 * constructor, not in the middle of a hooked call. */
void hx_stack_warm(void);

#endif
