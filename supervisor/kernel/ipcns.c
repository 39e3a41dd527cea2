/* The agent's IPC namespace and its message queue mounts; see ipcns.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/ipcns.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>

#include "supervisor/mountalias.h"

#define MAX_POINTS   64
#define MQUEUE_MAGIC 0x19800202 /* linux/magic.h */

/* The mount points of the mqueue file systems in this mount namespace
 * (mountinfo: the type follows " - "). Returns how many, or -errno
 * (more than MAX_POINTS: -E2BIG, so none is left uncovered). */
static int mqueue_points(char pts[][PATH_MAX])
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *sep, *save, *fld;
	size_t cap = 0;
	int n = 0, e = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (!(sep = strstr(line, " - ")) ||
		    strncmp(sep, " - mqueue ", 10))
			continue;
		fld = strtok_r(line, " ", &save);
		for (int i = 0; fld && i < 4; i++)
			fld = strtok_r(NULL, " ", &save);
		if (!fld || n == MAX_POINTS) {
			e = fld ? -E2BIG : -EINVAL;
			break;
		}
		hx_mountinfo_unescape(fld);
		if (snprintf(pts[n], PATH_MAX, "%s", fld) >= PATH_MAX) {
			e = -ENAMETOOLONG;
			break;
		}
		n++;
	}
	free(line);
	fclose(f);
	return e ? e : n;
}

int hx_ipcns_enter(bool private_mounts)
{
	static char pts[MAX_POINTS][PATH_MAX];
	int n = mqueue_points(pts);

	/* A mount made outside a private namespace would be the user's
	 * too; one not known is one not covered. */
	if (n < 0 || (n > 0 && !private_mounts))
		return 0;
	if (unshare(CLONE_NEWIPC))
		return 0;
	for (int i = 0; i < n; i++)
		if (mount("mqueue", pts[i], "mqueue",
			  MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
			return -errno;
	return 1;
}

bool hx_ipcns_path(const char *path)
{
	char dir[PATH_MAX], *slash;
	struct statfs s;

	if (!statfs(path, &s))
		return s.f_type == MQUEUE_MAGIC;
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) ||
	    !(slash = strrchr(dir, '/')))
		return false;
	slash[slash == dir] = '\0';
	return !statfs(dir, &s) && s.f_type == MQUEUE_MAGIC;
}

bool hx_ipcns_fd(int fd)
{
	struct statfs s;

	return !fstatfs(fd, &s) && s.f_type == MQUEUE_MAGIC;
}
