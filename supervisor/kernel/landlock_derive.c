/* The Landlock ruleset derived from the policy (docs/landlock.md says
 * the same for users).
 *
 * Handled: every filesystem right the ABI has; CONNECT_TCP when the
 * policy's TCP ports are a bounded set; the signal and abstract-unix
 * scopes (ABI 6). BIND_TCP is not handled (the policy has no bind
 * rules). Everything handled and not granted below is refused.
 *
 * Reads (READ_FILE, READ_DIR, EXECUTE: exec by name and argv is decided
 * by the shim and later user-notify; Landlock bounds what can run at
 * all):
 * - file_read default allow: READ_DIR on / (directory names stay
 *   listable everywhere: the ancestors of a denied path must be
 *   listable, and a rule on a directory covers its subtree), and
 *   READ_FILE|EXECUTE on / minus the deny tree, by the sibling walk of
 *   landlock_tree.c. The deny tree holds the literal-prefix patterns of
 *   every deny or ask rule with access read or any, the protect globs
 *   included. Patterns with a wildcard before their last literal
 *   directory cannot be expressed: what they name at start under a
 *   literal prefix two directories deep or more is (expand), the rest
 *   is the shim's only.
 * - file_read default deny or ask: the same walk from each read-allow
 *   root, each write root and the loader's roots (the shim and libc
 *   are loaded before any policy code runs).
 * - A read deny inside a write root ($CWD/secret under $CWD) is shim
 *   only: the sibling walk would make every entry the agent creates at
 *   the top of the write root unreadable and unexecutable (gcc -o x &&
 *   ./x, echo > f; cat f), which breaks the write root itself.
 * Writes (WRITE_FILE, REMOVE_*, MAKE_{DIR,REG,SOCK,FIFO,SYM}, REFER,
 * TRUNCATE, IOCTL_DEV; never MAKE_CHAR/MAKE_BLOCK): granted on the
 * literal prefix of every write-allow rule that exists at start; a file
 * gets only the file-compatible rights. A write deny inside a write
 * root ($CWD/.git/hooks) cannot be carved out without breaking file
 * creation at the top of the root: shim (and later user-notify) only.
 * Ask rules are not granted: an approval cannot lift a kernel refusal,
 * which fails closed.
 * TCP: allowed connect ports = the union of the port ranges of network
 * allow rules, for any host (hosts are judged by the shim / notify); not
 * handled at all when a rule allows every port or net_connect's default
 * is not deny. */
#define _GNU_SOURCE
#include "supervisor/kernel/landlock_int.h"
#include "supervisor/kernel/ipool.h"
#include "supervisor/kernel/landlock_tree.h"

#include "common/glob.h"
#include "policy/policy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_RIGHTS (HX_LL_FS_READ_FILE | HX_LL_FS_READ_DIR | HX_LL_FS_EXECUTE)
#define WRITE_RIGHTS                                                           \
	(HX_LL_FS_WRITE_FILE | HX_LL_FS_REMOVE_DIR | HX_LL_FS_REMOVE_FILE |    \
	 HX_LL_FS_MAKE_DIR | HX_LL_FS_MAKE_REG | HX_LL_FS_MAKE_SOCK |          \
	 HX_LL_FS_MAKE_FIFO | HX_LL_FS_MAKE_SYM | HX_LL_FS_REFER |             \
	 HX_LL_FS_TRUNCATE | HX_LL_FS_IOCTL_DEV)
/* More allowed ports than this and CONNECT_TCP is not worth handling
 * (one rule per port). */
#define MAX_PORTS 4096

/* The loader reads these before the shim or any policy check runs. */
static const char *const loader_roots[] = {
    "/etc/ld.so.cache", "/lib", "/lib64", "/usr/lib", "/usr/lib64",
};

struct frule {
	enum hx_verdict v;
	unsigned access;
	const char *pat, *rule;
};

struct strs {
	char **v;
	size_t n;
};

struct derive {
	const struct hx_policy *p;
	int abi, rs, err;
	uint64_t fs, grant;
	struct frule *fr;
	size_t nfr;
	struct strs wshown, wcanon; /* write roots as written, canonical */
	struct strs rkernel, rshim, anc, wshim, wmissing, notes, pooled;
	struct strs masked; /* read denies inside write roots that exist */
	struct strs held;   /* files and dirs denied for reading elsewhere */
	struct strs absent; /* of those, named but not there (yet) */
	struct strs absent_dirs; /* the same, of "DIR/ **" patterns */
	struct strs name_dirs;	 /* where read denies inside write roots lie */
	struct strs deny_paths;	 /* the held literal denies, there or not */
	struct hx_ll_tree tree;
	struct hx_ll_memo *memo; /* NULL: every prefix looked up anew */
	size_t nrules, nskipped;
	bool tcp;
	char tcp_why[512];
	uint8_t ports[65536 / 8];
	size_t nports;
};

