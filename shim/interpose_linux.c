/* The Linux/glibc 2.36 hooks. Thin: classify the call into a struct
 * hx_req, ask (client.c), then call the real function. Every exported
 * name here is in exports.map.
 *
 * Rules for this file: no malloc, stdio or locks on the exec, open and
 * connect paths (they run in vfork children and after fork); errno is
 * saved on entry and restored before the real call; it is set only on a
 * deny. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "shim/client.h"
#include "shim/env.h"
#include "shim/exec.h"
#include "common/kerrno.h"
#include "common/notice.h"
#include "common/path.h"
#include "common/sockaddr.h"
#include "shim/readrules.h"
#include "common/sys.h"

#define HX_EXPORT __attribute__((visibility("default")))

extern char **environ;

/* Fortified entry points: declared by bits/fcntl2.h only under fortify. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* ---------------------------------------------------------------- */
/* Real functions: resolved in the constructor, lazily otherwise. */

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
	}

REAL(execve)
REAL(execvpe) REAL(fexecve) REAL(execveat) REAL(system) REAL(popen) REAL(open)
    REAL(open64) REAL(openat) REAL(openat64) REAL(__open_2) REAL(__open64_2)
	REAL(__openat_2) REAL(__openat64_2) REAL(creat) REAL(creat64)
	    REAL(fopen) REAL(fopen64) REAL(freopen) REAL(freopen64) REAL(fclose)
		REAL(rename) REAL(renameat) REAL(renameat2) REAL(unlink)
		    REAL(unlinkat) REAL(rmdir) REAL(mkdir) REAL(mkdirat)
			REAL(link) REAL(linkat) REAL(symlink) REAL(symlinkat)
			    REAL(truncate) REAL(truncate64) REAL(connect)
				REAL(sendto) REAL(sendmsg) REAL(getaddrinfo)
				    REAL(gethostbyname) REAL(gethostbyname2)
					REAL(syscall)

    /* posix_spawn has two versions; we want what new programs link to. */
    static __typeof__(&posix_spawn) real_ptr_spawn,
    real_ptr_spawnp;

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

/* ---------------------------------------------------------------- */
/* Entry and exit of a decided call */

struct ctx {
	int saved_errno;
	int prev_tls;
	bool foreign; /* CLONE_VM child: no TLS or shared writes */
	bool init_busy;
};

/* False: pass the call straight through (inert, or nested inside the
 * shim's own use of libunwind/dladdr). */
static bool enter(struct ctx *c)
{
	enum hx_state st;

	c->saved_errno = errno;
	c->init_busy = false;
	if (hx_tls_state == HX_TLS_FOREIGN)
		return false;
	st = hx_init(0, NULL, false);
	if (st == HX_ST_INERT)
		return false;
	if (st == HX_ST_BUSY) {
		/* Re-entered during our own init (a signal): we cannot ask,
		 * so pass only when there is no supervisor at all. */
		if (!getenv(HX_ENV_SOCKET))
			return false;
		c->init_busy = true;
	}
	c->foreign = hx_in_foreign_process();
	if (!c->foreign) {
		c->prev_tls = hx_tls_state;
		hx_tls_state = HX_TLS_IN;
	}
	return true;
}

static void leave(struct ctx *c)
{
	if (!c->foreign)
		hx_tls_state = c->prev_tls;
	errno = c->saved_errno;
}

/* Asks (for an exec that may hand its connection over when ho is not
 * NULL: ho->fd is -1 unless it does); on deny prints the notice.
 * Returns 0 (go ahead) or the errno: for a denial the supervisor lets
 * us explain (HX_VERDICT_TELL), what the kernel would say of k. */
static int ask(struct ctx *c, const struct hx_req *r, const char *target,
	       struct hx_handover *ho, const struct hx_kargs *k)
{
	struct hx_reply rep;

	if (ho)
		ho->fd = -1;
	if (c->init_busy)
		hx_reply_parse(NULL, 0, 0, &rep);
	else if (ho)
		hx_ask_exec(r, &rep, ho);
	else
		hx_ask(r, &rep);
	if (!rep.unreachable && rep.verdict == HX_VERDICT_ALLOW)
		return 0;
	if (k && !rep.unreachable && (rep.flags & HX_VERDICT_TELL)) {
		int e = hx_kerrno(k);

		/* EEXIST for mkdir -p is what the program expects: no
		 * notice (the denial is in the audit log). */
		if (e != EACCES)
			return e;
	}
	hx_notice_write(&(struct hx_notice){
	    .op = r->op,
	    .verdict = rep.unreachable ? HX_VERDICT_DENY : rep.verdict,
	    .target = target,
	    .argv = r->op == HX_OP_EXEC ? (const char *const *)r->argv : NULL,
	    .rule = rep.unreachable ? NULL : rep.rule});
	return rep.err ? (int)rep.err : EACCES;
}

static int decide(struct ctx *c, const struct hx_req *r, const char *target)
{
	return ask(c, r, target, NULL, NULL);
}

/* decide() for a call the kernel may have its own answer to (k). */
static int decide_k(struct ctx *c, const struct hx_req *r, const char *target,
		    const struct hx_kargs *k)
{
	return ask(c, r, target, NULL, k);
}

/* Leaves and fails the call with err. */
#define DENY(c, err, ret)                                                      \
	do {                                                                   \
		leave(c);                                                      \
		errno = (err);                                                 \
		return (ret);                                                  \
	} while (0)

