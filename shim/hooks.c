/* The hooks' platform-neutral core: enter/leave a decided call, ask the
 * supervisor, print the notice, and each family's decision (hooks.h).
 * The real functions are reached only through the struct hx_real the
 * interposer passes. */
#define _GNU_SOURCE
#include "shim/hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
#include "shim/tls.h"
#include "common/sys.h"

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
	if (!rep.unreachable && (rep.flags & HX_VERDICT_TELL)) {
		/* Without a path, the supervisor's errno is the kernel's
		 * (ECONNREFUSED: nothing listens on a loopback port). */
		int e = k ? hx_kerrno(k) : rep.err ? (int)rep.err : EACCES;

		/* EEXIST for mkdir -p is what the program expects: no
		 * notice (the denial is in the audit log). */
		if (e != EACCES)
			return e;
	}
	hx_notice_write(&(struct hx_notice){
	    .op = r->op,
	    .verdict = rep.unreachable ? HX_VERDICT_DENY : rep.verdict,
	    .target = target,
	    .target2 = r->path2,
	    .spelled = r->addr != NULL,
	    .argv = r->op == HX_OP_EXEC ? (const char *const *)r->argv : NULL,
	    .rule = rep.unreachable ? NULL : rep.rule,
	    .origin = !rep.unreachable && rep.origin[0] ? rep.origin : NULL});
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

#define ENV_STACK 16384

/* Calls the real exec/spawn with the rebuilt environment: on the stack,
 * or in a private mapping when large (no malloc: vfork children); conn:
 * the HX_ENV_CONN value, or NULL. The caller has restored errno. */
static long exec_with_env(const struct hx_real *real,
			  const struct hx_exec_call *e, char *const *envp,
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
			return e->spawn ? E2BIG : -1;
		}
		mem = (char *)m;
	}
	hx_env_rebuild(envp, hx_shim_path(), hx_socket_path(), conn,
		       (char **)mem, nptrs, mem + nptrs * sizeof(char *),
		       nbytes);
	r = real->exec(e, (char *const *)mem);
	if (m) {
		int saved = errno;

		hx_sys2(SYS_munmap, m, (long)total);
		errno = saved;
	}
	return r;
}

