/* Strings in another process's memory, read with process_vm_readv: an
 * exec's argv and environment as the kernel layer sees them
 * (unotify_exec.c), and the environment the shim says its caller's
 * envp holds (server.c). Many strings to a call: an argv of thousands
 * is read in tens of calls, not thousands. */
#ifndef HX_PROCSTRV_H
#define HX_PROCSTRV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Strings read, NUL-terminated and back to back. */
struct hx_strblob {
	char *p; /* malloc'd */
	size_t len, cap;
};

/* Exactly len bytes at addr in tid, or -errno. */
int hx_proc_read_mem(pid_t tid, uint64_t addr, void *buf, size_t len);
/* The string at addr (the rest of one) appended to b, a page a read: 0,
 * -E2BIG when b would pass max bytes, or -errno. */
int hx_proc_read_str(pid_t tid, uint64_t addr, struct hx_strblob *b,
		     size_t max);
/* The strings at ptrs[0..n) appended to b: 0, -E2BIG past max, or
 * -errno (EFAULT: a string the process cannot read either). */
int hx_proc_read_strings(pid_t tid, const uint64_t *ptrs, size_t n,
			 struct hx_strblob *b, size_t max);
/* The NULL-terminated array of string pointers at addr (not 0): its
 * strings appended to b and their count in *n, the pointers and the
 * strings no more than max bytes together (the kernel's bound of an
 * exec's argv and environment). 0, -E2BIG or -errno. */
int hx_proc_read_strv(pid_t tid, uint64_t addr, size_t max,
		      struct hx_strblob *b, size_t *n);

#endif