static void strs_add(struct derive *d, struct strs *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void strs_add(struct derive *d, struct strs *s, const char *fmt, ...)
{
	char *x = NULL, **v;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&x, fmt, ap) < 0)
		x = NULL;
	va_end(ap);
	v = x ? realloc(s->v, (s->n + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(x);
		d->err = -ENOMEM;
		return;
	}
	v[s->n++] = x;
	s->v = v;
}

static void strs_free(struct strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static void collect(enum hx_verdict v, unsigned access, const char *pattern,
		    const char *rule, void *arg)
{
	struct derive *d = arg;
	struct frule *fr = realloc(d->fr, (d->nfr + 1) * sizeof(*fr));

	if (!fr) {
		d->err = -ENOMEM;
		return;
	}
	fr[d->nfr++] = (struct frule){v, access, pattern, rule};
	d->fr = fr;
}

/* Adds a rule for fd; rights the inode cannot carry are dropped. An
 * inode Landlock refuses (a pipe behind /dev/stdout: EBADFD) is left
 * out: refused, which fails safe. */
static int add_fd(struct derive *d, int fd, bool is_dir, uint64_t rights)
{
	int r;

	rights &= d->fs;
	if (!is_dir)
		rights &= HX_LL_FS_FILE_RIGHTS;
	if (!rights)
		return 0;
	r = hx_ll_add_path(d->rs, fd, rights);
	if (r == -ENOMEM)
		return r;
	if (r)
		d->nskipped++;
	else
		d->nrules++;
	return 0;
}

static int grant_cb(int fd, const char *path, bool is_dir, void *arg)
{
	struct derive *d = arg;

	(void)path;
	return add_fd(d, fd, is_dir, d->grant);
}

static int anc_cb(int fd, const char *path, bool is_dir, void *arg)
{
	struct derive *d = arg;

	(void)fd;
	(void)is_dir;
	strs_add(d, &d->anc, "%s", path);
	return d->err;
}

/* An entry of a directory, for its callers below. */
struct entry_ctx {
	struct derive *d;
	const char *dir;
	void (*fn)(struct derive *d, const char *path);
	struct strs *to;
	bool plain; /* regular files and directories only */
};

static void root_entry(const char *name, unsigned char type, void *arg)
{
	const struct entry_ctx *c = arg;
	char path[PATH_MAX];

	(void)type;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s",
			     strcmp(c->dir, "/") ? c->dir : "",
			     name) < sizeof(path))
		c->fn(c->d, path);
}

/* Calls fn for each root a pattern of an allow rule stands for: its
 * literal prefix, the matching entries for a name glob, the prefix
 * before the first wildcard otherwise (widened, noted), never "/" by
 * widening. */
static void allow_roots(struct derive *d, const struct frule *f,
			void (*fn)(struct derive *d, const char *path))
{
	struct hx_ll_pat lp;
	struct entry_ctx c = {.d = d, .fn = fn};

	if (hx_ll_classify(f->pat, &lp))
		return; /* never matches a normalized path */
	switch (lp.kind) {
	case HX_LL_EXACT:
	case HX_LL_SUBTREE:
		fn(d, lp.prefix);
		return;
	case HX_LL_NAMEGLOB:
		c.dir = lp.prefix;
		hx_ll_memo_each(d->memo, lp.prefix, lp.glob, root_entry, &c);
		return;
	case HX_LL_INEXPRESSIBLE:
		if (!strcmp(lp.prefix, "/")) {
			strs_add(d, &d->notes,
				 "%s (rule %s): not granted by the kernel "
				 "(it would widen to /)",
				 f->pat, f->rule);
			return;
		}
		strs_add(d, &d->notes, "%s (rule %s): granted as %s", f->pat,
			 f->rule, lp.prefix);
		fn(d, lp.prefix);
		return;
	}
}