/* ---------------------------------------------------------------- */
/* Exec family */

enum exec_kind {
	EK_EXECVE,
	EK_EXECVPE,
	EK_FEXECVE,
	EK_EXECVEAT,
	EK_SPAWN,
	EK_SPAWNP,
	EK_SYSCALL_EXECVE,
	EK_SYSCALL_EXECVEAT,
};

struct exec_call {
	enum exec_kind kind;
	const char *path; /* as the program gave it */
	char *const *argv;
	int fd, flags;
	pid_t *pid;
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
};

static long exec_real(const struct exec_call *e, char *const *envp)
{
	switch (e->kind) {
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

#define ENV_STACK 16384

/* Calls the real exec/spawn with the rebuilt environment: on the stack,
 * or in a private mapping when large (no malloc: vfork children); conn:
 * the HX_ENV_CONN value, or NULL. The caller has restored errno. */
static long exec_with_env(const struct exec_call *e, char *const *envp,
			  const char *conn)
{
	char stackbuf[ENV_STACK] __attribute__((aligned(16)));
	size_t nptrs, nbytes, total;
	char *mem = stackbuf;
	long r, m = 0;

	hx_env_size(envp, hx_shim_path(), hx_socket_path(), conn, &nptrs,
		    &nbytes);
	total = nptrs * sizeof(char *) + nbytes;
	if (total > sizeof(stackbuf)) {
		m = hx_sys6(SYS_mmap, 0, (long)total, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m < 0 && m > -4096) {
			errno = E2BIG;
			return e->kind == EK_SPAWN || e->kind == EK_SPAWNP
				   ? E2BIG
				   : -1;
		}
		mem = (char *)m;
	}
	hx_env_rebuild(envp, hx_shim_path(), hx_socket_path(), conn,
		       (char **)mem, nptrs, mem + nptrs * sizeof(char *),
		       nbytes);
	r = exec_real(e, (char *const *)mem);
	if (m) {
		int saved = errno;

		hx_sys2(SYS_munmap, m, (long)total);
		errno = saved;
	}
	return r;
}

/* Decides an exec of exe (absolute, or a bare name nobody on PATH has)
 * and runs it. For spawn kinds the return value is the error number. */
static long exec_common(enum hx_call call, const char *exe,
			const struct exec_call *e, char *const *envp)
{
	struct ctx c;
	struct hx_req r = {.call = call, .op = HX_OP_EXEC, .frames = true};
	bool spawn = e->kind == EK_SPAWN || e->kind == EK_SPAWNP;
	struct hx_handover ho = {.fd = -1};
	long ret;
	int err;

	if (!enter(&c))
		return exec_real(e, envp);
	r.path = exe;
	r.argv = e->argv;
	r.frames = !c.foreign;
	/* The connection may go to the new image (with the shim only); a
	 * spawn's child is another process, which connects by itself. */
	err = ask(&c, &r, exe, spawn ? NULL : &ho, NULL);
	if (err) {
		leave(&c);
		if (spawn)
			return err;
		errno = err;
		return -1;
	}
	leave(&c);
	if (spawn || ho.fd < 0)
		return exec_with_env(e, envp, NULL);
	ret = exec_with_env(e, envp, ho.env);
	hx_handover_undo(&ho); /* still here: the exec failed */
	return ret;
}

/* Resolves an execve-like path; a missing file fails as exec would,
 * without a request (CPython tries every PATH dir). 0 or -errno. */
static long exec_path(int dirfd, const char *path, int flags, char *out,
		      size_t cap)
{
	long r;

	if (!path)
		return -EFAULT;
	if (!*path && (flags & AT_EMPTY_PATH))
		return hx_path_of_fd(dirfd, out, cap);
	r = hx_exec_access(dirfd, path);
	if (r == -ENOENT || r == -ENOTDIR)
		return r;
	return hx_path_at(dirfd, path, out, cap);
}

static int exec_fail(long r)
{
	errno = (int)-r;
	return -1;
}

static bool shim_inert(void)
{
	if (hx_tls_state == HX_TLS_FOREIGN)
		return true;
	return hx_init(0, NULL, false) == HX_ST_INERT;
}

static long do_execve_like(enum hx_call call, const char *path,
			   char *const argv[], char *const envp[])
{
	struct exec_call e = {.kind = EK_EXECVE, .path = path, .argv = argv};
	char exe[PATH_MAX];
	long r;

	if (shim_inert())
		return exec_real(&e, envp);
	r = exec_path(AT_FDCWD, path, 0, exe, sizeof(exe));
	if (r < 0)
		return exec_fail(r);
	return exec_common(call, exe, &e, envp);
}

static long do_execvp_like(enum hx_call call, const char *file,
			   char *const argv[], char *const envp[])
{
	struct exec_call e = {.kind = EK_EXECVPE, .path = file, .argv = argv};
	char exe[PATH_MAX];
	long r;

	if (shim_inert())
		return exec_real(&e, envp);
	if (!file)
		return exec_fail(-EFAULT);
	if (strchr(file, '/'))
		r = exec_path(AT_FDCWD, file, 0, exe, sizeof(exe));
	else
		r = hx_exec_resolve(file, getenv("PATH"), exe, sizeof(exe));
	if (r < 0)
		return exec_fail(r);
	return exec_common(call, exe, &e, envp);
}

HX_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return (int)do_execve_like(HX_CALL_EXECVE, path, argv, envp);
}

HX_EXPORT int execv(const char *path, char *const argv[])
{
	return (int)do_execve_like(HX_CALL_EXECV, path, argv, environ);
}

HX_EXPORT int execvp(const char *file, char *const argv[])
{
	return (int)do_execvp_like(HX_CALL_EXECVP, file, argv, environ);
}

HX_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return (int)do_execvp_like(HX_CALL_EXECVPE, file, argv, envp);
}

