/* The pipeline's judgement of other sessions' places in a repository
 * (rule harness:other-session): another session's worktree
 * (<git>/harness/worktrees/<id>/), its git admin directory
 * (<git>/worktrees/<id>/), its branch and reflog
 * (refs/heads/harness/<id>), every session's checkpoints
 * (refs/harness/...) and their notes (refs/notes/harness). A session
 * without --worktree in the project, which rule project lets write all
 * of .git but hooks and config, wrote into another session's worktree
 * and that session's checkpoints and result carried content its agent
 * never wrote (twenty-eighth attack review, part d). Found by the
 * path's shape, in any repository, whatever the session's own kind;
 * its own worktree, admin directory and branch stay writable. */
#define _GNU_SOURCE
#include "supervisor/pipeline_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Whether the path made of the first n bytes of a, then b, exists. */
static bool exists2(const char *a, size_t n, const char *b)
{
	char p[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(p, sizeof(p), "%.*s%s", (int)n, a, b) >= sizeof(p))
		return false;
	return !lstat(p, &st);
}

/* t begins with the words w, ending there or at a '/': what follows. */
static const char *after(const char *t, const char *w)
{
	size_t n = strlen(w);

	return !strncmp(t, w, n) && (!t[n] || t[n] == '/') ? t + n : NULL;
}

/* Whether the entry rest names ("/<x>...") is not the session's own:
 * <own>, or <own>.lock where lock. The place itself ("") is not. */
static bool not_own(const char *rest, const char *own, bool lock)
{
	size_t n, o = own ? strlen(own) : 0;

	if (!*rest++)
		return true;
	n = strcspn(rest, "/");
	if (o && n == o && !strncmp(rest, own, o))
		return false;
	return !(lock && o && n == o + 5 && !strncmp(rest, own, o) &&
		 !strncmp(rest + o, ".lock", 5));
}

/* The places beneath a git dir g (path's first n bytes) at t that are
 * other sessions'. */
static bool others_at(const char *path, size_t n, const char *t,
		      const char *own)
{
	static const char *const branch[] = {"refs/heads/harness",
					     "logs/refs/heads/harness"};
	static const char *const all[] = {"refs/harness", "logs/refs/harness"};
	static const char *const notes[] = {"refs/notes/harness",
					    "logs/refs/notes/harness"};
	const char *r;
	char sub[PATH_MAX];
	size_t i, x;

	if ((r = after(t, "harness/worktrees")) && not_own(r, own, false))
		return exists2(path, n, "/HEAD");
	for (i = 0; i < 2; i++) {
		if ((r = after(t, branch[i])) && not_own(r, own, true))
			return exists2(path, n, "/HEAD");
		if (after(t, all[i]))
			return exists2(path, n, "/HEAD");
		x = strlen(notes[i]);
		if (!strncmp(t, notes[i], x) &&
		    (!t[x] || !strcmp(t + x, ".lock")))
			return exists2(path, n, "/HEAD");
	}
	/* an admin directory whose worktree is a session's */
	if ((r = after(t, "worktrees")) && *r && not_own(r, own, false)) {
		x = strcspn(r + 1, "/");
		snprintf(sub, sizeof(sub), "/harness/worktrees/%.*s", (int)x,
			 r + 1);
		return exists2(path, n, sub);
	}
	return false;
}

/* Whether path is in (or is) another session's place: tried beneath
 * each of its directories, a few compares each. */
static bool other_place(const char *path, const char *own)
{
	for (const char *s = path; (s = strchr(s, '/')); s++)
		if (s[1] && others_at(path, (size_t)(s - path), s + 1, own))
			return true;
	return false;
}

/* Whether the directory d, moved, would take other sessions' places
 * with it: it is a git dir or a project holding them, or a directory
 * on the way to one (<git>/refs, <git>/harness, ...). Directories only,
 * so that a file's rename (an editor's save) costs one lstat. */
static bool holds_others(const char *d)
{
	static const char *const roots[] = {
	    "harness/worktrees",
	    "refs/heads/harness",
	    "refs/harness",
	    "refs/notes/harness",
	    "logs/refs/heads/harness",
	    "logs/refs/harness",
	    "logs/refs/notes/harness",
	};
	char tail[PATH_MAX];
	struct stat st;
	size_t dn = strlen(d), hn;

	if (lstat(d, &st) || !S_ISDIR(st.st_mode))
		return false;
	if (exists2(d, dn, "/.git/harness/worktrees"))
		return true;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		const char *r = roots[i];

		/* d is <git>/<head of r>: what follows it there exists */
		for (const char *c = r; c; c = strchr(c + 1, '/')) {
			hn = (size_t)(c - r);
			if (hn && (dn <= hn || d[dn - hn - 1] != '/' ||
				   strncmp(d + dn - hn, r, hn)))
				continue;
			snprintf(tail, sizeof(tail), "/%s", c == r ? r : c + 1);
			if (exists2(d, dn, tail) &&
			    exists2(d, dn - (hn ? hn + 1 : 0), "/HEAD"))
				return true;
		}
	}
	/* <git>/worktrees, where sessions' admin directories are */
	return dn > 10 && !strcmp(d + dn - 10, "/worktrees") &&
	       exists2(d, dn - 9, "harness/worktrees");
}

static bool touches(const struct flow *f, const char *p, bool moves)
{
	const char *own = f->pl->session;

	return p && (other_place(p, own) || (moves && holds_others(p)));
}

/* Judge: nothing of another session's is written, made, moved or
 * removed (rule harness:other-session), refused in audit mode too. */
void hx_pl_judge_other_sessions(struct flow *f)
{
	enum hx_op op = f->rq->op;
	bool mv = op == HX_OP_RENAME;

	/* Over a refusal of the policy's too, which audit mode lets by
	 * (a move of the worktree was harness:git-config's, and done). */
	if (hx_pl_protects_harness(f->d.rule) || op == HX_OP_EXEC ||
	    op == HX_OP_READ || op >= HX_OP_CONNECT)
		return;
	/* a rename's both ends (an exchange moves the destination too); a
	 * link's existing file, which the new name would let be written */
	if (touches(f, hx_pl_judged_path(&f->p1), mv || op == HX_OP_RMDIR) ||
	    ((mv || op == HX_OP_LINK) &&
	     touches(f, hx_pl_judged_path(&f->p2), mv))) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:other-session";
		f->d.pattern = NULL;
	}
}
