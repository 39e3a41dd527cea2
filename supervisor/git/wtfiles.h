/* Plain files for the worktree: directories made along a path, and a
 * file or symlink copied from the user's checkout (--copy-untracked). */
#ifndef HX_WTFILES_H
#define HX_WTFILES_H

#include <jansson.h>
#include <sys/types.h>

/* mkdir -p path with mode. Returns 0 or -errno. */
int hx_wtfiles_mkdirs(const char *path, mode_t mode);

/* Copies the regular file or symlink from (not followed) to a new to,
 * making its directories; other kinds are skipped. 0 or -errno. */
int hx_wtfiles_copy(const char *from, const char *to);

/* o as one compact JSON line appended to dir/file (made 0600); a failed
 * write is said on stderr. */
void hx_wtfiles_append_json(const char *dir, const char *file, json_t *o);

#endif
