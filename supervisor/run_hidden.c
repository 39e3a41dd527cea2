/* At the session's end: the changes the project's git index now hides
 * from git status and git diff (git/hidden.h), and a branch the session
 * rewrote, recorded (hidden_changes, history_rewritten) and said on
 * stderr. The plugin (libgit2: ~20 ms to load and set up) is asked, in
 * a child of its own, only when the index changed during the session,
 * a git index was written, the branch moved, or the project has
 * submodules. */
#define _GNU_SOURCE
#include "supervisor/run_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/notice.h"
#include "supervisor/git/hidden.h"
#include "supervisor/git/objfix.h"
#include "supervisor/kernel/oomshield.h"
#include "supervisor/fmt.h"
#include "supervisor/record.h"
#include "supervisor/say.h"
#include "supervisor/sha256.h"

/* A regular file of the agent's, at most 64 MiB, open to read by
 * lines: no symlink followed, no fifo waited on (one would hold
 * harness-exec in open(2): .git, HEAD, packed-refs are the agent's to
 * make). NULL otherwise. */
static FILE *open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > (64 << 20) ||
	    !(f = fdopen(fd, "re"))) {
		close(fd);
		return NULL;
	}
	return f;
}

/* The first line of path into out (size bytes), its newline cut. */
static bool read_line(const char *path, char *out, size_t size)
{
	FILE *f = open_regular(path);
	bool ok = f && fgets(out, (int)size, f);

	if (f)
		fclose(f);
	if (ok)
		out[strcspn(out, "\r\n")] = '\0';
	return ok;
}

/* The git directory of the work tree holding dir (a ".git" directory,
 * or the one a ".git" file names) into out, that work tree's top into
 * top (PATH_MAX); false when there is none. */
static bool git_dir(const char *dir, char *out, size_t size, char *top)
{
	char d[PATH_MAX], line[PATH_MAX + 16], *slash;
	struct stat st;

	snprintf(d, sizeof(d), "%s", dir);
	for (;;) {
		if ((size_t)snprintf(out, size, "%s/.git", d) >= size)
			return false;
		snprintf(top, PATH_MAX, "%s", d);
		if (lstat(out, &st))
			st.st_mode = 0;
		if (S_ISDIR(st.st_mode))
			return true;
		if (S_ISREG(st.st_mode)) {
			bool ok = read_line(out, line, sizeof(line)) &&
				  !strncmp(line, "gitdir: ", 8);

			return ok && (size_t)snprintf(out, size, "%s%s%s",
						      line[8] == '/' ? "" : d,
						      line[8] == '/' ? "" : "/",
						      line + 8) < size;
		}
		if (!(slash = strrchr(d, '/')) || slash == d)
			return false;
		*slash = '\0';
	}
}

/* Whether dir's index changed since the session began: its ctime, which
 * the kernel sets and no one can set back. Or whether the repository
 * has submodules (.gitmodules): their indexes are the agent's to write
 * as well, wherever their git directories are; the check looks at each
 * that changed. */
static bool index_changed(const char *dir, const struct timespec *since)
{
	char gd[PATH_MAX], index[PATH_MAX + 8], top[PATH_MAX];
	struct stat st;

	if (!git_dir(dir, gd, sizeof(gd), top))
		return false;
	snprintf(index, sizeof(index), "%.*s/.gitmodules", PATH_MAX - 16, top);
	if (!lstat(index, &st))
		return true;
	snprintf(index, sizeof(index), "%s/index", gd);
	return !stat(index, &st) && (st.st_ctim.tv_sec > since->tv_sec ||
				     (st.st_ctim.tv_sec == since->tv_sec &&
				      st.st_ctim.tv_nsec >= since->tv_nsec));
}

/* The first line of gd/name into out, its newline cut. */
static bool first_line(const char *gd, const char *name, char *out, size_t size)
{
	char path[PATH_MAX * 2];

	return (size_t)snprintf(path, sizeof(path), "%s/%s", gd, name) <
		   sizeof(path) &&
	       read_line(path, out, size);
}

static bool is_oid(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return (n == 40 || n == 64) && !s[n];
}

