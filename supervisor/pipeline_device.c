/* The pipeline's judgement of device nodes (pipeline_int.h). */
#define _GNU_SOURCE
#include "supervisor/pipeline_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/wire.h"

/* The calls that change an inode's own mode, owner, times or
 * attributes, or its names, not its data. */
static bool changes_inode(const struct hx_request *rq)
{
	if (rq->op == HX_OP_UNLINK || rq->op == HX_OP_RENAME ||
	    rq->op == HX_OP_LINK)
		return true;
	switch (rq->call) {
	case HX_CALL_CHMOD:
	case HX_CALL_CHOWN:
	case HX_CALL_FCHMOD:
	case HX_CALL_FCHOWN:
	case HX_CALL_SETXATTR:
	case HX_CALL_REMOVEXATTR:
	case HX_CALL_UTIMES:
	case HX_CALL_IOCTL:
		return true;
	default:
		return false;
	}
}

void hx_pl_in_view(pid_t pid, const char *path, char *out, size_t size)
{
	if (pid > 0 && pid != getpid())
		snprintf(out, size, "/proc/%d/root%s", (int)pid, path);
	else
		snprintf(out, size, "%s", path);
}

enum hx_device_kind hx_pipeline_device_kind(pid_t pid, const struct stat *st)
{
	char pts[64];
	struct stat own, host;
	bool has_host;

	if (!S_ISCHR(st->st_mode) && !S_ISBLK(st->st_mode))
		return HX_DEV_NONE;
	has_host = !stat("/dev/pts", &host);
	/* a pty of the session's own devpts, which programs chmod and
	 * chown as they open one (Codex's did); only when the session has
	 * one: in audit mode, or where no devpts of its own could be
	 * mounted, the agent's /dev/pts is ours, the host's, and its ptys
	 * are the user's other terminals */
	hx_pl_in_view(pid, "/dev/pts", pts, sizeof(pts));
	if (pid > 0 && !stat(pts, &own) && own.st_dev == st->st_dev &&
	    (!has_host || host.st_dev != own.st_dev))
		return HX_DEV_OWN_PTY;
	return has_host && host.st_dev == st->st_dev ? HX_DEV_TERMINAL
						     : HX_DEV_HOST;
}

void hx_pipeline_view_root(struct hx_pipeline *pl, pid_t child)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)child);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		pl->view_root = fd;
		pl->has_view_root = true;
	}
}

/* stat of path (absolute) as pid sees it: from its root as /proc's
 * link gives it, the walk the same (an absolute link on the way
 * resolved from ours, as there). */
static int view_stat(const struct hx_pipeline *pl, pid_t pid, const char *path,
		     struct stat *st)
{
	char view[PATH_MAX + 32];

	if (pid > 0 && pid != getpid() && pl->has_view_root)
		return fstatat(pl->view_root, path[1] ? path + 1 : ".", st, 0);
	hx_pl_in_view(pid, path, view, sizeof(view));
	return stat(view, st);
}

/* What v names in the agent's view of the file system (its own
 * /dev/pts is not harness-exec's). */
static enum hx_device_kind device_node(const struct flow *f,
				       const struct vpath *v)
{
	pid_t pid = f->peer->gone ? 0 : f->peer->pid;
	struct stat st;

	if (!v->ok)
		return HX_DEV_NONE;
	return view_stat(f->pl, pid, hx_pl_judged_path(v), &st)
		   ? HX_DEV_NONE
		   : hx_pipeline_device_kind(pid, &st);
}

/* Judge: a device node the agent may write to (the devices rule:
 * /dev/null, /dev/tty...) is the host's, and its mode, owner, times,
 * attributes and names are not the agent's to change (a root agent
 * made /dev/null 0600, and removed /dev/full, for the whole machine):
 * harness:device-inode, in audit mode too, as the harness's own files
 * are. A terminal of the host's devpts (the user's others, reached in
 * audit mode) is harness:terminal-inode, enforced as the policy is, as
 * writing to it is: in audit mode the pty a program opens is on that
 * devpts, and Codex sets its mode at every command. Through an fd, the
 * kernel layer says what the fd's file is (rq->device); by path, it
 * refuses a host device again on the inode it acts on (unotify_mut.c). */
void hx_pl_judge_device_inode(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	enum hx_device_kind k;

	if (!hx_pl_may_proceed(f) || !changes_inode(rq))
		return;
	k = rq->device ? (enum hx_device_kind)rq->device
		       : device_node(f, &f->p1);
	if (rq->op == HX_OP_RENAME && k < HX_DEV_TERMINAL)
		k = device_node(f, &f->p2);
	if (k < HX_DEV_TERMINAL)
		return;
	f->d.verdict = HX_VERDICT_DENY;
	f->d.rule = k == HX_DEV_HOST ? "harness:device-inode"
				     : "harness:terminal-inode";
	f->d.pattern = NULL;
}

/* A pty the agent's own devpts instance does not have (terminals.h):
 * in its view the name exists only if the session made that pty, so a
 * /dev/pts/N it lacks is another terminal (the host's same name, which
 * harness-exec's own view would reach) or nothing; either way not one
 * of the session's. */
bool hx_pl_other_terminal(const struct hx_peer *peer, const struct vpath *v)
{
	const char *paths[2] = {v->ok ? v->norm : NULL,
				v->has_resolved ? v->resolved : NULL};
	char p[PATH_MAX + 32];
	struct stat st;

	if (!v->ok || peer->pid <= 0 || peer->gone || peer->pid == getpid())
		return false;
	for (int i = 0; i < 2; i++) {
		const char *s = paths[i];

		if (!s || strncmp(s, "/dev/pts/", 9) || !s[9] ||
		    strspn(s + 9, "0123456789") != strlen(s + 9))
			continue;
		snprintf(p, sizeof(p), "/proc/%d/root%s", (int)peer->pid, s);
		if (stat(p, &st) && errno == ENOENT)
			return true;
	}
	return false;
}

/* Whether v names the terminal a question holds: /dev/tty (the agent's
 * controlling terminal is harness-exec's) or a pty of that device. */
bool hx_pl_held_terminal(const struct hx_pipeline *pl, const struct vpath *v)
{
	const char *paths[2] = {v->ok ? v->norm : NULL,
				v->has_resolved ? v->resolved : NULL};
	struct stat st;

	for (int i = 0; i < 2 && pl->held_tty; i++)
		if (paths[i] && (!strcmp(paths[i], "/dev/tty") ||
				 (!strncmp(paths[i], "/dev/pts/", 9) &&
				  !stat(paths[i], &st) && S_ISCHR(st.st_mode) &&
				  st.st_rdev == pl->held_tty)))
			return true;
	return false;
}
