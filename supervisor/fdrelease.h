/* Letting go of what the agent may have handed the supervisor. */
#ifndef HX_FDRELEASE_H
#define HX_FDRELEASE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Closes fds, each of which may hold the agent's objects: an fd it
 * passed (SCM_RIGHTS), a unix socket whose queue holds such fds. The
 * last release of a file can wait on the agent: a TCP socket with
 * SO_LINGER waits for its peer to read, up to the time the agent chose
 * (forever, in effect), and a socket's queue releases the fds in flight
 * in it, nested as deep as the agent made them. The release is left to
 * a thread of its own with a copy of the fd table, which exits at once:
 * the kernel makes no exiting task linger, and nothing that serves the
 * session waits on it. About 50 us a call; for hostile paths only.
 */
void hx_fd_release(const int *fds, size_t n);

/*
 * Closes a unix socket of the supervisor's that the agent sends on: at
 * once when nothing is queued in it (one shutdown and one peek: the
 * common case, a process's connection at its exit), else by
 * hx_fd_release. No later message can be queued once it is looked at.
 */
void hx_fd_release_sock(int fd);

#endif
