/* The Landlock system calls, by number: glibc has no wrapper and the
 * build machine's headers may predate the running kernel (landlock_uapi.h
 * declares the newer fields). See landlock_int.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/landlock_int.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

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
	long fd = syscall(__NR_landlock_create_ruleset, attr, sizeof(*attr), 0);

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
