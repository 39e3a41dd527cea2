/* The user-notify handler: execve and execveat, behind the exec gate
 * (unotify_int.h). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/shebang.h"
#include "supervisor/kernel/execgate.h"
#include "supervisor/loader.h"
#include "supervisor/path_resolve.h"
#include "supervisor/proc.h"

/* ---- exec (with the exec gate) ---- */

/* The kernel's bound on argv and envp together (fs/exec.c,
 * bprm_stack_limits: 3/4 of _STK_LIM, less under a smaller stack
 * rlimit, the pointers counted): past it the exec fails with E2BIG
 * there too, so no argv the kernel would run is refused here. */
#define EXEC_ARG_LIMIT (6u << 20)
#define EXEC_DEPTH     5 /* #! levels, as the kernel allows */

/* The path as the supervisor can reach what the target names:
 * /proc/self and /proc/thread-self are the target's. */
static void here_path(const struct target *t, const char *full, char *out,
		      size_t size)
{
	hx_proc_self_path(t->peer.pid, t->tid, full, out, size);
}

/* full (absolute) as the supervisor reaches the file the target's walk
 * of it finds: its symlinks resolved as the target sees them (one to
 * /dev/fd/5 was harness-exec's fd 5 in our walk), the last one when
 * follow. */
static void here_resolved(const struct target *t, const char *full, bool follow,
			  char *out, size_t size)
{
	char res[PATH_MAX];

	if (hx_path_resolve_root(t->peer.pid, t->tid, t->peer.root_ours, full,
				 follow, res, sizeof(res)))
		here_path(t, full, out, size);
	else
		here_path(t, res, out, size);
}

/* Reads argv (NULL-terminated pointer array at addr) into b as
 * NUL-terminated strings back to back, a page of pointers a read. 0, or
 * -errno (-E2BIG past the kernel's bound: refused as the kernel would,
 * never decided on a truncated argv). */
static int read_argv(pid_t tid, uint64_t addr, struct hx_strblob *b,
		     size_t *argc)
{
	*argc = 0;
	if (!addr)
		return 0; /* the kernel runs it with argv [""] */
	return hx_proc_read_strv(tid, addr, EXEC_ARG_LIMIT, b, argc);
}

#define EXEC_ARG_MIN	(32u * 4096) /* ARG_MAX: what any stack limit allows */
#define EXEC_STRLEN_MAX (32u * 4096) /* MAX_ARG_STRLEN, its NUL counted */

/* The longest of b's strings, its NUL counted. */
static size_t longest(const struct hx_strblob *b)
{
	size_t most = 0;

	for (size_t i = 0; i < b->len;) {
		size_t n = strlen(b->p + i) + 1;

		most = n > most ? n : most;
		i += n;
	}
	return most;
}

/* The kernel's own refusals of what it is handed (fs/exec.c:
 * bprm_stack_limits, copy_strings), answered before any record so that
 * none says allowed of an exec that then fails: an environment it
 * cannot read (EFAULT), a string longer than MAX_ARG_STRLEN, or the
 * name, the environment and the argv, with a pointer each, past a
 * quarter of the stack limit (at least 32 pages, at most 6 MiB) (E2BIG).
 * The limit is the one now: a thread that changes it before the exec
 * makes the kernel's answer differ, about its own exec. A #! script's
 * interpreter adds its name and argument after this (not counted). */
static int exec_refused(const struct target *t, const char *fname,
			const struct hx_strblob *args, size_t argc,
			const struct hx_strblob *envb, size_t envc)
{
	const struct hx_strblob env = *envb;
	size_t limit = EXEC_ARG_LIMIT, ptrs;
	struct rlimit rl;
	int e = 0;

	if (!prlimit(t->peer.pid, RLIMIT_STACK, NULL, &rl) &&
	    rl.rlim_cur / 4 < limit)
		limit = (size_t)(rl.rlim_cur / 4);
	if (limit < EXEC_ARG_MIN)
		limit = EXEC_ARG_MIN;
	ptrs = ((argc ? argc : 1) + envc) * sizeof(void *);
	if (limit <= ptrs ||
	    strlen(fname) + 1 + env.len + args->len > limit - ptrs ||
	    longest(args) > EXEC_STRLEN_MAX || longest(&env) > EXEC_STRLEN_MAX)
		e = -E2BIG;
	return e;
}

