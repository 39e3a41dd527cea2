/* Symlink resolution of an agent's path, as the agent would see it:
 * anchored at its root, with /proc/self meaning the agent. OS-touching
 * (lstat, readlink, O_PATH opens); the supervisor never opens what it
 * resolves for reading or writing. */
#ifndef HX_RESOLVE_H
#define HX_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Resolves the absolute path norm for process pid (thread tid, 0:
 * pid) as the kernel walks it: follows every symlink (the last one only
 * when follow_last), a ".." after one going up from where it led, and
 * resolves "/proc/self" and "/proc/thread-self" to the agent, not to the
 * supervisor. Components that do not exist are kept lexically; a /proc
 * magic link that names no path (pipe:[N]) ends the walk. The result is
 * normalized. A result inside /proc/<pid> is written back as /proc/self, the
 * way policies name it. Returns 0, -ELOOP, -ENAMETOOLONG or -errno. */
int hx_path_resolve(pid_t pid, pid_t tid, const char *norm, bool follow_last,
		    char *out, size_t size);
/* Same, for a process whose root is known to be ours (root_ours: read
 * once, the agent cannot chroot) instead of read from /proc again. */
int hx_path_resolve_root(pid_t pid, pid_t tid, bool root_ours, const char *norm,
			 bool follow_last, char *out, size_t size);
/* Whether process pid's root is ours (/proc/<pid>/root reads "/"; a
 * process gone: ours too, as it was). */
bool hx_path_root_ours(pid_t pid);

/* realpath(3) in two system calls instead of one a component: the
 * path the kernel reaches from path (every symlink followed): path
 * itself, normalized, when its walk meets no symlink (an openat2 with
 * RESOLVE_NO_SYMLINKS), else through an O_PATH fd's /proc link (without
 * /proc, realpath's walk). Returns 0, -ENAMETOOLONG or -errno of the
 * open (ENOENT, ENOTDIR, EACCES...). */
int hx_path_real(const char *path, char *out, size_t size);

/* path as process pid (thread tid) names it, made absolute: relative to
 * dirfd (AT_FDCWD: the thread's cwd), read from /proc; the text is not
 * normalized. Returns 0, -ENOENT (empty path, no cwd), -EBADF,
 * -ENOTDIR (a base that names no directory, "pipe:[3]"),
 * -ENAMETOOLONG. */
int hx_path_absolute(pid_t pid, pid_t tid, int dirfd, const char *path,
		     char *out, size_t size);

#endif
