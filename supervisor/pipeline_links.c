/* The pipeline's judgement of writes to a file with other names
 * (pipeline_int.h). */
#define _GNU_SOURCE
#include "supervisor/pipeline_int.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "common/wire.h"

/* Whether the call changes the file at path (its content, length, mode,
 * owner, attributes or times) rather than a name. */
static bool changes_inode(const struct hx_request *rq)
{
	if (rq->op == HX_OP_TRUNCATE)
		return true;
	if (rq->op != HX_OP_WRITE)
		return false;
	switch (rq->call) {
	case HX_CALL_MKNOD:
	case HX_CALL_BIND:
	case HX_CALL_LISTEN:
	case HX_CALL_INOTIFY_ADD_WATCH:
	case HX_CALL_DNS_QUERY:
		return false;
	default:
		return true;
	}
}

/* A regular file with at least links names, made before the session
 * (its birth; a link made since does not change it): the file at path,
 * or the one open as dirfd when path is "". */
static bool named_before(int dirfd, const char *path, unsigned links,
			 const struct timespec *since)
{
	struct statx sx;
	const struct statx_timestamp *t;

	if (statx(dirfd, path,
		  AT_SYMLINK_NOFOLLOW | (path[0] ? 0 : AT_EMPTY_PATH),
		  STATX_TYPE | STATX_NLINK | STATX_BTIME | STATX_CTIME, &sx) ||
	    !S_ISREG(sx.stx_mode) || sx.stx_nlink < links)
		return false;
	t = (sx.stx_mask & STATX_BTIME) ? &sx.stx_btime : &sx.stx_ctime;
	return t->tv_sec < since->tv_sec ||
	       (t->tv_sec == since->tv_sec && t->tv_nsec < since->tv_nsec);
}

/* Judge: a file with other names that predates the session is not
 * changed in place, whatever rule allows the name the agent used: each
 * name is that one file, and the others may be anywhere the agent may
 * not write. pnpm links its store's files into every project's
 * node_modules, uv (by default on Linux) and conda the files of their
 * caches into every environment, so an edit of the project's
 * node_modules/x/index.js, or of .venv/.../x.py, changed that package
 * in the user's other projects and in the store (nineteenth attack
 * review); so would a snapshot made by cp -al. Its names may be removed
 * or replaced: a new file is no one else's. harness:shared-file. */
void hx_pl_judge_shared_file(struct flow *f)
{
	const char *path = hx_pl_judged_path(&f->p1);

	if (!hx_pl_may_proceed(f) || !path || !changes_inode(f->rq) ||
	    !named_before(AT_FDCWD, path, 2, &f->pl->started))
		return;
	f->d.verdict = HX_VERDICT_DENY;
	f->d.rule = "harness:shared-file";
	f->d.pattern = NULL;
}

bool hx_pipeline_shared_fd(const struct hx_pipeline *pl, int fd)
{
	return pl->mode != HX_MODE_AUDIT &&
	       named_before(fd, "", 2, &pl->started);
}

bool hx_pipeline_named_fd(const struct hx_pipeline *pl, int fd)
{
	return pl->mode != HX_MODE_AUDIT &&
	       named_before(fd, "", 1, &pl->started);
}