/* The n strings of b as a vector (*out, malloc'd, NULL-terminated,
 * borrowing b). 0 or -ENOMEM. */
static int strv_of(const struct hx_strblob *b, size_t n, const char ***out)
{
	const char **v = calloc(n + 1, sizeof(*v));
	size_t k = 0;

	if (!(*out = v))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i] = b->p + k;
		k += strlen(b->p + k) + 1;
	}
	return 0;
}

/* The words of the argv a #! chain's interpreter gets (expect_exec's
 * NUL-separated text), as a vector into it. */
static int interp_words(char *text, size_t len, const char ***out, size_t *n)
{
	struct hx_strblob b = {text, len, len};

	*n = 0;
	for (size_t i = 0; text && i < len; i++)
		*n += !text[i];
	return strv_of(&b, *n, out);
}

/* A #! script's exec (script: its chain ran through no loader): the
 * image that runs it and that image's argv, for the record. */
static void set_interp(struct job *j, bool script, const char *img,
		       char *expect, size_t elen, const char ***eargv)
{
	if (script && !interp_words(expect, elen, eargv, &j->rq.interp_argc)) {
		j->rq.interp = img;
		j->rq.interp_argv = *eargv;
	}
}

/* Appends s (with its NUL) to a growing buffer. */
static int put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t nc = (*len + n + 1) * 2;
		char *nb = realloc(*buf, nc);

		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = nc;
	}
	memcpy(*buf + *len, s, n);
	(*buf)[*len + n] = '\0';
	*len += n + 1;
	return 0;
}

/* What the new image opens by name once it runs: each #! level's
 * script, by the name its interpreter's argv gives it (execgate.h). */
struct opens {
	size_t n;
	char *name[EXEC_DEPTH];
	dev_t dev[EXEC_DEPTH];
	ino_t ino[EXEC_DEPTH];
};

static void opens_free(struct opens *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->name[i]);
	o->n = 0;
}

/* What the kernel looks at in the file an exec names: its type and
 * (*n bytes in buf) its head. An execute-only file (--x) has no #! we
 * can read; the kernel may still run it. 0 or -errno. */
static int look(const char *path, bool nofollow, struct stat *st, char *buf,
		ssize_t *n)
{
	int fd;

	memset(st, 0, sizeof(*st)); /* no type when the walk fails */
	fd = hx_open_regular(path, nofollow, st);
	*n = 0;
	if (fd == -EACCES || fd == -EPERM)
		return S_ISREG(st->st_mode) && (st->st_mode & 0111) ? 0 : fd;
	if (fd < 0)
		return fd;
	*n = pread(fd, buf, HX_BINPRM_BUF, 0);
	close(fd);
	return 0;
}

/* What the gate must see after the exec: the final image's device and
 * inode (through #! interpreters, as the kernel follows them) and the
 * argv the kernel builds (interpreter, its argument, the script's name,
 * then argv[1..]); each script's name and file in *op, and the file the
 * path names (a script, or the image itself) in *named. argv: argc
 * strings in blob. *out (malloc'd) gets the expected cmdline. 0 or
 * -errno (the errno exec would give, roughly). */
static int expect_exec(const struct target *t, const char *full,
		       const char *fname, bool nofollow, const char *blob,
		       size_t blen, size_t argc, struct stat *fin, char **out,
		       size_t *outlen, char *img, size_t isize,
		       struct opens *op, struct stat *named)
{
	char here[PATH_MAX + 64], name[PATH_MAX + 32], abs[PATH_MAX];
	char buf[HX_BINPRM_BUF + 1], *cur = NULL, *nb = NULL;
	size_t clen = 0, ccap = 0, nlen, ncap;
	int e = 0;

