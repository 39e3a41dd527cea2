/* Logs verified before a policy tool reads them; see logverify.h. */
#define _GNU_SOURCE
#include "tools/logverify.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/anchor.h"
#include "supervisor/audit.h"

int hx_log_verified(const char *tool, const char *log, const char *skipped,
		    FILE *err)
{
	return hx_log_verified_at(tool, log, log, skipped, err);
}

int hx_log_verified_at(const char *tool, const char *shown, const char *log,
		       const char *skipped, FILE *err)
{
	struct hx_audit_verify v;
	char why[512];
	size_t n;
	int r = hx_audit_verify(log, &v);

	if (r == 1)
		snprintf(why, sizeof(why), "line %llu: %s",
			 (unsigned long long)v.bad_line, v.reason);
	else if (r == 0)
		r = hx_anchor_check(log, NULL, true, &n, why, sizeof(why));
	if (r < 0)
		snprintf(why, sizeof(why), "%s", strerror(-r));
	if (r)
		fprintf(err, "%s: %s: %s: does not verify, %s\n", tool, shown,
			why, skipped);
	return r ? -1 : 0;
}

int hx_log_hold(const char *tool, const char *log, const char *skipped,
		struct hx_log_held *h, FILE *err)
{
	h->fd = open(log, O_RDONLY | O_CLOEXEC);
	if (h->fd < 0 || fstat(h->fd, &h->st)) {
		fprintf(err, "%s: %s: %s\n", tool, log, strerror(errno));
		if (h->fd >= 0)
			close(h->fd);
		h->fd = -1;
		return -1;
	}
	snprintf(h->at, sizeof(h->at), "/proc/self/fd/%d", h->fd);
	return !hx_log_verified_at(tool, log, h->at, skipped, err);
}

bool hx_log_release(const char *tool, const char *log, const char *skipped,
		    struct hx_log_held *h, FILE *err)
{
	struct stat b;
	const struct stat *a = &h->st;
	bool same;

	if (h->fd < 0)
		return false;
	same = !fstat(h->fd, &b) && a->st_dev == b.st_dev &&
	       a->st_ino == b.st_ino && a->st_size == b.st_size &&
	       a->st_mtim.tv_sec == b.st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b.st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b.st_ctim.tv_nsec;
	close(h->fd);
	h->fd = -1;
	if (!same && skipped)
		fprintf(err,
			"%s: %s: changed while read: does not verify, %s\n",
			tool, log, skipped);
	return same;
}