static void write_root(struct derive *d, const char *path)
{
	char canon[PATH_MAX];
	bool have = hx_ll_canon_memo(d->memo, path, canon, sizeof(canon)) == 0;
	struct stat st;
	int fd;

	/* $WORKTREE is $CWD without --worktree: one root, one line. */
	for (size_t i = 0; have && i < d->wcanon.n; i++)
		if (!strcmp(d->wcanon.v[i], canon))
			return;
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		strs_add(d, &d->wmissing, "%s", path);
		return;
	}
	if (fstat(fd, &st) == 0) {
		int r = add_fd(d, fd, S_ISDIR(st.st_mode), WRITE_RIGHTS);

		if (r)
			d->err = r;
	}
	close(fd);
	strs_add(d, &d->wshown, "%s", path);
	if (have)
		strs_add(d, &d->wcanon, "%s", canon);
}

static const char *inside_write_root(const struct derive *d, const char *dir)
{
	for (size_t i = 0; i < d->wcanon.n; i++)
		if (hx_ll_within(dir, d->wcanon.v[i]))
			return d->wcanon.v[i];
	return NULL;
}

/* Whether an entry of type t is listed: never a symlink, nor a socket
 * (a mask over one made every connect fail EROFS, the shim's to the
 * session's own socket too when --no-kernel-notify leaves it to
 * connect itself; a connect is the kernel layer's to decide); with
 * plain, no device or fifo either (Landlock refuses the ~90 nodes of
 * /dev the default names, which no mask needs to say). */
static bool listed(unsigned char t, bool plain)
{
	return t != DT_LNK && t != DT_SOCK &&
	       (!plain || t == DT_REG || t == DT_DIR);
}

/* What a read deny names now, onto list to: a literal path or
 * directory, or the entries of a directory that match one name glob
 * (nothing to walk). */
static void denied_entry(const char *name, unsigned char type, void *arg)
{
	const struct entry_ctx *c = arg;
	char path[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s",
			     strcmp(c->dir, "/") ? c->dir : "",
			     name) >= sizeof(path))
		return; /* unnameable: Landlock's refusal, unrecorded */
	if (type == DT_UNKNOWN && !lstat(path, &st))
		type = IFTODT(st.st_mode);
	if (listed(type, c->plain))
		strs_add(c->d, c->to, "%s", path);
}

static void existing(struct derive *d, const struct hx_ll_pat *lp,
		     const char *canon, struct strs *to, bool plain)
{
	struct entry_ctx c = {.d = d, .dir = canon, .to = to, .plain = plain};
	struct stat st;

	if (hx_ll_memo_absent(d->memo, canon))
		return; /* most credential stores a user does not have */
	if (lp->kind != HX_LL_NAMEGLOB) {
		if (!lstat(canon, &st) && listed(IFTODT(st.st_mode), plain))
			strs_add(d, to, "%s", canon);
		return;
	}
	hx_ll_memo_each(d->memo, canon, lp->glob, denied_entry, &c);
}

/* A held path not there now, in a directory that is (a credential the
 * user's tool writes during the session: ~/.git-credentials at the
 * first `git credential approve`), or a name that is a symlink now
 * (canon its target, held): what it names later is another file, which
 * Landlock may grant where it lands (a dotfile manager's new target).
 * name the policy's literal path. hx_landlock_absent. */
