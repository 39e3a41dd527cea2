/* What predates the session in a kept store; see existing.h. */
#define _GNU_SOURCE
#include "supervisor/existing.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "policy/policy.h"

static bool born_before(const char *path, const struct timespec *since,
			bool *dir)
{
	struct statx sx;
	const struct statx_timestamp *t;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW,
		  STATX_TYPE | STATX_BTIME | STATX_CTIME, &sx))
		return false; /* nothing there: what the call makes is new */
	*dir = S_ISDIR(sx.stx_mode);
	t = (sx.stx_mask & STATX_BTIME) ? &sx.stx_btime : &sx.stx_ctime;
	return t->tv_sec < since->tv_sec ||
	       (t->tv_sec == since->tv_sec && t->tv_nsec < since->tv_nsec);
}

/* path predates since and is kept, or is a directory above what is
 * kept (moving it, and back, would carry what is beneath past the
 * rule). */
static bool kept(const struct hx_policy *p, const char *path,
		 const struct timespec *since)
{
	struct hx_event ev = {.op = HX_OP_WRITE, .path = path};
	struct hx_decision d;
	bool dir = false;

	if (!path || !born_before(path, since, &dir))
		return false;
	hx_policy_decide(p, &ev, &d);
	return (d.verdict == HX_VERDICT_ALLOW && d.keep_existing) ||
	       (dir && hx_policy_keeps_beneath(p, path));
}

bool hx_existing_refuses(const struct hx_policy *p, enum hx_op op,
			 const char *path, const char *path2,
			 const struct timespec *since)
{
	if (!hx_policy_keeps_existing(p))
		return false;
	switch (op) {
	case HX_OP_RENAME:
	case HX_OP_LINK:
		return kept(p, path, since) || kept(p, path2, since);
	case HX_OP_WRITE:
	case HX_OP_UNLINK:
	case HX_OP_RMDIR:
	case HX_OP_TRUNCATE:
		return kept(p, path, since);
	default:
		return false;
	}
}
