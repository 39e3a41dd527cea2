/* Checkpoint commits with a private index; see checkpoint.h. */
#define _GNU_SOURCE
#include "supervisor/git/checkpoint.h"
#include "supervisor/session.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <git2/sys/repository.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/kernel/confine.h"
#include "supervisor/git/gitutil.h"

/* The names of git's own files a walk reads (bound_git_files). */
#define GIT_FILES 8
struct git_files {
	char name[GIT_FILES][PATH_MAX];
	size_t n;
};

struct hx_ckpt {
	char wt[PATH_MAX];    /* the working tree */
	git_repository *repo; /* the common dir, workdir set to the tree */
	git_index *idx;	      /* private, stat cache kept across calls */
	char session[80];
	git_oid parent; /* last checkpoint's commit, or the base */
	git_oid last_tree;
	bool have_last;
	struct hx_ckpt_info last;
	unsigned next;
	/* the files left out as the last take named them */
	size_t said_n;
	struct hx_ckpt_big said[HX_CKPT_NAMED];
	/* The Landlock ruleset each walk's thread takes (confine.h), made
	 * before the agent runs; -1: walked on the caller's thread. */
	int walk_rs;
};

/* What a checkpoint's walk of the tree finds. */
struct snap {
	git_oid tree;
	size_t ntoo_large;
	struct hx_ckpt_big too_large[HX_CKPT_NAMED];
	char err[512];
};

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, r = 0;
	ssize_t n, w;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		for (ssize_t off = 0; off < n; off += w) {
			w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w < 0) {
				r = -errno;
				goto out;
			}
		}
	}
out:
	close(in);
	if (close(out) && !r)
		r = -errno;
	return r;
}

/* Adds a name (printf-style) to g. */
__attribute__((format(printf, 2, 3))) static void git_file(struct git_files *g,
							   const char *fmt, ...)
{
	va_list ap;
	int n;

	if (g->n == GIT_FILES)
		return;
	va_start(ap, fmt);
	n = vsnprintf(g->name[g->n], PATH_MAX, fmt, ap);
	va_end(ap);
	if (n > 0 && n < PATH_MAX)
		g->n++;
}

/* The files git reads besides the repository's (git-config(1),
 * gitignore(5), gitattributes(5)), one by one: not the directories,
 * where the credentials are (~/.config/git/credentials). The excludes
 * and attributes files the user's own configuration names, not the
 * repository's (a file the agent could name there would be read). */
static void bound_git_files(struct git_files *g)
{
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	static const char *const keys[] = {"core.excludesfile",
					   "core.attributesfile"};
	static const char *const xdg_files[] = {"config", "ignore",
						"attributes"};
	git_config *cfg = NULL;
	git_buf v = GIT_BUF_INIT;

	git_file(g, "/etc/gitconfig");
	git_file(g, "/etc/gitattributes");
	if (home && *home)
		git_file(g, "%s/.gitconfig", home);
	for (size_t i = 0; i < 3; i++)
		if (xdg && *xdg)
			git_file(g, "%s/git/%s", xdg, xdg_files[i]);
		else if (home && *home)
			git_file(g, "%s/.config/git/%s", home, xdg_files[i]);
	if (git_config_open_default(&cfg))
		return;
	for (size_t i = 0; i < 2; i++) {
		if (!git_config_get_path(&v, cfg, keys[i]))
			git_file(g, "%s", v.ptr);
		git_buf_dispose(&v);
	}
	git_config_free(cfg);
}

/* The ruleset of a walk that writes the trees rw and reads the trees ro
 * (two at most; each NULL-ended) and git's own files: an fd or -errno. */
static int walk_ruleset(const char *const *rw, const char *const *ro)
{
	struct git_files *g = calloc(1, sizeof(*g));
	const char *reads[GIT_FILES + 3];
	size_t n = 0;
	int rs;

	if (!g)
		return -ENOMEM;
	for (size_t i = 0; ro[i] && n < 2; i++)
		reads[n++] = ro[i];
	bound_git_files(g);
	for (size_t i = 0; i < g->n; i++)
		reads[n++] = g->name[i];
	reads[n] = NULL;
	rs = hx_confine_prepare(rw, reads);
	free(g);
	return rs;
}