static void absent(struct derive *d, const char *name, const char *canon,
		   struct strs *to)
{
	const char *slash = strrchr(canon, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (strcmp(name, canon) && !lstat(name, &st) && S_ISLNK(st.st_mode)) {
		strs_add(d, to, "%s", name);
		return;
	}
	/* Most credential stores a user does not have: known from the
	 * listing of their directory, no look-up each. */
	if (hx_ll_memo_absent_in_dir(d->memo, canon)) {
		strs_add(d, to, "%s", canon);
		return;
	}
	if (!slash || slash == canon ||
	    (size_t)(slash - canon) >= sizeof(dir) || !lstat(canon, &st) ||
	    errno != ENOENT)
		return;
	memcpy(dir, canon, (size_t)(slash - canon));
	dir[slash - canon] = '\0';
	if (!lstat(dir, &st) && S_ISDIR(st.st_mode))
		strs_add(d, to, "%s", canon);
}

/* dir, where a read deny inside a write root names files, when it is
 * there: watched for its names (hx_landlock_name_dirs). */
static void name_dir(struct derive *d, const char *dir)
{
	struct stat st;

	if (!lstat(dir, &st) && S_ISDIR(st.st_mode))
		strs_add(d, &d->name_dirs, "%s", dir);
}

/* The lists the masks take (hx_landlock_masked, _held, _absent). */
static void hand_over(struct derive *d, struct hx_landlock *ll)
{
	size_t files = d->absent.n;

	ll->masked = d->masked.v;
	ll->nmasked = d->masked.n;
	d->masked = (struct strs){0};
	ll->held = d->held.v;
	ll->nheld = d->held.n;
	d->held = (struct strs){0};
	/* The files' first, then the directories'. */
	for (size_t i = 0; i < d->absent_dirs.n; i++)
		strs_add(d, &d->absent, "%s", d->absent_dirs.v[i]);
	ll->absent = d->absent.v;
	ll->nabsent = d->absent.n;
	ll->nabsent_files = files;
	d->absent = (struct strs){0};
	ll->name_dirs = d->name_dirs.v;
	ll->nname_dirs = d->name_dirs.n;
	d->name_dirs = (struct strs){0};
	ll->deny_paths = d->deny_paths.v;
	ll->ndeny_paths = d->deny_paths.n;
	d->deny_paths = (struct strs){0};
}

/* A held entry is masked (hx_landlock_held): none may hold
 * anything the ruleset may grant, which the mask would hide (a read
 * allow of ~/.ssh/known_hosts, a write root beneath it). A pattern
 * Landlock cannot express grants nothing. */
static void keep_alone(struct derive *d, struct strs *held)
{
	size_t k = 0;

	for (size_t i = 0; i < held->n; i++) {
		const char *h = held->v[i];
		bool granted = false;

		for (size_t j = 0; j < d->wcanon.n && !granted; j++)
			granted = hx_ll_within(d->wcanon.v[j], h);
		for (size_t j = 0; j < d->nfr && !granted; j++) {
			struct hx_ll_pat lp;

			granted = d->fr[j].v == HX_VERDICT_ALLOW &&
				  (d->fr[j].access & HX_ACCESS_READ) &&
				  !hx_ll_classify(d->fr[j].pat, &lp) &&
				  lp.kind != HX_LL_INEXPRESSIBLE &&
				  hx_ll_within(lp.prefix, h);
		}
		if (granted)
			free(held->v[i]);
		else
			held->v[k++] = held->v[i];
	}
	held->n = k;
}

static void read_deny(struct derive *d, const struct frule *f);

/* A pattern Landlock cannot express (a wildcard before its last
 * directory: JetBrains' c.kdbx in any IDE's directory, minikube's keys
 * at any depth) was the shim's only, so a static program read what it
 * names (nineteenth attack review); its entries that exist at start are
 * found by a walk of its literal prefix (not of "/" or a top directory,
 * as the dotenv rule's would be) and each denied as a literal. Files
 * made later under the prefix stay the shim's. */
#define EXPAND_MAX   20000 /* entries walked per pattern */
#define EXPAND_DEPTH 16

static struct {
	struct derive *d;
	const struct frule *f;
	size_t seen, held;
	dev_t dev; /* the prefix's file system: no walk beneath another */
} expand_ctx;

static int expand_one(const char *p, const struct stat *st, int type,
		      struct FTW *w)
{
	const struct frule *f = expand_ctx.f;
	char esc[PATH_MAX * 2];
	struct frule lit = *f;

