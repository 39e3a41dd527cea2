/* Raw system calls for the shim. The shim exports syscall() itself and
 * may run in vfork children and signal handlers, so it never goes through
 * libc for its own I/O: no errno, no cancellation points, no interposed
 * entry points (our own connect() or open() would recurse).
 * Each returns the kernel's value: >= 0, or -errno. x86_64 only for now. */
#ifndef HX_COMMON_SYS_H
#define HX_COMMON_SYS_H

#include <stddef.h>
#include <sys/syscall.h>

#if !defined(__x86_64__)
#error "shim/sys.h: only x86_64 is implemented"
#endif

static inline long hx_sys6(long nr, long a, long b, long c, long d, long e,
			   long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define hx_sys0(n)	 hx_sys6((n), 0, 0, 0, 0, 0, 0)
#define hx_sys1(n, a)	 hx_sys6((n), (long)(a), 0, 0, 0, 0, 0)
#define hx_sys2(n, a, b) hx_sys6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define hx_sys3(n, a, b, c)                                                    \
	hx_sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define hx_sys4(n, a, b, c, d)                                                 \
	hx_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define hx_sys5(n, a, b, c, d, e)                                              \
	hx_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

static inline long hx_getpid(void)
{
	return hx_sys0(SYS_getpid);
}

static inline long hx_gettid(void)
{
	return hx_sys0(SYS_gettid);
}

static inline void hx_close(int fd)
{
	hx_sys1(SYS_close, fd);
}

/* write(2) all of buf, retrying EINTR and short writes; 0 or -errno. */
static inline long hx_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		long r = hx_sys3(SYS_write, fd, p, n);

		if (r == -4 /* EINTR */)
			continue;
		if (r <= 0)
			return r ? r : -5 /* EIO */;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

#endif
