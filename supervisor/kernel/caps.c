/* See caps.h. */
#include "supervisor/kernel/caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int hx_caps_limit(uint32_t keep)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	/* EINVAL: a kernel before ambient capabilities (4.3) has none. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
	    errno != EINVAL)
		return -errno;
	if (syscall(SYS_capget, &h, d))
		return -errno;
	for (int i = 0; i < 2; i++) {
		uint32_t k = i ? 0 : keep;

		d[i].permitted &= k;
		d[i].effective = d[i].permitted;
		d[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &h, d) || syscall(SYS_capget, &h, d))
		return -errno;
	for (int i = 0; i < 2; i++) {
		uint32_t k = i ? 0 : keep;

		if (((d[i].effective | d[i].permitted) & ~k) ||
		    d[i].inheritable)
			return -EPERM;
	}
	return 0;
}

int hx_caps_effective(uint32_t mask, int on)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	if (on)
		d[0].effective |= mask & d[0].permitted;
	else
		d[0].effective &= ~mask;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}
