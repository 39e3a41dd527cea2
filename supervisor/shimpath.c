/* Where the shim is (shimpath.h). */
#include "supervisor/shimpath.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hx_shim_path(char *out)
{
	const char *env = getenv("HARNESS_SHIM");
	char self[PATH_MAX], cand[PATH_MAX + sizeof(HX_SHIM_NAME) + 2], *slash;
	ssize_t n;

	if (env && env[0]) {
		if (!realpath(env, out))
			return -errno;
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			return -errno;
		self[n] = '\0';
		slash = strrchr(self, '/');
		*slash = '\0';
		snprintf(cand, sizeof(cand), "%s/%s", self, HX_SHIM_NAME);
		if (!realpath(cand, out))
			return -errno;
	}
	if (strpbrk(out, ": \t\n"))
		return -EINVAL;
	return access(out, R_OK) ? -errno : 0;
}
