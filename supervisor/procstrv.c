/* Strings in another process's memory; see procstrv.h. */
#define _GNU_SOURCE
#include "supervisor/procstrv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* len bytes at addr of pid into buf: 0 or -errno. */
static int peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
	ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);

	if (got < 0)
		return -errno;
	return (size_t)got == len ? 0 : -EFAULT;
}

/* The string at addr appended to *b (with its NUL), a page's part a
 * read (a string may end just before an unmapped page). */
static int one(pid_t pid, uint64_t addr, size_t max, char **b, size_t *len,
	       size_t *cap)
{
	for (;;) {
		size_t want = 4096 - (addr & 4095), k;
		char *nb, *z;
		int e;

		if (*len + want > max)
			want = max - *len;
		if (!want)
			return -E2BIG;
		if (*len + want > *cap) {
			size_t nc = *cap ? *cap : 16384;

			while (nc < *len + want)
				nc *= 2;
			if (!(nb = realloc(*b, nc)))
				return -ENOMEM;
			*b = nb;
			*cap = nc;
		}
		if ((e = peek(pid, addr, *b + *len, want)))
			return e;
		z = memchr(*b + *len, '\0', want);
		k = z ? (size_t)(z - (*b + *len)) + 1 : want;
		*len += k;
		addr += k;
		if (z)
			return 0;
	}
}

int hx_proc_read_strv(pid_t pid, uint64_t addr, size_t max, char **blob,
		      size_t *len, size_t *n)
{
	uint64_t ptrs[512];
	size_t cap = 0;
	int e = 0;

	*blob = NULL;
	*len = *n = 0;
	for (;;) {
		/* the pointers to the end of their page, a read */
		size_t want = 4096 - (addr & 4095), cnt;

		if (want < sizeof(ptrs[0]))
			want = sizeof(ptrs[0]);
		if ((e = peek(pid, addr, ptrs, want)))
			break;
		cnt = want / sizeof(ptrs[0]);
		for (size_t i = 0; i < cnt; i++) {
			if (!ptrs[i])
				return 0;
			if ((*n + 1) * sizeof(ptrs[0]) > max)
				e = -E2BIG;
			else
				e = one(pid, ptrs[i],
					max - (*n + 1) * sizeof(ptrs[0]), blob,
					len, &cap);
			if (e)
				goto fail;
			++*n;
		}
		addr += cnt * sizeof(ptrs[0]);
	}
fail:
	free(*blob);
	*blob = NULL;
	*len = *n = 0;
	return e;
}
