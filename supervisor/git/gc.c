/* harness-exec gc; see gc.h. */
#define _GNU_SOURCE
#include "supervisor/git/gc.h"

#include <dirent.h>
#include <errno.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/git/gitutil.h"
#include "supervisor/session.h"
#include "supervisor/git/wtstate.h"

struct gc_ctx {
	const struct hx_gc_opts *o;
	FILE *out, *err;
	int errors;
	time_t now;
};

/* Removes *.lock files directly in dir (not below). */
static void unlock_dir(struct gc_ctx *g, const char *dir)
{
	char p[PATH_MAX + 256];
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t n;

	if (!d)
		return;
	while ((de = readdir(d))) {
		n = strlen(de->d_name);
		if (n < 6 || strcmp(de->d_name + n - 5, ".lock"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (g->o->dry_run || !unlink(p))
			fprintf(g->out, "  %s stale lock %s\n",
				g->o->dry_run ? "would remove" : "removed", p);
	}
	closedir(d);
}

static void unlock_tree(struct gc_ctx *g, const char *dir, int depth)
{
	char p[PATH_MAX + 256];
	struct dirent *de;
	struct stat st;
	DIR *d;

	unlock_dir(g, dir);
	if (depth > 8 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (!lstat(p, &st) && S_ISDIR(st.st_mode))
			unlock_tree(g, p, depth + 1);
	}
	closedir(d);
}

/* The session's own lock files: its refs, its branch, its worktree's
 * git dir. Its harness-exec is gone, so nobody holds them. */
static void clear_locks(struct gc_ctx *g, const struct hx_wtstate *s)
{
	char p[PATH_MAX + 128];

	snprintf(p, sizeof(p), "%s/refs/harness/%s", s->commondir, s->session);
	unlock_tree(g, p, 0);
	snprintf(p, sizeof(p), "%s/refs/heads/harness/%s.lock", s->commondir,
		 s->session);
	if (!access(p, F_OK) && (g->o->dry_run || !unlink(p)))
		fprintf(g->out, "  removed stale lock %s\n", p);
	snprintf(p, sizeof(p), "%s/refs/notes/harness.lock", s->commondir);
	/* Shared by sessions: only when old enough to be nobody's. */
	{
		struct stat st;

		if (!stat(p, &st) && g->now - st.st_mtime > 600 &&
		    (g->o->dry_run || !unlink(p)))
			fprintf(g->out, "  removed stale lock %s\n", p);
	}
	snprintf(p, sizeof(p), "%s/worktrees/%s", s->commondir, s->session);
	unlock_dir(g, p);
}

static void delete_refs(struct gc_ctx *g, git_repository *repo,
			const struct hx_wtstate *s)
{
	git_reference_iterator *it = NULL;
	git_reference *ref;
	char glob[256];
	size_t n = 0;

	snprintf(glob, sizeof(glob), "refs/harness/%s/*", s->session);
	if (git_reference_iterator_glob_new(&it, repo, glob))
		return;
	while (!git_reference_next(&ref, it)) {
		if (!g->o->dry_run) {
			int e;

			for (int i = 0;; i++) {
				e = git_reference_delete(ref);
				if (!hx_git_retryable(e) || !hx_git_backoff(i))
					break;
			}
			if (e) {
				fprintf(g->err, "harness-exec gc: %s: %s\n",
					git_reference_name(ref), hx_git_err());
				g->errors++;
			} else {
				n++;
			}
		} else {
			n++;
		}
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
	if (n)
		fprintf(g->out, "  %s %zu refs under refs/harness/%s/\n",
			g->o->dry_run ? "would delete" : "deleted", n,
			s->session);
}

static void collect(struct gc_ctx *g, struct hx_wtstate *s)
{
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	git_repository *repo = NULL;
	git_worktree *wt = NULL;
	git_reference *br = NULL;
	struct stat st;

	if (git_repository_open_ext(&repo, s->commondir,
				    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
		fprintf(g->out, "  repository %s is gone; forgetting it\n",
			s->commondir);
		goto mark;
	}
	if (s->worktree[0] && !lstat(s->worktree, &st)) {
		if (g->o->dry_run || !hx_rmtree(s->worktree))
			fprintf(g->out, "  %s worktree %s\n",
				g->o->dry_run ? "would remove" : "removed",
				s->worktree);
	}
	po.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED;
	if (!g->o->dry_run && !git_worktree_lookup(&wt, repo, s->session))
		git_worktree_prune(wt, &po);
	git_worktree_free(wt);
	delete_refs(g, repo, s);
	if (g->o->branches && s->branch[0] &&
	    !git_reference_lookup(&br, repo, s->branch)) {
		if (g->o->dry_run || !git_reference_delete(br))
			fprintf(g->out, "  %s branch %s\n",
				g->o->dry_run ? "would delete" : "deleted",
				s->branch + 11);
		git_reference_free(br);
	}
	git_repository_free(repo);
mark:
	if (!g->o->dry_run) {
		snprintf(s->status, sizeof(s->status), "collected");
		hx_wtstate_write(s);
	}
}

/* Worktree metadata whose directory is gone (any name: also worktrees
 * made by hand), as `git worktree prune` does. */
static void prune_stale(struct gc_ctx *g, const char *commondir)
{
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	git_repository *repo = NULL;
	git_strarray names = {0};

	if (g->o->dry_run ||
	    git_repository_open_ext(&repo, commondir,
				    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL))
		return;
	if (!git_worktree_list(&names, repo)) {
		for (size_t i = 0; i < names.count; i++) {
			git_worktree *wt = NULL;

			if (!git_worktree_lookup(&wt, repo, names.strings[i]) &&
			    git_worktree_validate(wt) &&
			    git_worktree_is_prunable(wt, &po) > 0 &&
			    !git_worktree_prune(wt, &po))
				fprintf(g->out,
					"  pruned stale worktree "
					"metadata %s\n",
					names.strings[i]);
			git_worktree_free(wt);
		}
		git_strarray_dispose(&names);
	}
	git_repository_free(repo);
}

static void one(struct hx_wtstate *s, void *arg)
{
	struct gc_ctx *g = arg;
	time_t when = s->ended ? s->ended : s->started;
	bool crashed;

	if (!strcmp(s->status, "collected") || hx_wtstate_live(s))
		return;
	crashed = !strcmp(s->status, "running");
	fprintf(g->out, "%s (%s, %s)\n", s->session,
		crashed ? "crashed" : "ended", s->commondir);
	clear_locks(g, s);
	prune_stale(g, s->commondir);
	/* A killed harness-exec could not remove the agent's TMPDIR. */
	if (crashed && !g->o->dry_run) {
		struct hx_session tmp;

		if (!hx_session_init(&tmp, s->session, NULL, NULL) &&
		    !access(tmp.tmp_root, F_OK) && !hx_rmtree(tmp.tmp_root))
			fprintf(g->out, "  removed %s\n", tmp.tmp_root);
	}
	if (g->now - when >= g->o->older_than)
		collect(g, s);
	else
		fprintf(g->out, "  kept: younger than the age\n");
}

int hx_gc_run(const struct hx_gc_opts *o, FILE *out, FILE *err)
{
	struct gc_ctx g = {.o = o, .out = out, .err = err, .now = time(NULL)};
	int r;

	if (hx_git_init())
		return 1;
	r = hx_wtstate_foreach(one, &g);
	if (r) {
		fprintf(err, "harness-exec gc: %s\n", strerror(-r));
		return 1;
	}
	return g.errors;
}