/* A repository handle on the common dir whose working tree is wt and
 * whose index is the file at index_path (never the repository's own). */
static int open_private(const char *commondir, const char *wt,
			const char *index_path, git_repository **repo,
			git_index **idx, char *err, size_t errlen)
{
	int e;

	*repo = NULL;
	*idx = NULL;
	e = git_repository_open_ext(repo, commondir,
				    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (!e)
		e = git_repository_set_workdir(*repo, wt, 0);
	if (!e)
		e = git_index_open(idx, index_path);
	if (!e)
		e = git_repository_set_index(*repo, *idx);
	if (e) {
		ERR("cannot open %s for %s: %s", commondir, wt, hx_git_err());
		git_index_free(*idx);
		git_repository_free(*repo);
		*idx = NULL;
		*repo = NULL;
		return hx_git_errno(e);
	}
	return 0;
}

/* c's walks confined: new objects and the private index written, the
 * git dir (the tree beneath it, config, excludes, packs) read; and the
 * configuration read once, here (a file of it rewritten later is a new
 * inode, which the ruleset made now does not hold). */
static int confine_walks(struct hx_ckpt *c, const char *commondir,
			 const char *index_path, char *err, size_t errlen)
{
	const char *slash = strrchr(index_path, '/');
	char objects[PATH_MAX], idir[PATH_MAX];
	const char *rw[] = {objects, idir, NULL},
		   *ro[] = {commondir, c->wt, NULL};
	git_config *snap = NULL;
	int e;

	snprintf(objects, sizeof(objects), "%s/objects", commondir);
	snprintf(idir, sizeof(idir), "%.*s",
		 slash ? (int)(slash - index_path) : 1,
		 slash ? index_path : ".");
	if ((e = git_repository_config_snapshot(&snap, c->repo)) ||
	    (e = git_repository_set_config(c->repo, snap))) {
		git_config_free(snap);
		ERR("configuration of %s: %s", commondir, hx_git_err());
		return hx_git_errno(e);
	}
	git_config_free(snap);
	if ((c->walk_rs = walk_ruleset(rw, ro)) < 0) {
		e = c->walk_rs;
		ERR("the walks' confinement: %s", strerror(-e));
		return e;
	}
	return 0;
}

int hx_ckpt_open(const char *commondir, const char *wt, const char *session,
		 const char *index_path, const char *seed_index,
		 const char *base_hex, bool confined, struct hx_ckpt **out,
		 char *err, size_t errlen)
{
	const char *slash = strrchr(index_path, '/');
	struct hx_ckpt *c;
	int e;

	*out = NULL;
	if (hx_git_init())
		return -EIO;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	snprintf(c->session, sizeof(c->session), "%s", session);
	snprintf(c->wt, sizeof(c->wt), "%s", wt);
	if (git_oid_fromstr(&c->parent, base_hex)) {
		ERR("bad base commit id %s", base_hex);
		free(c);
		return -EINVAL;
	}
	/* The index in a directory of its own (made here): the confined
	 * walk writes there, and nothing else of the session's is there. */
	if (slash && slash > index_path) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - index_path),
			 index_path);
		if (mkdir(dir, 0700) && (e = -errno) != -EEXIST) {
			ERR("%s: %s", dir, strerror(-e));
			free(c);
			return e;
		}
	}
	/* The worktree's index was written by the checkout: its stat data
	 * spares hashing every file at checkpoint 0. A copy, so that our
	 * writes never reach the agent's index. */
	if (seed_index && copy_file(seed_index, index_path))
		unlink(index_path);
	c->walk_rs = -1;
	e = open_private(commondir, wt, index_path, &c->repo, &c->idx, err,
			 errlen);
	if (!e && confined)
		e = confine_walks(c, commondir, index_path, err, errlen);
	if (e) {
		hx_ckpt_free(c);
		return e;
	}
	*out = c;
	return 0;
}

