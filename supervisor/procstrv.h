/* A vector of strings in another process's memory (an exec's envp, as
 * the shim tells where its caller's is), read with process_vm_readv:
 * no part of the kernel layer's, so the shim's server reads it too. */
#ifndef HX_PROCSTRV_H
#define HX_PROCSTRV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The NULL-terminated array of string pointers at addr in process
 * (or thread) pid's memory: its strings back to back, each with its
 * NUL, into *blob (malloc'd; *len bytes) and their count into *n, no
 * more than max bytes of them (the kernel's bound of an exec's argv and
 * environment). 0 or -errno (-E2BIG past max, -EFAULT unreadable). */
int hx_proc_read_strv(pid_t pid, uint64_t addr, size_t max, char **blob,
		      size_t *len, size_t *n);

#endif
