/* Paths from the agent are hostile: lexical normalization and the
 * /proc/self rewrite, pure (no file system access). */
#ifndef HX_PATH_H
#define HX_PATH_H

#include <stddef.h>
#include <sys/types.h>

/* Normalizes an absolute path lexically: collapses "//", "." and ".."
 * ("/.." stays "/"), drops a trailing '/'. Returns 0, -EINVAL when in is
 * not absolute, -ENAMETOOLONG when in or out does not fit PATH_MAX/size. */
int hx_path_normalize(const char *in, char *out, size_t size);

/* Rewrites a normalized "/proc/self[/...]" to "/proc/<pid>[/...]" and
 * "/proc/thread-self[/...]" to "/proc/<pid>/task/<tid>[/...]", in place
 * (buf has size bytes). The supervisor's /proc/self is not the agent's.
 * Returns 0 or -ENAMETOOLONG. */
int hx_path_rewrite_proc_self(char *buf, size_t size, pid_t pid, pid_t tid);

#endif