#define ARGV_STACK 256

/* execl* hand their arguments as varargs: collect them into an array on
 * the stack, or a private mapping beyond ARGV_STACK. */
#define EXECL_BODY(call, fn, first, ap_last, with_env)                         \
	do {                                                                   \
		char *stackv[ARGV_STACK];                                      \
		char **argv = stackv;                                          \
		char *const *envp = environ;                                   \
		size_t n = 1, i, size = 0;                                     \
		va_list ap, aq;                                                \
		long m = 0;                                                    \
		int r, saved;                                                  \
		va_start(ap, ap_last);                                         \
		va_copy(aq, ap);                                               \
		while (va_arg(aq, char *))                                     \
			n++;                                                   \
		va_end(aq);                                                    \
		if (n >= ARGV_STACK) {                                         \
			size = (n + 1) * sizeof(char *);                       \
			m = hx_sys6(SYS_mmap, 0, (long)size,                   \
				    PROT_READ | PROT_WRITE,                    \
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);       \
			if (m < 0 && m > -4096) {                              \
				va_end(ap);                                    \
				errno = E2BIG;                                 \
				return -1;                                     \
			}                                                      \
			argv = (char **)m;                                     \
		}                                                              \
		argv[0] = (char *)(first);                                     \
		for (i = 1; i < n; i++)                                        \
			argv[i] = va_arg(ap, char *);                          \
		argv[n] = NULL;                                                \
		if (with_env) {                                                \
			(void)va_arg(ap, char *);                              \
			envp = va_arg(ap, char *const *);                      \
		}                                                              \
		va_end(ap);                                                    \
		r = (int)fn(call, path_or_file, argv, envp);                   \
		if (m) {                                                       \
			saved = errno;                                         \
			hx_sys2(SYS_munmap, m, (long)size);                    \
			errno = saved;                                         \
		}                                                              \
		return r;                                                      \
	} while (0)

HX_EXPORT int execl(const char *path, const char *arg, ...)
{
	const char *path_or_file = path;

	EXECL_BODY(HX_CALL_EXECL, do_execve_like, arg, arg, 0);
}

HX_EXPORT int execlp(const char *file, const char *arg, ...)
{
	const char *path_or_file = file;

	EXECL_BODY(HX_CALL_EXECLP, do_execvp_like, arg, arg, 0);
}

HX_EXPORT int execle(const char *path, const char *arg, ...)
{
	const char *path_or_file = path;

	EXECL_BODY(HX_CALL_EXECLE, do_execve_like, arg, arg, 1);
}

HX_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct exec_call e = {.kind = EK_FEXECVE, .fd = fd, .argv = argv};
	char exe[PATH_MAX];
	long r;

	if (shim_inert())
		return (int)exec_real(&e, envp);
	r = hx_path_of_fd(fd, exe, sizeof(exe));
	if (r < 0)
		return exec_fail(r);
	return (int)exec_common(HX_CALL_FEXECVE, exe, &e, envp);
}

HX_EXPORT int execveat(int dirfd, const char *path, char *const argv[],
		       char *const envp[], int flags)
{
	struct exec_call e = {.kind = EK_EXECVEAT,
			      .fd = dirfd,
			      .path = path,
			      .argv = argv,
			      .flags = flags};
	char exe[PATH_MAX];
	long r;

	if (shim_inert())
		return (int)exec_real(&e, envp);
	r = exec_path(dirfd, path, flags, exe, sizeof(exe));
	if (r < 0)
		return exec_fail(r);
	return (int)exec_common(HX_CALL_EXECVEAT, exe, &e, envp);
}

static int do_spawn(enum hx_call call, enum exec_kind kind, pid_t *pid,
		    const char *path, const posix_spawn_file_actions_t *fa,
		    const posix_spawnattr_t *attr, char *const argv[],
		    char *const envp[])
{
	struct exec_call e = {.kind = kind,
			      .path = path,
			      .argv = argv,
			      .pid = pid,
			      .fa = fa,
			      .attr = attr};
	char exe[PATH_MAX];
	int saved = errno;
	long r;

	if (shim_inert())
		return (int)exec_real(&e, envp);
	if (!path)
		return EFAULT;
	if (kind == EK_SPAWNP && !strchr(path, '/'))
		r = hx_exec_resolve(path, getenv("PATH"), exe, sizeof(exe));
	else
		r = hx_path_at(AT_FDCWD, path, exe, sizeof(exe));
	errno = saved;
	if (r < 0)
		return (int)-r;
	return (int)exec_common(call, exe, &e, envp);
}

HX_EXPORT int posix_spawn(pid_t *pid, const char *path,
			  const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[],
			  char *const envp[])
{
	return do_spawn(HX_CALL_POSIX_SPAWN, EK_SPAWN, pid, path, fa, attr,
			argv, envp);
}

HX_EXPORT int posix_spawnp(pid_t *pid, const char *file,
			   const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[],
			   char *const envp[])
{
	return do_spawn(HX_CALL_POSIX_SPAWNP, EK_SPAWNP, pid, file, fa, attr,
			argv, envp);
}