/* The commit a branch (refs/...) names, as git reads it: its loose file
 * in gd or in the common directory, else its line of packed-refs. */
/* The common directory of git directory gd (a worktree's names it in
 * commondir), into out. */
static void common_dir(const char *gd, char *out, size_t size)
{
	char common[PATH_MAX];

	if (first_line(gd, "commondir", common, sizeof(common)))
		snprintf(out, size, "%s%s%s", common[0] == '/' ? "" : gd,
			 common[0] == '/' ? "" : "/", common);
	else
		snprintf(out, size, "%s", gd);
}

static bool ref_value(const char *gd, const char *ref, char *out, size_t size)
{
	char dirs[2][PATH_MAX * 2 + 2], line[PATH_MAX * 3];
	size_t len = strlen(ref);
	FILE *f;

	if (strncmp(ref, "refs/", 5) || strstr(ref, ".."))
		return false;
	snprintf(dirs[0], sizeof(dirs[0]), "%s", gd);
	common_dir(gd, dirs[1], sizeof(dirs[1]));
	for (int i = 0; i < 2; i++)
		if (first_line(dirs[i], ref, out, size) && is_oid(out))
			return true;
	snprintf(line, sizeof(line), "%s/packed-refs", dirs[1]);
	if (!(f = open_regular(line)))
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		line[strcspn(line, "\n")] = '\0';
		if (sp && !strncmp(sp + 1, ref, len) && !sp[1 + len] &&
		    (size_t)(sp - line) < size) {
			*sp = '\0';
			memcpy(out, line, (size_t)(sp - line) + 1);
			fclose(f);
			return is_oid(out);
		}
	}
	fclose(f);
	return false;
}

/* ---- objects git reads in place of others ----
 *
 * A replace ref (refs/replace/OID, loose or a line of packed-refs) or a
 * graft (info/grafts) has git read another object wherever the first
 * is named: a commit of the user's replaced by one of the agent's whose
 * tree holds its change (git replace OLD NEW, then git add) leaves git
 * status and git diff empty and git log showing the user's own hash and
 * message, the branch unmoved (twenty-fourth attack review). Each that
 * the session made, changed or removed is a history_rewritten record
 * (ref, was, now) and a warning. */

#define SUBST_MAX   4096 /* entries read; past it, "..." counts them */
#define SUBST_DEPTH 8	 /* directories beneath refs/replace */

static void subst_walk(json_t *o, const char *dir, const char *rel, int depth)
{
	char path[PATH_MAX], name[PATH_MAX], val[128];
	struct dirent *e;
	DIR *d;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (json_object_size(o) >= SUBST_MAX) {
			json_object_set_new(o, "...", json_string("more"));
			break;
		}
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
				     e->d_name) >= sizeof(path) ||
		    (size_t)snprintf(name, sizeof(name), "%s/%s", rel,
				     e->d_name) >= sizeof(name))
			continue;
		if (e->d_type == DT_DIR && depth < SUBST_DEPTH)
			subst_walk(o, path, name, depth + 1);
		else /* the agent's bytes (escaped when recorded); "?": a
		      * ref git cannot read as one, there */
			json_object_set_new_nocheck(
			    o, name,
			    json_string_nocheck(
				read_line(path, val, sizeof(val)) ? val : "?"));
	}
	closedir(d);
}

/* The packed replace refs of common/packed-refs a loose one does not
 * stand in front of. */
static void subst_packed(json_t *o, const char *common)
{
	char line[PATH_MAX * 3];
	FILE *f;

	snprintf(line, sizeof(line), "%s/packed-refs", common);
	if (!(f = open_regular(line)))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		line[strcspn(line, "\r\n")] = '\0';
		if (!sp || strncmp(sp + 1, "refs/replace/", 13))
			continue;
		*sp = '\0';
		if (json_object_size(o) >= SUBST_MAX) {
			json_object_set_new(o, "...", json_string("more"));
			break;
		}
		if (!json_object_get(o, sp + 1))
			json_object_set_new_nocheck(o, sp + 1,
						    json_string_nocheck(line));
	}
	fclose(f);
}

