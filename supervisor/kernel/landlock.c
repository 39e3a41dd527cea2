/* Landlock: the ABI probe and the handle's lifecycle; see landlock.h.
 * The derivation of the rules from the policy is in landlock_derive.c,
 * the system calls in landlock_sys.c. */
#define _GNU_SOURCE
#include "supervisor/kernel/landlock.h"
#include "supervisor/kernel/landlock_int.h"

#include "policy/policy.h"
#include "supervisor/kernel/ipool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int hx_landlock_abi(void)
{
	long v = syscall(__NR_landlock_create_ruleset, NULL, 0,
			 HX_LL_CREATE_RULESET_VERSION);

	/* ENOSYS: not built; EOPNOTSUPP: built but not in lsm=. */
	return v > 0 ? (int)v : 0;
}

int hx_landlock_prepare(const struct hx_policy *p,
			const struct hx_policy_vars *vars, bool describe,
			struct hx_landlock **out, char *err, size_t errlen)
{
	struct hx_landlock *ll;
	int abi = hx_landlock_abi(), r;

	/* The patterns are already expanded with vars; they are not needed
	 * again. */
	(void)vars;
	*out = NULL;
	if (errlen)
		err[0] = '\0';
	if (abi <= 0)
		return 0;
	ll = calloc(1, sizeof(*ll));
	if (!ll)
		return -ENOMEM;
	ll->fd = -1;
	ll->abi = abi;
	if (hx_policy_mode(p) == HX_MODE_AUDIT) {
		/* Audit mode enforces nothing, the kernel included. (A
		 * --mode override is the caller's to honour: it is not in
		 * the policy.) */
		ll->text = strdup("landlock: signal scope only (audit mode)\n");
		if (!ll->text) {
			hx_landlock_free(ll);
			return -ENOMEM;
		}
		ll->len = strlen(ll->text);
		*out = ll;
		return 0;
	}
	r = hx_ll_derive(p, ll, describe, err, errlen);
	if (r) {
		hx_landlock_free(ll);
		return r;
	}
	*out = ll;
	return 0;
}

int hx_landlock_restrict(const struct hx_landlock *ll, bool log)
{
	unsigned flags =
	    log && ll && ll->abi >= 7 ? HX_LL_RESTRICT_SELF_LOG_NEW_EXEC_ON : 0;

	if (ll && ll->released)
		return -EBADF;
	if (!ll || ll->fd < 0)
		return 0;
	/* The ruleset fd is O_CLOEXEC: it does not reach the agent's
	 * program even when the caller keeps it open. */
	if (syscall(__NR_landlock_restrict_self, ll->fd, flags))
		return -errno;
	return 0;
}

int hx_landlock_scope_signals(void)
{
	struct hx_ll_ruleset_attr attr = {.scoped = HX_LL_SCOPE_SIGNAL};
	int fd, e = 0;

	if (hx_landlock_abi() < 6)
		return 0;
	if ((fd = hx_ll_create_ruleset(&attr)) < 0)
		return fd;
	if (syscall(__NR_landlock_restrict_self, fd, 0))
		e = -errno;
	close(fd);
	return e;
}

int hx_landlock_restrict_thread(const struct hx_landlock *ll)
{
	/* Its refusals are the supervisor's own, not the agent's: kept out
	 * of the kernel's audit log (ABI 7) and so of the session's. */
	unsigned flags =
	    ll && ll->abi >= 7 ? HX_LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF : 0;

	if (!ll || ll->fd < 0 || ll->released)
		return -EBADF;
	if (syscall(__NR_landlock_restrict_self, ll->fd, flags))
		return -errno;
	return 0;
}

bool hx_landlock_bounds_ioctl(const struct hx_landlock *ll)
{
	return ll && ll->fd >= 0 && !ll->released &&
	       (ll->fs_handled & HX_LL_FS_IOCTL_DEV);
}

