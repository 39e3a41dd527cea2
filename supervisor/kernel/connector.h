/* Unix-socket connects and sends made for the agent (issue 3, item 4).
 *
 * A decided path-unix connect cannot be left to the kernel: a second
 * thread may swap the path between our read and the kernel's. Made by
 * the supervisor itself on the socket taken with pidfd_getfd, the
 * server would see the supervisor in SO_PEERCRED and SCM_CREDENTIALS,
 * with every capability it holds (a bus that trusts the peer's CapEff
 * would let the agent act as root). So it is made here, by a process of
 * its own: forked at first use, with the agent's uid and gids, no
 * capability (empty permitted set), no_new_privs, not dumpable, doing
 * nothing but connect or sendmsg on the fds it is handed, with the
 * supervisor's copies of the data and control messages, to the socket
 * file the supervisor opened for the decided path. Peers
 * see its pid (comm "harness-unix"), not the agent's.
 *
 * One request at a time per connector: the user-notify layer gives each
 * worker thread its own, so that a blocking connect to a full backlog
 * holds that worker only. Thread-safe.
 *
 * Lifecycle: hx_connector_new -> hx_connector_connect / _send ... ->
 * hx_connector_free (the process exits when its socket closes, or with
 * the thread that forked it). */
#ifndef HX_CONNECTOR_H
#define HX_CONNECTOR_H

#include <sys/socket.h>
#include <sys/types.h>

struct hx_connector;

int hx_connector_new(struct hx_connector **out);

/* connect(sfd) in the connector to the socket file target, an O_PATH
 * fd the caller opened without following symlinks: the connector
 * reaches it as "/proc/self/fd/N", so neither a racing thread nor a
 * symlink swapped into its path since can redirect it. Returns 0 or
 * -errno. */
int hx_connector_connect(struct hx_connector *c, int sfd, int target);

/* connect(sfd, addr, len) in the connector, with the caller's copy of
 * the address (an abstract unix name). Returns 0 or -errno. */
int hx_connector_connect_addr(struct hx_connector *c, int sfd, const void *addr,
			      socklen_t len);

/* sendmsg(sfd, m, flags | MSG_NOSIGNAL) in the connector, to target as
 * above (m's own name is then unused), or to m's name or the connected
 * peer when target is -1. m has at most one iovec; fds in its
 * SCM_RIGHTS messages are the caller's and are passed along (the caller
 * closes them). Returns the bytes sent or -errno. */
ssize_t hx_connector_send(struct hx_connector *c, int sfd, int target,
			  const struct msghdr *m, int flags);

/* Interrupts what c's process is doing for a request (a connect to a
 * full backlog, a send to a full socket): it fails with EINTR, which is
 * its answer. Through a pidfd: never another process. From any thread;
 * NULL or not started: nothing. */
void hx_connector_interrupt(struct hx_connector *c);

void hx_connector_free(struct hx_connector *c);

#endif
