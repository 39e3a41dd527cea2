/* Executable lookup; see exec.h. */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "path.h"
#include "sys.h"

long hx_exec_access(int dirfd, const char *path)
{
	return hx_sys4(SYS_faccessat, dirfd, path, X_OK, 0);
}

long hx_exec_abs(const char *path, char *out, size_t cap)
{
	return hx_spath_abs(AT_FDCWD, path, out, cap);
}

long hx_exec_resolve(const char *file, const char *pathvar, char *out,
		     size_t cap)
{
	char cand[PATH_MAX];
	const char *p;
	size_t flen;

	if (!file || !*file)
		return -ENOENT;
	if (strchr(file, '/'))
		return hx_exec_abs(file, out, cap);
	flen = strlen(file);
	p = pathvar ? pathvar : HX_DEFAULT_PATH;
	for (;;) {
		size_t n = strcspn(p, ":");

		if (n + 1 + flen < sizeof(cand)) {
			if (n) {
				memcpy(cand, p, n);
				cand[n] = '/';
				memcpy(cand + n + 1, file, flen + 1);
			} else {
				memcpy(cand, file, flen + 1);
			}
			if (hx_exec_access(AT_FDCWD, cand) == 0)
				return hx_exec_abs(cand, out, cap);
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	if (flen + 1 > cap)
		return -ENAMETOOLONG;
	memcpy(out, file, flen + 1);
	return (long)flen;
}
