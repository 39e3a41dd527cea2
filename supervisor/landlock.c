/* Landlock: ABI probe, syscall wrappers and the handle's lifecycle; see
 * landlock.h. The derivation of the rules from the policy is in
 * landlock_derive.c. Syscalls are made by number: glibc has no wrapper
 * and the build machine's headers may predate the running kernel. */
#define _GNU_SOURCE
#include "landlock.h"
#include "landlock_int.h"
#include "ipool.h"

#include "policy/policy.h"

#include <errno.h>
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

uint64_t hx_ll_fs_handled(int abi)
{
	uint64_t m = HX_LL_FS_ABI1;

	if (abi >= 2)
		m |= HX_LL_FS_REFER;
	if (abi >= 3)
		m |= HX_LL_FS_TRUNCATE;
	if (abi >= 5)
		m |= HX_LL_FS_IOCTL_DEV;
	return m;
}

int hx_ll_create_ruleset(const struct hx_ll_ruleset_attr *attr)
{
	long fd = syscall(__NR_landlock_create_ruleset, attr, sizeof(*attr),
			  0);

	return fd < 0 ? -errno : (int)fd;
}

int hx_ll_add_path(int ruleset, int fd, uint64_t access)
{
	struct hx_ll_path_beneath_attr a = {
	    .allowed_access = access,
	    .parent_fd = fd,
	};

	if (syscall(__NR_landlock_add_rule, ruleset, HX_LL_RULE_PATH_BENEATH,
		    &a, 0))
		return -errno;
	return 0;
}

int hx_ll_add_port(int ruleset, uint64_t port, uint64_t access)
{
	struct hx_ll_net_port_attr a = {
	    .allowed_access = access,
	    .port = port,
	};

	if (syscall(__NR_landlock_add_rule, ruleset, HX_LL_RULE_NET_PORT, &a,
		    0))
		return -errno;
	return 0;
}

int hx_landlock_prepare(const struct hx_policy *p,
			const struct hx_policy_vars *vars,
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
		ll->text = strdup("landlock: off (audit mode)\n");
		if (!ll->text) {
			hx_landlock_free(ll);
			return -ENOMEM;
		}
		ll->len = strlen(ll->text);
		*out = ll;
		return 0;
	}
	r = hx_ll_derive(p, ll, err, errlen);
	if (r) {
		hx_landlock_free(ll);
		return r;
	}
	*out = ll;
	return 0;
}

int hx_landlock_restrict(const struct hx_landlock *ll)
{
	if (ll && ll->released)
		return -EBADF;
	if (!ll || ll->fd < 0)
		return 0;
	/* The ruleset fd is O_CLOEXEC: it does not reach the agent's
	 * program even when the caller keeps it open. */
	if (syscall(__NR_landlock_restrict_self, ll->fd, 0))
		return -errno;
	return 0;
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
	free(ll->text);
	free(ll);
}
