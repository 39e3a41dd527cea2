/* Absolute, lexically normalized paths: the one normalizer the shim,
 * the supervisor and `harness-policy explain` share, so that a path has
 * one meaning on every side. Lexical only: nothing here follows symlinks
 * (the supervisor resolves them as the agent would, path_resolve.h; the
 * kernel layers see the real object). No allocation, no errno: safe in
 * vfork children and signal handlers. */
#ifndef HX_COMMON_PATH_H
#define HX_COMMON_PATH_H

#include <stddef.h>
#include <stdint.h>

/* Joins path to base (ignored when path is absolute; base must be
 * absolute otherwise) and normalizes: collapses "//", drops ".", resolves
 * ".." lexically (never above "/"), drops a trailing "/". Writes a
 * NUL-terminated result to out. Returns its length, -EINVAL for an empty
 * path or a relative base, -ENAMETOOLONG when path is PATH_MAX bytes or
 * longer (the kernel refuses such a path) or the result does not fit
 * cap. */
long hx_path_normalize(const char *base, const char *path, char *out,
		       size_t cap);

/* As hx_path_normalize, with the base taken from dirfd: AT_FDCWD means
 * the current directory (getcwd(2)), any other fd its link in the
 * calling thread's table (hx_path_of_call_fd).
 * Returns the length or -errno (e.g. -EBADF for a bad dirfd). */
long hx_path_at(int dirfd, const char *path, char *out, size_t cap);

/* v in decimal at out (at most 20 digits, no NUL); returns how many. */
size_t hx_utoa(uint64_t v, char *out);

/* The target of /proc/self/fd/<fd> (the process's table) into out
 * (NUL-terminated); length or -errno. */
long hx_path_of_fd(int fd, char *out, size_t cap);
/* The same of the calling thread's table (/proc/thread-self/fd), as the
 * kernel reads a call's fd argument: a thread may have a table of its
 * own (unshare(CLONE_FILES)). */
long hx_path_of_call_fd(int fd, char *out, size_t cap);

#endif