/* A graft file's content, by its digest. */
static void subst_grafts(json_t *o, const char *common)
{
	char path[PATH_MAX * 3], hex[65];
	FILE *f;
	char *buf = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/info/grafts", common);
	if (!(f = open_regular(path))) {
		struct stat st;

		if (!lstat(path, &st)) /* a fifo, a link: there, unread */
			json_object_set_new(o, "info/grafts", json_string("?"));
		return;
	}
	{
		FILE *m = open_memstream(&buf, &len);
		char chunk[4096];
		size_t n;

		while (m && (n = fread(chunk, 1, sizeof(chunk), f)))
			fwrite(chunk, 1, n, m);
		if (m)
			fclose(m);
	}
	fclose(f);
	hx_sha256_hex(buf ? buf : "", buf ? len : 0, hex);
	free(buf);
	json_object_set_new(o, "info/grafts", json_string(hex));
}

/* What git reads in place of objects in the repository of dir: name ->
 * value. NULL when dir is in none. */
static json_t *subst_read(const char *dir)
{
	char gd[PATH_MAX], top[PATH_MAX];
	char cd[PATH_MAX * 2 + 2], refs[sizeof(cd) + 16];
	json_t *o;

	if (!git_dir(dir, gd, sizeof(gd), top) || !(o = json_object()))
		return NULL;
	common_dir(gd, cd, sizeof(cd));
	snprintf(refs, sizeof(refs), "%s/refs/replace", cd);
	subst_walk(o, refs, "refs/replace", 0);
	subst_packed(o, cd);
	subst_grafts(o, cd);
	return o;
}

static void say_subst(const char *name, const char *was, const char *now)
{
	char buf[1024];

	fprintf(stderr,
		"harness: warning: the session %s %s: git reads another "
		"object in place of the one it names, and git log, status "
		"and diff show that one (was %.12s, now %.12s)\n",
		!*was	? "made"
		: !*now ? "removed"
			: "changed",
		hx_text_safe(buf, sizeof(buf), name), *was ? was : "nothing",
		*now ? now : "nothing");
}

static void record_subst(struct run *r, const char *name, const char *was,
			 const char *now)
{
	json_t *rec = hx_record_new(&r->pl, NULL, "history_rewritten", NULL);

	json_object_set_new(rec, "category", json_string("file_write"));
	hx_record_set_text(rec, rec, "repository", "repository", r->cwd);
	hx_record_set_text(rec, rec, "ref", "ref", name);
	hx_record_set_text(rec, rec, "was", "was", was);
	hx_record_set_text(rec, rec, "now", "now", now);
	hx_record_append(&r->pl, rec, NULL);
	json_decref(rec);
	if (!r->o->quiet)
		say_subst(name, was, now);
}

/* Each replace ref or graft the session made, changed or removed. */
static void subst_changes(struct run *r)
{
	json_t *now = subst_read(r->cwd), *was = r->subst, *v;
	const char *name;

	r->subst = NULL;
	if (!was)
		was = json_object();
	json_object_foreach(now, name, v)
	{
		const char *before =
		    json_string_value(json_object_get(was, name));

		if (!before || strcmp(before, json_string_value(v)))
			record_subst(r, name, before ? before : "",
				     json_string_value(v));
	}
	json_object_foreach(was, name, v)
	{
		if (!json_object_get(now, name))
			record_subst(r, name, json_string_value(v), "");
	}
	json_decref(was);
	json_decref(now);
}

void hx_run_hidden_start(struct run *r)
{
	char gd[PATH_MAX], top[PATH_MAX], head[PATH_MAX];

	r->head_ref[0] = r->head_oid[0] = '\0';
	r->subst = subst_read(r->cwd);
	if (!git_dir(r->cwd, gd, sizeof(gd), top) ||
	    !first_line(gd, "HEAD", head, sizeof(head)))
		return;
	/* A detached HEAD is the commit the user is on: amended and checked
	 * out, it was rewritten as a branch is (twenty-fourth attack
	 * review). */
	if (is_oid(head) && strlen(head) < sizeof(r->head_oid)) {
		snprintf(r->head_oid, sizeof(r->head_oid), "%s", head);
		snprintf(r->head_ref, sizeof(r->head_ref), "HEAD");
		return;
	}
	if (strncmp(head, "ref: ", 5) ||
	    strlen(head + 5) >= sizeof(r->head_ref))
		return;
	if (ref_value(gd, head + 5, r->head_oid, sizeof(r->head_oid)))
		snprintf(r->head_ref, sizeof(r->head_ref), "%s", head + 5);
	else
		r->head_oid[0] = '\0';
}