	if (++expand_ctx.seen > EXPAND_MAX)
		return FTW_STOP;
	if (w->level > EXPAND_DEPTH)
		return FTW_SKIP_SUBTREE;
	if (type == FTW_SL || type == FTW_NS || type == FTW_SLN)
		return FTW_CONTINUE; /* a link is judged where it leads */
	if (hx_glob_match(f->pat, p) && !hx_glob_escape(p, esc, sizeof(esc)) &&
	    (type != FTW_D || hx_glob_covers_beneath(f->pat, p))) {
		lit.pat = esc;
		read_deny(expand_ctx.d, &lit);
		expand_ctx.held++;
		return type == FTW_D ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
	}
	/* A mount point (a FUSE one's server may not answer) is matched,
	 * never walked. */
	if (type == FTW_D && w->level > 0 &&
	    (st->st_dev != expand_ctx.dev || !hx_glob_match_beneath(f->pat, p)))
		return FTW_SKIP_SUBTREE;
	return FTW_CONTINUE;
}

static void expand(struct derive *d, const struct frule *f,
		   const struct hx_ll_pat *lp)
{
	const char *s = lp->prefix;
	struct stat st;
	int depth = 0;

	for (; *s; s++)
		depth += *s == '/';
	if (depth < 2 || hx_ll_memo_absent(d->memo, lp->prefix)) {
		strs_add(d, &d->rshim, "%s", f->pat);
		return;
	}
	expand_ctx.d = d;
	expand_ctx.f = f;
	expand_ctx.seen = expand_ctx.held = 0;
	if (lstat(lp->prefix, &st) || !S_ISDIR(st.st_mode)) {
		strs_add(d, &d->rshim, "%s", f->pat);
		return;
	}
	expand_ctx.dev = st.st_dev;
	nftw(lp->prefix, expand_one, 16, FTW_PHYS | FTW_ACTIONRETVAL);
	strs_add(d, &d->rshim, "%s (%zu entries at start held%s)", f->pat,
		 expand_ctx.held,
		 expand_ctx.seen > EXPAND_MAX ? ", more not looked at" : "");
}

/* One read-deny pattern into the tree, or onto the shim-only list. */
static void read_deny(struct derive *d, const struct frule *f)
{
	char canon[PATH_MAX], parent[PATH_MAX];
	struct hx_ll_pat lp;
	const char *w;
	char *slash;

	if (hx_ll_classify(f->pat, &lp))
		return;
	if (lp.kind == HX_LL_INEXPRESSIBLE) {
		expand(d, f, &lp);
		return;
	}
	if (hx_ll_canon_memo(d->memo, lp.prefix, canon, sizeof(canon))) {
		strs_add(d, &d->rshim, "%s", f->pat);
		return;
	}
	/* The directory whose listing decides it: new entries there would
	 * be refused. */
	strcpy(parent, canon);
	if (lp.kind != HX_LL_NAMEGLOB) {
		slash = strrchr(parent, '/');
		if (slash == parent)
			parent[1] = '\0';
		else if (slash)
			*slash = '\0';
	}
	w = inside_write_root(d, parent);
	if (w) {
		/* The root grants the tree: masked in the agent's mount
		 * namespace (masks.h). */
		existing(d, &lp, canon, &d->masked, false);
		name_dir(d, lp.kind == HX_LL_NAMEGLOB ? canon : parent);
		strs_add(d, &d->rshim, "%s (inside write root %s)", f->pat, w);
		return;
	}
	existing(d, &lp, canon, &d->held, true);
	if (lp.kind != HX_LL_NAMEGLOB) {
		absent(d, lp.prefix, canon,
		       lp.kind == HX_LL_EXACT ? &d->absent : &d->absent_dirs);
		strs_add(d, &d->deny_paths, "%s", canon);
	}
	if (lp.kind == HX_LL_NAMEGLOB) {
		d->err = d->err
			     ? d->err
			     : hx_ll_tree_deny_glob(&d->tree, canon, lp.glob);
		strs_add(d, &d->rkernel, "%s/%s",
			 strcmp(canon, "/") ? canon : "", lp.glob);
	} else {
		d->err = d->err ? d->err : hx_ll_tree_deny(&d->tree, canon);
		strs_add(d, &d->rkernel, "%s", canon);
	}
}

/* A write deny the kernel cannot hold: inside a write root, or not
 * expressible at all. Outside every root it is refused anyway. */
static void write_deny(struct derive *d, const struct frule *f)
{
	char canon[PATH_MAX];
	struct hx_ll_pat lp;
	const char *w;

	if (hx_ll_classify(f->pat, &lp))
		return;
	if (lp.kind == HX_LL_INEXPRESSIBLE) {
		strs_add(d, &d->wshim, "%s", f->pat);
		return;
	}
	if (hx_ll_canon_memo(d->memo, lp.prefix, canon, sizeof(canon)))
		return;
	w = inside_write_root(d, canon);
	if (w)
		strs_add(d, &d->wshim, "%s (inside write root %s)", f->pat, w);
}

static void read_root(struct derive *d, const char *path)
{
	char canon[PATH_MAX];
	int r;

	if (hx_ll_canon_memo(d->memo, path, canon, sizeof(canon)))
		return;
	r = hx_ll_walk(&d->tree, canon, grant_cb, anc_cb, d);
	if (r < 0 && r != -ENOENT && r != -EACCES && !d->err)
		d->err = r;
}

static void net_rule(enum hx_verdict v, bool is_unix, unsigned lo, unsigned hi,
		     const char *pattern, const char *rule, void *arg)
{
	struct derive *d = arg;

	if (v != HX_VERDICT_ALLOW || is_unix || !d->tcp)
		return;
	if (lo == 0 && hi >= 65535) {
		d->tcp = false;
		snprintf(d->tcp_why, sizeof(d->tcp_why),
			 "policy allows %s, rule %s", pattern, rule);
		return;
	}
	for (unsigned port = lo; port <= hi && port < 65536; port++) {
		if (!(d->ports[port / 8] & (1u << (port % 8))))
			d->nports++;
		d->ports[port / 8] |= (uint8_t)(1u << (port % 8));
	}
}

static bool port_set(const struct derive *d, unsigned port)
{
	return port < 65536 && (d->ports[port / 8] & (1u << (port % 8)));
}

/* The write-allow rules' classes, each classified once: creation_dirs
 * asks of every exact one whether another lies beneath it. */
struct wclass {
	enum hx_ll_kind kind;
	char *prefix;
};

static size_t write_classes(const struct derive *d, struct wclass **out)
{
	struct wclass *w = calloc(d->nfr ? d->nfr : 1, sizeof(*w));
	struct hx_ll_pat lp;
	size_t n = 0;

	*out = w;
	for (size_t i = 0; w && i < d->nfr; i++)
		if ((d->fr[i].access & HX_ACCESS_WRITE) &&
		    d->fr[i].v == HX_VERDICT_ALLOW &&
		    !hx_ll_classify(d->fr[i].pat, &lp) &&
		    (w[n].prefix = strdup(lp.prefix)))
			w[n++].kind = lp.kind;
	return n;
}

/* Whether an exact write-allow path is a directory the policy lets be
 * made for what other rules allow beneath it ($HOME/.npm, for npm's
 * cache rule): no file is made under that name. */
static bool dir_allowance(const struct wclass *w, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(w[i].prefix, path) &&
		    hx_ll_within(w[i].prefix, path))
			return true;
	return false;
}

