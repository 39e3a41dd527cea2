/* syscall(2) for the numbers the other interposers cover: each decoded
 * into the same family the libc entry point takes (hooks.h), the others
 * passed straight through. Every exported name here is in exports.map. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "shim/interpose_linux.h"

#define HX_EXPORT __attribute__((visibility("default")))

static long sys_open_like(enum open_kind kind, int dirfd, const char *path,
			  int flags, mode_t mode, const struct open_how *how,
			  size_t howsize)
{
	struct hx_open_call o = {.kind = kind,
				 .creat = kind == OK_SYS_CREAT,
				 .call = HX_CALL_SYSCALL,
				 .dirfd = dirfd,
				 .path = path,
				 .flags = flags,
				 .mode = mode,
				 .how = how,
				 .howsize = howsize};

	return hx_hooks_open(&hx_linux_real, &o);
}

/* An argument slot of the table below: an index into syscall's
 * arguments, or one of these. */
enum { CWD = -1 /* AT_FDCWD */, NONE = -2 /* absent: 0 */ };

/* Where each mutation's arguments are: unlinkat with AT_REMOVEDIR is a
 * rmdir, linkat with AT_EMPTY_PATH links the fd itself; nargs arguments
 * go on to the real call, 0 for the rest. */
static const struct sys_mut {
	long nr;
	enum hx_op op;
	signed char dirfd, path, dirfd2, path2, flags, mode, nargs;
	bool raw; /* path2 is a symlink's target text */
} sys_muts[] = {
    {SYS_rename, HX_OP_RENAME, CWD, 0, CWD, 1, NONE, NONE, 5, false},
    {SYS_renameat, HX_OP_RENAME, 0, 1, 2, 3, NONE, NONE, 5, false},
    {SYS_renameat2, HX_OP_RENAME, 0, 1, 2, 3, 4, NONE, 5, false},
    {SYS_unlink, HX_OP_UNLINK, CWD, 0, NONE, NONE, NONE, NONE, 1, false},
    {SYS_rmdir, HX_OP_RMDIR, CWD, 0, NONE, NONE, NONE, NONE, 1, false},
    {SYS_unlinkat, HX_OP_UNLINK, 0, 1, NONE, NONE, 2, NONE, 3, false},
    {SYS_mkdir, HX_OP_MKDIR, CWD, 0, NONE, NONE, NONE, 1, 2, false},
    {SYS_mkdirat, HX_OP_MKDIR, 0, 1, NONE, NONE, NONE, 2, 3, false},
    {SYS_link, HX_OP_LINK, CWD, 1, CWD, 0, NONE, NONE, 2, false},
    {SYS_linkat, HX_OP_LINK, 2, 3, 0, 1, 4, NONE, 5, false},
    {SYS_symlink, HX_OP_SYMLINK, CWD, 1, NONE, 0, NONE, NONE, 2, true},
    {SYS_symlinkat, HX_OP_SYMLINK, 1, 2, NONE, 0, NONE, NONE, 3, true},
    {SYS_truncate, HX_OP_TRUNCATE, CWD, 0, NONE, NONE, NONE, NONE, 2, false},
};

static long slot(const long *a, int i)
{
	return i == CWD ? AT_FDCWD : i == NONE ? 0 : a[i];
}

static long sys_mut(long nr, const long *a)
{
	const struct sys_mut *t = sys_muts;
	struct hx_mut m = {.call = HX_CALL_SYSCALL};
	long b[5] = {0};
	int err;

	while (t->nr != nr)
		t++;
	m.op = t->op;
	m.dirfd = (int)slot(a, t->dirfd);
	m.path = (const char *)slot(a, t->path);
	m.dirfd2 = (int)slot(a, t->dirfd2);
	m.path2 = (const char *)slot(a, t->path2);
	m.path2_raw = t->raw;
	m.has_flags = t->flags != NONE;
	m.flags = (uint32_t)slot(a, t->flags);
	m.has_mode = t->mode != NONE;
	m.mode = (uint32_t)slot(a, t->mode);
	if (m.op == HX_OP_UNLINK && (slot(a, t->flags) & AT_REMOVEDIR))
		m.op = HX_OP_RMDIR;
	if (m.op == HX_OP_LINK)
		m.path2_empty = (slot(a, t->flags) & AT_EMPTY_PATH) != 0;
	for (int i = 0; i < t->nargs; i++)
		b[i] = a[i];
	err = hx_hooks_mut(&m);
	if (err) {
		errno = err;
		return -1;
	}
	return hx_linux_real_syscall()(nr, b[0], b[1], b[2], b[3], b[4]);
}

