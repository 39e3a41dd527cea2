/* The Linux/glibc 2.36 interposers: the exported names (every one is in
 * exports.map), each classifying its call into the structs of hooks.h
 * for the core (hooks.c), and the real functions that core calls
 * through (struct hx_real), resolved with dlsym.
 *
 * Rules for this file: no malloc, stdio or locks on the exec, open and
 * connect paths (they run in vfork children and after fork); errno is
 * saved on entry and restored before the real call; it is set only on a
 * deny. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "common/sockaddr.h"
#include "shim/client.h"
#include "shim/interpose_linux.h"
#include "shim/tls.h"

#define HX_EXPORT __attribute__((visibility("default")))

extern char **environ;

/* Fortified entry points: declared by bits/fcntl2.h only under fortify. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* ---------------------------------------------------------------- */
/* Real functions: resolved in the constructor, lazily otherwise. */

/* real_NAME() returns the next NAME; the trailing declaration takes the
 * semicolon. */
#define REAL(name)                                                             \
	static __typeof__(&name) real_ptr_##name;                              \
	static __typeof__(&name) real_##name(void)                             \
	{                                                                      \
		__typeof__(&name) p =                                          \
		    __atomic_load_n(&real_ptr_##name, __ATOMIC_ACQUIRE);       \
		if (!p) {                                                      \
			int prev = hx_tls_foreign_enter();                     \
			p = (__typeof__(&name))dlsym(RTLD_NEXT, #name);        \
			hx_tls_foreign_leave(prev);                            \
			__atomic_store_n(&real_ptr_##name, p,                  \
					 __ATOMIC_RELEASE);                    \
		}                                                              \
		return p;                                                      \
	}                                                                      \
	static __typeof__(&name) real_##name(void)

REAL(execve);
REAL(execvpe);
REAL(fexecve);
REAL(execveat);
REAL(system);
REAL(popen);
REAL(open);
REAL(open64);
REAL(openat);
REAL(openat64);
REAL(__open_2);
REAL(__open64_2);
REAL(__openat_2);
REAL(__openat64_2);
REAL(creat);
REAL(creat64);
REAL(fopen);
REAL(fopen64);
REAL(freopen);
REAL(freopen64);
REAL(fclose);
REAL(rename);
REAL(renameat);
REAL(renameat2);
REAL(unlink);
REAL(unlinkat);
REAL(rmdir);
REAL(mkdir);
REAL(mkdirat);
REAL(link);
REAL(linkat);
REAL(symlink);
REAL(symlinkat);
REAL(truncate);
REAL(truncate64);
REAL(connect);
REAL(sendto);
REAL(sendmsg);
REAL(getaddrinfo);
REAL(gethostbyname);
REAL(gethostbyname2);
REAL(syscall);

/* posix_spawn has two versions; we want what new programs link to. */
static __typeof__(&posix_spawn) real_ptr_spawn, real_ptr_spawnp;

static void resolve_spawn(void)
{
	int prev = hx_tls_foreign_enter();
	void *p = dlvsym(RTLD_NEXT, "posix_spawn", "GLIBC_2.15");
	void *q = dlvsym(RTLD_NEXT, "posix_spawnp", "GLIBC_2.15");

	if (!p)
		p = dlsym(RTLD_NEXT, "posix_spawn");
	if (!q)
		q = dlsym(RTLD_NEXT, "posix_spawnp");
	hx_tls_foreign_leave(prev);
	__atomic_store_n(&real_ptr_spawn, (__typeof__(&posix_spawn))p,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&real_ptr_spawnp, (__typeof__(&posix_spawnp))q,
			 __ATOMIC_RELEASE);
}

static void resolve_all(void)
{
	real_execve();
	real_execvpe();
	real_fexecve();
	real_execveat();
	real_system();
	real_popen();
	real_open();
	real_open64();
	real_openat();
	real_openat64();
	real___open_2();
	real___open64_2();
	real___openat_2();
	real___openat64_2();
	real_creat();
	real_creat64();
	real_fopen();
	real_fopen64();
	real_freopen();
	real_freopen64();
	real_fclose();
	real_rename();
	real_renameat();
	real_renameat2();
	real_unlink();
	real_unlinkat();
	real_rmdir();
	real_mkdir();
	real_mkdirat();
	real_link();
	real_linkat();
	real_symlink();
	real_symlinkat();
	real_truncate();
	real_truncate64();
	real_connect();
	real_sendto();
	real_sendmsg();
	real_getaddrinfo();
	real_gethostbyname();
	real_gethostbyname2();
	real_syscall();
	resolve_spawn();
}

__attribute__((constructor)) static void hx_ctor(int argc, char **argv,
						 char **envp)
{
	int saved = errno;

	(void)envp;
	resolve_all();
	hx_init(argc, argv, true);
	errno = saved;
}

/* The real exec or spawn e->kind names (struct hx_real's exec). */
static long exec_real(const struct hx_exec_call *e, char *const *envp)
{
	switch ((enum exec_kind)e->kind) {
	case EK_EXECVE:
		return real_execve() ? real_execve()(e->path, e->argv, envp)
				     : (errno = ENOSYS, -1);
	case EK_EXECVPE:
		return real_execvpe() ? real_execvpe()(e->path, e->argv, envp)
				      : (errno = ENOSYS, -1);
	case EK_FEXECVE:
		return real_fexecve() ? real_fexecve()(e->fd, e->argv, envp)
				      : (errno = ENOSYS, -1);
	case EK_EXECVEAT:
		return real_execveat()
			   ? real_execveat()(e->fd, e->path, e->argv, envp,
					     e->flags)
			   : (errno = ENOSYS, -1);
	case EK_SPAWN:
		if (!real_ptr_spawn)
			resolve_spawn();
		return real_ptr_spawn ? real_ptr_spawn(e->pid, e->path, e->fa,
						       e->attr, e->argv, envp)
				      : ENOSYS;
	case EK_SPAWNP:
		if (!real_ptr_spawnp)
			resolve_spawn();
		return real_ptr_spawnp ? real_ptr_spawnp(e->pid, e->path, e->fa,
							 e->attr, e->argv, envp)
				       : ENOSYS;
	case EK_SYSCALL_EXECVE:
		return real_syscall()(SYS_execve, e->path, e->argv, envp);
	case EK_SYSCALL_EXECVEAT:
		return real_syscall()(SYS_execveat, e->fd, e->path, e->argv,
				      envp, e->flags);
	}
	return -1;
}

/* The real open o->kind names: the fd (stdio kinds: the FILE's, result
 * in o->fp), or -1. */
static long open_real(struct hx_open_call *o)
{
	const char *p = o->path;

	switch ((enum open_kind)o->kind) {
	case OK_OPEN:
		return real_open()(p, o->flags, o->mode);
	case OK_OPEN64:
		return real_open64()(p, o->flags, o->mode);
	case OK_OPENAT:
		return real_openat()(o->dirfd, p, o->flags, o->mode);
	case OK_OPENAT64:
		return real_openat64()(o->dirfd, p, o->flags, o->mode);
	case OK_OPEN_2:
		return real___open_2()(p, o->flags);
	case OK_OPEN64_2:
		return real___open64_2()(p, o->flags);
	case OK_OPENAT_2:
		return real___openat_2()(o->dirfd, p, o->flags);
	case OK_OPENAT64_2:
		return real___openat64_2()(o->dirfd, p, o->flags);
	case OK_CREAT:
		return real_creat()(p, o->mode);
	case OK_CREAT64:
		return real_creat64()(p, o->mode);
	case OK_FOPEN:
		o->fp = real_fopen()(p, o->fmode);
		break;
	case OK_FOPEN64:
		o->fp = real_fopen64()(p, o->fmode);
		break;
	case OK_FREOPEN:
		o->fp = real_freopen()(p, o->fmode, o->stream);
		break;
	case OK_FREOPEN64:
		o->fp = real_freopen64()(p, o->fmode, o->stream);
		break;
	case OK_SYS_OPEN:
		return real_syscall()(SYS_open, p, o->flags, o->mode);
	case OK_SYS_OPENAT:
		return real_syscall()(SYS_openat, o->dirfd, p, o->flags,
				      o->mode);
	case OK_SYS_OPENAT2:
		return real_syscall()(SYS_openat2, o->dirfd, p, o->how,
				      o->howsize);
	case OK_SYS_CREAT:
		return real_syscall()(SYS_creat, p, o->mode);
	}
	return o->fp ? fileno(o->fp) : -1;
}

static int fclose_real(FILE *fp)
{
	return real_fclose()(fp);
}

static int getaddrinfo_real(const char *node, const char *service,
			    const struct addrinfo *hints, struct addrinfo **res)
{
	return real_getaddrinfo()(node, service, hints, res);
}

static struct hostent *gethostbyname_real(const char *name)
{
	return real_gethostbyname()(name);
}

static struct hostent *gethostbyname2_real(const char *name, int af)
{
	return real_gethostbyname2()(name, af);
}

const struct hx_real hx_linux_real = {
    .exec = exec_real,
    .open = open_real,
    .fclose = fclose_real,
    .getaddrinfo = getaddrinfo_real,
    .gethostbyname = gethostbyname_real,
    .gethostbyname2 = gethostbyname2_real,
};

__typeof__(&syscall) hx_linux_real_syscall(void)
{
	return real_syscall();
}

/* ---------------------------------------------------------------- */
/* Exec family */

static long execve_like(enum hx_call call, const char *path, char *const argv[],
			char *const envp[])
{
	struct hx_exec_call e = {.kind = EK_EXECVE, .path = path, .argv = argv};

	return hx_hooks_execve(&hx_linux_real, call, &e, envp);
}

static long execvp_like(enum hx_call call, const char *file, char *const argv[],
			char *const envp[])
{
	struct hx_exec_call e = {
	    .kind = EK_EXECVPE, .path = file, .argv = argv};

	return hx_hooks_execvp(&hx_linux_real, call, &e, envp);
}

HX_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return (int)execve_like(HX_CALL_EXECVE, path, argv, envp);
}

HX_EXPORT int execv(const char *path, char *const argv[])
{
	return (int)execve_like(HX_CALL_EXECV, path, argv, environ);
}

HX_EXPORT int execvp(const char *file, char *const argv[])
{
	return (int)execvp_like(HX_CALL_EXECVP, file, argv, environ);
}

HX_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return (int)execvp_like(HX_CALL_EXECVPE, file, argv, envp);
}

