/* A listening Unix socket file of the harness's (the session socket,
 * the control socket, --metrics unix:PATH, harness-mcp --http
 * unix:PATH), made where nobody else can touch it before it is ready. */
#ifndef HX_UNIXLISTEN_H
#define HX_UNIXLISTEN_H

#include <stdbool.h>
#include <sys/stat.h>

/* Binds a socket of type at path and listens. The file is made in a
 * private directory beside path (0700, this user's, checked through
 * its own fd), made mode 0600 there, then renamed to path without
 * replacing anything: a bind then chmod by path would follow a symlink
 * put at path in between (by whoever may write path's directory) and
 * chmod the file it names. stale: a socket file at path that nothing
 * listens on may be replaced (a session that was killed). *file: the
 * socket file's device and inode (NULL: not wanted). Returns the fd or
 * -errno (-EADDRINUSE: path exists). */
int hx_unix_listen(const char *path, int type, int backlog, bool stale,
		   struct stat *file);

/* Removes path if it is still the socket file file (device, inode),
 * through its directory's fd: neither a swapped parent nor another
 * file put at path is removed. */
void hx_unix_remove(const char *path, const struct stat *file);

#endif