	/* argv as the kernel takes it: empty means [""] (5.18+). */
	if (!argc)
		e = put(&cur, &clen, &ccap, "", 0);
	else if (!(cur = malloc(blen)))
		e = -ENOMEM;
	else {
		memcpy(cur, blob, blen);
		clen = ccap = blen;
	}
	if (e)
		goto out;
	here_resolved(t, full, !nofollow, here, sizeof(here));
	snprintf(name, sizeof(name), "%s", fname);
	for (int depth = 0;; depth++) {
		char *iname, *iarg;
		ssize_t n = 0;
		size_t first;

		if ((e = look(here, nofollow && !depth, fin, buf, &n)))
			goto out;
		if (!depth)
			*named = *fin; /* what the path names: a script */
		/* A file with no name (a memfd, O_TMPFILE, a deleted file)
		 * reached through /proc/<pid>/fd: fileless exec, refused
		 * like execveat(AT_EMPTY_PATH) is in BPF. */
		if (fin->st_nlink == 0) {
			e = -EACCES;
			goto out;
		}
		if (n < 2 || hx_shebang_parse(buf, (size_t)n, &iname, &iarg))
			break; /* ELF or anything else: this is the image */
		if (depth >= EXEC_DEPTH) {
			e = -ELOOP;
			goto out;
		}
		/* The interpreter opens this file by name, after the gate. */
		if (!(op->name[op->n] = strdup(name))) {
			e = -ENOMEM;
			goto out;
		}
		op->dev[op->n] = fin->st_dev;
		op->ino[op->n++] = fin->st_ino;
		/* New argv: interpreter, [argument], script name, argv[1..]. */
		nb = NULL;
		nlen = ncap = 0;
		first = strlen(cur) + 1;
		if ((e = put(&nb, &nlen, &ncap, iname, strlen(iname))) ||
		    (iarg &&
		     (e = put(&nb, &nlen, &ncap, iarg, strlen(iarg)))) ||
		    (e = put(&nb, &nlen, &ncap, name, strlen(name))))
			goto out;
		if (clen > first &&
		    (e = put(&nb, &nlen, &ncap, cur + first, clen - first - 1)))
			goto out;
		free(cur);
		cur = nb;
		clen = nlen;
		ccap = ncap;
		nb = NULL;
		/* The interpreter is looked up from the target's cwd. */
		if ((e = hx_path_absolute(t->peer.pid, t->tid, AT_FDCWD, iname,
					  abs, sizeof(abs))))
			goto out;
		snprintf(name, sizeof(name), "%s", iname);
		here_resolved(t, abs, true, here, sizeof(here));
	}
	*out = cur;
	*outlen = clen;
	cur = NULL;
	snprintf(img, isize, "%s", here);
out:
	free(nb);
	free(cur);
	return e;
}

/* When the final image img (a path the supervisor reaches) is a
 * dynamic loader asked to run a program: lp gets that program and the
 * argv it sees (strings borrowed from cmd, the expected cmdline), *pst
 * its file. 0 (lp->argv NULL when img runs no program), or -errno: a
 * program named without '/' (rtld would search the library path) or
 * with no name (a memfd, a deleted file: fileless, as in expect_exec). */
static int loader_program(const struct target *t, const char *img,
			  const char *cmd, size_t clen,
			  struct hx_loader_prog *lp, struct stat *pst)
{
	char h[PATH_MAX + 64];
	const char **v;
	size_t n = 0, k = 0;
	struct stat st;
	int fd = hx_open_regular(img, false, &st), r;
	bool is;

	lp->argv = NULL;
	if (fd < 0)
		return 0;
	is = hx_loader_is(fd);
	close(fd);
	if (!is)
		return 0;
	for (size_t i = 0; i < clen; i++)
		n += !cmd[i];
	if (!(v = calloc(n + 1, sizeof(*v))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i] = cmd + k;
		k += strlen(cmd + k) + 1;
	}
	r = hx_loader_args(t->peer.pid, t->tid, v, n, lp);
	free(v);
	if (r <= 0)
		return r;
	snprintf(h, sizeof(h), "%s", lp->path);
	if (!strncmp(h, "/proc/self/", 11) ||
	    !strncmp(h, "/proc/thread-self/", 18))
		here_path(t, lp->path, h, sizeof(h));
	if (stat(h, pst)) {
		r = -errno;
		goto fail;
	}
	if (!S_ISREG(pst->st_mode) || pst->st_nlink == 0) {
		r = -EACCES;
		goto fail;
	}
	return 0;
fail:
	free(lp->argv);
	lp->argv = NULL;
	return r;
}