/* Whether the branch of the start names another commit now (its value
 * in r->head_now, "" when it names none). */
static bool head_moved(struct run *r)
{
	char gd[PATH_MAX], top[PATH_MAX];

	r->head_now[0] = '\0';
	if (!r->head_oid[0])
		return false;
	if (!git_dir(r->cwd, gd, sizeof(gd), top))
		return true;
	if (!strcmp(r->head_ref, "HEAD")) { /* detached at the start */
		char head[PATH_MAX];

		if (!first_line(gd, "HEAD", head, sizeof(head)))
			head[0] = '\0';
		if (is_oid(head) && strlen(head) < sizeof(r->head_now))
			snprintf(r->head_now, sizeof(r->head_now), "%s", head);
		else if (strncmp(head, "ref: ", 5) ||
			 !ref_value(gd, head + 5, r->head_now,
				    sizeof(r->head_now)))
			r->head_now[0] = '\0';
	} else if (!ref_value(gd, r->head_ref, r->head_now,
			      sizeof(r->head_now))) {
		r->head_now[0] = '\0';
	}
	return strcmp(r->head_now, r->head_oid) != 0;
}

static void say_rewritten(struct run *r)
{
	char buf[1024];

	hx_text_safe(buf, sizeof(buf), r->head_ref);
	fprintf(stderr,
		"harness: warning: the session rewrote %s: it was %.12s, now "
		"%.12s, which does not hold it (git log shows what the "
		"session put in its commits as they were; git diff %.12s "
		"%.12s shows it)\n",
		buf, r->head_oid, r->head_now[0] ? r->head_now : "nothing",
		r->head_oid, r->head_now[0] ? r->head_now : "HEAD");
}

/* A history_rewritten record, and the warning. */
static void record_rewritten(struct run *r)
{
	json_t *rec = hx_record_new(&r->pl, NULL, "history_rewritten", NULL);

	json_object_set_new(rec, "category", json_string("file_write"));
	hx_record_set_text(rec, rec, "repository", "repository", r->cwd);
	hx_record_set_text(rec, rec, "ref", "ref", r->head_ref);
	hx_record_set_str(rec, "was", r->head_oid);
	hx_record_set_str(rec, "now", r->head_now);
	hx_record_append(&r->pl, rec, NULL);
	json_decref(rec);
	if (!r->o->quiet)
		say_rewritten(r);
}

/* Loose objects the session made that were not their content, removed
 * by the check's child (objfix.h): a record, and a line. */
static void record_forged(struct run *r, const char *objects, size_t n)
{
	char buf[PATH_MAX * 4];
	json_t *rec = hx_record_new(&r->pl, NULL, "forged_objects", NULL);

	json_object_set_new(rec, "category", json_string("file_write"));
	hx_record_set_text(rec, rec, "repository", "repository", objects);
	json_object_set_new(rec, "removed", json_integer((json_int_t)n));
	hx_record_append(&r->pl, rec, NULL);
	json_decref(rec);
	if (!r->o->quiet)
		fprintf(stderr,
			"harness: warning: %zu loose object%s the session "
			"made in %s did not hold what %s name says: removed "
			"(git would have shown and checked out other bytes "
			"than the file's)\n",
			n, n == 1 ? "" : "s",
			hx_text_safe(buf, sizeof(buf), objects),
			n == 1 ? "its" : "their");
}