long hx_hooks_exec(const struct hx_real *real, enum hx_call call,
		   const char *exe, const struct hx_exec_call *e,
		   char *const *envp)
{
	struct ctx c;
	struct hx_req r = {.call = call, .op = HX_OP_EXEC, .frames = true};
	bool spawn = e->spawn;
	struct hx_handover ho = {.fd = -1};
	long ret;
	int err;

	if (!enter(&c))
		return real->exec(e, envp);
	r.path = exe;
	r.argv = e->argv;
	r.envp = envp;
	r.has_envp = true;
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
		return exec_with_env(real, e, envp, NULL);
	ret = exec_with_env(real, e, envp, ho.env);
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
		return hx_path_of_call_fd(dirfd, out, cap);
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

bool hx_hooks_inert(void)
{
	if (hx_tls_state == HX_TLS_FOREIGN)
		return true;
	return hx_init(0, NULL, false) == HX_ST_INERT;
}

long hx_hooks_execat(const struct hx_real *real, enum hx_call call, int dirfd,
		     int flags, const struct hx_exec_call *e, char *const *envp)
{
	char exe[PATH_MAX];
	long r = exec_path(dirfd, e->path, flags, exe, sizeof(exe));

	if (r < 0)
		return exec_fail(r);
	return hx_hooks_exec(real, call, exe, e, envp);
}

long hx_hooks_execve(const struct hx_real *real, enum hx_call call,
		     const struct hx_exec_call *e, char *const *envp)
{
	if (hx_hooks_inert())
		return real->exec(e, envp);
	return hx_hooks_execat(real, call, AT_FDCWD, 0, e, envp);
}

long hx_hooks_execvp(const struct hx_real *real, enum hx_call call,
		     const struct hx_exec_call *e, char *const *envp)
{
	const char *file = e->path;
	char exe[PATH_MAX];
	long r;

	if (hx_hooks_inert())
		return real->exec(e, envp);
	if (!file)
		return exec_fail(-EFAULT);
	if (strchr(file, '/'))
		r = exec_path(AT_FDCWD, file, 0, exe, sizeof(exe));
	else
		r = hx_exec_resolve(file, getenv("PATH"), exe, sizeof(exe));
	if (r < 0)
		return exec_fail(r);
	return hx_hooks_exec(real, call, exe, e, envp);
}

long hx_hooks_fexec(const struct hx_real *real, enum hx_call call,
		    const struct hx_exec_call *e, char *const *envp)
{
	char exe[PATH_MAX];
	long r;

	if (hx_hooks_inert())
		return real->exec(e, envp);
	r = hx_path_of_call_fd(e->fd, exe, sizeof(exe));
	if (r < 0)
		return exec_fail(r);
	return hx_hooks_exec(real, call, exe, e, envp);
}

#define ARGV_STACK 256

/* The varargs collected into an array on the stack, or a private
 * mapping beyond ARGV_STACK (no malloc: vfork children). */
int hx_hooks_execl(const struct hx_real *real, enum hx_call call,
		   const struct hx_exec_call *tmpl, bool search,
		   const char *arg, va_list ap, bool with_env)
{
	struct hx_exec_call e = *tmpl;
	char *stackv[ARGV_STACK];
	char **argv = stackv;
	char *const *envp = environ;
	size_t n = 1, i, size = 0;
	va_list aq;
	long m = 0;
	int r, saved;

	va_copy(aq, ap);
	while (va_arg(aq, char *))
		n++;
	va_end(aq);
	if (n >= ARGV_STACK) {
		size = (n + 1) * sizeof(char *);
		m = hx_sys6(SYS_mmap, 0, (long)size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m < 0 && m > -4096) {
			errno = E2BIG;
			return -1;
		}
		argv = (char **)m;
	}
	argv[0] = (char *)arg;
	for (i = 1; i < n; i++)
		argv[i] = va_arg(ap, char *);
	argv[n] = NULL;
	if (with_env) {
		(void)va_arg(ap, char *);
		envp = va_arg(ap, char *const *);
	}
	e.argv = argv;
	r = (int)(search ? hx_hooks_execvp(real, call, &e, envp)
			 : hx_hooks_execve(real, call, &e, envp));
	if (m) {
		saved = errno;
		hx_sys2(SYS_munmap, m, (long)size);
		errno = saved;
	}
	return r;
}

int hx_hooks_spawn(const struct hx_real *real, enum hx_call call, bool search,
		   const struct hx_exec_call *e, char *const *envp)
{
	const char *path = e->path;
	char exe[PATH_MAX];
	int saved = errno;
	long r;

	if (hx_hooks_inert())
		return (int)real->exec(e, envp);
	if (!path)
		return EFAULT;
	if (search && !strchr(path, '/'))
		r = hx_exec_resolve(path, getenv("PATH"), exe, sizeof(exe));
	else
		r = hx_path_at(AT_FDCWD, path, exe, sizeof(exe));
	errno = saved;
	if (r < 0)
		return (int)-r;
	return (int)hx_hooks_exec(real, call, exe, e, envp);
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
			   .envp = environ,
			   .has_envp = true,
			   .frames = !c->foreign};

	return decide(c, &r, "/bin/sh");
}