int hx_landlock_grant_own_devpts(const struct hx_landlock *ll)
{
	static const struct {
		const char *path;
		int flags;
		uint64_t rights;
	} g[] = {
	    {"/dev/pts", O_DIRECTORY,
	     HX_LL_FS_READ_FILE | HX_LL_FS_WRITE_FILE | HX_LL_FS_READ_DIR |
		 HX_LL_FS_IOCTL_DEV},
	    {"/dev/ptmx", 0,
	     HX_LL_FS_READ_FILE | HX_LL_FS_WRITE_FILE | HX_LL_FS_IOCTL_DEV},
	};
	int r = 0;

	if (!ll || ll->fd < 0)
		return 0;
	for (size_t i = 0; i < sizeof(g) / sizeof(*g) && !r; i++) {
		int fd = open(g[i].path, O_PATH | O_CLOEXEC | g[i].flags);
		uint64_t rights = g[i].rights & ll->fs_handled;

		if (fd < 0)
			return -errno;
		if (rights)
			r = hx_ll_add_path(ll->fd, fd, rights);
		close(fd);
	}
	return r;
}

int hx_landlock_grant_mask(int node, void *arg)
{
	const struct hx_landlock *ll = arg;
	uint64_t rights =
	    (HX_LL_FS_READ_FILE | HX_LL_FS_EXECUTE) & (ll ? ll->fs_handled : 0);

	if (!ll || ll->fd < 0 || !rights)
		return 0;
	return hx_ll_add_path(ll->fd, node, rights);
}

void hx_landlock_release(struct hx_landlock *ll)
{
	if (!ll || ll->fd < 0)
		return;
	close(ll->fd);
	ll->fd = -1;
	ll->released = true;
}

void hx_landlock_describe(const struct hx_landlock *ll, FILE *out)
{
	if (!ll) {
		fprintf(out, "landlock: unavailable (kernel without Landlock, "
			     "or not enabled in lsm=): reads, the write "
			     "bound, TCP ports and scopes are not held by "
			     "the kernel\n");
		return;
	}
	if (ll->text)
		fwrite(ll->text, 1, ll->len, out);
}

size_t hx_landlock_masked(const struct hx_landlock *ll,
			  const char *const **paths)
{
	*paths = ll ? (const char *const *)ll->masked : NULL;
	return ll ? ll->nmasked : 0;
}

size_t hx_landlock_held(const struct hx_landlock *ll, const char *const **paths)
{
	*paths = ll ? (const char *const *)ll->held : NULL;
	return ll ? ll->nheld : 0;
}

size_t hx_landlock_absent(const struct hx_landlock *ll,
			  const char *const **paths, size_t *files)
{
	*paths = ll ? (const char *const *)ll->absent : NULL;
	*files = ll ? ll->nabsent_files : 0;
	return ll ? ll->nabsent : 0;
}

size_t hx_landlock_name_dirs(const struct hx_landlock *ll,
			     const char *const **paths)
{
	*paths = ll ? (const char *const *)ll->name_dirs : NULL;
	return ll ? ll->nname_dirs : 0;
}

size_t hx_landlock_deny_paths(const struct hx_landlock *ll,
			      const char *const **paths)
{
	*paths = ll ? (const char *const *)ll->deny_paths : NULL;
	return ll ? ll->ndeny_paths : 0;
}

struct hx_ipool *hx_landlock_pool(const struct hx_landlock *ll)
{
	return ll ? ll->pool : NULL;
}

void hx_landlock_free(struct hx_landlock *ll)
{
	if (!ll)
		return;
	if (ll->fd >= 0)
		close(ll->fd);
	hx_ipool_free(ll->pool);
	for (size_t i = 0; i < ll->nmasked; i++)
		free(ll->masked[i]);
	free(ll->masked);
	for (size_t i = 0; i < ll->nheld; i++)
		free(ll->held[i]);
	free(ll->held);
	for (size_t i = 0; i < ll->nabsent; i++)
		free(ll->absent[i]);
	free(ll->absent);
	for (size_t i = 0; i < ll->nname_dirs; i++)
		free(ll->name_dirs[i]);
	free(ll->name_dirs);
	for (size_t i = 0; i < ll->ndeny_paths; i++)
		free(ll->deny_paths[i]);
	free(ll->deny_paths);
	free(ll->text);
	free(ll);
}
