/* The user-notify handler: inotify_add_watch (unotify_int.h). A watch
 * tells the names of what is made, opened and changed in a directory,
 * and when, and Landlock has no hook there: a root agent watched
 * ~/.ssh and saw the user's ssh open its key. Decided as the read of
 * the path it names, and added by the worker to the agent's own
 * inotify instance (the fd taken once), on the decided file. */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

void hx_un_watch(struct hx_unotify *u, const struct seccomp_notif *n,
		 const struct target *t, struct answer *a)
{
	uint32_t mask = (uint32_t)n->data.args[2];
	bool nofollow = mask & IN_DONT_FOLLOW;
	struct open_how how = {
	    .flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	char raw[PATH_MAX], full[PATH_MAX], self[64];
	int ifd, pfd, wd;
	struct job j;
	int e;

	if ((e = hx_un_read_str(t->tid, n->data.args[1], raw, sizeof(raw)))) {
		a->err = -e;
		return;
	}
	if ((a->err = hx_un_path_arg(u, n->id, t, AT_FDCWD, raw, full,
				     sizeof(full))))
		return;
	hx_un_job(&j, t, HX_CALL_INOTIFY_ADD_WATCH, HX_OP_READ);
	j.rq.path = full;
	/* IN_DONT_FOLLOW watches a final symlink itself, as O_NOFOLLOW
	 * opens it: decided so. */
	j.rq.has_flags = nofollow;
	j.rq.flags = nofollow ? O_NOFOLLOW : 0;
	if ((a->err = hx_un_judge(u, t, &j, NULL)))
		return;
	/* /proc's files are another process's view (and magic links):
	 * nothing a watch there tells is worth that seam. */
	if (!j.decided[0] || !strncmp(j.decided, "/proc/", 6) ||
	    !strcmp(j.decided, "/proc")) {
		a->err = EACCES;
		return;
	}
	/* The target's own walk of its name ("file/../d": ENOTDIR). */
	if ((e = hx_un_walk_named(t, AT_FDCWD, raw, full, j.decided, !nofollow,
				  0))) {
		a->err = -e;
		return;
	}
	/* The decided file, every symlink of its path resolved already: one
	 * there now is a swap after the decision (ELOOP). The agent's own
	 * /dev/pts is opened in its view (hx_un_openat2). */
	if ((pfd = hx_un_openat2(t, j.decided, &how)) < 0) {
		a->err = pfd == -ELOOP || pfd == -EXDEV ? EACCES : -pfd;
		return;
	}
	if ((ifd = hx_un_call_fd(t, (int)n->data.args[0])) < 0) {
		close(pfd);
		a->err = ifd == -EBADF ? EBADF : EACCES;
		return;
	}
	/* Through our fd's magic link, to that very file (a symlink
	 * itself when IN_DONT_FOLLOW opened one: the jump is not followed
	 * further), so IN_DONT_FOLLOW is not passed on. */
	snprintf(self, sizeof(self), "/proc/thread-self/fd/%d", pfd);
	wd = inotify_add_watch(ifd, self, mask & ~(uint32_t)IN_DONT_FOLLOW);
	e = wd < 0 ? errno : 0;
	hx_un_put_fd(ifd);
	close(pfd);
	if (e) {
		a->err = e;
		return;
	}
	atomic_fetch_add(&u->n_emul, 1);
	a->kind = ANS_VALUE;
	a->val = wd;
}