static void say_hidden(json_t *changes, size_t unchecked)
{
	char buf[512];
	size_t i;
	json_t *c;

	if (json_array_size(changes))
		fprintf(stderr,
			"harness: warning: git status and git diff will not "
			"show %zu change%s the session made:\n",
			json_array_size(changes),
			json_array_size(changes) == 1 ? "" : "s");
	json_array_foreach(changes, i, c)
	{
		const char *now = hx_record_field(c, "now");

		fprintf(
		    stderr, "  %s (%s%s%s)\n",
		    hx_text_safe(buf, sizeof(buf), hx_record_field(c, "path")),
		    hx_record_field(c, "hidden_by"), *now ? ", now " : "", now);
	}
	if (unchecked)
		fprintf(stderr,
			"harness: warning: %zu file%s of the index not checked "
			"for hidden changes (larger than %u MiB)\n",
			unchecked, unchecked == 1 ? "" : "s",
			HX_HIDDEN_MAX_BYTES >> 20);
}

/* The check's bounds: it reads the agent's files (the index, every
 * .gitattributes on an entry's path), and one of them a fifo, or made
 * large, kept harness-exec from its session_end for good (libgit2 opens
 * them as they are). */
#define CHECK_MS     10000
#define CHECK_DATA   (1ul << 30)
#define CHECK_ANSWER (64u << 20)

/* Whether the session's repository's loose objects are checked here: the
 * agent wrote there, in a session without a worktree (a worktree's end
 * checks its own, before its last checkpoint). */
static bool sweeps(const struct run *r)
{
	return !r->wt && r->pl.git_objects && r->pl.git_objects_written;
}

/* Whether path is beneath the session's TMPDIR, which its end removes
 * with whatever repositories the agent made there. */
static bool in_session_tmp(const struct run *r, const char *path)
{
	const char *t = r->pl.git_tmp;
	size_t n = t ? strlen(t) : 0;

	return n && !strncmp(path, t, n) && (path[n] == '/' || !path[n]);
}

/* Sweeps what a kept store's name names now when that is not the
 * directory kept (fd): one swapped in after the write's decision, which
 * the write then went to (thirty-second review, part a). */
static void sweep_named(struct run *r, size_t i, json_t *a)
{
	const char *name = r->pl.nested_objs[i];
	struct stat now, kept;
	size_t n;

	if (stat(name, &now) || !S_ISDIR(now.st_mode) ||
	    fstat(r->pl.nested_fds[i], &kept) ||
	    (now.st_dev == kept.st_dev && now.st_ino == kept.st_ino) ||
	    in_session_tmp(r, name))
		return;
	if ((n = hx_objfix_sweep(name, &r->pl.started)))
		json_array_append_new(a,
				      json_pack("[s,I]", name, (json_int_t)n));
}

/* In the child: the other git dirs' stores the agent wrote loose
 * objects in (pipeline.h, nested_objs), each swept as the session's own
 * is, where it is now (one moved out of TMPDIR too), and what its name
 * names now: [[objects, removed]] for those that held a forged one. */
static json_t *sweep_nested(struct run *r)
{
	char fdp[64], now[PATH_MAX];
	json_t *a = json_array();
	ssize_t k;
	size_t n;

	for (size_t i = 0; a && i < r->pl.n_nested_objs; i++) {
		sweep_named(r, i, a);
		/* where it is now: moved, it is swept there */
		snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d",
			 r->pl.nested_fds[i]);
		if ((k = readlink(fdp, now, sizeof(now) - 1)) <= 0 ||
		    now[0] != '/')
			continue; /* removed: nothing left to read */
		now[k] = '\0';
		if (in_session_tmp(r, now))
			continue; /* removed with TMPDIR at the end */
		if ((n = hx_objfix_sweep(now, &r->pl.started)))
			json_array_append_new(
			    a, json_pack("[s,I]", now, (json_int_t)n));
	}
	return a;
}