/* execl* hand their arguments as varargs; hooks.c collects them. */
static int execl_like(enum hx_call call, enum exec_kind kind, const char *path,
		      const char *arg, va_list ap, bool with_env)
{
	struct hx_exec_call e = {.kind = kind, .path = path};

	return hx_hooks_execl(&hx_linux_real, call, &e, kind == EK_EXECVPE, arg,
			      ap, with_env);
}

HX_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_like(HX_CALL_EXECL, EK_EXECVE, path, arg, ap, false);
	va_end(ap);
	return r;
}

HX_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_like(HX_CALL_EXECLP, EK_EXECVPE, file, arg, ap, false);
	va_end(ap);
	return r;
}

HX_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_like(HX_CALL_EXECLE, EK_EXECVE, path, arg, ap, true);
	va_end(ap);
	return r;
}

HX_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct hx_exec_call e = {.kind = EK_FEXECVE, .fd = fd, .argv = argv};

	return (int)hx_hooks_fexec(&hx_linux_real, HX_CALL_FEXECVE, &e, envp);
}

HX_EXPORT int execveat(int dirfd, const char *path, char *const argv[],
		       char *const envp[], int flags)
{
	struct hx_exec_call e = {.kind = EK_EXECVEAT,
				 .fd = dirfd,
				 .path = path,
				 .argv = argv,
				 .flags = flags};

	if (hx_hooks_inert())
		return (int)exec_real(&e, envp);
	return (int)hx_hooks_execat(&hx_linux_real, HX_CALL_EXECVEAT, dirfd,
				    flags, &e, envp);
}

