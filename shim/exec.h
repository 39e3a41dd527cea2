/* Exec helpers that need no interposition: executable lookup like
 * glibc's execvp/posix_spawnp. Raw syscalls only (vfork children). */
#ifndef HX_SHIM_EXEC_H
#define HX_SHIM_EXEC_H

#include <stdbool.h>
#include <stddef.h>

#define HX_DEFAULT_PATH "/bin:/usr/bin"

/* The executable a p-variant would run: file with a '/' as is (made
 * absolute); else the first dir of pathvar (NULL: HX_DEFAULT_PATH; an
 * empty entry is the cwd) where faccessat(X_OK) succeeds; none: the bare
 * name. Writes NUL-terminated out; returns its length or -errno. */
long hx_exec_resolve(const char *file, const char *pathvar, char *out,
		     size_t cap);

/* The absolute executable for execve-like calls (relative to cwd). */
long hx_exec_abs(const char *path, char *out, size_t cap);

/* 0 when path exists as an executable candidate, else -errno from
 * faccessat(X_OK). */
long hx_exec_access(int dirfd, const char *path);

/* Whether the image an exec of path runs loads the shim: a dynamic
 * 64-bit ELF (PT_INTERP), or a "#!" script whose interpreter is one. A
 * static program never gets the shim's connection (DESIGN.md invariant
 * 5: it starts with the fds its parent meant to give it). Unreadable:
 * false. */
bool hx_exec_loads_shim(const char *path);

#endif
