/* The pipeline's judgements of git's files (pipeline_int.h): its
 * objects that predate the session, the stores kept as they were, and
 * the repositories the agent makes in the project. */
#define _GNU_SOURCE
#include "supervisor/pipeline_int.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/path.h"
#include "common/wire.h"
#include "supervisor/existing.h"
#include "supervisor/gitconf.h"
#include "supervisor/gitobj.h"

/* Whether path is beneath the session's repository's objects/. */
static bool in_objects(const struct hx_pipeline *pl, const char *path)
{
	size_t n = pl->git_objects ? strlen(pl->git_objects) : 0;

	return n && path && !strncmp(path, pl->git_objects, n) &&
	       path[n] == '/';
}

/* Whether the call makes or changes a file of the user's object store
 * that defines objects other than by a loose object's name (gitobj.h,
 * hx_gitobj_defines): at its name (a write, a directory, a link), or a
 * rename's either name. Removing one is hx_gitobj_predates's. */
static bool in_place(const struct hx_request *rq);

/* A replace ref written into packed-refs: in place (git never does),
 * or in the file renamed or linked there. */
/* The session's git dir (its objects' parent) and its length: its
 * replace refs are the end's to record (run_hidden.c), not refused. */
static size_t own_git(const struct flow *f, const char **own)
{
	const char *o = f->pl->git_objects;
	size_t n = o ? strlen(o) : 0;

	*own = o;
	return n > 8 && !strcmp(o + n - 8, "/objects") ? n - 8 : 0;
}

static bool packed_replace(const struct flow *f, const char *p1, const char *p2)
{
	enum hx_op op = f->rq->op;
	const char *own;
	size_t ol = own_git(f, &own);

	if (op == HX_OP_RENAME)
		return hx_gitobj_packed_refs(p2, own, ol) &&
		       hx_gitobj_names_replace(p1);
	if (op == HX_OP_LINK)
		return hx_gitobj_packed_refs(p1, own, ol) &&
		       hx_gitobj_names_replace(p2);
	return in_place(f->rq) && hx_gitobj_packed_refs(p1, own, ol);
}

static bool defines_objects(const struct flow *f)
{
	const char *o = f->pl->git_objects, *p1 = hx_pl_judged_path(&f->p1),
		   *p2 = hx_pl_judged_path(&f->p2);
	enum hx_op op = f->rq->op;
	const char *own;
	size_t ol;

	if (!hx_pl_may_proceed(f) || op == HX_OP_UNLINK || op == HX_OP_RMDIR)
		return false;
	if (packed_replace(f, p1, p2))
		return true;
	ol = own_git(f, &own);
	if (op == HX_OP_RENAME) /* either way: pack/ moved away too */
		return hx_gitobj_defines(o, p2) || hx_gitobj_defines(o, p1) ||
		       hx_gitobj_swaps(p2, &f->pl->started, own, ol) ||
		       hx_gitobj_swaps(p1, &f->pl->started, own, ol);
	return (hx_pl_writes_file(op) || op == HX_OP_MKDIR ||
		op == HX_OP_SYMLINK) &&
	       (hx_gitobj_defines(o, p1) ||
		hx_gitobj_swaps(p1, &f->pl->started, own, ol));
}

/* Whether rq writes a file's content at its name, or makes one there:
 * an open for writing, a node, a truncation, a symlink. */
static bool in_place(const struct hx_request *rq)
{
	return rq->op == HX_OP_TRUNCATE || rq->op == HX_OP_SYMLINK ||
	       (rq->op == HX_OP_WRITE &&
		(rq->call < HX_CALL_CHMOD || rq->call == HX_CALL_MKNOD ||
		 rq->call == HX_CALL_BIND));
}

/* The objects the session made (their final names, whole: a hash of
 * them, agent-chosen names, could be made to collide with another
 * session's), what git gc may take away again: a tsearch(3) tree. */
struct hx_pl_objset {
	void *root;
};

static pthread_mutex_t objs_lock = PTHREAD_MUTEX_INITIALIZER;

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Which file an object of the session's is: bound when it is first
 * removed or moved off, kept after its name (a NUL-ended string). */