/* An exact name that nobody makes anew: a device node (mknod needs
 * CAP_MKNOD) or a link into /proc (/dev/stdout). Its directory (/dev,
 * carved for device-reads) needs no pool. */
static bool never_made(const char *path)
{
	char t[8];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st))
		return false;
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		return true;
	n = S_ISLNK(st.st_mode) ? readlink(path, t, sizeof(t)) : -1;
	return n >= 6 && !memcmp(t, "/proc/", 6);
}

/* The canonical directories write-allow rules make files directly in
 * (the parent of an exact path that is no directory allowance, the
 * directory of a name glob, the literal prefix of a subtree or of a
 * wildcard pattern), each once: a realpath each, and there are hundreds
 * of rules but a few dozen such directories. Under the default policy
 * $HOME is not among them (its rules there are all directories). */
static void creation_dirs(struct derive *d, struct strs *out)
{
	struct strs raw = {0};
	struct wclass *w;
	size_t nw = write_classes(d, &w);
	char c[PATH_MAX], dir[PATH_MAX];

	if (!w)
		d->err = -ENOMEM;
	for (size_t i = 0; i < nw; i++) {
		bool seen = false;
		char *slash;

		snprintf(dir, sizeof(dir), "%s", w[i].prefix);
		if (w[i].kind == HX_LL_EXACT) {
			if (dir_allowance(w, nw, dir) || never_made(dir))
				continue;
			slash = strrchr(dir, '/');
			if (!slash || slash == dir)
				continue; /* a file in / */
			*slash = '\0';
		}
		for (size_t k = 0; k < raw.n && !seen; k++)
			seen = !strcmp(raw.v[k], dir);
		if (seen)
			continue;
		strs_add(d, &raw, "%s", dir);
		if (!hx_ll_canon_memo(d->memo, dir, c, sizeof(c)))
			strs_add(d, out, "%s", c);
	}
	for (size_t i = 0; i < nw; i++)
		free(w[i].prefix);
	free(w);
	strs_free(&raw);
}

static int pool_grant(int fd, void *arg)
{
	struct derive *d = arg;
	size_t before = d->nrules;
	int r = add_fd(d, fd, false, d->grant);

	return r ? r : d->nrules > before ? 0 : -EBADF;
}

/* Unnamed files granted for reading in each carved directory the policy
 * lets the agent make files in (ipool.h): what it makes there is
 * readable, what others make is not. */
static int fill_pools(struct derive *d, struct hx_landlock *ll)
{
	struct strs made = {0};
	int r = 0;

	if (d->anc.n)
		creation_dirs(d, &made);
	for (size_t i = 0; i < d->anc.n && !r; i++) {
		bool seen = false, makes = false;

		for (size_t k = 0; k < d->pooled.n; k++)
			seen = seen || !strcmp(d->pooled.v[k], d->anc.v[i]);
		for (size_t k = 0; k < made.n; k++)
			makes = makes || !strcmp(made.v[k], d->anc.v[i]);
		if (seen || !makes)
			continue;
		if (!ll->pool && (r = hx_ipool_new(&ll->pool)))
			break;
		r = hx_ipool_fill(ll->pool, d->anc.v[i], HX_LL_POOL_FILES,
				  pool_grant, d);
		if (r > 0)
			strs_add(d, &d->pooled, "%s", d->anc.v[i]);
		r = r == -ENOMEM ? r : 0;
	}
	strs_free(&made);
	return r ? r : d->err;
}

