/* Landlock: the kernel's static filesystem (and TCP, signal, abstract
 * socket) boundary, derived from the policy and applied to the agent
 * before it runs (DESIGN.md section 2).
 *
 * Lifecycle: hx_landlock_prepare (in harness-exec, before fork: it opens
 * the paths and builds the ruleset) -> hx_landlock_restrict (in the
 * child, after no_new_privs: one syscall, no allocation) ->
 * [hx_landlock_release (in the parent, once the child is restricted)] ->
 * hx_landlock_free (in the parent). hx_landlock_free(NULL) is a no-op. */
#ifndef HX_LANDLOCK_H
#define HX_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct hx_policy;
struct hx_policy_vars;
struct hx_landlock;

/* The kernel's Landlock ABI version (0: Landlock unavailable). */
int hx_landlock_abi(void);

/* Builds the ruleset for p with the same variables the policy was loaded
 * with. Returns 0 and *out (NULL when the kernel has no Landlock: the
 * caller reports that guarantee as missing), or -errno with a message in
 * err. */
int hx_landlock_prepare(const struct hx_policy *p,
			const struct hx_policy_vars *vars, bool describe,
			struct hx_landlock **out, char *err, size_t errlen);

/* Restricts the calling process (the agent's first process, after
 * PR_SET_NO_NEW_PRIVS). log (ABI 7; ignored before): the refusals of
 * the programs it execs make audit records too (kaudit.h). Returns 0 or
 * -errno. Async-signal-safe. */
int hx_landlock_restrict(const struct hx_landlock *ll, bool log);

/* Audit mode, which enforces nothing of the policy: the calling process
 * restricted by the signal scope alone (ABI 6; 0 and nothing before),
 * so that the agent signals no process outside the session, harness-exec
 * included, as the static deny list keeps it from their limits and
 * priorities. After PR_SET_NO_NEW_PRIVS. Returns 0 or -errno. */
int hx_landlock_scope_signals(void);

/* Restricts the calling thread only (no other thread of the process)
 * by the same ruleset, its refusals not logged; the caller set
 * PR_SET_NO_NEW_PRIVS on itself. For devbound.h, before
 * hx_landlock_release. Returns 0 or -errno. */
int hx_landlock_restrict_thread(const struct hx_landlock *ll);

/* Whether the ruleset bounds device ioctls (IOCTL_DEV, ABI 5): the
 * agent's own open of a device outside its write roots takes none. */
bool hx_landlock_bounds_ioctl(const struct hx_landlock *ll);

/* Closes the ruleset once the child has restricted itself: freeing a
 * few hundred rules takes about 0.2 ms, better spent while the agent
 * starts than at the end. hx_landlock_restrict says -EBADF afterwards.
 * NULL: no-op. */
void hx_landlock_release(struct hx_landlock *ll);

/* In the child, after its own devpts instance is mounted (terminals.h)
 * and before hx_landlock_restrict: grants /dev/pts and /dev/ptmx of that
 * instance (read, write, ioctl), which hold only the session's ptys; the
 * rules derived before the fork name the host's instance, now covered
 * (Landlock skips a covered mount point). Returns 0 or -errno.
 * Async-signal-safe. */
int hx_landlock_grant_own_devpts(const struct hx_landlock *ll);

/* In the agent's first process, for a file mask bound to its FUSE node
 * (masks.h's hx_masks_bound_fn: node an O_PATH fd of the node itself,
 * borrowed; arg the struct hx_landlock): lets that node be opened for
 * reading and running, so that the mask refuses the open on record
 * (maskfs.h) where Landlock would have refused it first, unrecorded
 * (~/.netrc, outside every write root). The node refuses every open, so
 * nothing of the file is granted. Returns 0 or -errno. */
int hx_landlock_grant_mask(int node, void *arg);

/* Writes, one per line, what the ruleset enforces and what it cannot
 * (patterns it cannot express, rights the ABI lacks), for --verbose:
 * made only when prepared with describe (its text costs a start about
 * 0.15 ms); nothing otherwise. */
void hx_landlock_describe(const struct hx_landlock *ll, FILE *out);

/* The read denies that lie inside write roots, which the ruleset cannot
 * hold (the root grants their tree), as paths that exist now: the masks
 * cover them (masks.h). Owned by ll. */
size_t hx_landlock_masked(const struct hx_landlock *ll,
			  const char *const **paths);

/* The files and directories denied for reading outside write roots
 * (~/.netrc, ~/.ssh), which the ruleset holds, as they exist now: masked
 * too when its refusals are not read (kaudit.h), so that an open of one
 * or a name looked up in one is a record (maskfs.h). Owned by ll. */
size_t hx_landlock_held(const struct hx_landlock *ll,
			const char *const **paths);

/* The directories where the read denies inside write roots name files
 * (hx_landlock_masked's, and those not there yet: ~/.cache/huggingface
 * for its token), as they exist at start: watched for those names
 * (maskwatch.h), since the write root grants whatever is made there.
 * Owned by ll. */
size_t hx_landlock_name_dirs(const struct hx_landlock *ll,
			     const char *const **paths);

/* The files and directories the literal read denies outside write roots
 * name (canonical), there at start or not: Landlock holds each on the
 * file it resolves to, so a symlink made on the way to one (a dotfile
 * manager's ~/.docker -> dotfiles/docker) leads to a file it grants;
 * such a symlink is masked on its name (maskwatch.h). Owned by ll. */
size_t hx_landlock_deny_paths(const struct hx_landlock *ll,
			      const char *const **paths);

/* The held paths a literal deny names that are not there at start, in
 * a directory that is (~/.git-credentials before the user's first `git
 * credential approve`, ~/.aws): watched, and masked when one appears
 * (maskwatch.h), so that a read of it is a record too. The first *files
 * (a file's name, not "DIR/ **") each get a node of the masks kept and
 * granted at start as a held file's: no Landlock rule can be added
 * later. Owned by ll. */
size_t hx_landlock_absent(const struct hx_landlock *ll,
			  const char *const **paths, size_t *files);

/* The unnamed files granted for reading that creations in the carved
 * directories link in (ipool.h), owned by ll (they outlive
 * hx_landlock_release, until hx_landlock_free); NULL when none. */
struct hx_ipool;
struct hx_ipool *hx_landlock_pool(const struct hx_landlock *ll);

void hx_landlock_free(struct hx_landlock *ll);

#endif
