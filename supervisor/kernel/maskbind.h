/* Masks bound after the start (maskwatch.h): a helper process in the
 * agent's namespaces.
 *
 * A mount in the agent's mount namespace needs a process in it with
 * CAP_SYS_ADMIN there: as root, harness-exec itself could; as an
 * ordinary user, only from inside the agent's user namespace, which a
 * multithreaded process cannot enter. So a helper is forked (system
 * calls only, as after any fork of a multithreaded process), joins the
 * agent's user namespace (when it has one of its own) and mount
 * namespace, and binds node <i> of the masks' FUSE root (maskfs.h) over
 * each path it is asked for, read-only. It dies with harness-exec.
 *
 * Lifecycle: hx_maskbind_start (on first need) -> hx_maskbind_bind ...
 * -> hx_maskbind_free. */
#ifndef HX_MASKBIND_H
#define HX_MASKBIND_H

#include <stddef.h>
#include <sys/types.h>

struct hx_maskbind;

/* The helper for child's namespaces; root: an O_PATH fd of the masks'
 * FUSE root in them (borrowed: the helper has its own copy). Returns 0
 * and *out, or -errno. */
int hx_maskbind_start(pid_t child, int root, struct hx_maskbind **out);

/* Binds node i over path (absolute, in the agent's view). Returns 0, 1
 * when path is a mask already (two events for one file), or -errno
 * (-ENOENT: gone meanwhile). */
int hx_maskbind_bind(struct hx_maskbind *b, size_t i, const char *path);

/* The helper's pid (0 for NULL). */
pid_t hx_maskbind_pid(const struct hx_maskbind *b);

void hx_maskbind_free(struct hx_maskbind *b);

#endif