static void print_list(FILE *m, const char *what, const struct strs *s)
{
	if (!s->n)
		return;
	fprintf(m, "landlock: %s:", what);
	for (size_t i = 0; i < s->n; i++)
		fprintf(m, " %s", s->v[i]);
	fputc('\n', m);
}

static int write_text(struct derive *d, struct hx_landlock *ll, bool dflt_allow)
{
	FILE *m = open_memstream(&ll->text, &ll->len);

	if (!m)
		return -ENOMEM;
	fprintf(m, "landlock: abi %d%s; %zu rules\n", d->abi,
		d->abi > HX_LL_ABI_KNOWN ? " (rights of abi 6 and older used)"
					 : "",
		d->nrules);
	if (dflt_allow)
		fprintf(m, "landlock: read: allowed except the paths below; "
			   "directory names stay listable everywhere\n");
	else
		fprintf(m, "landlock: read: only beneath the read-allow, "
			   "write and loader roots\n");
	print_list(m, "read denied by kernel", &d->rkernel);
	print_list(m, "read denied by shim only", &d->rshim);
	print_list(m, "masked inside write roots", &d->masked);
	print_list(m, "entries created later are unreadable in", &d->anc);
	if (d->pooled.n)
		fprintf(m,
			"landlock: except up to %d files each that the agent "
			"makes in:",
			HX_LL_POOL_FILES);
	for (size_t i = 0; i < d->pooled.n; i++)
		fprintf(m, " %s%s", d->pooled.v[i],
			i + 1 == d->pooled.n ? "\n" : "");
	print_list(m, "write roots", &d->wshown);
	print_list(m, "write roots missing at start (not writable)",
		   &d->wmissing);
	print_list(m, "write denied or asked by shim only", &d->wshim);
	print_list(m, "note", &d->notes);
	if (d->tcp) {
		fprintf(m, "landlock: tcp connect: only ports");
		for (unsigned p = 1; p < 65536; p++) {
			unsigned q = p;

			if (!port_set(d, p))
				continue;
			while (port_set(d, q + 1))
				q++;
			if (q == p)
				fprintf(m, " %u", p);
			else
				fprintf(m, " %u-%u", p, q);
			p = q;
		}
		fprintf(m, "%s (any host: hosts are judged by the shim)\n",
			d->nports ? "" : " (none)");
	} else {
		fprintf(m, "landlock: tcp: not restricted (%s)\n", d->tcp_why);
	}
	if (d->abi >= 6)
		fprintf(m, "landlock: scope: signal, abstract-unix\n");
	else
		fprintf(m,
			"landlock: scope: none (abi %d < 6: the agent can "
			"signal harness-exec and reach abstract sockets)\n",
			d->abi);
	if (d->abi < 2)
		fprintf(m, "landlock: abi 1: renames and links across "
			   "directories are always refused\n");
	if (d->abi < 3)
		fprintf(m, "landlock: truncate: not restricted (abi < 3)\n");
	if (d->nskipped)
		fprintf(m,
			"landlock: %zu inodes Landlock refused a rule for "
			"(pipes, internal files) stay denied\n",
			d->nskipped);
	if (fclose(m))
		return -ENOMEM;
	return 0;
}

