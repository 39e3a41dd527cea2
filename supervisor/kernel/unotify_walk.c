/* The caller's own walk of its name (unotify_int.h, hx_un_walk_named):
 * apart from unotify_target.c, as it lets go of a dirfd taken from the
 * agent (hx_un_put_fd, a wait of the workers'). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/path.h"
#include "supervisor/kernel/caps.h"

/* Whether the walk of full (absolute, as named) met a symlink: decided,
 * its resolution, is not its lexical form. */
static bool took_links(const char *full, const char *decided)
{
	char norm[PATH_MAX];

	return !full || !decided ||
	       hx_path_normalize(NULL, full, norm, sizeof(norm)) < 0 ||
	       strcmp(norm, decided);
}

/* Whether raw has a ".." component: the kernel walks up from what the
 * name before it is, which must be a directory (ENOTDIR: "file/../x"),
 * where the normalized form has dropped both. */
static bool has_dotdot(const char *raw)
{
	for (const char *p = strstr(raw, ".."); p; p = strstr(p + 2, ".."))
		if ((p == raw || p[-1] == '/') && (!p[2] || p[2] == '/'))
			return true;
	return false;
}

int hx_un_walk_named(const struct target *t, int dirfd, const char *raw,
		     const char *full, const char *decided, bool follow,
		     uint64_t limits)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC |
					(follow ? 0 : O_NOFOLLOW),
			       .resolve = limits & HX_UN_WALK_LIMITS};
	char path[PATH_MAX + 32], link[64];
	const char *p = raw;
	bool own = false, drop;
	int at, fd, e;

	if (!how.resolve && !took_links(full, decided) && !has_dotdot(raw))
		return 0; /* the decided path's walk is the named one */
	if (raw[0] == '/') {
		if (hx_un_proc_path(t, raw, path, sizeof(path)))
			return 0;
		/* /proc/self, or its number: the target's own, whatever its
		 * dumpable flag */
		own = strcmp(path, raw) != 0 ||
		      hx_un_proc_num(raw) == t->peer.pid ||
		      hx_un_proc_num(raw) == t->tid;
		if (own && (how.resolve & RESOLVE_NO_SYMLINKS))
			return -ELOOP; /* /proc/self is a symlink */
		for (p = path; *p == '/'; p++)
			;
		if (!*p)
			p = ".";
		/* The target's root, in its own mount namespace. */
		snprintf(link, sizeof(link), "/proc/%d/root", (int)t->peer.pid);
		at = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else if (dirfd == AT_FDCWD) {
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)t->tid);
		at = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		at = hx_un_call_fd(t, dirfd);
	}
	if (at < 0)
		return 0; /* the call answers (EBADF...) */
	/* With the target's rights: no CAP_SYS_PTRACE through another
	 * process's /proc/<pid>/cwd, root or fd (a root process's cwd
	 * was walked, and acted in). */
	drop = !own && !hx_caps_effective(CAP_TO_MASK(CAP_SYS_PTRACE), 0);
	fd = (int)syscall(SYS_openat2, at, p, &how, sizeof(how));
	e = fd < 0 ? errno : 0;
	if (drop)
		hx_caps_effective(CAP_TO_MASK(CAP_SYS_PTRACE), 1);
	if (fd >= 0)
		close(fd);
	hx_un_put_fd(at);
	return e == ELOOP || e == EXDEV || e == EACCES || e == ENOTDIR ? -e : 0;
}