static int spawn_like(enum hx_call call, enum exec_kind kind, pid_t *pid,
		      const char *path, const posix_spawn_file_actions_t *fa,
		      const posix_spawnattr_t *attr, char *const argv[],
		      char *const envp[])
{
	struct hx_exec_call e = {.kind = kind,
				 .spawn = true,
				 .path = path,
				 .argv = argv,
				 .pid = pid,
				 .fa = fa,
				 .attr = attr};

	return hx_hooks_spawn(&hx_linux_real, call, kind == EK_SPAWNP, &e,
			      envp);
}

HX_EXPORT int posix_spawn(pid_t *pid, const char *path,
			  const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[],
			  char *const envp[])
{
	return spawn_like(HX_CALL_POSIX_SPAWN, EK_SPAWN, pid, path, fa, attr,
			  argv, envp);
}

HX_EXPORT int posix_spawnp(pid_t *pid, const char *file,
			   const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[],
			   char *const envp[])
{
	return spawn_like(HX_CALL_POSIX_SPAWNP, EK_SPAWNP, pid, file, fa, attr,
			  argv, envp);
}

HX_EXPORT int system(const char *cmd)
{
	int err = cmd ? hx_hooks_shell(HX_CALL_SYSTEM, cmd) : 0;

	if (err) {
		errno = err;
		return -1;
	}
	return real_system()(cmd);
}

