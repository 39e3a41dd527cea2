/* Absolute, lexically normalized paths for requests. Lexical only: the
 * shim never follows symlinks here (the supervisor and the kernel layers
 * see the real object); a local-read allow is re-checked against
 * /proc/self/fd afterwards (see readrules.h). No allocation, no errno:
 * safe in vfork children and signal handlers. */
#ifndef HX_SHIM_PATH_H
#define HX_SHIM_PATH_H

#include <stddef.h>
#include <stdint.h>

/* Joins path to base (ignored when path is absolute; base must be
 * absolute otherwise) and normalizes: collapses "//", drops ".", resolves
 * ".." lexically (never above "/"), drops a trailing "/". Writes a
 * NUL-terminated result to out. Returns its length, -EINVAL for an empty
 * path or a relative base, -ENAMETOOLONG when it does not fit cap. */
long hx_spath_normalize(const char *base, const char *path, char *out,
			size_t cap);

/* As hx_spath_normalize, with the base taken from dirfd: AT_FDCWD means
 * the current directory (getcwd(2)), any other fd its /proc/self/fd link.
 * Returns the length or -errno (e.g. -EBADF for a bad dirfd). */
long hx_spath_abs(int dirfd, const char *path, char *out, size_t cap);

/* v in decimal at out (at most 20 digits, no NUL); returns how many. */
size_t hx_utoa(uint64_t v, char *out);

/* The target of /proc/self/fd/<fd> into out (NUL-terminated); length or
 * -errno. */
long hx_spath_of_fd(int fd, char *out, size_t cap);

#endif
