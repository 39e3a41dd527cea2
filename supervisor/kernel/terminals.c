/* The agent's own devpts instance; see terminals.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/terminals.h"

#include <errno.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

int hx_terminals_isolate(void)
{
	struct stat st;

	/* ptmxmode: the instance's ptmx is 0000 by default; mode and no
	 * gid=: the tty group is not mapped in an ordinary user's user
	 * namespace, so a slave is the user's (the kernel's default). */
	if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		  "newinstance,ptmxmode=0666,mode=0620"))
		return -errno;
	/* /dev/ptmx is a device of the host's instance (or a symlink to
	 * pts/ptmx, which now names ours): a pty made through it must be
	 * one of the agent's. */
	if (lstat("/dev/ptmx", &st) || S_ISLNK(st.st_mode))
		return 0;
	if (mount("/dev/pts/ptmx", "/dev/ptmx", NULL, MS_BIND, NULL))
		return -errno;
	return 0;
}

int hx_terminals_path(const char *path)
{
	return !strcmp(path, "/dev/ptmx") || !strcmp(path, "/dev/pts") ||
	       !strncmp(path, "/dev/pts/", 9);
}
