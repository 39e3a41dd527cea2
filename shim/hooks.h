/* The platform-neutral half of the hooks: each family's decision (exec,
 * shell, open, mutation, network, resolver) between the interposer that
 * classified the call and the real function. interpose_<os>.c holds the
 * exported symbols; it describes the call in a struct below and hands the
 * core a struct hx_real, how to run the real call, so that this file
 * needs no dlsym and links into the unit tests.
 *
 * Rules, as for the interposers: no malloc, stdio or locks on the exec,
 * open and connect paths (they run in vfork children and after fork);
 * errno is saved on entry and restored before the real call; it is set
 * only on a deny. */
#ifndef HX_SHIM_HOOKS_H
#define HX_SHIM_HOOKS_H

#include <netdb.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common/wire.h"

struct open_how;

/* An exec or spawn as the program made it. */
struct hx_exec_call {
	int kind;	  /* the platform's: which real function */
	bool spawn;	  /* posix_spawn-like: returns the error number */
	const char *path; /* as the program gave it */
	char *const *argv;
	int fd, flags;
	pid_t *pid;
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
};

/* An open as the program made it. */
struct hx_open_call {
	int kind;   /* the platform's: which real function */
	bool creat; /* creat(2)-like: the mode is always meaningful */
	enum hx_call call;
	int dirfd, flags;
	mode_t mode;
	const char *path, *fmode;
	FILE *stream;		    /* freopen's */
	const struct open_how *how; /* openat2 */
	size_t howsize;
	FILE *fp; /* result of the stdio kinds */
};

/* A rename, unlink, rmdir, mkdir, link, symlink or truncate. */
struct hx_mut {
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

/* The real functions the core calls through, filled by the platform. */
struct hx_real {
	/* Runs the exec or spawn e describes with envp: what it returns
	 * (-1 with errno; a spawn kind: the error number). */
	long (*exec)(const struct hx_exec_call *e, char *const *envp);
	/* Runs the open o describes: the fd (stdio kinds: the FILE's, the
	 * FILE in o->fp), or -1 with errno. */
	long (*open)(struct hx_open_call *o);
	int (*fclose)(FILE *fp);
	int (*getaddrinfo)(const char *node, const char *service,
			   const struct addrinfo *hints, struct addrinfo **res);
	struct hostent *(*gethostbyname)(const char *name);
	struct hostent *(*gethostbyname2)(const char *name, int af);
};

/* True when calls pass straight through: the shim is inert, or this is
 * its own use of libunwind/dladdr. */
bool hx_hooks_inert(void);

/* Decides an exec of exe (absolute, or a bare name nobody on PATH has)
 * and runs it with envp, the shim put back into it. For spawn kinds the
 * return value is the error number. */
long hx_hooks_exec(const struct hx_real *real, enum hx_call call,
		   const char *exe, const struct hx_exec_call *e,
		   char *const *envp);

/* The exec shapes below resolve the program as their call would, then
 * decide and run it (hx_hooks_exec); inert, they run e as it is. A
 * missing file fails as exec would, without a request (CPython tries
 * every PATH dir). -1 with errno, or what the real call returns.
 *
 * execveat-like: e->path relative to dirfd, with execveat's flags; no
 * inert check (the caller made it). */
long hx_hooks_execat(const struct hx_real *real, enum hx_call call, int dirfd,
		     int flags, const struct hx_exec_call *e,
		     char *const *envp);
/* execve-like: e->path relative to the cwd. */
long hx_hooks_execve(const struct hx_real *real, enum hx_call call,
		     const struct hx_exec_call *e, char *const *envp);
/* execvp-like: a name without '/' looked up on PATH. */
long hx_hooks_execvp(const struct hx_real *real, enum hx_call call,
		     const struct hx_exec_call *e, char *const *envp);
/* fexecve-like: the program is the file e->fd is open on. */
long hx_hooks_fexec(const struct hx_real *real, enum hx_call call,
		    const struct hx_exec_call *e, char *const *envp);
/* execl-like: arg and the variable arguments in ap (NULL-terminated,
 * then the environment when with_env) become e->argv of a copy of tmpl,
 * run as hx_hooks_execvp (search) or hx_hooks_execve. The caller
 * va_starts and va_ends ap. */
int hx_hooks_execl(const struct hx_real *real, enum hx_call call,
		   const struct hx_exec_call *tmpl, bool search,
		   const char *arg, va_list ap, bool with_env);
/* posix_spawn-like (search: spawnp): returns the error number. */
int hx_hooks_spawn(const struct hx_real *real, enum hx_call call, bool search,
		   const struct hx_exec_call *e, char *const *envp);

/* Decides system(cmd) or popen(cmd) as /bin/sh -c cmd. 0: go ahead
 * (the shim put back into the process environment, errno restored);
 * else the errno to fail with. */
int hx_hooks_shell(enum hx_call call, const char *cmd);

/* The one open implementation behind every alias. Returns the fd, or -1
 * with errno (stdio kinds: result in o->fp). */
long hx_hooks_open(const struct hx_real *real, struct hx_open_call *o);

/* fopen-like: o->fmode gives the flags. Returns o->fp. */
FILE *hx_hooks_stdio(const struct hx_real *real, struct hx_open_call *o);

/* Decides a mutation. 0: go ahead (errno restored); else the errno. */
int hx_hooks_mut(const struct hx_mut *m);

/* Decides a connect or send to sa (other families pass) on a socket of
 * protocol proto (SO_PROTOCOL; 0: unknown). 0: go ahead (errno
 * restored); else the errno. */
int hx_hooks_net(enum hx_call call, enum hx_op op, int proto,
		 const struct sockaddr *sa, socklen_t len);

/* getaddrinfo: decided, then the addresses it gave reported. */
int hx_hooks_getaddrinfo(const struct hx_real *real, const char *node,
			 const char *service, const struct addrinfo *hints,
			 struct addrinfo **res);

/* gethostbyname (has_af false) or gethostbyname2, as getaddrinfo. */
struct hostent *hx_hooks_hostent(const struct hx_real *real, enum hx_call call,
				 const char *name, int af, bool has_af);

#endif
