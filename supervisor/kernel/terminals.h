/* The agent's terminals (issue 10, class 4): the user's other terminal
 * sessions are ptys of the same uid in /dev/pts, which the agent could
 * read (steal what is typed) or write (fake a prompt). The agent's first
 * process mounts a devpts instance of its own on /dev/pts, in its
 * private mount namespace (masks.h), and binds its ptmx over /dev/ptmx:
 * in the agent's view /dev/pts holds only the ptys the session makes
 * (`script`, a terminal tool, Python's pty), which keep working, and no
 * other. Its controlling terminal stays reachable as /dev/tty and
 * through the descriptors it inherited; by its /dev/pts/N name it is
 * not (ttyname() finds nothing). This holds in the kernel, for static
 * programs too; the supervisor opens /dev/pts and /dev/ptmx paths in
 * the agent's view (unotify.c), never in its own. */
#ifndef HX_TERMINALS_H
#define HX_TERMINALS_H

/* In the agent's first process, inside its private mount namespace:
 * mounts a new devpts instance on /dev/pts and binds its ptmx over
 * /dev/ptmx. Returns 0 or -errno. Async-signal-safe. */
int hx_terminals_isolate(void);

/* Whether path names something of /dev/pts or /dev/ptmx, which the
 * agent's view and harness-exec's no longer share. */
int hx_terminals_path(const char *path);

#endif