static int signature(git_repository *repo, git_signature **sig)
{
	if (!git_signature_default(sig, repo))
		return 0;
	return git_signature_now(sig, "harness", "harness@localhost");
}

static size_t count_changes(git_repository *repo, const git_oid *a,
			    const git_oid *b)
{
	git_tree *ta = NULL, *tb = NULL;
	git_diff *d = NULL;
	size_t n = 0;

	if (!git_tree_lookup(&ta, repo, a) && !git_tree_lookup(&tb, repo, b) &&
	    !git_diff_tree_to_tree(&d, repo, ta, tb, NULL))
		n = git_diff_num_deltas(d);
	git_diff_free(d);
	git_tree_free(ta);
	git_tree_free(tb);
	return n;
}

struct walk {
	const char *wt;
	struct hx_ckpt_info *info; /* NULL: not named */
};

/* add_all's look at each path before it is hashed: a regular file past
 * HX_CKPT_FILE_MAX is skipped (1), and named. */
static int skip_large(const char *path, const char *matched, void *payload)
{
	struct walk *w = payload;
	struct hx_ckpt_info *info = w->info;
	char full[2 * PATH_MAX];
	struct stat st;

	(void)matched;
	snprintf(full, sizeof(full), "%s/%s", w->wt, path);
	if (lstat(full, &st) || !S_ISREG(st.st_mode) ||
	    (unsigned long long)st.st_size <= HX_CKPT_FILE_MAX)
		return 0;
	if (info && info->ntoo_large < HX_CKPT_NAMED) {
		struct hx_ckpt_big *b = &info->too_large[info->ntoo_large];

		snprintf(b->path, sizeof(b->path), "%s", path);
		b->size = (unsigned long long)st.st_size;
	}
	if (info)
		info->ntoo_large++;
	return 1;
}

/* The tree's snapshot (on a confined thread with c->walk_rs: confine.h):
 * add_all is `git add -A` (one walk: it also drops deleted files;
 * test_worktree checks it): new, modified and deleted files, not the
 * ignored ones; unchanged files are judged by their stat data (racily
 * clean ones are rehashed, as git does); a file too large is skipped.
 * Writing the private index moves its timestamp on, which is what
 * libgit2's racy-git check compares file times against. */
static int snapshot(void *arg, void *reply)
{
	struct hx_ckpt *c = arg;
	struct snap *s = reply;
	struct hx_ckpt_info info = {0};
	struct walk walk = {c->wt, &info};
	int e;

	e = git_index_add_all(c->idx, NULL, GIT_INDEX_ADD_DEFAULT, skip_large,
			      &walk);
	if (!e)
		e = git_index_write_tree(&s->tree, c->idx);
	if (e) {
		snprintf(s->err, sizeof(s->err), "snapshot of the worktree: %s",
			 hx_git_err());
		return hx_git_errno(e);
	}
	s->ntoo_large = info.ntoo_large;
	memcpy(s->too_large, info.too_large, sizeof(s->too_large));
	git_index_write(c->idx);
	return 0;
}

/* snapshot(), on this thread or on a confined one. */
static int walk_tree(struct hx_ckpt *c, git_oid *tree,
		     struct hx_ckpt_info *info, char *err, size_t errlen)
{
	struct snap s = {0};
	int r = c->walk_rs >= 0 ? hx_confine_run(c->walk_rs, snapshot, c, &s)
				: snapshot(c, &s);

	if (r && s.err[0])
		ERR("%s", s.err);
	else if (r)
		ERR("snapshot of the worktree, confined: %s", strerror(-r));
	if (r)
		return r;
	*tree = s.tree;
	info->ntoo_large = s.ntoo_large;
	memcpy(info->too_large, s.too_large, sizeof(info->too_large));
	return 0;
}

