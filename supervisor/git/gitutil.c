/* libgit2 helpers; see gitutil.h. */
#include "supervisor/git/gitutil.h"

#include <errno.h>
#include <git2.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "supervisor/fmt.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_rc;

static void do_init(void)
{
	init_rc = git_libgit2_init() < 0 ? -EIO : 0;
	/* We only ever write our own refs; fsync them so a crash of the
	 * machine does not leave a ref naming a missing object. */
	if (!init_rc)
		git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 1);
}

int hx_git_init(void)
{
	pthread_once(&once, do_init);
	return init_rc;
}

const char *hx_git_err(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown error";
}

int hx_git_errno(int gerr)
{
	switch (gerr) {
	case 0:
		return 0;
	case GIT_ENOTFOUND:
		return -ENOENT;
	case GIT_EEXISTS:
		return -EEXIST;
	case GIT_ELOCKED:
	case GIT_EMODIFIED:
		return -EBUSY;
	default:
		return -EIO;
	}
}

bool hx_git_retryable(int gerr)
{
	return gerr == GIT_ELOCKED || gerr == GIT_EMODIFIED;
}

bool hx_git_backoff(int attempt)
{
	struct timespec ts;

	if (attempt >= 40)
		return false;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(attempt < 10 ? 5 : 60) * 1000000L;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	return true;
}

const char *hx_git_json_path(json_t *o, const char *k, const char *path)
{
	size_t n;
	char *buf;
	json_t *v, *list;

	if (hx_utf8_valid(path)) {
		v = json_string(path);
	} else {
		n = hx_fmt_escape_bytes(path, NULL, 0);
		if (!(buf = malloc(n + 1)))
			return NULL;
		hx_fmt_escape_bytes(path, buf, n + 1);
		v = json_string(buf);
		free(buf);
		if (!(list = json_object_get(o, "escaped")))
			json_object_set_new(o, "escaped", list = json_array());
		json_array_append_new(list, json_string(k));
	}
	if (!v || json_object_set_new(o, k, v))
		return NULL;
	return json_string_value(v);
}

json_t *hx_git_hidden_entry(const char *path, const char *by, const char *now)
{
	json_t *o = json_object();

	hx_git_json_path(o, "path", path);
	json_object_set_new(o, "hidden_by", json_string(by));
	if (now)
		json_object_set_new(o, "now", json_string(now));
	return o;
}
