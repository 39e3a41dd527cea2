/* New entries of the walked directories, judged for masks; see
 * maskwatch.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/maskwatch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "policy/policy.h"

#define EVENTS (IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW)

struct hx_maskwatch {
	const struct hx_policy *p;
	int fd;
	char **dirs; /* by watch descriptor */
	size_t cap, ndirs, unwatched, seen;
};

int hx_maskwatch_new(const struct hx_policy *p, struct hx_maskwatch **out)
{
	struct hx_maskwatch *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->p = p;
	if ((w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) < 0) {
		int e = -errno;

		free(w);
		return e;
	}
	*out = w;
	return 0;
}

int hx_maskwatch_add(struct hx_maskwatch *w, const char *dir)
{
	int wd;

	if (w->ndirs >= HX_MASKWATCH_MAX) {
		w->unwatched++;
		return -ENOSPC;
	}
	if ((wd = inotify_add_watch(w->fd, dir, EVENTS)) < 0)
		return -errno;
	if ((size_t)wd >= w->cap) {
		size_t cap = (size_t)wd * 2 + 64;
		char **d = realloc(w->dirs, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		memset(d + w->cap, 0, (cap - w->cap) * sizeof(*d));
		w->dirs = d;
		w->cap = cap;
	}
	if (!w->dirs[wd]) { /* a directory watched twice keeps one wd */
		if (!(w->dirs[wd] = strdup(dir)))
			return -ENOMEM;
		w->ndirs++;
	}
	return 0;
}

int hx_maskwatch_fd(const struct hx_maskwatch *w)
{
	return w->fd;
}

static bool denied(const struct hx_policy *p, const char *path)
{
	struct hx_event r = {.op = HX_OP_READ, .path = path};
	struct hx_event wr = {.op = HX_OP_WRITE, .path = path};
	struct hx_decision d;

	hx_policy_decide(p, &r, &d);
	if (d.verdict == HX_VERDICT_ALLOW)
		return false;
	hx_policy_decide(p, &wr, &d);
	return d.verdict != HX_VERDICT_ALLOW;
}

typedef void (*found_fn)(const char *path, bool is_dir, void *arg);

static void entry(struct hx_maskwatch *w, const char *path, bool is_dir,
		  found_fn fn, void *arg);

/* A new directory: watched, and what it holds already looked at (made
 * before the watch: `mkdir -p a/b && echo > a/b/.env`). */
static void new_dir(struct hx_maskwatch *w, const char *path, found_fn fn,
		    void *arg)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (hx_maskwatch_add(w, path) || !(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, ".git") ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", path,
				     de->d_name) >= sizeof(sub))
			continue;
		entry(w, sub, de->d_type == DT_DIR, fn, arg);
	}
	closedir(d);
}

static void entry(struct hx_maskwatch *w, const char *path, bool is_dir,
		  found_fn fn, void *arg)
{
	struct stat st;

	/* Symlinks are followed at open time: their targets are what the
	 * masks judge (as the walk does). */
	if (lstat(path, &st) || S_ISLNK(st.st_mode))
		return;
	is_dir = S_ISDIR(st.st_mode);
	w->seen++;
	if (denied(w->p, path))
		fn(path, is_dir, arg); /* a directory masked whole */
	else if (is_dir)
		new_dir(w, path, fn, arg);
}

void hx_maskwatch_read(struct hx_maskwatch *w, found_fn fn, void *arg)
{
	char buf[65536]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	char path[PATH_MAX];
	ssize_t n;

	while ((n = read(w->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;

			p += sizeof(*ev) + ev->len;
			/* Removed: its descriptor may name another later. */
			if ((ev->mask & IN_IGNORED) && ev->wd >= 0 &&
			    (size_t)ev->wd < w->cap && w->dirs[ev->wd]) {
				free(w->dirs[ev->wd]);
				w->dirs[ev->wd] = NULL;
				w->ndirs--;
				continue;
			}
			if (!ev->len || ev->wd < 0 ||
			    (size_t)ev->wd >= w->cap || !w->dirs[ev->wd] ||
			    !strcmp(ev->name, ".git") ||
			    (size_t)snprintf(path, sizeof(path), "%s/%s",
					     w->dirs[ev->wd],
					     ev->name) >= sizeof(path))
				continue;
			entry(w, path, ev->mask & IN_ISDIR, fn, arg);
		}
	}
}

json_t *hx_maskwatch_json(const struct hx_maskwatch *w)
{
	json_t *o = json_object();

	json_object_set_new(o, "dirs", json_integer((json_int_t)w->ndirs));
	json_object_set_new(o, "unwatched",
			    json_integer((json_int_t)w->unwatched));
	json_object_set_new(o, "seen", json_integer((json_int_t)w->seen));
	return o;
}

/* Closing an inotify instance that had watches waits for an SRCU grace
 * period (fsnotify_destroy_group): 8 to 20 ms here, on every session's
 * end. A child forked for it holds a copy and closes it after ours, in
 * its own time: our close is not the last. Nobody waits for it. */
static void close_elsewhere(int fd)
{
	int p[2], keep[2];
	char c;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) || (pid = fork()) < 0) {
		close(fd); /* then we wait */
		return;
	}
	if (pid == 0) {
		keep[0] = fd;
		keep[1] = p[0];
		hx_fd_keep_only(keep, 2);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0); /* the last close, here */
	}
	close(p[0]);
	close(fd);
	close(p[1]); /* after ours: the child closes its copy last */
}

void hx_maskwatch_free(struct hx_maskwatch *w)
{
	if (!w)
		return;
	if (w->ndirs || w->unwatched)
		close_elsewhere(w->fd);
	else
		close(w->fd);
	for (size_t i = 0; i < w->cap; i++)
		free(w->dirs[i]);
	free(w->dirs);
	free(w);
}