struct objid {
	dev_t dev;
	ino_t ino;
	long long bsec, bnsec; /* birth time */
	bool bound;
};

static void objid_of(const char *p, struct objid *id)
{
	struct statx sx;

	memset(id, 0, sizeof(*id));
	if (statx(AT_FDCWD, p, AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_BTIME,
		  &sx))
		return;
	id->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	id->ino = sx.stx_ino;
	if (sx.stx_mask & STATX_BTIME) {
		id->bsec = sx.stx_btime.tv_sec;
		id->bnsec = sx.stx_btime.tv_nsec;
	}
	id->bound = true;
}

/* Whether p is one of the session's objects; add: make it one. Taken
 * away (bind), the file there is bound to it the first time (both
 * layers judge one call) and must be that file after: the session's
 * empty blob, removed, then made again by another session's checkpoint,
 * was the agent's to remove again by its name. */
static bool own_object(struct hx_pipeline *pl, const char *p, bool add,
		       bool bind)
{
	struct objid id, now;
	void *node = NULL;
	size_t n = strlen(p) + 1;
	char *name;
	bool own;

	pthread_mutex_lock(&objs_lock);
	if (!pl->objs)
		pl->objs = calloc(1, sizeof(*pl->objs));
	if (pl->objs)
		node = tfind(p, &pl->objs->root, by_name);
	own = node != NULL;
	if (node && add) { /* made anew (its name is not there): unbound */
		memset(*(char **)node + n, 0, sizeof(id));
	} else if (node) {
		name = *(char **)node;
		memcpy(&id, name + n, sizeof(id));
		objid_of(p, &now);
		if (id.bound)
			own = now.bound && now.dev == id.dev &&
			      now.ino == id.ino && now.bsec == id.bsec &&
			      now.bnsec == id.bnsec;
		else if (bind)
			memcpy(name + n, &now, sizeof(now));
	} else if (pl->objs && add && (name = calloc(1, n + sizeof(id)))) {
		memcpy(name, p, n);
		if (!tsearch(name, &pl->objs->root, by_name))
			free(name); /* out of memory: refused later, safe */
	}
	pthread_mutex_unlock(&objs_lock);
	return own;
}

static bool exists(const char *p)
{
	struct stat st;

	return !lstat(p, &st);
}

static bool anothers(struct flow *f, const char *path);

/* What others_object refuses; an object the call makes becomes the
 * session's (its link's or rename's new name). */
static bool others_object(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	const char *p1 = hx_pl_judged_path(&f->p1) ?: "";
	const char *p2 = hx_pl_judged_path(&f->p2) ?: "";
	bool o1, o2;

	/* Written in place when it is there; made anew at its name (git
	 * clone --local copies objects so when it cannot link them), the
	 * session's own, as one linked in (28a's end check reads what it
	 * holds). A symlink there git never makes. */
	if (in_place(rq)) {
		if (!hx_gitobj_is_name(p1))
			return false;
		if (rq->op == HX_OP_SYMLINK || exists(p1))
			return true;
		own_object(f->pl, p1, true, false);
		return false;
	}
	if (rq->op != HX_OP_UNLINK && rq->op != HX_OP_RENAME &&
	    rq->op != HX_OP_LINK)
		return false;
	/* another's object linked to a name of the agent's, through which
	 * it was then written (chmod u+w, then >>): the other session's
	 * result read the agent's bytes (twenty-ninth attack review, a) */
	if (rq->op == HX_OP_LINK && anothers(f, p2))
		return true;
	o1 = hx_gitobj_is_name(p1);
	o2 = rq->op == HX_OP_RENAME && hx_gitobj_is_name(p2);
	/* taken away (removed, moved off) when not the session's own */
	if (o1 && rq->op != HX_OP_LINK && exists(p1) &&
	    !own_object(f->pl, p1, false, true))
		return true;
	/* moved or linked onto one that is there (the link fails, but the
	 * name would be taken for the session's own) */
	if ((o2 && exists(p2)) || (o1 && rq->op == HX_OP_LINK && exists(p1)))
		return true;
	if (o1 && rq->op == HX_OP_LINK)
		own_object(f->pl, p1, true, false);
	else if (o2)
		own_object(f->pl, p2, true, false);
	return false;
}

