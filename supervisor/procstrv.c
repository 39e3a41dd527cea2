/* Strings in another process's memory; see procstrv.h. */
#define _GNU_SOURCE
#include "supervisor/procstrv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define STRV_BATCH 128 /* strings a call (IOV_MAX is 1024) */
#define STRV_PEEK  256 /* bytes of each string a call: most arguments */

int hx_proc_read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv(tid, &l, 1, &r, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* Room in b for want more bytes, never past max. */
static int blob_room(struct hx_strblob *b, size_t want, size_t max)
{
	size_t cap = b->cap ? b->cap : 16384;
	char *p;

	/* The bound first: a caller's max may shrink below what is read. */
	if (want > max || b->len > max - want)
		return -E2BIG;
	if (b->len + want <= b->cap)
		return 0;
	while (cap < b->len + want)
		cap *= 2;
	if (cap > max)
		cap = max;
	if (!(p = realloc(b->p, cap)))
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

/* A read never spans a page, so the end of a mapping is not a fault. */
int hx_proc_read_str(pid_t tid, uint64_t addr, struct hx_strblob *b, size_t max)
{
	for (;;) {
		size_t want = 4096 - (addr & 4095);
		struct iovec l, r;
		ssize_t n;
		char *z;
		int e;

		if (b->len >= max)
			return -E2BIG;
		if (want > max - b->len)
			want = max - b->len;
		if ((e = blob_room(b, want, max)))
			return e;
		l = (struct iovec){b->p + b->len, want};
		r = (struct iovec){(void *)(uintptr_t)addr, want};
		n = process_vm_readv(tid, &l, 1, &r, 1, 0);
		if (n <= 0)
			return n < 0 ? -errno : -EFAULT;
		z = memchr(b->p + b->len, '\0', (size_t)n);
		if (z) {
			b->len = (size_t)(z - b->p) + 1;
			return 0;
		}
		b->len += (size_t)n;
		addr += (uint64_t)n;
	}
}

/* Each remote piece lies in one page, so a partial transfer (which ends
 * at the first piece that faults and never splits one) leaves whole
 * pieces; the piece that faulted is read alone for its own answer. */
int hx_proc_read_strings(pid_t tid, const uint64_t *ptrs, size_t n,
			 struct hx_strblob *b, size_t max)
{
	char stage[STRV_BATCH * STRV_PEEK];
	struct iovec l[STRV_BATCH], r[STRV_BATCH];
	size_t i = 0;
	int e;

	while (i < n) {
		size_t k = n - i < STRV_BATCH ? n - i : STRV_BATCH, j;
		ssize_t got;

		for (j = 0; j < k; j++) {
			size_t len = 4096 - (ptrs[i + j] & 4095);

			if (len > STRV_PEEK)
				len = STRV_PEEK;
			l[j] = (struct iovec){stage + j * STRV_PEEK, len};
			r[j] =
			    (struct iovec){(void *)(uintptr_t)ptrs[i + j], len};
		}
		got = process_vm_readv(tid, l, k, r, k, 0);
		if (got < 0 && errno != EFAULT)
			return -errno;
		for (j = 0; j < k && got >= (ssize_t)r[j].iov_len; j++) {
			const char *s = l[j].iov_base;
			const char *z = memchr(s, '\0', r[j].iov_len);
			size_t m = z ? (size_t)(z - s) + 1 : r[j].iov_len;

			got -= (ssize_t)r[j].iov_len;
			if ((e = blob_room(b, m, max)))
				return e;
			memcpy(b->p + b->len, s, m);
			b->len += m;
			if (!z && (e = hx_proc_read_str(tid, ptrs[i + j] + m, b,
							max)))
				return e;
		}
		if (!j) {
			if ((e = hx_proc_read_str(tid, ptrs[i], b, max)))
				return e;
			j = 1;
		}
		i += j;
	}
	return 0;
}

int hx_proc_read_strv(pid_t tid, uint64_t addr, size_t max,
		      struct hx_strblob *b, size_t *n)
{
	uint64_t ptrs[512];
	int e;

	*n = 0;
	for (;;) {
		uint64_t at = addr + *n * 8;
		size_t want = 4096 - (at & 4095), cnt, i;

		if (want < 8)
			want = 8; /* one pointer across a page's end */
		if ((e = hx_proc_read_mem(tid, at, ptrs, want)))
			return e;
		cnt = want / 8;
		for (i = 0; i < cnt && ptrs[i]; i++)
			;
		if ((*n + i) * 8 > max)
			return -E2BIG;
		if ((e = hx_proc_read_strings(tid, ptrs, i, b,
					      max - (*n + i) * 8)))
			return e;
		*n += i;
		if (i < cnt)
			return 0;
	}
}