/* Whether a link at cur (a path under /proc/<N>/) is another process's
 * (or another thread's): a magic link it moves (cwd, root, fd/M, exe). */
static bool foreign_link(const struct target *t, const char *cur)
{
	char *end;
	long n = strtol(cur + 6, &end, 10);

	if (n != t->peer.pid)
		return true;
	if (strncmp(end, "/task/", 6))
		return false;
	n = strtol(end + 6, &end, 10);
	return n != t->tid && n != t->peer.pid;
}

/* The next component of rest appended to cur (rest advanced): 0, 1 for
 * "." or "..", done here, or -1 when nothing is left or it is too long. */
static int step(char *cur, size_t csize, char **rest)
{
	char *p = *rest, *c;
	size_t n, len = strlen(cur);

	while (*p == '/')
		p++;
	if (!*p)
		return -1;
	c = p;
	while (*p && *p != '/')
		p++;
	n = (size_t)(p - c);
	*rest = p;
	if (n == 1 && c[0] == '.')
		return 1;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		char *s = strrchr(cur, '/');

		if (s)
			*s = '\0';
		return 1;
	}
	if (len + 1 + n >= csize)
		return -1;
	cur[len] = '/';
	memcpy(cur + len + 1, c, n);
	cur[len + 1 + n] = '\0';
	return 0;
}

/* Whether a name the new image opens by name after the exec gate's look
 * (a script's, a loader's program) leads to what it leads to now until
 * then: no /proc magic link on its walk but the exec's own process's
 * (its cwd, root, fds: single-threaded, nothing shares them after the
 * exec). Through another process's /proc/<pid>/cwd, root or fd/N, or a
 * symlink to one, that process moved it after the look, writing
 * nothing, and another script ran under the record of the one decided.
 * Walked as the decision walks (path_resolve.c): what does not resolve
 * is left to the exec. */
static bool name_stays(const struct target *t, const char *name)
{
	char abs[PATH_MAX], cur[PATH_MAX], rest[2 * PATH_MAX], tgt[PATH_MAX];
	char tmp[2 * PATH_MAX];
	char *r = rest;
	struct stat st;
	int links = 0, k;
	ssize_t n;

	if (hx_path_absolute(t->peer.pid, t->tid, AT_FDCWD, name, abs,
			     sizeof(abs)))
		return true;
	here_path(t, abs, rest, sizeof(rest));
	cur[0] = '\0';
	while ((k = step(cur, sizeof(cur), &r)) >= 0) {
		if (k)
			continue;
		here_path(t, cur, tgt, sizeof(tgt)); /* /proc/self, now */
		snprintf(cur, sizeof(cur), "%s", tgt);
		if (lstat(cur, &st))
			return true;
		if (!S_ISLNK(st.st_mode))
			continue;
		if (!strncmp(cur, "/proc/", 6) && cur[6] >= '1' &&
		    cur[6] <= '9' && foreign_link(t, cur))
			return false;
		n = readlink(cur, tgt, sizeof(tgt) - 1);
		if (n <= 0 || ++links > 40)
			return true;
		tgt[n] = '\0';
		if (tgt[0] != '/' && !strncmp(cur, "/proc/", 6) &&
		    strchr(tgt, ':'))
			return true; /* pipe:[N], anon_inode:...: no name */
		snprintf(tmp, sizeof(tmp), "%s", r);
		if (tgt[0] == '/') {
			cur[0] = '\0';
			here_path(t, tgt, abs, sizeof(abs));
			if ((size_t)snprintf(rest, sizeof(rest), "%s%s", abs,
					     tmp) >= sizeof(rest))
				return true; /* ENAMETOOLONG */
		} else {
			char *s = strrchr(cur, '/');

			if (s)
				*s = '\0';
			if ((size_t)snprintf(rest, sizeof(rest), "/%s%s", tgt,
					     tmp) >= sizeof(rest))
				return true;
		}
		r = rest;
	}
	return true;
}

/* name_stays for every name the new image opens by name; false (the
 * decision's allow taken back, recorded) when one may not. */
