/* The user-notify handler: what a metadata call points at, read from
 * the target's memory (unotify_int.h). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <linux/limits.h>

/* The times of the utime family as utimensat takes them; kind 1:
 * struct utimbuf, 2: struct timeval[2], 3: struct timespec[2]. */
static int read_times(const struct target *t, uint64_t addr, int kind,
		      struct mut_extra *x)
{
	int e;

	x->has_ts = true;
	if (kind == 1) {
		time_t tb[2];

		if ((e = hx_un_read_mem(t->tid, addr, tb, sizeof(tb))))
			return e;
		x->ts[0] = (struct timespec){tb[0], 0};
		x->ts[1] = (struct timespec){tb[1], 0};
	} else if (kind == 2) {
		struct timeval tv[2];

		if ((e = hx_un_read_mem(t->tid, addr, tv, sizeof(tv))))
			return e;
		for (int i = 0; i < 2; i++) {
			if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
				return -EINVAL;
			x->ts[i] = (struct timespec){tv[i].tv_sec,
						     tv[i].tv_usec * 1000};
		}
	} else if ((e = hx_un_read_mem(t->tid, addr, x->ts, sizeof(x->ts))))
		return e;
	return 0;
}

int hx_un_xattr_args(struct mut_extra *x, uint64_t size, uint64_t flags)
{
	x->xsize = (size_t)size;
	x->xflags = (int)flags;
	if (x->xflags & ~(XATTR_CREATE | XATTR_REPLACE))
		return EINVAL;
	return x->xsize > XATTR_SIZE_MAX ? E2BIG : 0;
}

static __thread unsigned char *xattr_buf; /* XATTR_SIZE_MAX bytes */

void hx_un_mut_thread_end(void)
{
	free(xattr_buf);
	xattr_buf = NULL;
}

int hx_un_read_meta(const struct target *t, uint64_t xname, uint64_t xval,
		    uint64_t tsaddr, int tskind, struct mut_extra *x)
{
	int e;

	if (xname &&
	    (e = hx_un_read_str(t->tid, xname, x->xname, sizeof(x->xname))))
		return e == -ENAMETOOLONG ? ERANGE : -e;
	/* This worker's, made at its first xattr call: as thread-local
	 * arrays, every thread of harness-exec zeroed them at its start
	 * (150 KB a thread, 15 threads). */
	if (xval && x->xsize) {
		if (!xattr_buf && !(xattr_buf = malloc(XATTR_SIZE_MAX)))
			return ENOMEM;
		if ((e = hx_un_read_mem(t->tid, xval, xattr_buf, x->xsize)))
			return -e;
		/* An ACL's ids, as the agent's namespace names them. */
		if (xname &&
		    (e = hx_un_map_acl(t, x->xname, xattr_buf, x->xsize)))
			return -e;
	}
	x->xval = xattr_buf;
	if (tsaddr && (e = read_times(t, tsaddr, tskind, x)))
		return -e;
	return 0;
}