/* system() and popen() spawn through libc-internal calls we cannot see:
 * put the shim back into the process environment first. Not vfork-safe,
 * and neither are system/popen. */
static void environ_fixup(void)
{
	char val[PATH_MAX * 2];
	const char *pre = getenv(HX_ENV_PRELOAD);
	const char *sock = getenv(HX_ENV_SOCKET);

	if (!pre || !hx_env_preload_has(pre, hx_shim_path())) {
		if (hx_env_preload_value(pre, hx_shim_path(), val,
					 sizeof(val)) >= 0)
			setenv(HX_ENV_PRELOAD, val, 1);
	}
	if (!sock || strcmp(sock, hx_socket_path()) != 0)
		setenv(HX_ENV_SOCKET, hx_socket_path(), 1);
}

static int shell_decide(struct ctx *c, enum hx_call call, const char *cmd)
{
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)cmd, NULL};
	struct hx_req r = {.call = call,
			   .op = HX_OP_EXEC,
			   .path = "/bin/sh",
			   .argv = argv,
			   .frames = !c->foreign};

	return decide(c, &r, "/bin/sh");
}

HX_EXPORT int system(const char *cmd)
{
	struct ctx c;
	int err;

	if (!cmd || !enter(&c))
		return real_system()(cmd);
	err = shell_decide(&c, HX_CALL_SYSTEM, cmd);
	if (err)
		DENY(&c, err, -1);
	environ_fixup();
	leave(&c);
	return real_system()(cmd);
}

HX_EXPORT FILE *popen(const char *cmd, const char *type)
{
	struct ctx c;
	int err;

	if (!cmd || !enter(&c))
		return real_popen()(cmd, type);
	err = shell_decide(&c, HX_CALL_POPEN, cmd);
	if (err)
		DENY(&c, err, NULL);
	environ_fixup();
	leave(&c);
	return real_popen()(cmd, type);
}

/* ---------------------------------------------------------------- */
/* Open family */

enum open_kind {
	OK_OPEN,
	OK_OPEN64,
	OK_OPENAT,
	OK_OPENAT64,
	OK_OPEN_2,
	OK_OPEN64_2,
	OK_OPENAT_2,
	OK_OPENAT64_2,
	OK_CREAT,
	OK_CREAT64,
	OK_FOPEN,
	OK_FOPEN64,
	OK_FREOPEN,
	OK_FREOPEN64,
	OK_SYS_OPEN,
	OK_SYS_OPENAT,
	OK_SYS_OPENAT2,
	OK_SYS_CREAT,
};

struct open_call {
	enum open_kind kind;
	enum hx_call call;
	int dirfd, flags;
	mode_t mode;
	const char *path, *fmode;
	FILE *stream;		    /* freopen's */
	const struct open_how *how; /* openat2 */
	size_t howsize;
	FILE *fp; /* result of the stdio kinds */
};

