/* --worktree sessions; see worktree.h and docs/worktrees.md. */
#define _GNU_SOURCE
#include "supervisor/git/worktree.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy/policy.h"
#include "common/glob.h"
#include "supervisor/audit.h"
#include "supervisor/git/checkpoint.h"
#include "supervisor/control.h"
#include "supervisor/fmt.h"
#include "supervisor/git/gitutil.h"
#include "supervisor/git/manifest.h"
#include "supervisor/pipeline.h"
#include "supervisor/git/provenance.h"
#include "supervisor/git/objfix.h"
#include "supervisor/git/wtrefs.h"
#include "supervisor/server.h"
#include "supervisor/session.h"
#include "supervisor/sha256.h"
#include "supervisor/git/wtfiles.h"
#include "supervisor/git/wtstate.h"
#include "supervisor/say.h"
#include "supervisor/record.h"
#include "supervisor/redact.h"

#define MAX_GLOBS 400
#define GLOB_LEN  (2 * PATH_MAX + 64)

struct hx_worktree {
	struct hx_worktree_opts o;
	char session[HX_SESSION_ID_MAX + 1];
	char session_dir[PATH_MAX];
	char user_cwd[PATH_MAX];
	char workdir[PATH_MAX];	  /* the user's checkout root */
	char commondir[PATH_MAX]; /* no trailing slash */
	char path[PATH_MAX];	  /* the worktree */
	char cwd[PATH_MAX];	  /* the agent's start dir inside it */
	char branch[128];	  /* refs/heads/harness/<session> */
	char base[41];
	char *deny[MAX_GLOBS], *allow[MAX_GLOBS];
	size_t ndeny, nallow;
	struct hx_wtstate st;
	struct hx_pipeline *pl;
	struct hx_ckpt *ck;
	struct hx_prov *prov;
	struct hx_control *ctl;
	char *manifest;
	char manifest_sha[65];
	char final_tree[41];
	unsigned final_n;
	bool started, finishing, finished;
	size_t forged; /* loose objects removed at the end (objfix.h) */
	/* --copy-untracked's copies, relative: judged once the policy is
	 * known (drop_unreadable_copies) */
	char **copied;
	size_t ncopied;
};

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)

static void strip_slash(char *p)
{
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
}

/* --- policy globs ----------------------------------------------------- */

