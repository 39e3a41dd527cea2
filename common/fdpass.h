/* File descriptors passed over a Unix socket (SCM_RIGHTS), with a small
 * fixed-size message: the dnsns keeper's replies, the masks' FUSE
 * connections. System calls only, no allocation: usable in a child
 * forked from a multithreaded process. */
#ifndef HX_COMMON_FDPASS_H
#define HX_COMMON_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

#define HX_FDPASS_MAX 8

/* Sends the len bytes of msg with the n (at most HX_FDPASS_MAX) fds,
 * which stay the caller's. MSG_NOSIGNAL. Returns 0 or -errno. */
int hx_fd_send(int sock, const void *msg, size_t len, const int *fds, size_t n);

/* Receives one message into msg (len bytes) and up to max fds (more are
 * closed), close-on-exec; flags as recvmsg's (MSG_DONTWAIT). Retries on
 * EINTR. Returns the bytes received (the fds are the caller's even when
 * that is short of len) or -errno. */
ssize_t hx_fd_recv(int sock, void *msg, size_t len, int *fds, size_t max,
		   size_t *nfds, int flags);

/* Closes every fd but the n in keep (any order, -1 skipped; the array
 * is sorted in place): for a child forked from a multithreaded process
 * that must hold nothing else of its parent's. */
void hx_fd_keep_only(int *keep, size_t n);

#endif