/* Whether the object at path is another's: made since the session
 * began, not by it (another session's checkpoints, its agent's commits),
 * refused in audit mode too, as another session's files are. */
static bool anothers(struct flow *f, const char *path)
{
	return path && hx_gitobj_is_name(path) && exists(path) &&
	       !hx_gitobj_predates(path, &f->pl->started) &&
	       !own_object(f->pl, path, false, false);
}

/* Whether the first n bytes of p are a git directory. */
static bool git_dir(const char *p, size_t n)
{
	char h[PATH_MAX];

	return (size_t)snprintf(h, sizeof(h), "%.*s/HEAD", (int)n, p) <
		   sizeof(h) &&
	       exists(h);
}

/* Whether the directory d (objects/xx or objects/pack) holds another's
 * object; depth 1: d is objects/ itself, each of its directories. */
static bool scan_anothers(struct flow *f, const char *d, int depth)
{
	char p[PATH_MAX];
	struct dirent *e;
	bool hit = false;
	DIR *dir = opendir(d);

	while (dir && !hit && (e = readdir(dir))) {
		if (e->d_name[0] == '.' ||
		    (size_t)snprintf(p, sizeof(p), "%s/%s", d, e->d_name) >=
			sizeof(p))
			continue;
		hit = depth
			  ? (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN) &&
				scan_anothers(f, p, 0)
			  : anothers(f, p);
	}
	if (dir)
		closedir(dir);
	return hit;
}

bool hx_pl_dir_holds_anothers(struct flow *f, const char *d)
{
	const char *name = d ? strrchr(d, '/') : NULL, *up;
	struct stat st;

	if (!name || name == d || lstat(d, &st) || !S_ISDIR(st.st_mode))
		return false;
	if (!strcmp(name + 1, "objects"))
		return git_dir(d, (size_t)(name - d)) && scan_anothers(f, d, 1);
	for (up = name - 1; up > d && *up != '/'; up--)
		;
	if ((size_t)(name - up) != 8 || strncmp(up, "/objects", 8) ||
	    !git_dir(d, (size_t)(up - d)))
		return false;
	return scan_anothers(f, d, 0);
}

/* Whether the name after '/' is the rest of a loose object's hash (SHA-1
 * or SHA-256), as git names it. */
static bool loose_rest(const char *name)
{
	size_t n = strlen(name);

	return (n == 38 || n == 62) && strspn(name, "0123456789abcdef") == n;
}

/* Notes the store of path when it has a loose object's shape (xx/<rest
 * of a hash>) anywhere but the session's store: its loose objects are
 * read with their hashes checked at the end (run_hidden.c), as the
 * session's own are. The agent wrote sub/.git/objects/e6/9de29b... (the
 * empty blob's id) holding code, and the user's later git add of an
 * empty file in that repository wrote no object (one was there): its
 * checkout gave the agent's bytes (thirtieth attack review, part a).
 * By its shape, not its git dir: one written before its HEAD was made,
 * or in a plain directory another repository names in its alternates,
 * was git's as well; and a directory of them renamed in (S/xx), or a
 * symlink made there, which git follows (thirty-first review, part a).
 * False when the directories kept are full (the call is refused:
 * unchecked, it would not be safe). Cost: a strrchr and a compare a
 * judged write or symlink. */
static bool keep_store(struct hx_pipeline *pl, const char *path, size_t n);

static bool note_nested(struct hx_pipeline *pl, const char *path, bool dir)
{
	const char *name = path ? strrchr(path, '/') : NULL;

	if (!name || in_objects(pl, path))
		return true;
	/* a directory of them moved in, or linked (a symlink): S/xx */
	if (dir && strlen(name + 1) == 2 && isxdigit((unsigned char)name[1]) &&
	    isxdigit((unsigned char)name[2]))
		return keep_store(pl, path, (size_t)(name - path));
	if (name - path < 4 || name[-3] != '/' ||
	    !isxdigit((unsigned char)name[-2]) ||
	    !isxdigit((unsigned char)name[-1]) || !loose_rest(name + 1))
		return true;
	return keep_store(pl, path, (size_t)(name - 3 - path));
}