HX_EXPORT FILE *popen(const char *cmd, const char *type)
{
	int err = cmd ? hx_hooks_shell(HX_CALL_POPEN, cmd) : 0;

	if (err) {
		errno = err;
		return NULL;
	}
	return real_popen()(cmd, type);
}

/* ---------------------------------------------------------------- */
/* Open family */

static int open_fd(enum open_kind kind, enum hx_call call, int dirfd,
		   const char *path, int flags, mode_t mode)
{
	struct hx_open_call o = {.kind = kind,
				 .creat =
				     kind == OK_CREAT || kind == OK_CREAT64,
				 .call = call,
				 .dirfd = dirfd,
				 .path = path,
				 .flags = flags,
				 .mode = mode};

	return (int)hx_hooks_open(&hx_linux_real, &o);
}

static FILE *open_stdio(enum open_kind kind, enum hx_call call,
			const char *path, const char *fmode, FILE *stream)
{
	struct hx_open_call o = {.kind = kind,
				 .call = call,
				 .dirfd = AT_FDCWD,
				 .path = path,
				 .fmode = fmode,
				 .stream = stream};

	return hx_hooks_stdio(&hx_linux_real, &o);
}

#define MODE_ARG(flags, last)                                                  \
	mode_t mode = 0;                                                       \
	if (__OPEN_NEEDS_MODE(flags)) {                                        \
		va_list ap;                                                    \
		va_start(ap, last);                                            \
		mode = va_arg(ap, mode_t);                                     \
		va_end(ap);                                                    \
	}

HX_EXPORT int open(const char *path, int flags, ...)
{
	MODE_ARG(flags, flags);
	return open_fd(OK_OPEN, HX_CALL_OPEN, AT_FDCWD, path, flags, mode);
}

HX_EXPORT int open64(const char *path, int flags, ...)
{
	MODE_ARG(flags, flags);
	return open_fd(OK_OPEN64, HX_CALL_OPEN, AT_FDCWD, path, flags, mode);
}

HX_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags, flags);
	return open_fd(OK_OPENAT, HX_CALL_OPENAT, dirfd, path, flags, mode);
}

HX_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags, flags);
	return open_fd(OK_OPENAT64, HX_CALL_OPENAT, dirfd, path, flags, mode);
}

HX_EXPORT int __open_2(const char *path, int flags)
{
	return open_fd(OK_OPEN_2, HX_CALL_OPEN, AT_FDCWD, path, flags, 0);
}

HX_EXPORT int __open64_2(const char *path, int flags)
{
	return open_fd(OK_OPEN64_2, HX_CALL_OPEN, AT_FDCWD, path, flags, 0);
}

HX_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return open_fd(OK_OPENAT_2, HX_CALL_OPENAT, dirfd, path, flags, 0);
}

HX_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return open_fd(OK_OPENAT64_2, HX_CALL_OPENAT, dirfd, path, flags, 0);
}

HX_EXPORT int creat(const char *path, mode_t mode)
{
	return open_fd(OK_CREAT, HX_CALL_CREAT, AT_FDCWD, path,
		       O_CREAT | O_WRONLY | O_TRUNC, mode);
}

HX_EXPORT int creat64(const char *path, mode_t mode)
{
	return open_fd(OK_CREAT64, HX_CALL_CREAT, AT_FDCWD, path,
		       O_CREAT | O_WRONLY | O_TRUNC, mode);
}

HX_EXPORT FILE *fopen(const char *restrict path, const char *restrict mode)
{
	return open_stdio(OK_FOPEN, HX_CALL_FOPEN, path, mode, NULL);
}

HX_EXPORT FILE *fopen64(const char *restrict path, const char *restrict mode)
{
	return open_stdio(OK_FOPEN64, HX_CALL_FOPEN, path, mode, NULL);
}

HX_EXPORT FILE *freopen(const char *restrict path, const char *restrict mode,
			FILE *restrict stream)
{
	return open_stdio(OK_FREOPEN, HX_CALL_FREOPEN, path, mode, stream);
}

HX_EXPORT FILE *freopen64(const char *restrict path, const char *restrict mode,
			  FILE *restrict stream)
{
	return open_stdio(OK_FREOPEN64, HX_CALL_FREOPEN, path, mode, stream);
}