static bool names_stay(struct hx_unotify *u, const struct target *t,
		       const struct job *j, const struct opens *op,
		       const struct hx_loader_prog *lp)
{
	for (size_t i = 0; i <= op->n; i++) {
		const char *nm = i < op->n  ? op->name[i]
				 : lp->argv ? lp->name
					    : "";

		if (*nm && !name_stays(t, nm)) {
			hx_un_revoke(u, j, "harness:exec-name",
				     "what the new image opens by name goes "
				     "through another process's /proc entry "
				     "(its cwd, root or fds), which it can "
				     "move after the exec gate's look");
			return false;
		}
	}
	return true;
}

/* The gate's approval of this exec, in place before the kernel can run
 * it: the final image and the argv it will see, and what it opens by
 * name once it runs (each script, a loader's program). 0 or -errno. */
static int approve(struct hx_unotify *u, const struct target *t,
		   const struct job *j, const struct stat *fin,
		   const char *expect, size_t elen, const struct opens *op,
		   const struct hx_loader_prog *lp, const struct stat *pst,
		   const struct hx_strblob *env)
{
	int e = hx_execgate_approve(u->gate, &t->peer, j->out.seq, j->rq.path,
				    fin->st_dev, fin->st_ino, expect, elen,
				    j->rq.cwd);

	if (!e)
		e = hx_execgate_approve_env(u->gate, t->tid, env->p, env->len);

	for (size_t i = 0; !e && i < op->n; i++)
		e = hx_execgate_approve_name(u->gate, t->tid, op->dev[i],
					     op->ino[i], op->name[i]);
	if (!e && lp->argv)
		e = hx_execgate_approve_name(u->gate, t->tid, pst->st_dev,
					     pst->st_ino, lp->name);
	return e;
}

