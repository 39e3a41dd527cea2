/* The helper that binds masks in the agent's namespaces; see
 * maskbind.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/maskbind.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "supervisor/proc.h"

struct rq {
	uint32_t node;
	char path[PATH_MAX];
};

struct hx_maskbind {
	pid_t pid;
	int sock;
};

/* Whether our namespace of kind ns ("user") is already child's. */
static bool same_ns(pid_t child, const char *ns)
{
	struct hx_nsid a, b;

	return !hx_proc_ns(child, ns, &a) && !hx_proc_ns(0, ns, &b) &&
	       a.ino == b.ino && a.dev == b.dev;
}

/* Whether a directory above path is a mask (dev masks): a name made
 * beneath one (harness's own state under a masked ~/.local/state/harness:
 * this session's directory, another's) is hidden already, and the
 * look-up refused; it was recorded as a mask that failed. */
static bool beneath_mask(const char *path, dev_t masks)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	if ((size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir))
		return false;
	while ((slash = strrchr(dir, '/')) && slash != dir) {
		*slash = '\0';
		if (!lstat(dir, &st))
			return st.st_dev == masks;
	}
	return false;
}

/* Binds node over path, never through a symlink: over the symlink
 * itself when path is one (mounted on the O_NOFOLLOW fd's dentry), so
 * that the name is masked, not its target: one swapped in since the
 * watch saw the file would move the mask onto its target, and a held
 * credential re-pointed by the user's dotfile manager would name a file
 * Landlock grants. A path that is a mask already (the same file seen by
 * two events) is left: 1. */
static int32_t bind_over(const char *node, const char *path, dev_t masks)
{
	char at[64];
	struct stat st;
	int32_t e = 0;
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno == EACCES && beneath_mask(path, masks) ? 1
								    : -errno;
	snprintf(at, sizeof(at), "/proc/self/fd/%d", fd);
	if (fstat(fd, &st))
		e = -errno;
	else if (st.st_dev == masks)
		e = 1;
	else if (mount(node, at, NULL, MS_BIND, NULL))
		e = -errno; /* read-only, nosuid, nodev: the root's flags */
	close(fd);
	return e;
}

/* The helper: system calls only (forked from a multithreaded process). */
static void serve(int sock, int userns, int mntns, int root)
    __attribute__((noreturn));
static void serve(int sock, int userns, int mntns, int root)
{
	struct stat masks; /* the FUSE file system's device */
	char node[64];
	struct rq rq;
	int32_t e;

	/* Nothing of harness-exec's: a copy of the DNS keeper's socket kept
	 * the keeper, and harness-exec waiting for it, alive. */
	int keep[4] = {sock, userns, mntns, root};

	hx_fd_keep_only(keep, 4);
	if ((userns >= 0 && setns(userns, CLONE_NEWUSER)) ||
	    setns(mntns, CLONE_NEWNS) || fstat(root, &masks))
		_exit(1);
	for (;;) {
		ssize_t n = recv(sock, &rq, sizeof(rq), 0);

		if (n <= (ssize_t)sizeof(rq.node))
			_exit(0); /* harness-exec is done */
		rq.path[sizeof(rq.path) - 1] = '\0';
		snprintf(node, sizeof(node), "/proc/self/fd/%d/%u", root,
			 (unsigned)rq.node);
		e = bind_over(node, rq.path, masks.st_dev);
		if (send(sock, &e, sizeof(e), MSG_NOSIGNAL) != sizeof(e))
			_exit(0);
	}
}

int hx_maskbind_start(pid_t child, int root, struct hx_maskbind **out)
{
	struct hx_maskbind *b = calloc(1, sizeof(*b));
	int sv[2], userns = -1, mntns, e;
	char path[64];

	*out = NULL;
	if (!b)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)child);
	mntns = open(path, O_RDONLY | O_CLOEXEC);
	if (!same_ns(child, "user")) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)child);
		userns = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (mntns < 0 || (userns < 0 && !same_ns(child, "user")) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		e = -errno;
		goto fail;
	}
	b->pid = fork();
	if (b->pid == 0) {
		close(sv[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		serve(sv[1], userns, mntns, root);
	}
	e = b->pid < 0 ? -errno : 0;
	close(sv[1]);
	if (e) {
		close(sv[0]);
		goto fail;
	}
	b->sock = sv[0];
	close(mntns);
	if (userns >= 0)
		close(userns);
	*out = b;
	return 0;
fail:
	if (mntns >= 0)
		close(mntns);
	if (userns >= 0)
		close(userns);
	free(b);
	return e ? e : -EIO;
}

int hx_maskbind_bind(struct hx_maskbind *b, size_t i, const char *path)
{
	struct rq rq = {.node = (uint32_t)i};
	int32_t e;
	size_t len = strlen(path);

	if (len >= sizeof(rq.path))
		return -ENAMETOOLONG;
	memcpy(rq.path, path, len + 1);
	if (send(b->sock, &rq, sizeof(rq.node) + len + 1, MSG_NOSIGNAL) < 0)
		return -errno;
	if (recv(b->sock, &e, sizeof(e), 0) != sizeof(e))
		return -EPIPE; /* the helper is gone */
	return e;
}

pid_t hx_maskbind_pid(const struct hx_maskbind *b)
{
	return b ? b->pid : 0;
}

void hx_maskbind_free(struct hx_maskbind *b)
{
	if (!b)
		return;
	close(b->sock); /* the helper ends */
	if (b->pid > 0)
		waitpid(b->pid, NULL, 0);
	free(b);
}