/* connect and sendto: 0 to go on, else the errno. */
static int sys_net(long nr, const long *a)
{
	const struct sockaddr *sa =
	    (const void *)(nr == SYS_connect ? a[1] : a[4]);
	socklen_t len = (socklen_t)(nr == SYS_connect ? a[2] : a[5]);
	int proto;

	/* No socket there (the kernel's EBADF or ENOTSOCK), or a send
	 * that goes not where sa names: no decision. */
	if (!sa ||
	    (proto = nr == SYS_sendto ? hx_send_proto((int)a[0], sa, len)
				      : hx_sock_proto((int)a[0], sa, len)) < 0)
		return 0;
	return hx_hooks_net(HX_CALL_SYSCALL,
			    nr == SYS_connect ? HX_OP_CONNECT : HX_OP_SEND,
			    proto, sa, len);
}

HX_EXPORT long syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	int err;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);

	if (hx_hooks_inert())
		return hx_linux_real_syscall()(nr, a[0], a[1], a[2], a[3], a[4],
					       a[5]);

#define S(i) ((const char *)a[i])
#define I(i) ((int)a[i])
	switch (nr) {
	case SYS_open:
		return sys_open_like(OK_SYS_OPEN, AT_FDCWD, S(0), I(1),
				     (mode_t)a[2], NULL, 0);
	case SYS_openat:
		return sys_open_like(OK_SYS_OPENAT, I(0), S(1), I(2),
				     (mode_t)a[3], NULL, 0);
	case SYS_openat2: {
		const struct open_how *how = (const void *)a[2];

		/* A bad struct fails in the kernel; nothing to decide. */
		if (!how || (size_t)a[3] < sizeof(*how))
			break;
		return sys_open_like(OK_SYS_OPENAT2, I(0), S(1),
				     (int)how->flags, (mode_t)how->mode, how,
				     (size_t)a[3]);
	}
	case SYS_creat:
		return sys_open_like(OK_SYS_CREAT, AT_FDCWD, S(0),
				     O_CREAT | O_WRONLY | O_TRUNC, (mode_t)a[1],
				     NULL, 0);
	case SYS_execve: {
		struct hx_exec_call e = {.kind = EK_SYSCALL_EXECVE,
					 .path = S(0),
					 .argv = (void *)a[1]};

		return hx_hooks_execat(&hx_linux_real, HX_CALL_SYSCALL,
				       AT_FDCWD, 0, &e, (void *)a[2]);
	}
	case SYS_execveat: {
		struct hx_exec_call e = {.kind = EK_SYSCALL_EXECVEAT,
					 .fd = I(0),
					 .path = S(1),
					 .argv = (void *)a[2],
					 .flags = I(4)};

		return hx_hooks_execat(&hx_linux_real, HX_CALL_SYSCALL, I(0),
				       I(4), &e, (void *)a[3]);
	}
	case SYS_connect:
	case SYS_sendto:
		err = sys_net(nr, a);
		if (err) {
			errno = err;
			return -1;
		}
		break;
	case SYS_rename:
	case SYS_renameat:
	case SYS_renameat2:
	case SYS_unlink:
	case SYS_rmdir:
	case SYS_unlinkat:
	case SYS_mkdir:
	case SYS_mkdirat:
	case SYS_link:
	case SYS_linkat:
	case SYS_symlink:
	case SYS_symlinkat:
	case SYS_truncate:
		return sys_mut(nr, a);
	default:
		break;
	}
#undef S
#undef I
	return hx_linux_real_syscall()(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