int hx_hooks_shell(enum hx_call call, const char *cmd)
{
	struct ctx c;
	int err;

	if (!enter(&c))
		return 0;
	err = shell_decide(&c, call, cmd);
	if (err) {
		leave(&c);
		return err;
	}
	environ_fixup();
	leave(&c);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Open family */

static void open_undo(const struct hx_real *real, struct hx_open_call *o,
		      long fd)
{
	if (o->fp) {
		real->fclose(o->fp);
		o->fp = NULL;
	} else if (fd >= 0) {
		hx_close((int)fd);
	}
}

/* A locally allowed read that turned out, through a symlink, to open
 * something the rules do not allow: ask about the real target. */
static int recheck_canonical(struct ctx *c, struct hx_open_call *o, long fd,
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

long hx_hooks_open(const struct hx_real *real, struct hx_open_call *o)
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
		return real->open(o);
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
		return real->open(o);
	}
	rd = hx_open_is_read(o->flags);
	r.op = rd ? HX_OP_READ : HX_OP_WRITE;
	r.path = abs;
	r.flags = (uint32_t)o->flags;
	r.has_mode = __OPEN_NEEDS_MODE(o->flags) || o->creat;
	r.mode = r.has_mode ? o->mode : 0;
	r.frames = !rd && !c.foreign;
	/* A write is asked anyway: no wait here for the HELLO's rules. */
	t = rd ? hx_rules() : NULL;
	if (t && hx_read_local_allow(t, abs)) {
		errno = c.saved_errno;
		fd = real->open(o);
		e = fd < 0 ? errno : 0;
		if (fd >= 0) {
			err = recheck_canonical(&c, o, fd, abs, t);
			if (err) {
				open_undo(real, o, fd);
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
	return real->open(o);
}

FILE *hx_hooks_stdio(const struct hx_real *real, struct hx_open_call *o)
{
	int flags = hx_fopen_flags(o->fmode);

	/* An invalid mode opens nothing; freopen(NULL) reopens the same
	 * file with a new mode (the file was decided when opened). */
	if (flags < 0 || !o->path) {
		real->open(o);
		return o->fp;
	}
	o->flags = flags;
	o->mode = 0666;
	hx_hooks_open(real, o);
	return o->fp;
}

/* ---------------------------------------------------------------- */
/* Mutations */

/* The call as kerrno.h names it; false when it has no such form (a
 * link of an fd by AT_EMPTY_PATH). */
static bool mut_kargs(const struct hx_mut *m, struct hx_kargs *k)
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

int hx_hooks_mut(const struct hx_mut *m)
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
			n = hx_path_of_call_fd(m->dirfd2, b, sizeof(b));
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

/* ---------------------------------------------------------------- */
/* Network */

static bool net_family(const struct sockaddr *sa, socklen_t len)
{
	return sa && len >= sizeof(sa_family_t) &&
	       (sa->sa_family == AF_INET || sa->sa_family == AF_INET6 ||
		sa->sa_family == AF_UNIX);
}

int hx_hooks_net(enum hx_call call, enum hx_op op, int proto,
		 const struct sockaddr *sa, socklen_t len)
{
	char target[160],
	    upath[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	struct hx_req r = {
	    .call = call, .op = op, .addr = sa, .addrlen = len, .proto = proto};
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

/* With the supervisor answering DNS, a lookup is judged (and its
 * answers mapped) by the questions that leave: /etc/hosts answers none,
 * so nothing is asked or reported here. */
static bool dns_sealed(void)
{
	const struct hx_read_rules *t = hx_rules();

	return t && (t->flags & HX_HELLO_DNS_SEALED);
}

int hx_hooks_getaddrinfo(const struct hx_real *real, const char *node,
			 const char *service, const struct addrinfo *hints,
			 struct addrinfo **res)
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

	if (!node || is_numeric_host(node) || dns_sealed() || !enter(&c))
		return real->getaddrinfo(node, service, hints, res);
	err = resolve_decide(&c, HX_CALL_GETADDRINFO, node);
	if (err) {
		leave(&c);
		errno = err;
		return EAI_FAIL;
	}
	errno = c.saved_errno;
	rc = real->getaddrinfo(node, service, hints, res);
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

struct hostent *hx_hooks_hostent(const struct hx_real *real, enum hx_call call,
				 const char *name, int af, bool has_af)
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

	if (!name || is_numeric_host(name) || dns_sealed() || !enter(&c))
		return has_af ? real->gethostbyname2(name, af)
			      : real->gethostbyname(name);
	err = resolve_decide(&c, call, name);
	if (err) {
		leave(&c);
		h_errno = NO_RECOVERY;
		errno = err;
		return NULL;
	}
	errno = c.saved_errno;
	h = has_af ? real->gethostbyname2(name, af) : real->gethostbyname(name);
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