/* ---------------------------------------------------------------- */
/* Mutations */

#define MUT_RETURN(m, call_real)                                               \
	do {                                                                   \
		int err_ = hx_hooks_mut(&(m));                                 \
		if (err_) {                                                    \
			errno = err_;                                          \
			return -1;                                             \
		}                                                              \
		return call_real;                                              \
	} while (0)

HX_EXPORT int rename(const char *from, const char *to)
{
	struct hx_mut m = {.call = HX_CALL_RENAME,
			   .op = HX_OP_RENAME,
			   .dirfd = AT_FDCWD,
			   .path = from,
			   .dirfd2 = AT_FDCWD,
			   .path2 = to};
	MUT_RETURN(m, real_rename()(from, to));
}

HX_EXPORT int renameat(int fd1, const char *from, int fd2, const char *to)
{
	struct hx_mut m = {.call = HX_CALL_RENAMEAT,
			   .op = HX_OP_RENAME,
			   .dirfd = fd1,
			   .path = from,
			   .dirfd2 = fd2,
			   .path2 = to};
	MUT_RETURN(m, real_renameat()(fd1, from, fd2, to));
}

HX_EXPORT int renameat2(int fd1, const char *from, int fd2, const char *to,
			unsigned int flags)
{
	struct hx_mut m = {.call = HX_CALL_RENAMEAT2,
			   .op = HX_OP_RENAME,
			   .dirfd = fd1,
			   .path = from,
			   .dirfd2 = fd2,
			   .path2 = to,
			   .has_flags = true,
			   .flags = flags};
	MUT_RETURN(m, real_renameat2()(fd1, from, fd2, to, flags));
}

HX_EXPORT int unlink(const char *path)
{
	struct hx_mut m = {.call = HX_CALL_UNLINK,
			   .op = HX_OP_UNLINK,
			   .dirfd = AT_FDCWD,
			   .path = path};
	MUT_RETURN(m, real_unlink()(path));
}

HX_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	struct hx_mut m = {.call = HX_CALL_UNLINKAT,
			   .op = (flags & AT_REMOVEDIR) ? HX_OP_RMDIR
							: HX_OP_UNLINK,
			   .dirfd = dirfd,
			   .path = path,
			   .has_flags = true,
			   .flags = (uint32_t)flags};
	MUT_RETURN(m, real_unlinkat()(dirfd, path, flags));
}

HX_EXPORT int rmdir(const char *path)
{
	struct hx_mut m = {.call = HX_CALL_RMDIR,
			   .op = HX_OP_RMDIR,
			   .dirfd = AT_FDCWD,
			   .path = path};
	MUT_RETURN(m, real_rmdir()(path));
}

HX_EXPORT int mkdir(const char *path, mode_t mode)
{
	struct hx_mut m = {.call = HX_CALL_MKDIR,
			   .op = HX_OP_MKDIR,
			   .dirfd = AT_FDCWD,
			   .path = path,
			   .has_mode = true,
			   .mode = mode};
	MUT_RETURN(m, real_mkdir()(path, mode));
}

HX_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	struct hx_mut m = {.call = HX_CALL_MKDIRAT,
			   .op = HX_OP_MKDIR,
			   .dirfd = dirfd,
			   .path = path,
			   .has_mode = true,
			   .mode = mode};
	MUT_RETURN(m, real_mkdirat()(dirfd, path, mode));
}

HX_EXPORT int link(const char *old, const char *new)
{
	struct hx_mut m = {.call = HX_CALL_LINK,
			   .op = HX_OP_LINK,
			   .dirfd = AT_FDCWD,
			   .path = new,
			   .dirfd2 = AT_FDCWD,
			   .path2 = old};
	MUT_RETURN(m, real_link()(old, new));
}

HX_EXPORT int linkat(int oldfd, const char *old, int newfd, const char *new,
		     int flags)
{
	struct hx_mut m = {.call = HX_CALL_LINKAT,
			   .op = HX_OP_LINK,
			   .dirfd = newfd,
			   .path = new,
			   .dirfd2 = oldfd,
			   .path2 = old,
			   .path2_empty = (flags & AT_EMPTY_PATH) != 0,
			   .has_flags = true,
			   .flags = (uint32_t)flags};
	MUT_RETURN(m, real_linkat()(oldfd, old, newfd, new, flags));
}