void hx_un_exec(struct hx_unotify *u, const struct seccomp_notif *n,
		const struct target *t, struct answer *a)
{
	const __u64 *arg = n->data.args;
	bool at = n->data.nr == SYS_execveat;
	int dirfd = at ? (int)arg[0] : AT_FDCWD, flags = at ? (int)arg[4] : 0;
	char raw[PATH_MAX], full[PATH_MAX], fname[PATH_MAX + 32], cwd[PATH_MAX];
	char *blob, *expect = NULL, img[PATH_MAX + 64];
	struct hx_strblob args = {NULL, 0, 0}, env = {NULL, 0, 0};
	const char **argv = NULL, **eargv = NULL, **envv = NULL;
	struct hx_loader_prog lp = {.argv = NULL};
	struct opens op = {.n = 0};
	size_t blen = 0, argc = 0, elen = 0, envc = 0;
	struct stat fin, named, pst;
	struct job j;
	pid_t tracer;
	int e;

	if (!u->gate) {
		a->err = EACCES; /* never CONTINUE without the gate */
		return;
	}
	/* The gate checks only threads it traces. Nothing in the tree can
	 * stop being traced (ptrace is denied, clone(CLONE_UNTRACED) too,
	 * the tracer never detaches and its exit kills the tree), so a
	 * thread traced now is traced at its exec event; one that is not
	 * (a way out nobody thought of) is refused here. */
	tracer = hx_un_tracer(t);
	if (!tracer || tracer != hx_execgate_tracer(u->gate)) {
		a->err = EPERM;
		return;
	}
	/* AT_EMPTY_PATH is refused in BPF before it gets here. */
	if (flags & ~AT_SYMLINK_NOFOLLOW) {
		a->err = EINVAL;
		return;
	}
	if ((e = hx_un_read_str(t->tid, at ? arg[1] : arg[0], raw,
				sizeof(raw)))) {
		a->err = -e;
		return;
	}
	if ((e = read_argv(t->tid, at ? arg[2] : arg[1], &args, &argc))) {
		a->err = -e;
		goto out;
	}
	blob = args.p;
	blen = args.len;
	if ((a->err =
		 hx_un_path_arg(u, n->id, t, dirfd, raw, full, sizeof(full))))
		goto out;
	/* The name the kernel hands a #! interpreter (fs/exec.c). */
	if (raw[0] == '/' || dirfd == AT_FDCWD)
		snprintf(fname, sizeof(fname), "%s", raw);
	else
		snprintf(fname, sizeof(fname), "/dev/fd/%d/%s", dirfd, raw);
	hx_un_job(&j, t, at ? HX_CALL_EXECVEAT : HX_CALL_EXECVE, HX_OP_EXEC);
	/* A missing file fails as exec would, without a record (a shell
	 * or execvp tries every PATH directory). */
	if ((e = expect_exec(t, full, fname, flags & AT_SYMLINK_NOFOLLOW, blob,
			     blen, argc, &fin, &expect, &elen, img, sizeof(img),
			     &op, &named))) {
		a->err = -e;
		goto out;
	}
	/* The environment, read once: decided with, shown, and held to by
	 * the gate as the argv is. */
	if ((e = read_argv(t->tid, at ? arg[3] : arg[2], &env, &envc)) ||
	    (e = exec_refused(t, fname, &args, argc, &env, envc)) ||
	    (e = strv_of(&env, envc, &envv))) {
		a->err = -e;
		goto out;
	}
	j.rq.envp = envv;
	j.rq.envc = envc;
	/* The final image a dynamic loader ("ld.so PROGRAM", directly or
	 * as a #! interpreter): decided as the exec of PROGRAM, with the
	 * argv it will see, and PROGRAM's file held by the gate too. */
	if ((e = loader_program(t, img, expect, elen, &lp, &pst)) < 0) {
		a->err = -e;
		goto out;
	}
	j.rq.path = full;
	/* Read once: decided in, shown, and held to by the gate. */
	if (hx_proc_cwd(t->tid, cwd, sizeof(cwd)) > 0 && cwd[0] == '/')
		j.rq.cwd = cwd;
	/* harness-exec's own child, before its first exec: decided (and
	 * logged) by decide_command in run.c already. Once only: an agent
	 * that execs harness-exec again is decided like anything else. */
	if (!(t->peer.pid == u->root && t->peer.exe &&
	      !strcmp(t->peer.exe, u->self_exe) &&
	      atomic_exchange(&u->root_pending, false))) {
		if (strv_of(&args, argc, &argv)) {
			a->err = ENOMEM;
			goto out;
		}
		j.rq.argv = argv;
		j.rq.argc = argc;
		/* What a question showed and a grant is keyed on: the file
		 * the path names (a script's own, not its interpreter's:
		 * keyed on /bin/sh, a session's grant for one script held
		 * for any other renamed into its place). */
		j.rq.image = &named;
		set_interp(&j, op.n && !lp.argv, img, expect, elen, &eargv);
		if (lp.argv) {
			j.rq.loader = img;
			j.rq.path = lp.path;
			j.rq.argv = lp.argv;
			j.rq.argc = lp.argc;
			j.rq.loader_opts = lp.opts;
			j.rq.loader_nopts = lp.nopts;
			j.rq.image = &pst;
		}
		if ((a->err = hx_un_judge(u, t, &j, NULL)))
			goto out;
	}
	if (!names_stay(u, t, &j, &op, &lp)) {
		a->err = EACCES;
		goto out;
	}
	if (approve(u, t, &j, &fin, expect, elen, &op, &lp, &pst, &env)) {
		a->err = ENOMEM;
		goto out;
	}
	/* CONTINUE after reading pointer arguments (path, argv): safe by
	 * DESIGN.md invariant 2 only because the exec gate is behind it.
	 * The kernel re-reads both from the target's memory, where another
	 * thread may have swapped them; at PTRACE_EVENT_EXEC, before the
	 * new image runs, execgate.c compares /proc/<pid>/exe (dev, inode)
	 * and the new argv with the approval just recorded, and kills on a
	 * mismatch. For a #! script that is the interpreter's inode and the
	 * script's name in its argv (a swap to another script changes the
	 * name), and that this name, from the new image's cwd, still leads
	 * to the script decided (a thread's chdir between the decision and
	 * the kernel's walk ran another directory's script of that name).
	 * Note (README): the interpreter opens the script by name, under
	 * the read rules, after that look; a symlink in that name, swapped
	 * then by an agent that may write its directory, changes which
	 * file that is. */
	atomic_fetch_add(&u->n_cont, 1);
	a->kind = ANS_CONTINUE;
	a->gate_ref = j.out.seq + 1;
out:
	opens_free(&op);
	free(lp.argv);
	free(eargv);
	free(argv);
	free(envv);
	free(expect);
	free(args.p);
	free(env.p);
}
