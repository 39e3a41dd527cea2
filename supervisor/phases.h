/* Where a session's start went: marks on the main thread, since the
 * first, written in session_end as "timeline_ms" (make bench prints their
 * medians). One session a process; not thread-safe. */
#ifndef HX_PHASES_H
#define HX_PHASES_H

#include <jansson.h>

/* Marks the phase that ends now (a static name); the first mark is the
 * start and is not written. */
void hx_phase(const char *name);
/* {"name": ms since the start, ...} in the marks' order; new reference,
 * or NULL without marks. */
json_t *hx_phases_json(void);

#endif