/* In the child: the check, its answer (JSON) written to fd. */
_Noreturn static void check_child(struct run *r, int fd)
{
	struct rlimit rl = {CHECK_DATA, CHECK_DATA};
	char err[PATH_MAX + 128], gd[PATH_MAX], top[PATH_MAX];
	const char *ignores[HX_PL_GITIGNORES];
	json_t *changes = NULL, *o;
	size_t unchecked = 0, forged;

	/* the OOM killer's pick before harness-exec, as the agent is */
	hx_oom_expose_agent();
	setrlimit(RLIMIT_DATA, &rl);
	/* Loose objects planted under the ids of the agent's files: the
	 * user's git add of such a file writes no object (one exists), and
	 * the user's checkout gives the planted bytes (objfix.h). */
	forged =
	    sweeps(r) ? hx_objfix_sweep(r->pl.git_objects, &r->pl.started) : 0;
	for (size_t i = 0; i < r->pl.ngitignores; i++)
		ignores[i] = r->pl.gitignores[i];
	/* No repository here (a nested one's store swept only): no index */
	if (!git_dir(r->cwd, gd, sizeof(gd), top))
		o = json_pack("{s:[], s:I}", "changes", "unchecked",
			      (json_int_t)0);
	else if (hx_git_hidden_changes(r->cwd, &r->pl.started, ignores,
				       r->pl.ngitignores, &changes, &unchecked,
				       err, sizeof(err)))
		o = json_pack("{s:s}", "error", err);
	else
		o = json_pack("{s:o, s:I}", "changes", changes, "unchecked",
			      (json_int_t)unchecked);
	/* a branch that holds its commit of the start grew: not rewritten */
	if (o && r->head_oid[0])
		json_object_set_new(
		    o, "rewritten",
		    json_boolean(!r->head_now[0] ||
				 hx_git_contains(r->cwd, r->head_oid,
						 r->head_now) == 0));
	if (o)
		json_object_set_new(o, "forged",
				    json_integer((json_int_t)forged));
	if (o)
		json_object_set_new(o, "forged_nested", sweep_nested(r));
	_exit(o && !json_dumpfd(o, fd, JSON_COMPACT) ? 0 : 1);
}

/* The child's answer on fd, read until its end or the deadline, into
 * *buf (NUL-terminated, its length in *len). 0, or -ETIMEDOUT,
 * -E2BIG, -errno. */
static int read_answer(int fd, char **buf, size_t *len)
{
	struct timespec t0, t;
	size_t cap = 0;
	ssize_t n;
	int left;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	*buf = NULL;
	*len = 0;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = CHECK_MS - (int)((t.tv_sec - t0.tv_sec) * 1000 +
					(t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, left) < 0 && errno != EINTR)
			return -errno;
		if (*len + 4096 + 1 > cap) {
			char *nb;

			if (cap >= CHECK_ANSWER)
				return -E2BIG;
			cap = cap ? cap * 2 : 65536;
			if (!(nb = realloc(*buf, cap)))
				return -ENOMEM;
			*buf = nb;
		}
		n = read(fd, *buf + *len, cap - *len - 1);
		if (n == 0)
			break;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		*len += n > 0 ? (size_t)n : 0;
	}
	(*buf)[*len] = '\0';
	return 0;
}

/* hx_git_hidden_changes, run in a child of its own, at most CHECK_MS,
 * with CHECK_DATA of memory, the OOM killer's pick before harness-exec:
 * what its answer says (out, unchecked), or -errno with err. */