int hx_ckpt_take(struct hx_ckpt *c, const char *subject, const char *body,
		 bool force, struct hx_ckpt_info *info, char *err,
		 size_t errlen)
{
	git_oid tree_id, commit_id, base_tree;
	git_tree *tree = NULL;
	git_commit *parent = NULL;
	git_signature *sig = NULL;
	git_reference *ref = NULL;
	struct timespec t0;
	char refname[256], *msg = NULL;
	int e, r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(info, 0, sizeof(*info));
	if ((r = walk_tree(c, &tree_id, info, err, errlen)))
		return r;
	info->too_large_news =
	    info->ntoo_large != c->said_n ||
	    memcmp(info->too_large, c->said, sizeof(c->said));
	c->said_n = info->ntoo_large;
	memcpy(c->said, info->too_large, sizeof(c->said));
	if (c->have_last && !force && git_oid_equal(&tree_id, &c->last_tree)) {
		size_t big = info->ntoo_large;
		bool news = info->too_large_news;
		struct hx_ckpt_big named[HX_CKPT_NAMED];

		memcpy(named, info->too_large, sizeof(named));
		*info = c->last;
		info->ntoo_large = big;
		info->too_large_news = news;
		memcpy(info->too_large, named, sizeof(named));
		info->created = false;
		info->changed = 0;
		info->ms = ms_since(&t0);
		return 0;
	}
	e = git_commit_lookup(&parent, c->repo, &c->parent);
	if (!e)
		e = git_tree_lookup(&tree, c->repo, &tree_id);
	if (!e)
		e = signature(c->repo, &sig);
	if (e) {
		ERR("checkpoint: %s", hx_git_err());
		r = hx_git_errno(e);
		goto out;
	}
	if (asprintf(&msg, "%s\n\n%s", subject, body ? body : "") < 0) {
		r = -ENOMEM;
		goto out;
	}
	e = git_commit_create(&commit_id, c->repo, NULL, sig, sig, "UTF-8", msg,
			      tree, 1, (const git_commit **)&parent);
	if (e) {
		ERR("checkpoint commit: %s", hx_git_err());
		r = hx_git_errno(e);
		goto out;
	}
	hx_session_checkpoint_ref(c->session, c->next, refname,
				  sizeof(refname));
	for (int i = 0;; i++) {
		e = git_reference_create(&ref, c->repo, refname, &commit_id, 0,
					 NULL);
		if (!hx_git_retryable(e) || !hx_git_backoff(i))
			break;
	}
	if (e) {
		ERR("checkpoint ref %s: %s", refname, hx_git_err());
		r = hx_git_errno(e);
		goto out;
	}
	base_tree = *git_commit_tree_id(parent);
	info->n = c->next++;
	info->created = true;
	info->changed = count_changes(
	    c->repo, c->have_last ? &c->last_tree : &base_tree, &tree_id);
	git_oid_tostr(info->commit, sizeof(info->commit), &commit_id);
	git_oid_tostr(info->tree, sizeof(info->tree), &tree_id);
	c->parent = commit_id;
	c->last_tree = tree_id;
	c->have_last = true;
	info->ms = ms_since(&t0);
	c->last = *info;
out:
	free(msg);
	git_reference_free(ref);
	git_signature_free(sig);
	git_tree_free(tree);
	git_commit_free(parent);
	return r;
}

json_t *hx_ckpt_too_large_json(const struct hx_ckpt_info *info)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < info->ntoo_large && i < HX_CKPT_NAMED;
	     i++) {
		json_t *o = json_object();

		hx_git_json_path(o, "path", info->too_large[i].path);
		json_object_set_new(
		    o, "size",
		    json_integer((json_int_t)info->too_large[i].size));
		json_array_append_new(a, o);
	}
	return a;
}

bool hx_ckpt_last(const struct hx_ckpt *c, struct hx_ckpt_info *info)
{
	if (!c || !c->have_last)
		return false;
	*info = c->last;
	return true;
}