HX_EXPORT int symlink(const char *target, const char *linkpath)
{
	struct hx_mut m = {.call = HX_CALL_SYMLINK,
			   .op = HX_OP_SYMLINK,
			   .dirfd = AT_FDCWD,
			   .path = linkpath,
			   .dirfd2 = AT_FDCWD,
			   .path2 = target,
			   .path2_raw = true};
	MUT_RETURN(m, real_symlink()(target, linkpath));
}

HX_EXPORT int symlinkat(const char *target, int dirfd, const char *linkpath)
{
	struct hx_mut m = {.call = HX_CALL_SYMLINKAT,
			   .op = HX_OP_SYMLINK,
			   .dirfd = dirfd,
			   .path = linkpath,
			   .dirfd2 = AT_FDCWD,
			   .path2 = target,
			   .path2_raw = true};
	MUT_RETURN(m, real_symlinkat()(target, dirfd, linkpath));
}

HX_EXPORT int truncate(const char *path, off_t len)
{
	struct hx_mut m = {.call = HX_CALL_TRUNCATE,
			   .op = HX_OP_TRUNCATE,
			   .dirfd = AT_FDCWD,
			   .path = path};
	MUT_RETURN(m, real_truncate()(path, len));
}

HX_EXPORT int truncate64(const char *path, off64_t len)
{
	struct hx_mut m = {.call = HX_CALL_TRUNCATE,
			   .op = HX_OP_TRUNCATE,
			   .dirfd = AT_FDCWD,
			   .path = path};
	MUT_RETURN(m, real_truncate64()(path, len));
}

/* ---------------------------------------------------------------- */
/* Network */

int hx_sock_proto(int fd, const struct sockaddr *sa, socklen_t len)
{
	int p = 0, e = errno;
	socklen_t l = sizeof(p);

	/* Only an IP address has a protocol a rule names: no syscall for
	 * the others (unix sockets: every message of a local IPC). */
	if (!sa || len < sizeof(sa_family_t) ||
	    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &p, &l))
		p = errno == ENOTSOCK || errno == EBADF ? -1 : 0;
	errno = e;
	return p;
}

int hx_send_proto(int fd, const struct sockaddr *sa, socklen_t len)
{
	int p = hx_sock_proto(fd, sa, len);

	/* A UDP send goes where it names: its one getsockopt is all
	 * (every DNS question of every process). */
	if (p < 0 || p == IPPROTO_UDP)
		return p;
	return hx_sock_name_ignored(fd) ? -1 : p;
}

HX_EXPORT int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	int proto = hx_sock_proto(fd, addr.__sockaddr__, len);
	int err = proto < 0 ? 0
			    : hx_hooks_net(HX_CALL_CONNECT, HX_OP_CONNECT,
					   proto, addr.__sockaddr__, len);

	if (err) {
		errno = err;
		return -1;
	}
	return real_connect()(fd, addr, len);
}

HX_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			 __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	int err = 0, proto;

	if (addr.__sockaddr__ &&
	    (proto = hx_send_proto(fd, addr.__sockaddr__, len)) >= 0)
		err = hx_hooks_net(HX_CALL_SENDTO, HX_OP_SEND, proto,
				   addr.__sockaddr__, len);
	if (err) {
		errno = err;
		return -1;
	}
	return real_sendto()(fd, buf, n, flags, addr, len);
}

HX_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	int err = 0, proto;

	if (msg && msg->msg_name && msg->msg_namelen &&
	    (proto = hx_send_proto(fd, msg->msg_name, msg->msg_namelen)) >= 0)
		err = hx_hooks_net(HX_CALL_SENDMSG, HX_OP_SEND, proto,
				   msg->msg_name, msg->msg_namelen);
	if (err) {
		errno = err;
		return -1;
	}
	return real_sendmsg()(fd, msg, flags);
}

HX_EXPORT int getaddrinfo(const char *restrict node,
			  const char *restrict service,
			  const struct addrinfo *restrict hints,
			  struct addrinfo **restrict res)
{
	return hx_hooks_getaddrinfo(&hx_linux_real, node, service, hints, res);
}

HX_EXPORT struct hostent *gethostbyname(const char *name)
{
	return hx_hooks_hostent(&hx_linux_real, HX_CALL_GETHOSTBYNAME, name,
				AF_INET, false);
}

HX_EXPORT struct hostent *gethostbyname2(const char *name, int af)
{
	return hx_hooks_hostent(&hx_linux_real, HX_CALL_GETHOSTBYNAME2, name,
				af, true);
}
