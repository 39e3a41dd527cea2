/* Masks (issue 10, class 10): files the policy denies for reading that
 * lie inside a write root, where Landlock grants the whole tree (the
 * project's .env, a denied secret/ directory). A program that skips the
 * shim (Claude Code's Read, a static binary) would read them with the
 * kernel's leave. At start the supervisor walks the project for them,
 * and takes from the Landlock derivation the literal read denies inside
 * the other write roots (~/.local/share/keyrings, harness's own state,
 * under a write root ~/.local: hx_masks_add);
 * the agent's first process then gets a mount namespace of its own in
 * which each is covered by an empty, unreadable file or directory
 * (bind mounts, read-only). As root that is a mount namespace; as an
 * ordinary user a user namespace too, that maps the user's uid and gid
 * to themselves (files of other users then show as nobody). Only when
 * there is something to mask: most sessions get neither.
 *
 * What stays out: files created later by a process outside the
 * session (the agent's own creations are writes, decided by the
 * policy, which denies them), what is inside .git directories (git's
 * own files, and most of a repository's entries: not walked), and such
 * glob-named files outside the project (a `**` + `/.env` in $HOME's
 * caches); there the shim holds the rule, or --trace-reads. The walk decides
 * only the entries whose name matches the last name of a pattern that denies
 * reads.
 *
 * Lifecycle: hx_masks_find or _start/_join (harness-exec, before fork)
 * -> hx_masks_apply
 * (the agent's first process, before Landlock and the capability drop)
 * -> hx_masks_free. */
#ifndef HX_MASKS_H
#define HX_MASKS_H

#include <stdbool.h>
#include <stddef.h>

struct hx_policy;
struct hx_masks;

/* Walks each root (absolute directories; missing ones are skipped) for
 * entries the policy does not let be read, without following symlinks,
 * on the file systems mounted beneath it too (kernel ones, /proc and
 * /sys, excepted); a denied directory is masked whole.
 * mask_dir: a directory of the session's (protected) where the empty
 * file and directory that cover them are made. At most max_entries are
 * looked at; *truncated tells when the walk stopped early (at that
 * count, or at a path longer than PATH_MAX, which no mask covers). Each
 * directory walked is watched by watch (maskwatch.h) when not NULL.
 * Returns 0 and *out (maybe with nothing to mask), or -errno. */
struct hx_maskwatch;
int hx_masks_find(const struct hx_policy *p, const char *const *roots,
		  size_t nroots, const char *mask_dir, size_t max_entries,
		  struct hx_maskwatch *watch, struct hx_masks **out,
		  bool *truncated);

/* hx_masks_find on a thread of its own (it takes milliseconds a
 * thousand entries: it overlaps the rest of the set-up); roots (at most
 * 4) and p are borrowed until the join. Returns 0 or -errno. */
struct hx_masks_job;
int hx_masks_start(const struct hx_policy *p, const char *const *roots,
		   size_t nroots, const char *mask_dir, size_t max_entries,
		   struct hx_maskwatch *watch, struct hx_masks_job **out);
/* Waits for it: what hx_masks_find returns. NULL job: nothing, 0. */
int hx_masks_join(struct hx_masks_job *j, struct hx_masks **out,
		  bool *truncated);

/* Adds the paths of n that exist (not symlinks) and are not masked yet,
 * beyond the walk: read denies Landlock cannot hold (landlock.h). None
 * at or above skip (may be NULL). *mp may be NULL: made then. Returns 0
 * or -errno. */
int hx_masks_add(struct hx_masks **mp, const char *const *paths, size_t n,
		 const char *skip, const char *mask_dir);

/* Whether a directory is masked whose content the policy lets be read
 * (a project's .env/ or .env.d/: the rules name the directory): the
 * kernel layer, which acts in harness-exec's view where no mask is,
 * then checks the way of each path it acts on (hx_un_judge). Noted for
 * the start's masks by hx_masks_note_dirs (p: the session's policy),
 * for a late one by hx_masks_note_dir. */
void hx_masks_note_dirs(const struct hx_masks *m, const struct hx_policy *p);
void hx_masks_note_dir(void);
bool hx_masks_dir_noted(void);

/* How many paths are masked, path i, and whether it is a directory. */
size_t hx_masks_count(const struct hx_masks *m);
const char *hx_masks_path(const struct hx_masks *m, size_t i);
bool hx_masks_is_dir(const struct hx_masks *m, size_t i);

/* Called with each file mask bound to its FUSE node, once bound: node
 * an O_PATH fd of that node (borrowed), taken from the FUSE root, never
 * by the mask's path, which a file renamed over it since the bind
 * would name. */
typedef int (*hx_masks_bound_fn)(int node, void *arg);

/* In the agent's first process (single-threaded, after fork): a private
 * mount namespace (with a user namespace when not root) and the masks:
 * each a FUSE file system whose connection goes to harness-exec on
 * fuse_chan (maskfs.h), or, with fuse_chan -1 or when that fails, a bind
 * mount of the empty covers; bound (may be NULL) is told of each file
 * bound to FUSE, and of the kept nodes after the masks' (for files not
 * there yet, bound later), bound to nothing. A path beneath a directory
 * masked before is covered already: skipped. Nothing when there is
 * nothing to mask. Returns 0, or -errno (the caller decides; the agent
 * must not run half-masked). */
int hx_masks_apply(const struct hx_masks *m, int fuse_chan, size_t kept,
		   hx_masks_bound_fn bound, void *arg);

/* The same private mount namespace (and user namespace when not root),
 * made whatever there is to mask: the agent's own /dev/pts lives there
 * (terminals.h). hx_masks_apply then uses it. Returns 0 or -errno. */
int hx_masks_private_ns(void);

/* Whether hx_masks_private_ns made it (in the agent's first process). */
bool hx_masks_in_private_ns(void);

void hx_masks_free(struct hx_masks *m);

#endif