/* Whether kept store i is the directory its name (name) names now. A
 * name kept once stood for any directory made there later: the agent
 * moved store away, made it again and planted in the new one, whose fd
 * was never taken (thirty-second review, part a). One removed (nothing
 * left in it to sweep: a test suite's repository made again at one
 * name for each test) gives its place to the new one. One stat, one
 * fstat; when name names nothing, the write there fails: as kept. */
static bool kept_is(struct hx_pipeline *pl, size_t i, const char *name)
{
	struct stat a, b;
	int fd;

	if (stat(name, &a) || fstat(pl->nested_fds[i], &b) ||
	    (a.st_dev == b.st_dev && a.st_ino == b.st_ino))
		return true;
	if (b.st_nlink ||
	    (fd = open(name, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return false;
	close(pl->nested_fds[i]);
	pl->nested_fds[i] = fd;
	return true;
}

/* Keeps the store path's first n bytes name (an O_PATH fd: found where
 * it is at the end), once for each directory that name has named.
 * False when full. */
static bool keep_store(struct hx_pipeline *pl, const char *path, size_t n)
{
	size_t i;
	bool ok = true;

	if (!n)
		return true;
	pthread_mutex_lock(&objs_lock);
	for (i = 0; i < pl->n_nested_objs; i++)
		if (!strncmp(pl->nested_objs[i], path, n) &&
		    !pl->nested_objs[i][n] &&
		    kept_is(pl, i, pl->nested_objs[i]))
			break;
	if (i == pl->n_nested_objs) {
		if (i == HX_PL_NESTED_OBJS ||
		    !(pl->nested_objs[i] = strndup(path, n))) {
			ok = false;
		} else if ((pl->nested_fds[i] =
				open(pl->nested_objs[i],
				     O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
			free(pl->nested_objs[i]);
			ok = false;
		} else {
			pl->n_nested_objs++;
		}
	}
	pthread_mutex_unlock(&objs_lock);
	return ok;
}

/* Judge: a git object that predates the session is never written,
 * moved or removed, whatever rule allows its place (gitobj.h): the
 * agent's commits make new ones. */
void hx_pl_judge_git_objects(struct flow *f)
{
	enum hx_op op = f->rq->op;
	bool hit;

	/* A kept store's files that predate it likewise (existing.h). */
	if (hx_pl_may_proceed(f) &&
	    hx_existing_refuses(f->pl->policy, op, hx_pl_judged_path(&f->p1),
				hx_pl_judged_path(&f->p2), &f->pl->started)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:keep-existing";
		f->d.pattern = NULL;
	}
	/* Nor is any object written in place, made at its name, moved onto
	 * one or taken away unless the session made it, whenever made: git
	 * never does the first three, and another session's object (its
	 * checkpoints, its agent's commits, made after this one began) was
	 * rewritten, or removed and linked anew, its result then saying what
	 * its agent never wrote (twenty-eighth attack review, part d). */
	if (hx_pl_may_proceed(f) && others_object(f)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = anothers(f, hx_pl_judged_path(&f->p1)) ||
				    ((op == HX_OP_RENAME || op == HX_OP_LINK) &&
				     anothers(f, hx_pl_judged_path(&f->p2)))
				? "harness:other-session"
				: "harness:git-objects";
		f->d.pattern = NULL;
		return;
	}
	if (!hx_pl_writes_file(op) || !hx_pl_may_proceed(f)) {
		/* a directory or a link made there: defines_objects's; a
		 * symlink of a store's (S/xx, S/xx/<hash>) keeps S */
		if (defines_objects(f) ||
		    (op == HX_OP_SYMLINK && hx_pl_may_proceed(f) &&
		     !note_nested(f->pl, hx_pl_judged_path(&f->p1), true))) {
			f->d.verdict = HX_VERDICT_DENY;
			f->d.rule = "harness:git-objects";
			f->d.pattern = NULL;
		}
		return;
	}
	if (in_objects(f->pl, hx_pl_judged_path(&f->p1)) ||
	    in_objects(f->pl, hx_pl_judged_path(&f->p2)))
		f->pl->git_objects_written = true; /* checked at the end */
	/* either name of a rename: RENAME_EXCHANGE moves both ways */
	if (!note_nested(f->pl, hx_pl_judged_path(&f->p1),
			 op == HX_OP_RENAME) ||
	    !note_nested(f->pl, hx_pl_judged_path(&f->p2),
			 op == HX_OP_RENAME)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:git-objects";
		f->d.pattern = NULL;
		return;
	}
	hit =
	    (hx_pl_judged_path(&f->p1) &&
	     hx_gitobj_predates(hx_pl_judged_path(&f->p1), &f->pl->started)) ||
	    /* a rename's destination; a link's existing file, which
	     * the new name would let be written */
	    ((op == HX_OP_RENAME || op == HX_OP_LINK) &&
	     hx_pl_judged_path(&f->p2) &&
	     hx_gitobj_predates(hx_pl_judged_path(&f->p2), &f->pl->started));
	if (hit || defines_objects(f)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:git-objects";
		f->d.pattern = NULL;
	}
}

static bool in_roots(const struct hx_pipeline *pl, const char *path)
{
	for (size_t i = 0; i < 2; i++) {
		const char *r = pl->git_roots[i];
		size_t n = r ? strlen(r) : 0;

		if (n && !strncmp(path, r, n) &&
		    (path[n] == '/' || !path[n] || !strcmp(r, "/")))
			return true;
	}
	return false;
}

/* path as git sees it: beneath the worktree's root, the part after
 * it ("/src/hooks/x.js" for the worktree's src/hooks/x.js, no hook of
 * the project's .git where the worktree lives); else path. */
static const char *git_view(const struct hx_pipeline *pl, const char *path)
{
	size_t n = pl->worktree ? strlen(pl->worktree) : 0;

	return n && !strncmp(path, pl->worktree, n) && path[n] == '/' ? path + n
								      : path;
}

bool hx_pl_in_git(const struct hx_pipeline *pl, const char *path, bool links)
{
	return hx_gitconf_in_git(
	    links && !pl->worktree_links ? path : git_view(pl, path));
}

/* The names git opens in a work tree (dir.c, attr.c, submodule.c,
 * mailmap.c). */
static bool git_worktree_name(const char *path)
{
	static const char *const names[] = {".gitignore", ".gitattributes",
					    ".gitmodules", ".mailmap"};
	const char *leaf = strrchr(path, '/');

	leaf = leaf ? leaf + 1 : path;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(leaf, names[i]))
			return true;
	return false;
}

bool hx_pl_foreign(const struct hx_pipeline *pl, const char *path, mode_t mode)
{
	bool node =
	    S_ISFIFO(mode) || S_ISSOCK(mode) || S_ISCHR(mode) || S_ISBLK(mode);

	if (!path)
		return false;
	if (S_ISLNK(mode))
		return hx_pl_in_git(pl, path, true);
	return node &&
	       (hx_pl_in_git(pl, path, false) || git_worktree_name(path));
}

/* Whether some file at path could be foreign (hx_pl_foreign): the
 * names first, so that a rename elsewhere costs no stat. */
static bool git_meets(const struct hx_pipeline *pl, const char *path)
{
	return path &&
	       (git_worktree_name(path) || hx_pl_in_git(pl, path, true) ||
		hx_pl_in_git(pl, path, false));
}

bool hx_pl_foreign_at(const struct hx_pipeline *pl, int dirfd, const char *name,
		      const char *path)
{
	struct stat st;

	return git_meets(pl, path) &&
	       !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	       hx_pl_foreign(pl, path, st.st_mode);
}

/* Where path is in what git runs (gitconf.h): beneath a ".git", in the
 * project by its name, and outside every ".git" by a bare layout around
 * it: in a cache, and in the project too, where a bare repository that
 * predates the session is the user's (a dotfiles repository in a $HOME
 * that is the project, a repository the user pushes to: its hooks and
 * config were the agent's to write, attack review 26a). */
static enum hx_gitconf_place git_place(const struct hx_pipeline *pl,
				       const char *path)
{
	enum hx_gitconf_place p =
	    hx_gitconf_place(git_view(pl, path), in_roots(pl, path));

	return p != HX_GITCONF_NONE || hx_pl_in_git(pl, path, false)
		   ? p
		   : hx_gitconf_bare_place(path);
}

static bool git_code(const struct hx_pipeline *pl, const char *path)
{
	return path && git_place(pl, path) != HX_GITCONF_NONE;
}

/* Whether path is in the session's TMPDIR, removed at its end. */
static bool in_tmp(const struct hx_pipeline *pl, const char *path)
{
	size_t n = pl->git_tmp ? strlen(pl->git_tmp) : 0;

	return n && path && !strncmp(path, pl->git_tmp, n) &&
	       (path[n] == '/' || !path[n]);
}

/* Whether a directory moved from src to dst brings code git runs: onto
 * a bare layout's hooks, or a bare repository or a hooks directory with
 * hooks into a cache (not into the project, where a HEAD is refused
 * anyway, nor within the session's TMPDIR, whence it is walked when it
 * moves out). */
static bool moves_code(const struct hx_pipeline *pl, const char *src,
		       const char *dst)
{
	const char *leaf = strrchr(dst, '/');

	return git_code(pl, dst) ||
	       (!in_roots(pl, dst) && !in_tmp(pl, dst) &&
		hx_gitconf_tree_carries_code(
		    src, leaf && !strcmp(leaf + 1, "hooks")));
}

/* Whether path names a hook by git's name outside the project, the
 * session's TMPDIR and every .git (gitconf.h). */
static bool hook_here(const struct hx_pipeline *pl, const char *path)
{
	return path && !in_roots(pl, path) && !in_tmp(pl, path) &&
	       !hx_pl_in_git(pl, path, false) && hx_gitconf_hook_name(path);
}

static bool runs_file(const char *path)
{
	struct stat st;

	return path && !lstat(path, &st) &&
	       (S_ISLNK(st.st_mode) ||
		(S_ISREG(st.st_mode) && (st.st_mode & 0111)));
}

/* Whether the call leaves a hook by git's name that would run in a cache
 * directory a tool's git init makes a repository of later: made
 * executable (created so, its mode or attributes changed, an
 * executable moved or linked in) or a link; a "hooks" made a link. */
static bool arms_hook(const struct flow *f, const char *p1, const char *p2,
		      bool xchg)
{
	const struct hx_request *rq = f->rq;
	const char *leaf = p1 ? strrchr(p1, '/') : NULL;

	switch (rq->op) {
	case HX_OP_WRITE:
		if (!hook_here(f->pl, p1) || rq->call == HX_CALL_MKNOD)
			return false;
		if (rq->call >= HX_CALL_CHMOD)
			return true; /* chmod, chown, xattrs, times, flags */
		return rq->has_flags && (rq->flags & O_CREAT) &&
		       (!rq->has_mode || (rq->mode & 0111));
	case HX_OP_SYMLINK:
		return hook_here(f->pl, p1) ||
		       (leaf && !strcmp(leaf + 1, "hooks") &&
			!in_roots(f->pl, p1) &&
			!hx_pl_in_git(f->pl, p1, false));
	case HX_OP_LINK: /* p2: the file linked */
		return hook_here(f->pl, p1) && runs_file(p2);
	case HX_OP_RENAME:
		return !f->ev.moves_tree &&
		       ((hook_here(f->pl, p2) && runs_file(p1)) ||
			(xchg && hook_here(f->pl, p1) && runs_file(p2)));
	default:
		return false;
	}
}

/* Whether what the path v names now (its last component not followed)
 * is a file git must not meet at where (hx_pl_foreign). */
static bool lands_foreign(const struct flow *f, const struct vpath *v,
			  const char *where)
{
	struct stat st;

	return v->ok && git_meets(f->pl, where) && !lstat(v->norm, &st) &&
	       hx_pl_foreign(f->pl, where, st.st_mode);
}

/* Git's own probe at init (init-db.c), removed at once: a link
 * "tXXXXXX" (mkstemp's name) to "testing" in the repository it makes.
 * Refused, git wrote core.symlinks = false into that repository's
 * config, and the user's checkouts there, outside the harness, made
 * each tracked link a file. Git never writes through such a name, and
 * its target is a name in the same directory. */
static bool git_probe(const char *path, const char *target)
{
	const char *leaf = strrchr(path, '/');

	if (!target || strcmp(target, "testing") || !leaf ||
	    strlen(++leaf) != 7 || leaf[0] != 't')
		return false;
	for (int i = 1; i < 7; i++)
		if (!isalnum((unsigned char)leaf[i]))
			return false;
	return true;
}

/* Whether the call leaves a symbolic link beneath a ".git": git writes
 * its files there in place, following a link (COMMIT_EDITMSG,
 * ORIG_HEAD, FETCH_HEAD, MERGE_MSG...), so the user's next git command
 * would write the file it names, which the agent may not (its
 * ~/.ssh/authorized_keys, ~/.bashrc), or, through a link to a name in
 * its own directory, another file of the .git (MERGE_MSG into config).
 * Git makes no link there but its probe. Nor a FIFO, a socket or a
 * device, there or at a .gitignore, .gitattributes, .gitmodules or
 * .mailmap (hx_pl_foreign: git waited in its open of one for good).
 * The kernel layer looks again after the call (hx_un_mut). */
static bool leaves_link_in_git(const struct flow *f, const char *p1,
			       const char *p2)
{
	const struct hx_request *rq = f->rq;
	bool xchg = rq->has_flags && (rq->flags & RENAME_EXCHANGE);

	switch (rq->op) {
	case HX_OP_WRITE: /* mknod: a regular file's type is 0 or S_IFREG */
		return rq->call == HX_CALL_MKNOD && rq->has_mode &&
		       hx_pl_foreign(f->pl, p1, rq->mode);
	case HX_OP_SYMLINK:
		return hx_pl_in_git(f->pl, p1, true) &&
		       !git_probe(p1, rq->path2);
	case HX_OP_LINK: /* a hard link to a link: the existing is p2 */
		return lands_foreign(f, &f->p2, p1);
	case HX_OP_RENAME:
		return lands_foreign(f, &f->p1, p2) ||
		       (xchg && lands_foreign(f, &f->p2, p1));
	default:
		return false;
	}
}

/* Whether path is dir or beneath it. */
static bool beneath(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	return path && !strncmp(path, dir, n) && (!path[n] || path[n] == '/');
}

/* The text of the symbolic link at path (not followed), or NULL. */
static const char *link_text(const char *path, char *buf, size_t size)
{
	ssize_t n = path ? readlink(path, buf, size - 1) : -1;

	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

/* Whether a symbolic link with the relative text, at path in the
 * worktree, leads out of the tree there (lexically or resolved): the
 * worktree is .git/harness/worktrees/ID, four levels beneath the
 * checkout its result is merged into, so the same text names another
 * file there. Judged where it is made, ".vscode -> ../home/.cache/x"
 * led nowhere the agent writes; merged, the user's editor read the
 * agent's tasks.json in ~/.cache through it. */
static bool leads_out(const struct flow *f, const char *path, const char *text,
		      const char *to, const char *to_resolved)
{
	const char *wt = f->pl->worktree;

	return wt && text && text[0] != '/' && beneath(wt, path) &&
	       (!to || !beneath(wt, to) ||
		(to_resolved && !beneath(wt, to_resolved)));
}

/* Whether the call leaves a relative link in the worktree that leads
 * out of it (leads_out): made there, or a link moved or linked in
 * (read at its old name; its text is judged from its new directory). */
static bool worktree_link_out(const struct flow *f, const char *p1,
			      const char *p2)
{
	const struct hx_request *rq = f->rq;
	char text[PATH_MAX], to[PATH_MAX * 2], norm[PATH_MAX];
	const char *t, *dst = rq->op == HX_OP_RENAME ? p2 : p1,
		       *src = rq->op == HX_OP_RENAME ? p1 : p2, *slash;

	if (!f->pl->worktree)
		return false;
	if (rq->op == HX_OP_SYMLINK)
		return leads_out(f, p1, rq->path2, f->ev.link_target,
				 f->ev.link_target_resolved);
	if ((rq->op != HX_OP_RENAME && rq->op != HX_OP_LINK) || !dst ||
	    !beneath(f->pl->worktree, dst) ||
	    !(t = link_text(src, text, sizeof(text))) || t[0] == '/' ||
	    !(slash = strrchr(dst, '/')))
		return false;
	snprintf(to, sizeof(to), "%.*s/%s", (int)(slash - dst), dst, t);
	return leads_out(
	    f, dst, t,
	    hx_path_normalize(NULL, to, norm, sizeof(norm)) < 0 ? NULL : norm,
	    NULL);
}

/* Whether path is a git index: "index" beneath a .git (gitconf.h). */
static bool git_index(const struct hx_pipeline *pl, const char *path)
{
	const char *base = strrchr(path, '/');

	return base && !strcmp(base + 1, "index") &&
	       hx_pl_in_git(pl, path, false);
}

/* A .gitignore path kept for the end's check (pipeline.h), once. */
static void note_gitignore(struct hx_pipeline *pl, const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	if (!base || strcmp(base + 1, ".gitignore"))
		return;
	for (size_t i = 0; i < pl->ngitignores; i++)
		if (!strcmp(pl->gitignores[i], path))
			return;
	if (pl->ngitignores < HX_PL_GITIGNORES &&
	    strlen(path) < sizeof(pl->gitignores[0]))
		strcpy(pl->gitignores[pl->ngitignores++], path);
}

/* Judge: a repository the agent makes (git init sub, a gitlink to it in
 * the project's index) runs its configuration and hooks on the user's
 * next git status in the project (gitconf.h): its config is written by
 * a rename only and the bytes are checked, hooks, gitfiles, commondir
 * and bare layouts never, nor moved in under another name. */
void hx_pl_judge_nested_git(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	const char *p1 = hx_pl_judged_path(&f->p1),
		   *p2 = hx_pl_judged_path(&f->p2);
	bool hit = false, xchg = rq->has_flags && (rq->flags & RENAME_EXCHANGE);

	f->git_copy = false;
	if (!hx_pl_may_proceed(f) || !p1)
		return;
	if (hx_pl_writes_file(rq->op) &&
	    (git_index(f->pl, p1) ||
	     ((rq->op == HX_OP_RENAME || rq->op == HX_OP_LINK) && p2 &&
	      git_index(f->pl, p2))))
		f->pl->git_index_written = true;
	if (hx_pl_writes_file(rq->op))
		note_gitignore(
		    f->pl,
		    rq->op == HX_OP_RENAME || rq->op == HX_OP_LINK ? p2 : p1);
	if (rq->op == HX_OP_WRITE &&
	    (rq->call < HX_CALL_CHMOD || rq->call == HX_CALL_MKNOD))
		hit = git_code(f->pl, p1); /* an open, a node: not a rename */
	else if (rq->op == HX_OP_SYMLINK)
		hit = git_code(f->pl, p1);
	else if (rq->op == HX_OP_LINK) /* the new name writes the old */
		hit = git_code(f->pl, p1) || git_code(f->pl, p2);
	else if (rq->op == HX_OP_RENAME && p2 && f->ev.moves_tree)
		/* a directory moved in may hold links (links: true) */
		hit = hx_pl_in_git(f->pl, p1, true) ||
		      hx_pl_in_git(f->pl, p2, true) ||
		      moves_code(f->pl, p1, p2) ||
		      (xchg && moves_code(f->pl, p2, p1)) ||
		      (in_roots(f->pl, p2) && !in_roots(f->pl, p1) &&
		       hx_gitconf_tree_has_bare(p1));
	else if (rq->op == HX_OP_RENAME && p2 && xchg)
		hit = git_code(f->pl, p1) || git_code(f->pl, p2);
	else if (rq->op == HX_OP_RENAME && p2)
		switch (git_place(f->pl, p2)) {
		case HX_GITCONF_CODE:
			hit = true;
			break;
		case HX_GITCONF_CONFIG:
			hit = hx_gitconf_file_names_code(p1);
			f->git_copy = !hit;
			break;
		default:
			break;
		}
	if (hit || arms_hook(f, p1, p2, xchg) ||
	    leaves_link_in_git(f, p1, p2)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:git-config";
		f->d.pattern = NULL;
	} else if (worktree_link_out(f, p1, p2)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:worktree-link";
		f->d.pattern = NULL;
	}
}