int hx_ll_derive(const struct hx_policy *p, struct hx_landlock *ll,
		 bool describe, char *err, size_t errlen)
{
	struct derive *d = calloc(1, sizeof(*d));
	struct hx_ll_ruleset_attr attr = {0};
	bool dflt_allow;
	int r = 0, fd;

	if (!d)
		return -ENOMEM;
	d->p = p;
	d->abi = ll->abi;
	d->rs = -1;
	d->memo = hx_ll_memo_new();
	d->fs = hx_ll_fs_handled(d->abi);
	dflt_allow =
	    hx_policy_default_verdict(p, HX_CAT_FILE_READ) == HX_VERDICT_ALLOW;
	hx_policy_foreach_file_rule(p, collect, d);

	/* TCP first: it decides what the ruleset handles. */
	d->tcp = d->abi >= 4;
	snprintf(d->tcp_why, sizeof(d->tcp_why), "abi %d < 4", d->abi);
	if (d->tcp && hx_policy_default_verdict(p, HX_CAT_NET_CONNECT) !=
			  HX_VERDICT_DENY) {
		d->tcp = false;
		snprintf(d->tcp_why, sizeof(d->tcp_why),
			 "net_connect default is not deny");
	}
	if (d->tcp)
		hx_policy_foreach_net_rule(p, net_rule, d);
	if (d->tcp && d->nports > MAX_PORTS) {
		d->tcp = false;
		snprintf(d->tcp_why, sizeof(d->tcp_why),
			 "policy allows %zu ports, more than %d", d->nports,
			 MAX_PORTS);
	}

	attr.handled_access_fs = d->fs;
	if (d->tcp)
		attr.handled_access_net = HX_LL_NET_CONNECT_TCP;
	if (d->abi >= 6)
		attr.scoped =
		    HX_LL_SCOPE_SIGNAL | HX_LL_SCOPE_ABSTRACT_UNIX_SOCKET;
	d->rs = hx_ll_create_ruleset(&attr);
	if (d->rs < 0) {
		r = d->rs;
		snprintf(err, errlen, "landlock_create_ruleset: %s",
			 strerror(-r));
		goto out;
	}

	/* Write roots first: read denies inside them are judged against
	 * them. */
	for (size_t i = 0; i < d->nfr; i++)
		if ((d->fr[i].access & HX_ACCESS_WRITE) &&
		    d->fr[i].v == HX_VERDICT_ALLOW)
			allow_roots(d, &d->fr[i], write_root);
	for (size_t i = 0; i < d->nfr; i++) {
		if (d->fr[i].v == HX_VERDICT_ALLOW)
			continue;
		if (d->fr[i].access & HX_ACCESS_READ)
			read_deny(d, &d->fr[i]);
		if (d->fr[i].access & HX_ACCESS_WRITE)
			write_deny(d, &d->fr[i]);
	}
	if (d->err)
		goto fail;
	keep_alone(d, &d->held);
	keep_alone(d, &d->absent);
	keep_alone(d, &d->absent_dirs);

	if (dflt_allow) {
		/* Listing stays possible on every ancestor of a deny. */
		fd = open("/", O_PATH | O_CLOEXEC);
		if (fd < 0 || (r = add_fd(d, fd, true, HX_LL_FS_READ_DIR))) {
			r = fd < 0 ? -errno : r;
			if (fd >= 0)
				close(fd);
			snprintf(err, errlen, "landlock rule for /: %s",
				 strerror(-r));
			goto out;
		}
		close(fd);
		d->grant = READ_RIGHTS;
		read_root(d, "/");
	} else {
		d->grant = READ_RIGHTS;
		for (size_t i = 0; i < d->nfr; i++)
			if ((d->fr[i].access & HX_ACCESS_READ) &&
			    d->fr[i].v == HX_VERDICT_ALLOW)
				allow_roots(d, &d->fr[i], read_root);
		for (size_t i = 0; i < d->wshown.n; i++)
			read_root(d, d->wshown.v[i]);
		for (size_t i = 0;
		     i < sizeof(loader_roots) / sizeof(*loader_roots); i++)
			read_root(d, loader_roots[i]);
	}
	if (!d->err)
		d->err = fill_pools(d, ll);
	if (d->err)
		goto fail;

	if (d->tcp)
		for (unsigned port = 1; port < 65536; port++) {
			if (!port_set(d, port))
				continue;
			r = hx_ll_add_port(d->rs, port, HX_LL_NET_CONNECT_TCP);
			if (r) {
				snprintf(err, errlen,
					 "landlock rule for tcp port %u: %s",
					 port, strerror(-r));
				goto out;
			}
			d->nrules++;
		}
	r = describe ? write_text(d, ll, dflt_allow) : 0;
	if (r)
		goto fail;
	ll->fd = d->rs;
	ll->fs_handled = d->fs;
	d->rs = -1;
	hand_over(d, ll);
	goto out;
fail:
	r = d->err ? d->err : r;
	snprintf(err, errlen, "landlock ruleset: %s", strerror(-r));
out:
	if (d->rs >= 0)
		close(d->rs);
	hx_ll_tree_free(&d->tree);
	hx_ll_memo_free(d->memo);
	strs_free(&d->wshown);
	strs_free(&d->wcanon);
	strs_free(&d->rkernel);
	strs_free(&d->masked);
	strs_free(&d->held);
	strs_free(&d->absent);
	strs_free(&d->absent_dirs);
	strs_free(&d->name_dirs);
	strs_free(&d->deny_paths);
	strs_free(&d->rshim);
	strs_free(&d->anc);
	strs_free(&d->wshim);
	strs_free(&d->wmissing);
	strs_free(&d->notes);
	strs_free(&d->pooled);
	free(d->fr);
	free(d);
	return r;
}
