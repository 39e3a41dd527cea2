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

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/session.h"

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

static bool touches(struct flow *f, const char *p, bool moves)
{
	const char *own = f->pl->session;

	/* and a directory of objects moved away from its refs: another
	 * session's, refused one by one, went with objects/xx in audit
	 * mode (twenty-ninth attack review, part a) */
	return p && (other_place(p, own) ||
		     (moves &&
		      (holds_others(p) || (f->rq->op == HX_OP_RENAME &&
					   hx_pl_dir_holds_anothers(f, p)))));
}

/* The running sessions' own files (session.h: <state>/live/<id>, an
 * --audit-log, a --metrics-file, a socket elsewhere than the state
 * dir): each session protected its own only, and another session's
 * agent wrote them where its write roots held them, in audit mode
 * anywhere (twenty-sixth attack review, part c, left open then). Read
 * again when live/ changes: one stat per write judged. */
struct hx_pl_others {
	struct timespec mtim, read_at;
	ino_t ino;
	bool seen;
	char *paths; /* NUL-separated */
	size_t len;
	char buf[HX_SESSION_NFILES * PATH_MAX]; /* one entry read */
};

static pthread_mutex_t others_lock = PTHREAD_MUTEX_INITIALIZER;

static void append(struct hx_pl_others *o, const char *s, size_t n)
{
	char *p = realloc(o->paths, o->len + n);

	if (!p)
		return;
	memcpy(p + o->len, s, n);
	o->paths = p;
	o->len += n;
}

/* Each path of the entry's n bytes (NUL-separated) by its other names
 * too, beneath each second mount (unescaped: mountalias.h's to is a
 * glob's): /tmp bind-mounted in a write root let the agent write and
 * move another session's --audit-log by that name, in both modes
 * (twenty-ninth attack review, part a). At a reload only. */
static void add_aliases(struct hx_pl_others *o, const struct hx_pipeline *pl,
			const char *buf, size_t n)
{
	char alt[PATH_MAX];

	for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
		for (size_t a = 0; a < pl->nalias; a++) {
			const char *q = buf + i, *from = pl->alias_from[a],
				   *to = pl->alias_to[a];
			size_t fl = strlen(from), k = 0;

			if (strncmp(q, from, fl) || (q[fl] && q[fl] != '/'))
				continue;
			for (; *to && k < sizeof(alt) - 1; to++) {
				if (*to == '\\' && to[1])
					to++;
				alt[k++] = *to;
			}
			if (k + strlen(q + fl) >= sizeof(alt) - 1)
				continue;
			strcpy(alt + k, q + fl);
			append(o, alt, strlen(alt) + 1);
		}
}

static void add_entry(struct hx_pl_others *o, const struct hx_pipeline *pl,
		      int dfd, const char *name)
{
	char *buf = o->buf;
	int fd =
	    openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(o->buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	buf[n++] = '\0';
	append(o, buf, (size_t)n);
	add_aliases(o, pl, buf, (size_t)n);
}

static void reload(struct hx_pl_others *o, const struct hx_pipeline *pl,
		   const char *dir)
{
	const char *own = pl->session;
	DIR *d = opendir(dir);
	struct dirent *e;

	o->len = 0;
	clock_gettime(CLOCK_REALTIME, &o->read_at);
	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && (!own || strcmp(e->d_name, own)))
			add_entry(o, pl, dirfd(d), e->d_name);
	closedir(d);
}

static long long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000LL +
	       (b->tv_nsec - a->tv_nsec) / 1000000;
}

/* Whether live/ may have changed since it was read: its time is coarse
 * (a tick), so a read in the tick of a change is made again. */
static bool stale(const struct hx_pl_others *o, const struct stat *st)
{
	return !o->seen || st->st_ino != o->ino ||
	       st->st_mtim.tv_sec != o->mtim.tv_sec ||
	       st->st_mtim.tv_nsec != o->mtim.tv_nsec ||
	       ms_between(&o->mtim, &o->read_at) < 50;
}

/* Whether p is a running session's file, or (dir) a directory on the
 * way to one, which a move would take with it. */
static bool listed(const struct hx_pl_others *o, const char *p, bool dir)
{
	size_t n = p ? strlen(p) : 0;

	for (size_t i = 0; n && i < o->len; i += strlen(o->paths + i) + 1) {
		const char *q = o->paths + i;

		if (!strcmp(q, p) || (dir && !strncmp(q, p, n) && q[n] == '/'))
			return true;
	}
	return false;
}

static bool others_files(struct hx_pipeline *pl, const char *p1, const char *p2,
			 bool mv)
{
	struct hx_pl_others *o;
	char dir[PATH_MAX];
	struct stat st;
	bool hit = false;

	if (!pl->state_dir ||
	    (size_t)snprintf(dir, sizeof(dir), "%s/%s", pl->state_dir,
			     HX_SESSION_LIVE) >= sizeof(dir))
		return false;
	pthread_mutex_lock(&others_lock);
	if (!pl->others)
		pl->others = calloc(1, sizeof(*pl->others));
	if ((o = pl->others) && stat(dir, &st)) {
		o->seen = false;
		o->len = 0;
	} else if (o && stale(o, &st)) {
		reload(o, pl, dir);
		o->seen = true;
		o->ino = st.st_ino;
		o->mtim = st.st_mtim;
	}
	if (o)
		hit = listed(o, p1, mv) || listed(o, p2, mv);
	pthread_mutex_unlock(&others_lock);
	return hit;
}

/* Judge: nothing of another session's is written, made, moved or
 * removed (rule harness:other-session), refused in audit mode too. */
void hx_pl_judge_other_sessions(struct flow *f)
{
	enum hx_op op = f->rq->op;
	bool mv = op == HX_OP_RENAME;
	const char *pu = f->is_unix ? hx_pl_judged_path(&f->pu) : NULL;

	/* Another session's sockets (its harness-mcp --http unix:PATH) are
	 * not the agent's to reach. */
	if ((op == HX_OP_CONNECT || op == HX_OP_SEND) && pu &&
	    !hx_pl_protects_harness(f->d.rule) &&
	    others_files(f->pl, pu, NULL, false)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:other-session";
		f->d.pattern = NULL;
		return;
	}
	/* Over a refusal of the policy's too where audit mode lets it by
	 * (a move of the worktree was harness:git-config's, and done); in
	 * enforce mode that refusal stands, with its own rule (a move of
	 * .git is git-hooks', whatever the sessions' places in it). */
	if (hx_pl_protects_harness(f->d.rule) || op == HX_OP_EXEC ||
	    op == HX_OP_READ || op >= HX_OP_CONNECT ||
	    (f->d.verdict == HX_VERDICT_DENY && f->pl->mode != HX_MODE_AUDIT))
		return;
	/* a rename's both ends (an exchange moves the destination too); a
	 * link's existing file, which the new name would let be written */
	if (touches(f, hx_pl_judged_path(&f->p1), mv || op == HX_OP_RMDIR) ||
	    ((mv || op == HX_OP_LINK) &&
	     touches(f, hx_pl_judged_path(&f->p2), mv)) ||
	    others_files(f->pl, hx_pl_judged_path(&f->p1),
			 mv || op == HX_OP_LINK ? hx_pl_judged_path(&f->p2)
						: NULL,
			 mv)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:other-session";
		f->d.pattern = NULL;
	}
}
