/* The processes that have a record in the log: a bit per pid, set as a
 * record is appended and taken when the exec gate sees the process
 * exit, which then gets its process_exit record. A thread never has a
 * bit of its own: records name the process (its tgid), and a tid is
 * never a living process's pid. Lock-free; the bitmap is allocated
 * lazily by the kernel (untouched pages cost nothing). */
#ifndef HX_PIDSET_H
#define HX_PIDSET_H

#include <stdbool.h>
#include <sys/types.h>

struct hx_pidset;

/* 0 or -ENOMEM. */
int hx_pidset_new(struct hx_pidset **out);
void hx_pidset_free(struct hx_pidset *s);
/* s may be NULL (no set): nothing, false. */
void hx_pidset_add(struct hx_pidset *s, pid_t pid);
/* Whether pid was in s; it is not afterwards. */
bool hx_pidset_take(struct hx_pidset *s, pid_t pid);

#endif
