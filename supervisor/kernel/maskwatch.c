/* New entries of the walked directories, judged for masks; see
 * maskwatch.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/maskwatch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "policy/policy.h"

/* Moves too: a directory renamed is watched under its new name (the
 * same watch, its path updated), a file renamed over a mask is masked
 * again (the kernel drops a mount on a dentry renamed over). */
#define EVENTS (IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)
/* Deeper new directories are not looked into (counted). */
#define MAX_DEPTH 64

struct dir {
	char *path;
	dev_t dev;
	ino_t ino;
	bool held; /* watched for its names only (hx_maskwatch_names) */
};

/* Of HX_MASKWATCH_MAX, those the project's walk may take: the rest are
 * the held paths' (a few hundred directories at most). */
#define WALKED_MAX (HX_MASKWATCH_MAX - 1024)

struct hx_maskwatch {
	const struct hx_policy *p;
	int fd;
	struct dir *dirs; /* by watch descriptor */
	size_t cap, ndirs, unwatched, seen, stale, overflows;
	size_t refused; /* watches the user's inotify counts refused */
	char **denies;	/* hx_maskwatch_denies' */
	size_t ndenies;
	bool said_full;
	char *quiet; /* hx_maskwatch_quiet's, or NULL */
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

/* dir, opened without following a symlink anywhere in it: a path the
 * agent changed (a directory renamed, a symlink put in its place) must
 * not lead the watch out of the project. */
static int open_dir(const char *path)
{
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
			       .resolve =
				   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* Watches dfd (path); a held directory watched already as a walked one
 * stays walked (its entries are judged whole). The watch descriptor, or
 * -errno. */
static int watch_dir(struct hx_maskwatch *w, int dfd, const char *path,
		     bool held)
{
	char at[64];
	struct stat st;
	int wd;

	/* The project's directories leave room for the held ones: an
	 * agent that left 16,384 directories in the project had the next
	 * session watch no credential's directory (~/.cache/huggingface),
	 * and a token rewritten during it was read. */
	if (w->ndirs >= (held ? HX_MASKWATCH_MAX : WALKED_MAX)) {
		w->unwatched++;
		if (!w->said_full && !held) {
			w->said_full = true;
			fprintf(stderr,
				"harness-exec: warning: more than %d "
				"directories in the project: files made later "
				"in the others are masked only when their "
				"directory is new\n",
				WALKED_MAX);
		}
		return -ENOSPC;
	}
	if (fstat(dfd, &st))
		return -errno;
	snprintf(at, sizeof(at), "/proc/self/fd/%d", dfd);
	if ((wd = inotify_add_watch(w->fd, at, EVENTS)) < 0) {
		if (errno == ENOSPC || errno == ENOMEM)
			w->refused++; /* max_user_watches: another's */
		return -errno;
	}
	if ((size_t)wd >= w->cap) {
		size_t cap = (size_t)wd * 2 + 64;
		struct dir *d = realloc(w->dirs, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		memset(d + w->cap, 0, (cap - w->cap) * sizeof(*d));
		w->dirs = d;
		w->cap = cap;
	}
	/* The same directory again (renamed: inotify gives its wd back)
	 * takes its new name. */
	if (w->dirs[wd].path) {
		free(w->dirs[wd].path);
		held = held && w->dirs[wd].held;
	} else
		w->ndirs++;
	w->dirs[wd] = (struct dir){strdup(path), st.st_dev, st.st_ino, held};
	return w->dirs[wd].path ? wd : -ENOMEM;
}

int hx_maskwatch_add(struct hx_maskwatch *w, int dfd, const char *path)
{
	int wd = watch_dir(w, dfd, path, false);

	return wd < 0 ? wd : 0;
}

/* Whether dir is watched already: by that name, and the directory there
 * now the one watched (a rename's event may be queued still). The held
 * paths at start share their directories (~, ~/.config), each opened
 * and watched again for every one. */
static bool watched(const struct hx_maskwatch *w, const char *dir)
{
	struct stat st;

	for (size_t i = 0; i < w->cap; i++)
		if (w->dirs[i].path && !strcmp(w->dirs[i].path, dir))
			return !lstat(dir, &st) && S_ISDIR(st.st_mode) &&
			       st.st_dev == w->dirs[i].dev &&
			       st.st_ino == w->dirs[i].ino;
	return false;
}

int hx_maskwatch_quiet(struct hx_maskwatch *w, const char *dir)
{
	free(w->quiet);
	return (w->quiet = strdup(dir)) ? 0 : -ENOMEM;
}

int hx_maskwatch_names(struct hx_maskwatch *w, const char *dir)
{
	int dfd, wd;

	if (watched(w, dir) || (w->quiet && !strcmp(dir, w->quiet)))
		return 0;
	if ((dfd = open_dir(dir)) < 0)
		return dfd;
	wd = watch_dir(w, dfd, dir, true);
	close(dfd);
	return wd < 0 ? wd : 0;
}

/* Looks for the deepest directories of sorted paths, remembering the
 * last one's walk: the credential stores share their parents ($HOME,
 * ~/.config), which were looked up once a path, three hundred times a
 * start. */
struct deep_walk {
	char prev[PATH_MAX]; /* the last path walked */
	size_t have;	     /* its longest prefix that is a directory */
};

/* Length of the longest common prefix of a and b that ends at a '/' of
 * both (a directory of both). */
static size_t common_dir(const char *a, const char *b)
{
	size_t i = 0, last = 0;

	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			last = i;
		i++;
	}
	if ((!a[i] && b[i] == '/') || (!b[i] && a[i] == '/'))
		last = i;
	return last;
}

/* The deepest directory of path that is there now, into dir. */
static int deepest_dir(struct deep_walk *k, const char *path, char *dir,
		       size_t size)
{
	size_t n = strlen(path), c = common_dir(path, k->prev), at;
	struct stat st;
	int r = 0;

	if (n >= size || n >= sizeof(k->prev))
		return -ENAMETOOLONG;
	memcpy(dir, path, n + 1);
	/* Known up to the shared part; past the last walk's directory its
	 * next name was missing (or no directory): the same answer. */
	at = c < k->have ? c : k->have;
	if (k->have < c) {
		dir[k->have] = '\0';
		r = k->have ? 0 : -ENOENT;
		goto out;
	}
	for (;;) {
		char *slash = strchr(dir + at + 1, '/');

		if (!slash)
			break; /* path's own name: its parent is the answer */
		*slash = '\0';
		if (lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
			*slash = '/';
			break;
		}
		*slash = '/';
		at = (size_t)(slash - dir);
	}
	dir[at] = '\0';
	r = at ? 0 : -ENOENT; /* "/" itself: not watched */
out:
	memcpy(k->prev, path, n + 1);
	k->have = r ? 0 : strlen(dir);
	return r;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int hx_maskwatch_denies(struct hx_maskwatch *w, const char *const *paths,
			size_t n)
{
	struct deep_walk *k = calloc(1, sizeof(*k));
	char dir[PATH_MAX], last[PATH_MAX] = "";

	if (!k || w->denies || !(w->denies = calloc(n, sizeof(*w->denies)))) {
		free(k);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (!(w->denies[i] = strdup(paths[i]))) {
			free(k);
			return -ENOMEM;
		}
		w->ndenies++;
	}
	qsort(w->denies, n, sizeof(*w->denies), by_path);
	for (size_t i = 0; i < n; i++)
		if (!deepest_dir(k, w->denies[i], dir, sizeof(dir)) &&
		    strcmp(dir, last)) {
			hx_maskwatch_names(w, dir);
			strcpy(last, dir);
		}
	free(k);
	return 0;
}

/* Whether a held deny lies strictly beneath path. */
static bool leads_to_deny(const struct hx_maskwatch *w, const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < w->ndenies; i++)
		if (!strncmp(w->denies[i], path, n) && w->denies[i][n] == '/')
			return true;
	return false;
}

int hx_maskwatch_hold(struct hx_maskwatch *w, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];

	if (!slash || slash == path || (size_t)(slash - path) >= sizeof(dir))
		return -EINVAL;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return hx_maskwatch_names(w, dir);
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

static void scan(struct hx_maskwatch *w, int dfd, const char *path,
		 unsigned depth, found_fn fn, void *arg);

/* Entry name of the directory open at dfd, whose path is path/name:
 * handed on when denied (a directory masked whole; a symlink on its
 * name), else a directory watched and looked into. */
static void entry(struct hx_maskwatch *w, int dfd, const char *dir,
		  const char *name, unsigned depth, found_fn fn, void *arg)
{
	char path[PATH_MAX];
	struct stat st;
	int sub;

	if (!strcmp(name, ".") || !strcmp(name, "..") ||
	    !strcmp(name, ".git") ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
		sizeof(path) ||
	    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return;
	w->seen++;
	/* A denied name that is a symlink is masked itself (maskbind.c):
	 * its target may be a file the policy does not name. */
	if (denied(w->p, path)) {
		fn(path, S_ISDIR(st.st_mode), arg);
		return;
	}
	if (!S_ISDIR(st.st_mode))
		return;
	if (depth >= MAX_DEPTH) {
		w->unwatched++;
		return;
	}
	sub =
	    openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return;
	/* Watched first, then looked into: what is made meanwhile is
	 * seen one way or the other. Looked into even past the cap. */
	hx_maskwatch_add(w, sub, path);
	scan(w, sub, path, depth + 1, fn, arg);
	close(sub);
}

/* A listing of the directory open at dfd (which stays open), or NULL. */
static DIR *listing(int dfd)
{
	int lfd = dup(dfd);
	DIR *d = lfd < 0 ? NULL : fdopendir(lfd);

	if (!d && lfd >= 0)
		close(lfd);
	return d;
}

/* What the directory open at dfd already holds (consumes nothing). */
static void scan(struct hx_maskwatch *w, int dfd, const char *path,
		 unsigned depth, found_fn fn, void *arg)
{
	struct dirent *de;
	DIR *d = listing(dfd);

	if (!d)
		return;
	while ((de = readdir(d)))
		entry(w, dfd, path, de->d_name, depth, fn, arg);
	closedir(d);
}

/* Name made in dir (open at dfd), a directory watched for its names
 * (hx_maskwatch_names): handed on when the policy denies it (a held
 * mask's file renamed over it or made anew; a symlink too, masked on
 * its name), nothing walked: the directory is not the session's. */
static void name_entry(struct hx_maskwatch *w, int dfd, const char *dir,
		       const char *name, found_fn fn, void *arg)
{
	char path[PATH_MAX];
	struct stat st;

	if (!strcmp(name, ".") || !strcmp(name, "..") ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
		sizeof(path) ||
	    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) ||
	    S_ISSOCK(st.st_mode))
		return; /* a socket's connect is the kernel layer's to decide */
	w->seen++;
	/* A symlink on the way to a held deny leads it to a file Landlock
	 * grants: masked on its name (lookups beneath it fail). */
	if (denied(w->p, path) ||
	    (S_ISLNK(st.st_mode) && leads_to_deny(w, path)))
		fn(path, S_ISDIR(st.st_mode), arg);
}

/* The names of dir (open at dfd), looked at again. */
static void name_scan(struct hx_maskwatch *w, int dfd, const char *dir,
		      found_fn fn, void *arg)
{
	struct dirent *de;
	DIR *d = listing(dfd);

	if (!d)
		return;
	while ((de = readdir(d)))
		name_entry(w, dfd, dir, de->d_name, fn, arg);
	closedir(d);
}

/* The directory of watch wd, if it is still the one watched: its path
 * is the agent's to change (a rename whose event is still queued). */
static int reopen(struct hx_maskwatch *w, int wd)
{
	struct stat st;
	int dfd;

	if (wd < 0 || (size_t)wd >= w->cap || !w->dirs[wd].path)
		return -1;
	if ((dfd = open_dir(w->dirs[wd].path)) < 0)
		return -1;
	if (fstat(dfd, &st) || st.st_ino != w->dirs[wd].ino ||
	    st.st_dev != w->dirs[wd].dev) {
		w->stale++;
		close(dfd);
		return -1;
	}
	return dfd;
}

/* Events were lost (the kernel's queue overflowed): every watched
 * directory is looked at again. */
static void rescan_all(struct hx_maskwatch *w, found_fn fn, void *arg)
{
	w->overflows++;
	for (size_t wd = 0; wd < w->cap; wd++) {
		int dfd = reopen(w, (int)wd);

		if (dfd < 0)
			continue;
		if (w->dirs[wd].held)
			name_scan(w, dfd, w->dirs[wd].path, fn, arg);
		else
			scan(w, dfd, w->dirs[wd].path, 0, fn, arg);
		close(dfd);
	}
}

void hx_maskwatch_read(struct hx_maskwatch *w, found_fn fn, void *arg)
{
	char buf[65536]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(w->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;
			int dfd;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				rescan_all(w, fn, arg);
				continue;
			}
			/* Removed: its descriptor may name another later. */
			if ((ev->mask & IN_IGNORED) && ev->wd >= 0 &&
			    (size_t)ev->wd < w->cap && w->dirs[ev->wd].path) {
				free(w->dirs[ev->wd].path);
				w->dirs[ev->wd].path = NULL;
				w->ndirs--;
				continue;
			}
			if (!ev->len || (dfd = reopen(w, ev->wd)) < 0)
				continue;
			if (w->dirs[ev->wd].held)
				name_entry(w, dfd, w->dirs[ev->wd].path,
					   ev->name, fn, arg);
			else
				entry(w, dfd, w->dirs[ev->wd].path, ev->name, 0,
				      fn, arg);
			close(dfd);
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
	if (w->stale)
		json_object_set_new(o, "stale",
				    json_integer((json_int_t)w->stale));
	if (w->overflows)
		json_object_set_new(o, "overflows",
				    json_integer((json_int_t)w->overflows));
	if (w->refused)
		json_object_set_new(o, "refused",
				    json_integer((json_int_t)w->refused));
	return o;
}

size_t hx_maskwatch_refused(const struct hx_maskwatch *w)
{
	return w ? w->refused : 0;
}

/* The keeper of close_elsewhere: holds fds[0] until fds[1], a pipe's
 * read end, says EOF. It shares our memory (CLONE_VM), so it makes
 * system calls only, on a stack of its own, with every signal blocked. */
static int keeper(void *arg)
{
	int *fds = arg, rd = fds[1], keep[2] = {fds[0], fds[1]};
	char c;

	hx_fd_keep_only(keep, 2);     /* sorts keep */
	syscall(SYS_read, rd, &c, 1); /* no signal comes: EOF */
	return 0;		      /* the last close, here */
}

/* Closing an inotify instance that had watches waits for an SRCU grace
 * period (fsnotify_destroy_group): 8 to 20 ms here, on every session's
 * end. A child holds a copy and closes it after ours, in its own time:
 * our close is not the last. Nobody waits for it. The child is cloned
 * into our memory, not forked: a fork copied every page table of
 * harness-exec, and made each page the rest of the teardown writes
 * fault once more. */
static void close_elsewhere(int fd)
{
	static char stack[16384] __attribute__((aligned(16)));
	static int fds[2];
	sigset_t all, old;
	int p[2];

	if (pipe2(p, O_CLOEXEC)) {
		close(fd); /* then we wait */
		return;
	}
	fds[0] = fd;
	fds[1] = p[0];
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	clone(keeper, stack + sizeof(stack), CLONE_VM | SIGCHLD, fds);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	close(fd);   /* without a keeper, we wait here */
	close(p[1]); /* after ours: the keeper closes its copy last */
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
		free(w->dirs[i].path);
	free(w->dirs);
	for (size_t i = 0; i < w->ndenies; i++)
		free(w->denies[i]);
	free(w->denies);
	free(w->quiet);
	free(w);
}
