/* Masks that say who looked (issue 10, class 10).
 *
 * A mask (masks.h) made of an empty unreadable file refuses a read
 * without telling anyone: a static program, Claude Code's Read tool or
 * any raw syscall that skips the shim gets EACCES and leaves no record.
 * Here the masks are instead nodes of one FUSE file system, mounted by
 * the agent's first process in its mount namespace and bound over each
 * denied file or directory (hx_maskfs_attach), and served by a thread of
 * harness-exec, which answers every open of it and every name looked up
 * in it with EACCES, and queues the refusal with the process the kernel
 * names in the request (its thread id, in FUSE's header) for a record
 * on the loop: "layer": "mask", the exact path asked for
 * (~/.ssh/id_rsa inside a masked ~/.ssh), the policy's rule, the
 * syscall the thread was in. The kernel's own attribute and lookup
 * caches are not used for refusals, so each try is seen; a storm of the
 * same one is one record and a count.
 *
 * What it needs: /dev/fuse that the user can open (Debian's udev makes
 * it 0666; as root always) and FUSE mounts in the agent's user
 * namespace (Linux 4.18). Without it the masks are the empty covers
 * again: the read is still refused, unrecorded (session_start's
 * kernel.mask_records says which).
 *
 * Only the requests of the agent's mount namespace are refusals of the
 * session: a process outside reaching a mask through /proc/<pid>/root
 * is refused unrecorded.
 *
 * The thread never waits for the loop (the loop's own path walks
 * through the agent's /proc/<pid>/root may meet a mask): a full queue
 * counts what it drops. Requests of harness-exec's own threads are
 * refused unrecorded. If harness-exec dies, the file systems are
 * aborted: every access fails (ENOTCONN), none reads.
 *
 * Lifecycle: hx_maskfs_new (before the fork) -> hx_maskfs_attach and the
 * binds, in the child (masks.c) -> hx_maskfs_start (after the fork) ->
 * hx_maskfs_stop (the session's end: what is queued is written) ->
 * hx_maskfs_json -> hx_maskfs_free. */
#ifndef HX_MASKFS_H
#define HX_MASKFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct hx_maskfs;
struct hx_pipeline;
struct hx_server;
struct json_t;

/* Whether this process can serve masks so (opens /dev/fuse): 0, or
 * -errno. */
int hx_maskfs_probe(void);

/* For the n masks (paths[i], a directory when dirs[i]; copied): the
 * channel on which the child sends the FUSE connection it mounts.
 * Returns 0 and *out, or -errno. */
int hx_maskfs_new(const char *const *paths, const bool *dirs, size_t n,
		  struct hx_maskfs **out);

/* The child's end of the channel (closed with the others before the
 * agent runs), or -1 for NULL. */
int hx_maskfs_child_fd(const struct hx_maskfs *fs);

/* In the child, in its mount namespace: mounts the masks' FUSE file
 * system at stage (an empty directory) and sends its connection on
 * chan. Returns an O_PATH fd of its root, whose entry "<i>" is mask i
 * (bound over its path from /proc/self/fd/<fd>/<i>; each look-up waits
 * for the serving thread), or -errno: the caller covers the paths the
 * old way. The root stays mounted on stage (in the session's directory,
 * out of the agent's reach): masks made later bind from it. */
int hx_maskfs_attach(int chan, const char *stage);

/* In the child, after hx_maskfs_attach: lists the root (root the fd it
 * returned), which makes every node of the masks in a few requests
 * rather than a look-up each. Nothing when it cannot. */
void hx_maskfs_prefetch(int root);

/* In the parent after the fork: the serving thread, and the loop's end
 * that writes the records into pl. Returns 0 or -errno. */
int hx_maskfs_start(struct hx_maskfs *fs, pid_t child, struct hx_pipeline *pl,
		    struct hx_server *srv);

/* On the loop: mask path (a directory when is_dir), created after the
 * start (maskwatch.h), as node n of the FUSE root, bound by a helper in
 * the agent's namespaces (maskbind.h), and a mask_added record. At most
 * HX_MASKFS_LATE so. Returns 0 (masked, or gone meanwhile) or -errno,
 * recorded too. */
#define HX_MASKFS_LATE 4096
int hx_maskfs_add(struct hx_maskfs *fs, const char *path, bool is_dir);

/* Ends the thread and writes what is queued. NULL is a no-op. */
void hx_maskfs_stop(struct hx_maskfs *fs);

/* {"served": N, "records": N, "repeated": N, "dropped": N}: a new
 * reference. */
struct json_t *hx_maskfs_json(const struct hx_maskfs *fs);

void hx_maskfs_free(struct hx_maskfs *fs);

#endif