static int add_glob(char **list, size_t *n, const char *ecommon,
		    const char *suffix)
{
	if (*n >= MAX_GLOBS)
		return -ENOSPC;
	if (asprintf(&list[*n], "%s/%s", ecommon, suffix) < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* Appends to buf the glob-escaped first n bytes of t. */
static size_t esc_n(char *buf, size_t size, const char *t, size_t n)
{
	size_t o = strlen(buf);

	for (size_t i = 0; i < n && o + 3 < size; i++) {
		if (strchr("\\*?[]", t[i]))
			buf[o++] = '\\';
		buf[o++] = t[i];
	}
	buf[o] = '\0';
	return o;
}

/* Denies every entry of dir/ but <session> and <session>.lock: globs
 * have no "except", so name each way a name can differ from them
 * (diverging at byte k, being a proper prefix, being longer). */
static int deny_others(struct hx_worktree *w, const char *ec, const char *dir)
{
	char t[HX_SESSION_ID_MAX + 8], buf[512];
	size_t tl, sl = strlen(w->session);
	int r = 0;

	snprintf(t, sizeof(t), "%s.lock", w->session);
	tl = strlen(t);
	for (size_t k = 0; !r && k < tl; k++) {
		snprintf(buf, sizeof(buf), "%s/", dir);
		esc_n(buf, sizeof(buf), t, k);
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 "[!\\%c]*/**", t[k]);
		r = add_glob(w->deny, &w->ndeny, ec, buf);
		if (!r && k && k != sl) {
			snprintf(buf, sizeof(buf), "%s/", dir);
			esc_n(buf, sizeof(buf), t, k);
			strcat(buf, "/**");
			r = add_glob(w->deny, &w->ndeny, ec, buf);
		}
	}
	snprintf(buf, sizeof(buf), "%s/", dir);
	esc_n(buf, sizeof(buf), t, tl);
	strcat(buf, "?*/**");
	if (!r)
		r = add_glob(w->deny, &w->ndeny, ec, buf);
	/* Nothing below the branch itself (a ref cannot be a directory). */
	snprintf(buf, sizeof(buf), "%s/", dir);
	esc_n(buf, sizeof(buf), t, sl);
	strcat(buf, "/?*/**");
	if (!r)
		r = add_glob(w->deny, &w->ndeny, ec, buf);
	return r;
}

/* What the agent's git may write in the common dir, and what it may
 * not. deny > allow, so the deny list may overlap the allow list. */
static int build_globs(struct hx_worktree *w)
{
	static const char *const deny[] = {
	    "hooks/**",
	    "config*",
	    "info/**",
	    "HEAD",
	    "HEAD.lock",
	    "packed-refs*",
	    "refs/harness/**",
	    "refs/notes/**",
	    "refs/tags/**",
	    "refs/remotes/**",
	    "refs/stash*",
	    "refs/heads/harness",
	    "refs/heads/harness?*/**",
	    "modules/**/hooks/**",
	    "modules/**/config*",
	    "shallow*",
	    "FETCH_HEAD",
	    "ORIG_HEAD",
	    "logs/HEAD",
	};
	static const char word[] = "harness";
	char ec[PATH_MAX + 64], buf[512];
	int r = 0;

	if (hx_glob_escape(w->commondir, ec, sizeof(ec)))
		return -ENAMETOOLONG;
	for (size_t i = 0; !r && i < sizeof(deny) / sizeof(deny[0]); i++)
		r = add_glob(w->deny, &w->ndeny, ec, deny[i]);
	/* refs/heads/ other than harness/: no glob "except", so spell
	 * "every first segment that is not harness" out, letter by letter:
	 * [!h]*, h[!a]*, ... and the proper prefixes h, ha, ... themselves. */
	for (size_t k = 0; !r && k < sizeof(word) - 1; k++) {
		snprintf(buf, sizeof(buf), "refs/heads/%.*s[!%c]*/**", (int)k,
			 word, word[k]);
		r = add_glob(w->deny, &w->ndeny, ec, buf);
		if (!r && k) {
			snprintf(buf, sizeof(buf), "refs/heads/%.*s/**", (int)k,
				 word);
			r = add_glob(w->deny, &w->ndeny, ec, buf);
		}
	}
	/* The worktree's own git dir, except what would redirect it. */
	snprintf(buf, sizeof(buf), "worktrees/%s/config*", w->session);
	if (!r)
		r = add_glob(w->deny, &w->ndeny, ec, buf);
	snprintf(buf, sizeof(buf), "worktrees/%s/commondir", w->session);
	if (!r)
		r = add_glob(w->deny, &w->ndeny, ec, buf);
	snprintf(buf, sizeof(buf), "worktrees/%s/gitdir", w->session);
	if (!r)
		r = add_glob(w->deny, &w->ndeny, ec, buf);

	if (!r)
		r = deny_others(w, ec, "refs/heads/harness");
	if (!r)
		r = deny_others(w, ec, "logs/refs/heads/harness");
	if (!r)
		r = add_glob(w->allow, &w->nallow, ec, "objects/**");
	snprintf(buf, sizeof(buf), "worktrees/%s/**", w->session);
	if (!r)
		r = add_glob(w->allow, &w->nallow, ec, buf);
	/* Whole directories, so that Landlock (which derives its write
	 * roots from these rules) can grant the lock-and-rename of the
	 * branch; deny_others keeps the shim exact. */
	if (!r)
		r = add_glob(w->allow, &w->nallow, ec, "refs/heads/harness/**");
	if (!r)
		r = add_glob(w->allow, &w->nallow, ec,
			     "logs/refs/heads/harness/**");
	return r;
}

void hx_worktree_policy_vars(const struct hx_worktree *w,
			     struct hx_policy_vars *v)
{
	if (!w)
		return;
	v->worktree = w->path;
	v->write_deny = (const char *const *)w->deny;
	v->nwrite_deny = w->ndeny;
	v->write_allow = (const char *const *)w->allow;
	v->nwrite_allow = w->nallow;
}

/* --- creation --------------------------------------------------------- */

static int remember_copy(struct hx_worktree *w, const char *rel)
{
	char **v = realloc(w->copied, (w->ncopied + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	w->copied = v;
	if (!(v[w->ncopied] = strdup(rel)))
		return -ENOMEM;
	w->ncopied++;
	return 0;
}

/* The copies the policy does not let the agent read (an untracked .env)
 * go again before checkpoint 0: a checkpoint would put them in objects
 * the agent reads with git show, and the result branch would carry them.
 * The worktree is made before the policy is loaded ($WORKTREE). */
static void drop_unreadable_copies(struct hx_worktree *w)
{
	char full[2 * PATH_MAX];

	for (size_t i = 0; i < w->ncopied; i++) {
		struct hx_event ev = {.op = HX_OP_READ, .path = full};
		struct hx_decision d;

		snprintf(full, sizeof(full), "%s/%s", w->path, w->copied[i]);
		hx_policy_decide(w->pl->policy, &ev, &d);
		if (d.verdict == HX_VERDICT_ALLOW)
			continue;
		if (unlink(full) && errno != ENOENT)
			hx_say("--copy-untracked: cannot take back %s: %s",
			       full, strerror(errno));
		else if (!w->o.quiet)
			hx_say("--copy-untracked: %s not copied: the policy "
			       "denies reading it (rule %s)",
			       w->copied[i], d.rule);
	}
}

/* Untracked files (not ignored ones) of the user's checkout into the
 * worktree. Read-only on the user's side: status without index update. */
static int copy_untracked(git_repository *user, struct hx_worktree *w,
			  char *err, size_t errlen)
{
	git_status_options so;
	git_status_list *sl = NULL;
	char from[2 * PATH_MAX], to[2 * PATH_MAX];
	size_t n;
	int e, r = 0;

	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.show = GIT_STATUS_SHOW_WORKDIR_ONLY;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED |
		   GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
		   GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	e = git_status_list_new(&sl, user, &so);
	if (e) {
		ERR("--copy-untracked: %s", hx_git_err());
		return hx_git_errno(e);
	}
	n = git_status_list_entrycount(sl);
	for (size_t i = 0; i < n && !r; i++) {
		const git_status_entry *s = git_status_byindex(sl, i);

		if (!(s->status & GIT_STATUS_WT_NEW) || !s->index_to_workdir)
			continue;
		snprintf(from, sizeof(from), "%s/%s", w->workdir,
			 s->index_to_workdir->new_file.path);
		snprintf(to, sizeof(to), "%s/%s", w->path,
			 s->index_to_workdir->new_file.path);
		r = hx_wtfiles_copy(from, to);
		if (r)
			ERR("--copy-untracked: %s: %s", from, strerror(-r));
		else
			r = remember_copy(w,
					  s->index_to_workdir->new_file.path);
	}
	git_status_list_free(sl);
	return r;
}

static void remove_worktree(const char *commondir, const char *name,
			    const char *path)
{
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	git_repository *repo = NULL;
	git_worktree *wt = NULL;

	if (path[0])
		hx_rmtree(path);
	if (git_repository_open_ext(&repo, commondir,
				    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL))
		return;
	po.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED;
	if (!git_worktree_lookup(&wt, repo, name))
		git_worktree_prune(wt, &po);
	git_worktree_free(wt);
	git_repository_free(repo);
}

static int resolve_base(git_repository *repo, const char *base,
			git_commit **out, char *err, size_t errlen)
{
	git_object *obj = NULL, *peeled = NULL;
	int e;

	e = git_revparse_single(&obj, repo, base ? base : "HEAD");
	if (!e)
		e = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (e) {
		if (base)
			ERR("--base '%s' names no commit", base);
		else
			ERR("HEAD names no commit (a repository without "
			    "commits?); use --base REF");
		return -EINVAL;
	}
	*out = (git_commit *)peeled;
	return 0;
}

int hx_worktree_open(const struct hx_worktree_opts *o, struct hx_worktree **out,
		     char *err, size_t errlen)
{
	git_worktree_add_options ao;
	git_repository *user = NULL;
	git_reference *branch = NULL;
	git_worktree *gwt = NULL;
	git_commit *base = NULL;
	struct hx_worktree *w;
	char real_cwd[PATH_MAX], parent[PATH_MAX + 32];
	const char *rel;
	bool made_branch = false, made_wt = false;
	int e, r = 0;

	*out = NULL;
	if (hx_git_init()) {
		ERR("libgit2 initialization failed");
		return -EIO;
	}
	git_worktree_add_options_init(&ao, GIT_WORKTREE_ADD_OPTIONS_VERSION);
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->o = *o;
	snprintf(w->session, sizeof(w->session), "%s", o->session);
	snprintf(w->session_dir, sizeof(w->session_dir), "%s", o->session_dir);
	snprintf(w->user_cwd, sizeof(w->user_cwd), "%s", o->cwd);
	w->o.session = w->session;
	w->o.session_dir = w->session_dir;
	w->o.cwd = w->user_cwd;
	w->o.base = NULL;
	e = git_repository_open_ext(&user, o->cwd, 0, NULL);
	if (e == GIT_ENOTFOUND) {
		ERR("--worktree: %s is not inside a git repository", o->cwd);
		r = -EINVAL;
		goto fail;
	}
	if (e) {
		ERR("--worktree: %s: %s", o->cwd, hx_git_err());
		r = -EINVAL;
		goto fail;
	}
	if (git_repository_is_bare(user) || !git_repository_workdir(user)) {
		ERR("--worktree: %s is a bare repository; run from a "
		    "checkout",
		    git_repository_path(user));
		r = -EINVAL;
		goto fail;
	}
	if (!realpath(git_repository_commondir(user), w->commondir) ||
	    !realpath(git_repository_workdir(user), w->workdir) ||
	    !realpath(o->cwd, real_cwd)) {
		ERR("--worktree: %s", strerror(errno));
		r = -errno;
		goto fail;
	}
	strip_slash(w->commondir);
	strip_slash(w->workdir);
	r = resolve_base(user, o->base, &base, err, errlen);
	if (r)
		goto fail;
	git_oid_tostr(w->base, sizeof(w->base), git_commit_id(base));
	snprintf(w->branch, sizeof(w->branch), "refs/heads/harness/%s",
		 w->session);
	if ((size_t)snprintf(w->path, sizeof(w->path),
			     "%s/harness/worktrees/%s", w->commondir,
			     w->session) >= sizeof(w->path)) {
		r = -ENAMETOOLONG;
		ERR("--worktree: path too long");
		goto fail;
	}
	snprintf(parent, sizeof(parent), "%s/harness/worktrees", w->commondir);
	r = hx_wtfiles_mkdirs(parent, 0700);
	/* libgit2 fails when it finds <common>/worktrees made by a
	 * concurrent session between its check and its mkdir: make it
	 * ourselves first, so both sessions see it existing. */
	if (!r) {
		snprintf(parent, sizeof(parent), "%s/worktrees", w->commondir);
		r = hx_wtfiles_mkdirs(parent, 0755);
	}
	if (r) {
		ERR("--worktree: cannot create %s: %s", parent, strerror(-r));
		goto fail;
	}
	for (int i = 0;; i++) {
		e = git_branch_create(&branch, user, w->branch + 11, base, 0);
		if (!hx_git_retryable(e) || !hx_git_backoff(i))
			break;
	}
	if (e) {
		ERR("--worktree: cannot create branch %s: %s", w->branch + 11,
		    hx_git_err());
		r = hx_git_errno(e);
		goto fail;
	}
	made_branch = true;
	ao.ref = branch;
	ao.checkout_options.checkout_strategy = GIT_CHECKOUT_FORCE;
	e = git_worktree_add(&gwt, user, w->session, w->path, &ao);
	if (e) {
		ERR("--worktree: cannot add worktree %s: %s", w->path,
		    hx_git_err());
		r = hx_git_errno(e);
		goto fail;
	}
	made_wt = true;
	/* Mirror the subdirectory the user was in. */
	rel = real_cwd + strlen(w->workdir);
	if (strncmp(real_cwd, w->workdir, strlen(w->workdir)) ||
	    (*rel && *rel != '/'))
		rel = "";
	snprintf(w->cwd, sizeof(w->cwd), "%s%s", w->path, rel);
	r = hx_wtfiles_mkdirs(w->cwd, 0755);
	if (r) {
		ERR("--worktree: cannot create %s: %s", w->cwd, strerror(-r));
		goto fail;
	}
	if (o->copy_untracked) {
		r = copy_untracked(user, w, err, errlen);
		if (r)
			goto fail;
	}
	r = build_globs(w);
	if (r) {
		ERR("--worktree: policy rules: %s", strerror(-r));
		goto fail;
	}
	git_worktree_free(gwt);
	git_reference_free(branch);
	git_commit_free(base);
	git_repository_free(user);
	*out = w;
	return 0;
fail:
	git_worktree_free(gwt);
	if (made_wt)
		remove_worktree(w->commondir, w->session, w->path);
	if (made_branch && branch)
		git_branch_delete(branch);
	git_reference_free(branch);
	git_commit_free(base);
	git_repository_free(user);
	hx_worktree_free(w);
	return r ? r : -EIO;
}

const char *hx_worktree_path(const struct hx_worktree *w)
{
	return w->path;
}

const char *hx_worktree_cwd(const struct hx_worktree *w)
{
	return w->cwd;
}

/* --- checkpoints during the run ---------------------------------------- */

static void now_text(char *buf, size_t size)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	hx_fmt_time(&ts, buf, size);
}

/* A checkpoint left files out (too large): a record, when the files
 * left out are not the ones the last record named. */
static void say_too_large(struct hx_worktree *w, const char *trigger,
			  const struct hx_ckpt_info *info)
{
	json_t *rec;

	if (!info->too_large_news ||
	    !(rec = hx_record_new(w->pl, NULL, "checkpoint_too_large", NULL)))
		return;
	hx_say("checkpoint: %zu file(s) over %llu bytes left out (%s...)",
	       info->ntoo_large, HX_CKPT_FILE_MAX, info->too_large[0].path);
	json_object_set_new(rec, "category", json_string("process"));
	json_object_set_new(rec, "trigger", json_string(trigger));
	json_object_set_new(rec, "count",
			    json_integer((json_int_t)info->ntoo_large));
	json_object_set_new(rec, "too_large", hx_ckpt_too_large_json(info));
	hx_record_append(w->pl, rec, NULL);
	json_decref(rec);
}

/* Takes a checkpoint; trigger names why, cause is the process whose end
 * caused it (0: none). Returns 0 or -errno; fills *info. */
static int checkpoint(struct hx_worktree *w, const char *trigger, pid_t cause,
		      bool force, struct hx_ckpt_info *info)
{
	json_t *who = cause ? hx_prov_process(w->prov, cause) : NULL;
	json_t *line, *rec;
	char body[8192], err[512], t[64], *whotext = NULL;
	int r;

	if (who)
		whotext = json_dumps(who, JSON_COMPACT | JSON_PRESERVE_ORDER);
	snprintf(body, sizeof(body),
		 "Harness-Session: %s\nHarness-Trigger: %s\n%s%s%s", w->session,
		 trigger, whotext ? "Harness-Cause: " : "",
		 whotext ? whotext : "", whotext ? "\n" : "");
	r = hx_ckpt_take(w->ck, "harness checkpoint", body, force, info, err,
			 sizeof(err));
	free(whotext);
	if (r) {
		hx_say("checkpoint: %s", err);
		json_decref(who);
		hx_record_error(w->pl, "checkpoint_failed", trigger, err);
		return r;
	}
	say_too_large(w, trigger, info);
	if (!info->created) {
		json_decref(who);
		return 0;
	}
	now_text(t, sizeof(t));
	line = json_object();
	json_object_set_new(line, "n", json_integer(info->n));
	json_object_set_new(line, "time", json_string(t));
	json_object_set_new(line, "trigger", json_string(trigger));
	json_object_set_new(line, "commit", json_string(info->commit));
	json_object_set_new(line, "tree", json_string(info->tree));
	json_object_set_new(line, "files_changed",
			    json_integer((json_int_t)info->changed));
	json_object_set_new(line, "cause",
			    who ? json_incref(who) : json_null());
	json_object_set_new(line, "ms", json_real(info->ms));
	hx_wtfiles_append_json(w->session_dir, "checkpoints.jsonl", line);
	json_decref(line);
	rec = hx_record_new(w->pl, NULL, "checkpoint", NULL);
	if (rec) {
		json_object_set_new(rec, "category", json_string("process"));
		json_object_set_new(rec, "n", json_integer(info->n));
		json_object_set_new(rec, "trigger", json_string(trigger));
		json_object_set_new(rec, "commit", json_string(info->commit));
		json_object_set_new(rec, "tree", json_string(info->tree));
		json_object_set_new(rec, "files_changed",
				    json_integer((json_int_t)info->changed));
		if (who)
			json_object_set(rec, "cause", who);
		hx_record_append(w->pl, rec, NULL);
		json_decref(rec);
	}
	json_decref(who);
	return 0;
}

static void on_record(void *arg, json_t *rec, uint64_t seq)
{
	struct hx_worktree *w = arg;

	hx_prov_observe(w->prov, rec, seq);
}

static void on_close(void *arg, int pid)
{
	struct hx_worktree *w = arg;
	struct hx_ckpt_info info;
	pid_t cause;

	if (w->finishing || !hx_prov_due(w->prov, (pid_t)pid, &cause))
		return;
	hx_prov_clear(w->prov);
	checkpoint(w, "process-exit", cause, false, &info);
}

static void on_control(void *arg, pid_t pid, const char *req, char *reply,
		       size_t size)
{
	struct hx_worktree *w = arg;
	struct hx_ckpt_info info;
	pid_t cause = hx_prov_last_writer(w->prov);
	size_t n = strcspn(req, "\r\n");

	(void)pid;
	if (n != 10 || strncmp(req, "checkpoint", 10)) {
		snprintf(reply, size, "error unknown request");
		return;
	}
	if (w->finishing) {
		snprintf(reply, size, "error the session is ending");
		return;
	}
	hx_prov_clear(w->prov);
	if (checkpoint(w, "control", cause, false, &info)) {
		snprintf(reply, size,
			 "error checkpoint failed (see the "
			 "session's stderr)");
		return;
	}
	snprintf(reply, size, "ok %u %s %s %zu", info.n,
		 info.created ? "created" : "unchanged", info.commit,
		 info.changed);
}

void hx_worktree_control(struct hx_worktree *w, const char *request,
			 char *reply, size_t size)
{
	on_control(w, 0, request, reply, size);
}

int hx_worktree_start(struct hx_worktree *w, struct hx_pipeline *pl,
		      struct hx_server *srv)
{
	char ipath[2 * PATH_MAX], seed[2 * PATH_MAX], err[512];
	struct hx_ckpt_info info;
	int r;

	w->pl = pl;
	drop_unreadable_copies(w);
	w->prov = hx_prov_new(w->path);
	if (!w->prov)
		return -ENOMEM;
	snprintf(ipath, sizeof(ipath), "%s/checkpoint/index", w->session_dir);
	snprintf(seed, sizeof(seed), "%s/worktrees/%s/index", w->commondir,
		 w->session);
	r = hx_ckpt_open(w->commondir, w->path, w->session, ipath, seed,
			 w->base, w->o.confine, &w->ck, err, sizeof(err));
	if (r) {
		hx_say("%s", err);
		return r;
	}
	r = checkpoint(w, "start", 0, true, &info);
	if (r)
		return r;
	w->started = true;
	pl->observe = on_record;
	pl->observe_arg = w;
	hx_server_on_close(srv, on_close, w);

	/* sun_path is short; a deep state dir falls back to the run dir,
	 * like the shim socket. */
	if ((size_t)snprintf(w->st.ctl, sizeof(w->st.ctl), "%s/control",
			     w->session_dir) >= sizeof(w->st.ctl))
		snprintf(w->st.ctl, sizeof(w->st.ctl), "%s/%s.control",
			 w->o.run_dir, w->session);
	r = hx_control_listen(srv, w->st.ctl, on_control, w, &w->ctl);
	if (r) {
		hx_say("control socket %s: %s", w->st.ctl, strerror(-r));
		w->st.ctl[0] = '\0';
	}
	snprintf(w->st.session, sizeof(w->st.session), "%s", w->session);
	snprintf(w->st.dir, sizeof(w->st.dir), "%s", w->session_dir);
	snprintf(w->st.repo, sizeof(w->st.repo), "%s", w->workdir);
	snprintf(w->st.commondir, sizeof(w->st.commondir), "%s", w->commondir);
	snprintf(w->st.worktree, sizeof(w->st.worktree), "%s", w->path);
	snprintf(w->st.branch, sizeof(w->st.branch), "%s", w->branch);
	snprintf(w->st.base, sizeof(w->st.base), "%s", w->base);
	snprintf(w->st.status, sizeof(w->st.status), "running");
	w->st.pid = getpid();
	w->st.pid_start = hx_proc_starttime(getpid());
	w->st.started = time(NULL);
	w->st.keep = w->o.keep;
	r = hx_wtstate_write(&w->st);
	if (r)
		hx_say("%s/%s: %s", w->session_dir, HX_WTSTATE_FILE,
		       strerror(-r));
	return 0;
}

/* --- the end ----------------------------------------------------------- */

void hx_worktree_finish(struct hx_worktree *w)
{
	struct hx_ckpt_info info;
	char path[PATH_MAX + 32], err[512];
	pid_t cause;
	int fd;

	if (!w || !w->started)
		return;
	w->finishing = true;
	cause = hx_prov_last_writer(w->prov);
	hx_prov_clear(w->prov);
	/* Loose objects planted under ids the tree names (objfix.h). */
	snprintf(path, sizeof(path), "%s/objects", w->commondir);
	if (w->pl && (w->forged = hx_objfix_sweep(path, &w->pl->started))) {
		hx_say("warning: %zu loose objects made during the session "
		       "did not hold what their names say: removed, the tree "
		       "written again",
		       w->forged);
		hx_ckpt_forget(w->ck);
	}
	if (checkpoint(w, "end", cause, false, &info) &&
	    !hx_ckpt_last(w->ck, &info))
		return;
	snprintf(w->final_tree, sizeof(w->final_tree), "%s", info.tree);
	w->final_n = info.n;
	if (hx_manifest_build(w->commondir, w->session, w->base, w->final_tree,
			      w->prov, &w->manifest, err, sizeof(err))) {
		hx_say("%s", err);
		return;
	}
	hx_sha256_hex(w->manifest, strlen(w->manifest), w->manifest_sha);
	snprintf(path, sizeof(path), "%s/manifest.json", w->session_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, w->manifest, strlen(w->manifest)) !=
			  (ssize_t)strlen(w->manifest))
		hx_say("%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	w->finished = true;
}

void hx_worktree_end_fields(const struct hx_worktree *w, json_t *rec)
{
	json_t *o;

	if (!w || !w->started)
		return;
	o = json_object();
	json_object_set_new(o, "path", json_string(w->path));
	json_object_set_new(o, "branch", json_string(w->branch));
	json_object_set_new(o, "base", json_string(w->base));
	if (w->final_tree[0]) {
		json_object_set_new(o, "tree", json_string(w->final_tree));
		json_object_set_new(o, "checkpoints",
				    json_integer(w->final_n + 1));
	}
	if (w->manifest_sha[0])
		json_object_set_new(o, "manifest_sha256",
				    json_string(w->manifest_sha));
	if (w->forged)
		json_object_set_new(o, "forged_objects",
				    json_integer((json_int_t)w->forged));
	json_object_set_new(rec, "worktree", o);
}

static char *result_message(const struct hx_worktree *w, const char *hash,
			    char *const *cmd, int ncmd, int code)
{
	json_t *a = json_array();
	char *argv_json, *msg = NULL, shown[200], *red;
	size_t o = 0;

	shown[0] = '\0';
	/* The command as session_start has it: a commit is pushed, and
	 * outlives the log. */
	for (int i = 0; i < ncmd; i++) {
		red = NULL;
		if (w->pl && w->pl->redact &&
		    hx_redact_argv(w->pl->redact, (const char *const *)cmd,
				   (size_t)i, &red) < 0)
			red = strdup(HX_REDACT_OPEN "unknown" HX_REDACT_CLOSE);
		json_array_append_new(a, json_string(red ? red : cmd[i]));
		if (o < sizeof(shown) - 1)
			o += (size_t)snprintf(shown + o, sizeof(shown) - o,
					      "%s%s", i ? " " : "",
					      red ? red : cmd[i]);
		free(red);
	}
	argv_json = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	if (o >= sizeof(shown) - 1)
		strcpy(shown + sizeof(shown) - 4, "...");
	if (asprintf(&msg,
		     "harness: %s\n\n"
		     "Result of harness session %s: the command exited with "
		     "status %d.\n"
		     "Checkpoints: refs/harness/%s/checkpoints/0..%u\n\n"
		     "Harness-Session: %s\n"
		     "Harness-Command: %s\n"
		     "Harness-Exit-Status: %d\n"
		     "Harness-Base: %s\n"
		     "Harness-Manifest-SHA256: %s\n"
		     "Harness-Audit-Hash: %s\n",
		     shown, w->session, code, w->session, w->final_n,
		     w->session, argv_json ? argv_json : "[]", code, w->base,
		     w->manifest_sha[0] ? w->manifest_sha : "none", hash) < 0)
		msg = NULL;
	free(argv_json);
	return msg;
}

/* With --keep-worktree the worktree's index follows the branch, so that
 * `git status` there is clean. */
static void reset_wt_index(struct hx_worktree *w, git_tree *tree)
{
	char path[2 * PATH_MAX];
	git_index *idx = NULL;

	snprintf(path, sizeof(path), "%s/worktrees/%s/index", w->commondir,
		 w->session);
	if (git_index_open(&idx, path))
		return;
	if (!git_index_read_tree(idx, tree))
		git_index_write(idx);
	git_index_free(idx);
}

int hx_worktree_result(struct hx_worktree *w, struct hx_audit *audit,
		       char *const *cmd, int ncmd, int code)
{
	git_repository *repo = NULL;
	git_reference *nr = NULL;
	git_commit *tip = NULL;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_oid tip_id, tree_id, result;
	char *msg = NULL, hex[41];
	bool cas = true;
	int e, r = 0;

	if (!w || !w->finished)
		return 0;
	/* The audit log is synced first: the hash we cite must be on disk. */
	hx_audit_sync(audit);
	msg = result_message(w, hx_audit_last_hash(audit), cmd, ncmd, code);
	if (!msg)
		return -ENOMEM;
	e = git_repository_open_ext(&repo, w->commondir,
				    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (!e && git_signature_default(&sig, repo))
		e = git_signature_now(&sig, "harness", "harness@localhost");
	if (!e)
		e = git_oid_fromstr(&tree_id, w->final_tree);
	if (!e)
		e = git_tree_lookup(&tree, repo, &tree_id);
	for (int i = 0; !e; i++) {
		/* The parent is the branch as it is now: the base, or the
		 * agent's own commits on it. */
		e = hx_wt_branch_tip(repo, w->branch, w->base, &tip_id, &cas);
		if (!e)
			e = git_commit_lookup(&tip, repo, &tip_id);
		if (!e)
			e = git_commit_create(&result, repo, NULL, sig, sig,
					      "UTF-8", msg, tree, 1,
					      (const git_commit **)&tip);
		git_commit_free(tip);
		tip = NULL;
		if (!e)
			e = git_reference_create_matching(
			    &nr, repo, w->branch, &result, 1,
			    cas ? &tip_id : NULL, "harness: session result");
		git_reference_free(nr);
		nr = NULL;
		if (!hx_git_retryable(e) || !hx_git_backoff(i))
			break;
	}
	if (e) {
		hx_say("result commit on %s: %s", w->branch, hx_git_err());
		r = hx_git_errno(e);
		goto out;
	}
	git_oid_tostr(hex, sizeof(hex), &result);
	if (w->manifest && hx_wt_add_note(repo, sig, &result, w->manifest))
		hx_say("manifest note: %s", hx_git_err());
	snprintf(w->st.result, sizeof(w->st.result), "%s", hex);
	if (w->o.keep)
		reset_wt_index(w, tree);
	if (!w->o.quiet)
		fprintf(stderr, "harness: result %s %s%s%s\n", w->branch + 11,
			hex, w->o.keep ? "; worktree kept at " : "",
			w->o.keep ? w->path : "");
out:
	if (!w->o.keep) {
		/* Out of the tree before removing it. */
		if (chdir(w->user_cwd))
			(void)!chdir("/");
		git_repository_free(repo);
		repo = NULL;
		remove_worktree(w->commondir, w->session, w->path);
	}
	snprintf(w->st.status, sizeof(w->st.status), "ended");
	w->st.ended = time(NULL);
	hx_wtstate_write(&w->st);
	git_signature_free(sig);
	git_tree_free(tree);
	git_repository_free(repo);
	free(msg);
	return r;
}

void hx_worktree_free(struct hx_worktree *w)
{
	git_repository *repo = NULL;
	git_reference *br = NULL;

	if (!w)
		return;
	hx_control_free(w->ctl);
	if (!w->started && w->commondir[0] && w->path[0] && w->branch[0]) {
		/* The session never ran: leave nothing behind. */
		if (chdir(w->user_cwd))
			(void)!chdir("/");
		remove_worktree(w->commondir, w->session, w->path);
		if (!git_repository_open_ext(&repo, w->commondir,
					     GIT_REPOSITORY_OPEN_NO_SEARCH,
					     NULL) &&
		    !git_reference_lookup(&br, repo, w->branch))
			git_reference_delete(br);
		git_reference_free(br);
		git_repository_free(repo);
	} else if (w->started && !w->st.ended && w->st.dir[0]) {
		snprintf(w->st.status, sizeof(w->st.status), "ended");
		w->st.ended = time(NULL);
		hx_wtstate_write(&w->st);
	}
	hx_ckpt_free(w->ck);
	hx_prov_free(w->prov);
	for (size_t i = 0; i < w->ndeny; i++)
		free(w->deny[i]);
	for (size_t i = 0; i < w->nallow; i++)
		free(w->allow[i]);
	for (size_t i = 0; i < w->ncopied; i++)
		free(w->copied[i]);
	free(w->copied);
	free(w->manifest);
	free(w);
}