/* Returns the fd (stdio kinds: the FILE's, result in o->fp), or -1. */
static long open_real(struct open_call *o)
{
	const char *p = o->path;

	switch (o->kind) {
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

static void open_undo(struct open_call *o, long fd)
{
	if (o->fp) {
		real_fclose()(o->fp);
		o->fp = NULL;
	} else if (fd >= 0) {
		hx_close((int)fd);
	}
}

/* A locally allowed read that turned out, through a symlink, to open
 * something the rules do not allow: ask about the real target. */
static int recheck_canonical(struct ctx *c, struct open_call *o, long fd,
			     const char *abs, const struct hx_read_rules *t)
{
	char canon[PATH_MAX];
	struct hx_req r = {.call = o->call,
			   .op = HX_OP_READ,
			   .path = canon,
			   .has_flags = true,
			   .flags = (uint32_t)o->flags};

	if (hx_path_of_fd((int)fd, canon, sizeof(canon)) <= 0 ||
	    canon[0] != '/' || strcmp(canon, abs) == 0 ||
	    hx_read_local_allow(t, canon))
		return 0;
	return decide(c, &r, canon);
}

/* The one open implementation behind every alias. Returns the fd, or
 * -1 with errno (stdio kinds: result in o->fp). */
static long do_open(struct open_call *o)
{
	char abs[PATH_MAX];
	const struct hx_read_rules *t;
	struct hx_req r = {.call = o->call, .has_flags = true};
	struct hx_kargs k = {.call = HX_KC_OPEN};
	struct ctx c;
	bool rd;
	long n, fd;
	int err, e;

	o->fp = NULL;
	if (!enter(&c))
		return open_real(o);
	if (!o->path)
		DENY(&c, EFAULT, -1);
	n = hx_path_at(o->dirfd, o->path, abs, sizeof(abs));
	if (n < 0)
		DENY(&c, (int)-n, -1);
	if (o->how && o->how->mode && !(o->how->flags & O_CREAT) &&
	    (o->how->flags & O_TMPFILE) != O_TMPFILE) {
		/* openat2 refuses a mode without a creation before any
		 * lookup: the kernel says EINVAL, and opens nothing. */
		leave(&c);
		return open_real(o);
	}
	rd = hx_open_is_read(o->flags);
	r.op = rd ? HX_OP_READ : HX_OP_WRITE;
	r.path = abs;
	r.flags = (uint32_t)o->flags;
	r.has_mode = __OPEN_NEEDS_MODE(o->flags) || o->kind == OK_CREAT ||
		     o->kind == OK_CREAT64 || o->kind == OK_SYS_CREAT;
	r.mode = r.has_mode ? o->mode : 0;
	r.frames = !rd && !c.foreign;
	t = hx_rules();
	if (rd && t && hx_read_local_allow(t, abs)) {
		errno = c.saved_errno;
		fd = open_real(o);
		e = fd < 0 ? errno : 0;
		if (fd >= 0) {
			err = recheck_canonical(&c, o, fd, abs, t);
			if (err) {
				open_undo(o, fd);
				DENY(&c, err, -1);
			}
		} else if (e == EACCES) {
			/* Refused by the kernel (a mask, through a symlink to
			 * a denied file): asked, so it is recorded and said;
			 * the kernel's answer stands whatever comes back. */
			decide(&c, &r, abs);
		}
		if (t->flags & HX_HELLO_LOG_READS)
			hx_report(&r, e);
		leave(&c);
		if (fd < 0)
			errno = e;
		return fd;
	}
	k.dirfd = o->dirfd;
	k.path = o->path;
	k.flags = (unsigned)(o->how ? o->how->flags : (uint64_t)o->flags);
	err = decide_k(&c, &r, abs, &k);
	if (err)
		DENY(&c, err, -1);
	leave(&c);
	return open_real(o);
}

static int open_fd(enum open_kind kind, enum hx_call call, int dirfd,
		   const char *path, int flags, mode_t mode)
{
	struct open_call o = {.kind = kind,
			      .call = call,
			      .dirfd = dirfd,
			      .path = path,
			      .flags = flags,
			      .mode = mode};

	return (int)do_open(&o);
}

static FILE *open_stdio(enum open_kind kind, enum hx_call call,
			const char *path, const char *fmode, FILE *stream)
{
	struct open_call o = {.kind = kind,
			      .call = call,
			      .dirfd = AT_FDCWD,
			      .path = path,
			      .fmode = fmode,
			      .stream = stream};
	int flags = hx_fopen_flags(fmode);

	/* An invalid mode opens nothing; freopen(NULL) reopens the same
	 * file with a new mode (the file was decided when opened). */
	if (flags < 0 || !path) {
		o.path = path;
		open_real(&o);
		return o.fp;
	}
	o.flags = flags;
	o.mode = 0666;
	do_open(&o);
	return o.fp;
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

struct mut {
	enum hx_call call;
	enum hx_op op;
	int dirfd;
	const char *path;
	int dirfd2;
	const char *path2;
	bool path2_raw;	  /* symlink target text: as given */
	bool path2_empty; /* linkat AT_EMPTY_PATH: the fd itself */
	bool has_flags, has_mode;
	uint32_t flags, mode;
};

/* The call as kerrno.h names it; false when it has no such form (a
 * link of an fd by AT_EMPTY_PATH). */
static bool mut_kargs(const struct mut *m, struct hx_kargs *k)
{
	static const enum hx_kcall of_op[HX_OP_COUNT] = {
	    [HX_OP_RENAME] = HX_KC_RENAME,     [HX_OP_UNLINK] = HX_KC_UNLINK,
	    [HX_OP_RMDIR] = HX_KC_RMDIR,       [HX_OP_MKDIR] = HX_KC_MKDIR,
	    [HX_OP_LINK] = HX_KC_LINK,	       [HX_OP_SYMLINK] = HX_KC_SYMLINK,
	    [HX_OP_TRUNCATE] = HX_KC_TRUNCATE,
	};

	if ((unsigned)m->op >= HX_OP_COUNT || m->path2_empty || !of_op[m->op])
		return false;
	*k = (struct hx_kargs){.call = of_op[m->op],
			       .dirfd = m->dirfd,
			       .path = m->path,
			       .dirfd2 = m->dirfd2,
			       .path2 = m->path2_raw ? NULL : m->path2,
			       .flags = m->has_flags ? m->flags : 0};
	return true;
}

/* 0: go ahead (errno restored); else the errno to fail with. */
static int do_mut(const struct mut *m)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct hx_req r = {.call = m->call,
			   .op = m->op,
			   .path = a,
			   .has_flags = m->has_flags,
			   .flags = m->flags,
			   .has_mode = m->has_mode,
			   .mode = m->mode};
	struct hx_kargs k;
	struct ctx c;
	long n;
	int err;

	if (!enter(&c))
		return 0;
	if (!m->path)
		err = EFAULT;
	else if ((n = hx_path_at(m->dirfd, m->path, a, sizeof(a))) < 0)
		err = (int)-n;
	else
		err = 0;
	if (!err && m->path2) {
		if (m->path2_raw)
			r.path2 = m->path2;
		else if (m->path2_empty && !*m->path2)
			n = hx_path_of_fd(m->dirfd2, b, sizeof(b));
		else
			n = hx_path_at(m->dirfd2, m->path2, b, sizeof(b));
		if (!m->path2_raw) {
			if (n < 0)
				err = (int)-n;
			r.path2 = b;
		}
	} else if (!err && (m->op == HX_OP_RENAME || m->op == HX_OP_LINK ||
			    m->op == HX_OP_SYMLINK)) {
		err = EFAULT;
	}
	r.frames = !c.foreign;
	if (!err)
		err = decide_k(&c, &r, a, mut_kargs(m, &k) ? &k : NULL);
	leave(&c);
	return err;
}

#define MUT_RETURN(m, call_real)                                               \
	do {                                                                   \
		int err_ = do_mut(&(m));                                       \
		if (err_) {                                                    \
			errno = err_;                                          \
			return -1;                                             \
		}                                                              \
		return call_real;                                              \
	} while (0)

HX_EXPORT int rename(const char *from, const char *to)
{
	struct mut m = {.call = HX_CALL_RENAME,
			.op = HX_OP_RENAME,
			.dirfd = AT_FDCWD,
			.path = from,
			.dirfd2 = AT_FDCWD,
			.path2 = to};
	MUT_RETURN(m, real_rename()(from, to));
}

HX_EXPORT int renameat(int fd1, const char *from, int fd2, const char *to)
{
	struct mut m = {.call = HX_CALL_RENAMEAT,
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
	struct mut m = {.call = HX_CALL_RENAMEAT2,
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
	struct mut m = {.call = HX_CALL_UNLINK,
			.op = HX_OP_UNLINK,
			.dirfd = AT_FDCWD,
			.path = path};
	MUT_RETURN(m, real_unlink()(path));
}

HX_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	struct mut m = {.call = HX_CALL_UNLINKAT,
			.op =
			    (flags & AT_REMOVEDIR) ? HX_OP_RMDIR : HX_OP_UNLINK,
			.dirfd = dirfd,
			.path = path,
			.has_flags = true,
			.flags = (uint32_t)flags};
	MUT_RETURN(m, real_unlinkat()(dirfd, path, flags));
}

HX_EXPORT int rmdir(const char *path)
{
	struct mut m = {.call = HX_CALL_RMDIR,
			.op = HX_OP_RMDIR,
			.dirfd = AT_FDCWD,
			.path = path};
	MUT_RETURN(m, real_rmdir()(path));
}

HX_EXPORT int mkdir(const char *path, mode_t mode)
{
	struct mut m = {.call = HX_CALL_MKDIR,
			.op = HX_OP_MKDIR,
			.dirfd = AT_FDCWD,
			.path = path,
			.has_mode = true,
			.mode = mode};
	MUT_RETURN(m, real_mkdir()(path, mode));
}

HX_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	struct mut m = {.call = HX_CALL_MKDIRAT,
			.op = HX_OP_MKDIR,
			.dirfd = dirfd,
			.path = path,
			.has_mode = true,
			.mode = mode};
	MUT_RETURN(m, real_mkdirat()(dirfd, path, mode));
}

HX_EXPORT int link(const char *old, const char *new)
{
	struct mut m = {.call = HX_CALL_LINK,
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
	struct mut m = {.call = HX_CALL_LINKAT,
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
	struct mut m = {.call = HX_CALL_SYMLINK,
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
	struct mut m = {.call = HX_CALL_SYMLINKAT,
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
	struct mut m = {.call = HX_CALL_TRUNCATE,
			.op = HX_OP_TRUNCATE,
			.dirfd = AT_FDCWD,
			.path = path};
	MUT_RETURN(m, real_truncate()(path, len));
}

HX_EXPORT int truncate64(const char *path, off64_t len)
{
	struct mut m = {.call = HX_CALL_TRUNCATE,
			.op = HX_OP_TRUNCATE,
			.dirfd = AT_FDCWD,
			.path = path};
	MUT_RETURN(m, real_truncate64()(path, len));
}

/* ---------------------------------------------------------------- */
/* Network */

static bool net_family(const struct sockaddr *sa, socklen_t len)
{
	return sa && len >= sizeof(sa_family_t) &&
	       (sa->sa_family == AF_INET || sa->sa_family == AF_INET6 ||
		sa->sa_family == AF_UNIX);
}

/* 0: go ahead (errno restored); else the errno. */
static int net_decide(enum hx_call call, enum hx_op op,
		      const struct sockaddr *sa, socklen_t len)
{
	char target[160],
	    upath[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	struct hx_req r = {.call = call, .op = op, .addr = sa, .addrlen = len};
	struct hx_kargs k = {.call = HX_KC_CONNECT, .dirfd = AT_FDCWD};
	size_t off = offsetof(struct sockaddr_un, sun_path), n;
	struct ctx c;
	int err;

	if (!net_family(sa, len) || !enter(&c))
		return 0;
	r.frames = !c.foreign;
	hx_sockaddr_format(sa, len, target, sizeof(target));
	/* A unix socket's path has the kernel's own answers (ENOENT,
	 * ECONNREFUSED for a file that is no socket). */
	if (sa->sa_family == AF_UNIX && len > off &&
	    ((const struct sockaddr_un *)(const void *)sa)->sun_path[0]) {
		n = len - off < sizeof(upath) - 1 ? len - off
						  : sizeof(upath) - 1;
		memcpy(upath, (const char *)sa + off, n);
		upath[n] = '\0';
		k.path = upath;
	}
	err = decide_k(&c, &r, target, k.path ? &k : NULL);
	leave(&c);
	return err;
}

HX_EXPORT int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	int err =
	    net_decide(HX_CALL_CONNECT, HX_OP_CONNECT, addr.__sockaddr__, len);

	if (err) {
		errno = err;
		return -1;
	}
	return real_connect()(fd, addr, len);
}

HX_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			 __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	int err = 0;

	if (addr.__sockaddr__)
		err = net_decide(HX_CALL_SENDTO, HX_OP_SEND, addr.__sockaddr__,
				 len);
	if (err) {
		errno = err;
		return -1;
	}
	return real_sendto()(fd, buf, n, flags, addr, len);
}

HX_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	int err = 0;

	if (msg && msg->msg_name)
		err = net_decide(HX_CALL_SENDMSG, HX_OP_SEND, msg->msg_name,
				 msg->msg_namelen);
	if (err) {
		errno = err;
		return -1;
	}
	return real_sendmsg()(fd, msg, flags);
}

static bool is_numeric_host(const char *h)
{
	unsigned char b[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, h, b) == 1 || inet_pton(AF_INET6, h, b) == 1;
}

/* 0: go ahead; else the errno. */
static int resolve_decide(struct ctx *c, enum hx_call call, const char *host)
{
	struct hx_req r = {.call = call, .op = HX_OP_RESOLVE, .host = host};

	return decide(c, &r, host);
}

HX_EXPORT int getaddrinfo(const char *restrict node,
			  const char *restrict service,
			  const struct addrinfo *restrict hints,
			  struct addrinfo **restrict res)
{
	const void *addrs[HX_WIRE_MAX_ADDRS];
	size_t lens[HX_WIRE_MAX_ADDRS], n = 0;
	struct hx_req r = {.call = HX_CALL_GETADDRINFO,
			   .op = HX_OP_RESOLVE,
			   .host = node,
			   .addrs = addrs,
			   .addrlens = lens};
	struct ctx c;
	int err, rc, e;

	if (!node || is_numeric_host(node) || !enter(&c))
		return real_getaddrinfo()(node, service, hints, res);
	err = resolve_decide(&c, HX_CALL_GETADDRINFO, node);
	if (err) {
		leave(&c);
		errno = err;
		return EAI_FAIL;
	}
	errno = c.saved_errno;
	rc = real_getaddrinfo()(node, service, hints, res);
	e = errno;
	if (rc == 0 && res) {
		for (struct addrinfo *ai = *res; ai && n < HX_WIRE_MAX_ADDRS;
		     ai = ai->ai_next) {
			if (!ai->ai_addr)
				continue;
			addrs[n] = ai->ai_addr;
			lens[n++] = ai->ai_addrlen;
		}
		r.naddrs = n;
		hx_report(&r, 0);
	}
	leave(&c);
	errno = e;
	return rc;
}

static struct hostent *hostent_common(enum hx_call call, const char *name,
				      int af, bool has_af)
{
	struct sockaddr_in6 sa[HX_WIRE_MAX_ADDRS];
	const void *addrs[HX_WIRE_MAX_ADDRS];
	size_t lens[HX_WIRE_MAX_ADDRS], n = 0;
	struct hx_req r = {.call = call,
			   .op = HX_OP_RESOLVE,
			   .host = name,
			   .addrs = addrs,
			   .addrlens = lens};
	struct hostent *h;
	struct ctx c;
	int err, e;

	if (!name || is_numeric_host(name) || !enter(&c))
		return has_af ? real_gethostbyname2()(name, af)
			      : real_gethostbyname()(name);
	err = resolve_decide(&c, call, name);
	if (err) {
		leave(&c);
		h_errno = NO_RECOVERY;
		errno = err;
		return NULL;
	}
	errno = c.saved_errno;
	h = has_af ? real_gethostbyname2()(name, af)
		   : real_gethostbyname()(name);
	e = errno;
	if (h) {
		for (char **p = h->h_addr_list;
		     p && *p && n < HX_WIRE_MAX_ADDRS; p++, n++) {
			memset(&sa[n], 0, sizeof(sa[n]));
			if (h->h_addrtype == AF_INET && h->h_length == 4) {
				struct sockaddr_in *in = (void *)&sa[n];

				in->sin_family = AF_INET;
				memcpy(&in->sin_addr, *p, 4);
				lens[n] = sizeof(*in);
			} else if (h->h_addrtype == AF_INET6 &&
				   h->h_length == 16) {
				sa[n].sin6_family = AF_INET6;
				memcpy(&sa[n].sin6_addr, *p, 16);
				lens[n] = sizeof(sa[n]);
			} else {
				break;
			}
			addrs[n] = &sa[n];
		}
		r.naddrs = n;
		hx_report(&r, 0);
	}
	leave(&c);
	errno = e;
	return h;
}

HX_EXPORT struct hostent *gethostbyname(const char *name)
{
	return hostent_common(HX_CALL_GETHOSTBYNAME, name, AF_INET, false);
}

HX_EXPORT struct hostent *gethostbyname2(const char *name, int af)
{
	return hostent_common(HX_CALL_GETHOSTBYNAME2, name, af, true);
}

/* ---------------------------------------------------------------- */
/* syscall(2) for the numbers above */

static long sys_open_like(enum open_kind kind, int dirfd, const char *path,
			  int flags, mode_t mode, const struct open_how *how,
			  size_t howsize)
{
	struct open_call o = {.kind = kind,
			      .call = HX_CALL_SYSCALL,
			      .dirfd = dirfd,
			      .path = path,
			      .flags = flags,
			      .mode = mode,
			      .how = how,
			      .howsize = howsize};

	return do_open(&o);
}

static long sys_mut(struct mut *m, long nr, long a1, long a2, long a3, long a4,
		    long a5)
{
	int err;

	m->call = HX_CALL_SYSCALL;
	err = do_mut(m);
	if (err) {
		errno = err;
		return -1;
	}
	return real_syscall()(nr, a1, a2, a3, a4, a5);
}

HX_EXPORT long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);

	if (shim_inert())
		return real_syscall()(nr, a[0], a[1], a[2], a[3], a[4], a[5]);

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
		struct exec_call e = {.kind = EK_SYSCALL_EXECVE,
				      .path = S(0),
				      .argv = (void *)a[1]};
		char exe[PATH_MAX];
		long r = exec_path(AT_FDCWD, S(0), 0, exe, sizeof(exe));

		if (r < 0)
			return exec_fail(r);
		return exec_common(HX_CALL_SYSCALL, exe, &e, (void *)a[2]);
	}
	case SYS_execveat: {
		struct exec_call e = {.kind = EK_SYSCALL_EXECVEAT,
				      .fd = I(0),
				      .path = S(1),
				      .argv = (void *)a[2],
				      .flags = I(4)};
		char exe[PATH_MAX];
		long r = exec_path(I(0), S(1), I(4), exe, sizeof(exe));

		if (r < 0)
			return exec_fail(r);
		return exec_common(HX_CALL_SYSCALL, exe, &e, (void *)a[3]);
	}
	case SYS_connect:
	case SYS_sendto: {
		const struct sockaddr *sa =
		    (const void *)(nr == SYS_connect ? a[1] : a[4]);
		socklen_t len = (socklen_t)(nr == SYS_connect ? a[2] : a[5]);
		int err = sa ? net_decide(HX_CALL_SYSCALL,
					  nr == SYS_connect ? HX_OP_CONNECT
							    : HX_OP_SEND,
					  sa, len)
			     : 0;

		if (err) {
			errno = err;
			return -1;
		}
		break;
	}
	case SYS_rename:
	case SYS_renameat:
	case SYS_renameat2: {
		struct mut m = {.op = HX_OP_RENAME};

		if (nr == SYS_rename) {
			m.dirfd = m.dirfd2 = AT_FDCWD;
			m.path = S(0);
			m.path2 = S(1);
		} else {
			m.dirfd = I(0);
			m.path = S(1);
			m.dirfd2 = I(2);
			m.path2 = S(3);
			if (nr == SYS_renameat2) {
				m.has_flags = true;
				m.flags = (uint32_t)a[4];
			}
		}
		return sys_mut(&m, nr, a[0], a[1], a[2], a[3], a[4]);
	}
	case SYS_unlink:
	case SYS_rmdir: {
		struct mut m = {.op = nr == SYS_unlink ? HX_OP_UNLINK
						       : HX_OP_RMDIR,
				.dirfd = AT_FDCWD,
				.path = S(0)};

		return sys_mut(&m, nr, a[0], 0, 0, 0, 0);
	}
	case SYS_unlinkat: {
		struct mut m = {.op = (a[2] & AT_REMOVEDIR) ? HX_OP_RMDIR
							    : HX_OP_UNLINK,
				.dirfd = I(0),
				.path = S(1),
				.has_flags = true,
				.flags = (uint32_t)a[2]};

		return sys_mut(&m, nr, a[0], a[1], a[2], 0, 0);
	}
	case SYS_mkdir: {
		struct mut m = {.op = HX_OP_MKDIR,
				.dirfd = AT_FDCWD,
				.path = S(0),
				.has_mode = true,
				.mode = (uint32_t)a[1]};

		return sys_mut(&m, nr, a[0], a[1], 0, 0, 0);
	}
	case SYS_mkdirat: {
		struct mut m = {.op = HX_OP_MKDIR,
				.dirfd = I(0),
				.path = S(1),
				.has_mode = true,
				.mode = (uint32_t)a[2]};

		return sys_mut(&m, nr, a[0], a[1], a[2], 0, 0);
	}
	case SYS_link: {
		struct mut m = {.op = HX_OP_LINK,
				.dirfd = AT_FDCWD,
				.path = S(1),
				.dirfd2 = AT_FDCWD,
				.path2 = S(0)};

		return sys_mut(&m, nr, a[0], a[1], 0, 0, 0);
	}
	case SYS_linkat: {
		struct mut m = {.op = HX_OP_LINK,
				.dirfd = I(2),
				.path = S(3),
				.dirfd2 = I(0),
				.path2 = S(1),
				.path2_empty = (a[4] & AT_EMPTY_PATH) != 0,
				.has_flags = true,
				.flags = (uint32_t)a[4]};

		return sys_mut(&m, nr, a[0], a[1], a[2], a[3], a[4]);
	}
	case SYS_symlink: {
		struct mut m = {.op = HX_OP_SYMLINK,
				.dirfd = AT_FDCWD,
				.path = S(1),
				.path2 = S(0),
				.path2_raw = true};

		return sys_mut(&m, nr, a[0], a[1], 0, 0, 0);
	}
	case SYS_symlinkat: {
		struct mut m = {.op = HX_OP_SYMLINK,
				.dirfd = I(1),
				.path = S(2),
				.path2 = S(0),
				.path2_raw = true};

		return sys_mut(&m, nr, a[0], a[1], a[2], 0, 0);
	}
	case SYS_truncate: {
		struct mut m = {
		    .op = HX_OP_TRUNCATE, .dirfd = AT_FDCWD, .path = S(0)};

		return sys_mut(&m, nr, a[0], a[1], 0, 0, 0);
	}
	default:
		break;
	}
#undef S
#undef I
	return real_syscall()(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