void hx_ckpt_forget(struct hx_ckpt *c)
{
	if (c)
		git_index_clear(c->idx);
}

void hx_ckpt_free(struct hx_ckpt *c)
{
	if (!c)
		return;
	git_index_free(c->idx);
	git_repository_free(c->repo);
	if (c->walk_rs >= 0)
		close(c->walk_rs);
	free(c);
}

/* A restore's work on the tree, on this thread or on a confined one. */
struct restore {
	git_repository *repo;
	git_index *idx;
	git_object *target;
	const char *wt, *refname;
};

static int restore_tree(void *arg, void *reply)
{
	struct restore *rs = arg;
	char *err = reply;
	size_t errlen = 512;
	git_checkout_options co;
	struct walk walk = {rs->wt, NULL};
	int e;

	/* An index of the tree as it is now is the baseline: whatever is
	 * in it and not in the checkpoint gets removed. */
	e = git_index_add_all(rs->idx, NULL, GIT_INDEX_ADD_DEFAULT, skip_large,
			      &walk);
	if (!e)
		e = git_index_update_all(rs->idx, NULL, skip_large, &walk);
	if (e) {
		ERR("reading %s: %s", rs->wt, hx_git_err());
		return hx_git_errno(e);
	}
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE |
			       GIT_CHECKOUT_REMOVE_UNTRACKED |
			       GIT_CHECKOUT_DONT_WRITE_INDEX;
	co.baseline_index = rs->idx;
	e = git_checkout_tree(rs->repo, rs->target, &co);
	if (e) {
		ERR("checkout of %s into %s: %s", rs->refname, rs->wt,
		    hx_git_err());
		return hx_git_errno(e);
	}
	return 0;
}

/* restore_tree confined to the tree, the git dir's objects and the
 * temporary index's directory tmp, when this kernel can (a restore
 * while the session runs races with the agent, who may swap a
 * directory of the tree for a symlink). */
static int restore_confined(struct restore *rs, const char *commondir,
			    const char *tmp, char *err, size_t errlen)
{
	char objects[PATH_MAX], reply[512] = "";
	const char *rw[] = {rs->wt, objects, tmp, NULL},
		   *ro[] = {commondir, NULL};
	int r, ruleset;

	if (!hx_confine_available())
		return restore_tree(rs, err);
	snprintf(objects, sizeof(objects), "%s/objects", commondir);
	if ((ruleset = walk_ruleset(rw, ro)) < 0)
		r = ruleset;
	else
		r = hx_confine_run(ruleset, restore_tree, rs, reply);
	if (ruleset >= 0)
		close(ruleset);
	if (r)
		ERR("%s", reply[0] ? reply : strerror(-r));
	return r;
}

int hx_ckpt_restore(const char *commondir, const char *wt, const char *session,
		    unsigned n, const char *commit, char *err, size_t errlen)
{
	char refname[256], tmpl[] = "/tmp/harness-restore-XXXXXX", ipath[64];
	struct restore rs = {.wt = wt, .refname = refname};
	int r, fd;

	if (hx_git_init())
		return -EIO;
	/* the commit the session recorded, not the ref (wtstate.h) */
	snprintf(refname, sizeof(refname), "%.40s", commit ? commit : "");
	if (!mkdtemp(tmpl))
		return -errno;
	snprintf(ipath, sizeof(ipath), "%s/index", tmpl);
	r = open_private(commondir, wt, ipath, &rs.repo, &rs.idx, err, errlen);
	if (!r && (!refname[0] ||
		   git_revparse_single(&rs.target, rs.repo, refname))) {
		ERR("session %s has no checkpoint %u", session, n);
		r = -ENOENT;
	}
	if (!r)
		r = restore_confined(&rs, commondir, tmpl, err, errlen);
	git_object_free(rs.target);
	git_index_free(rs.idx);
	git_repository_free(rs.repo);
	unlink(ipath);
	fd = rmdir(tmpl);
	(void)fd;
	return r;
}
