/* The agent's SysV IPC and POSIX message queues: an IPC namespace of
 * its own, and a view of message queues that is that namespace's.
 *
 * A mount of the message queue file system belongs to the IPC
 * namespace that made it, not to the one looking: the host's
 * /dev/mqueue (systemd mounts it) lists the user's queues whatever
 * namespace the agent has, and an open there, read-only, which no rule
 * decides, gave the agent an fd of the user's queue on which
 * mq_timedreceive took its messages (twenty-fourth attack review).
 * Each such mount in the agent's private mount namespace is covered by
 * one of its own namespace. */
#ifndef HX_IPCNS_H
#define HX_IPCNS_H

#include <stdbool.h>

/* In the agent's first process, with its capabilities still held:
 * makes its IPC namespace and covers every message queue mount of the
 * mount namespace (private_mounts: it is the agent's own, where a
 * mount does not reach the user's). Returns 1 when the agent has IPC of
 * its own, 0 when it has not (no namespace, or a host mount it could
 * not cover: the calls are then refused, hx_seccomp_install_ipc), or
 * -errno when a cover failed after the namespace was made. */
int hx_ipcns_enter(bool private_mounts);

/* In harness-exec (the kernel layer acts in its view, whose message
 * queue mounts are the user's): whether path, or the directory it would
 * be made in, lies on a message queue file system, and whether fd is
 * one of its files. */
bool hx_ipcns_path(const char *path);
bool hx_ipcns_fd(int fd);

#endif