static int bounded_check(struct run *r, json_t **out, size_t *unchecked,
			 bool *rewritten, size_t *forged, char *err,
			 size_t errlen)
{
	int p[2], pfd, e, st;
	char *buf = NULL;
	size_t len;
	json_t *a = NULL, *g;
	size_t i;
	pid_t pid;

	if ((e = hx_git_plugin_load(err, errlen)))
		return e;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return snprintf(err, errlen, "pipe: %s", strerror(errno)),
		       -errno;
	if ((pid = fork()) == 0) {
		close(p[0]);
		fcntl(p[1], F_SETFL, 0);
		check_child(r, p[1]);
	}
	close(p[1]);
	pfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
	e = pid < 0 ? -errno : read_answer(p[0], &buf, &len);
	close(p[0]);
	if (pfd >= 0) {
		syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
		close(pfd);
	}
	/* ECHILD where the exec gate's tracer, the waiter of all, took it */
	while (pid > 0 && waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
	if (!e && !(a = json_loads(buf, 0, NULL)))
		e = -EIO;
	free(buf);
	if (e) {
		snprintf(err, errlen, "%s: %s", r->cwd,
			 e == -ETIMEDOUT ? "the check took more than 10 s"
			 : e == -EIO	 ? "the check ended with no answer"
					 : strerror(-e));
		return e;
	}
	*forged = (size_t)json_integer_value(json_object_get(a, "forged"));
	json_array_foreach(json_object_get(a, "forged_nested"), i, g)
	{
		const char *dir = json_string_value(json_array_get(g, 0));

		if (dir)
			record_forged(
			    r, dir,
			    (size_t)json_integer_value(json_array_get(g, 1)));
	}
	if (json_is_string(json_object_get(a, "error"))) {
		snprintf(err, errlen, "%s", hx_record_field(a, "error"));
		json_decref(a);
		return -EIO;
	}
	*rewritten = json_is_true(json_object_get(a, "rewritten"));
	*out = json_incref(json_object_get(a, "changes"));
	*unchecked =
	    (size_t)json_integer_value(json_object_get(a, "unchecked"));
	json_decref(a);
	return json_is_array(*out) ? 0 : (json_decref(*out), -EIO);
}

/* A change's path as the bytes it names: the child escaped one that is
 * no UTF-8 for JSON (hx_git_json_path), the record escapes it again
 * and says so. */
static const char *change_path(json_t *c, char *raw, size_t size)
{
	const char *p = hx_record_field(c, "path");
	json_t *e = json_object_get(c, "escaped");

	if (!json_array_size(e))
		return p;
	hx_fmt_unescape_bytes(p, raw, size);
	return raw;
}

void hx_run_hidden_changes(struct run *r)
{
	static char raw[2 * PATH_MAX];
	json_t *changes = NULL, *rec, *list, *c;
	int e;
	size_t unchecked = 0, i, forged = 0;
	char err[PATH_MAX + 128], buf[sizeof(err) * 4];
	bool moved = head_moved(r), rewritten = false;

	subst_changes(r);
	if (!index_changed(r->cwd, &r->pl.started) && !moved &&
	    !r->pl.git_index_written && !r->pl.ngitignores && !sweeps(r) &&
	    !r->pl.n_nested_objs)
		return;
	if (!moved)
		r->head_oid[0] = '\0'; /* the child need not look */
	e = bounded_check(r, &changes, &unchecked, &rewritten, &forged, err,
			  sizeof(err));
	if (forged)
		record_forged(r, r->pl.git_objects, forged);
	if (e) {
		/* git reads what libgit2 may not (a split index): the user
		 * is told that the check could not be made */
		hx_record_error(&r->pl, "hidden_changes_failed", "session end",
				err);
		if (!r->o->quiet)
			fprintf(stderr,
				"harness: warning: the git index was not "
				"checked for changes hidden from git status: "
				"%s\n",
				hx_text_safe(buf, sizeof(buf), err));
		return;
	}
	if (rewritten)
		record_rewritten(r);
	if (!json_array_size(changes) && !unchecked) {
		json_decref(changes);
		return;
	}
	rec = hx_record_new(&r->pl, NULL, "hidden_changes", NULL);
	list = json_array();
	json_array_foreach(changes, i, c)
	{
		json_t *o = json_object();

		hx_record_set_text(rec, o, "path", "changes.path",
				   change_path(c, raw, sizeof(raw)));
		hx_record_set_str(o, "hidden_by",
				  hx_record_field(c, "hidden_by"));
		if (json_object_get(c, "now"))
			hx_record_set_str(o, "now", hx_record_field(c, "now"));
		json_array_append_new(list, o);
	}
	json_object_set_new(rec, "category", json_string("file_write"));
	hx_record_set_text(rec, rec, "repository", "repository", r->cwd);
	json_object_set_new(rec, "changes", list);
	json_object_set_new(rec, "unchecked",
			    json_integer((json_int_t)unchecked));
	hx_record_append(&r->pl, rec, NULL);
	json_decref(rec);
	if (!r->o->quiet)
		say_hidden(changes, unchecked);
	json_decref(changes);
}
