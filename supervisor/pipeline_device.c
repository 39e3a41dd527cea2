/* The pipeline's judgement of device nodes (pipeline_int.h). */
#include "supervisor/pipeline_int.h"

#include <stdio.h>
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

/* Whether v names a device node in the agent's view of the file system
 * (its own /dev/pts is not harness-exec's). */
static bool device_node(const struct flow *f, const struct vpath *v)
{
	const struct hx_peer *p = f->peer;
	char path[PATH_MAX + 32];
	struct stat st;

	if (!v->ok)
		return false;
	if (p->pid > 0 && !p->gone && p->pid != getpid())
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)p->pid,
			 hx_pl_judged_path(v));
	else
		snprintf(path, sizeof(path), "%s", hx_pl_judged_path(v));
	return !stat(path, &st) && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode));
}

/* Judge: a device node the agent may write to (the devices rule:
 * /dev/null, /dev/tty...) is the host's, and its mode, owner, times,
 * attributes and names are not the agent's to change (a root agent
 * made /dev/null 0600, and removed /dev/full, for the whole machine);
 * in audit mode too, as the harness's own files are. Through an fd,
 * the kernel layer says what the fd's file is (rq->device); by path,
 * it refuses a mode, owner or attribute again on the inode it acts on
 * (unotify_mut.c). */
void hx_pl_judge_device_inode(struct flow *f)
{
	const struct hx_request *rq = f->rq;

	if (f->d.verdict != HX_VERDICT_ALLOW || !changes_inode(rq) ||
	    !(rq->device || device_node(f, &f->p1) ||
	      (rq->op == HX_OP_RENAME && device_node(f, &f->p2))))
		return;
	f->d.verdict = HX_VERDICT_DENY;
	f->d.rule = "harness:device-inode";
	f->d.pattern = NULL;
}
