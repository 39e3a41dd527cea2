/* The sealed network namespace where the agent's DNS goes (issue 13).
 *
 * A query's bytes are the agent's: a resolver reading them may be any
 * library (glibc, musl in a static binary, Go's own, c-ares), on a
 * connected socket that write(2) feeds without any call the kernel
 * layer sees, and it accepts a reply only from the address it asked.
 * So a socket that connects or sends to port 53 of any address is
 * replaced, before the call goes on, by one made in a namespace of the
 * supervisor's: one loopback interface, every address local to it
 * ("AnyIP" routes), and the supervisor's own resolver bound to port 53
 * of every address there. The agent's resolver reaches "its" server and
 * gets its replies from that address; nothing it sends on such a socket
 * can leave the namespace (there is no other interface), whatever the
 * address.
 *
 * A keeper process makes the namespace (a user namespace of its own for
 * an ordinary user) and the sockets in it: forked at start, doing
 * system calls only, not dumpable, gone with the supervisor. Needs
 * unprivileged user namespaces for a user (Debian's default); without
 * them hx_dnsns_start fails and DNS is the system's (run.c says so).
 *
 * Lifecycle: hx_dnsns_start -> hx_dnsns_ready -> hx_dnsns_socket ... ->
 * hx_dnsns_free. Thread-safe after hx_dnsns_ready. */
#ifndef HX_DNSNS_H
#define HX_DNSNS_H

#include <stdbool.h>
#include <stdint.h>

struct hx_dnsns;

/* The resolver's sockets in the namespace, bound to port 53 of every
 * address: UDP with the destination of each datagram given
 * (IP_PKTINFO, IPV6_RECVPKTINFO), and TCP listening. -1 when that
 * family has none (IPv6 off). */
struct hx_dnsns_listeners {
	int udp4, udp6, tcp4, tcp6;
};

/* Forks the keeper, which sets the namespace up while the caller goes
 * on. Returns 0 or -errno. */
int hx_dnsns_start(struct hx_dnsns **out);

/* Waits (at most timeout_ms) for the namespace: 0 once it is ready
 * (*l gets the listeners, which the caller owns), else -errno and the
 * namespace is not to be used. Once. */
int hx_dnsns_ready(struct hx_dnsns *ns, int timeout_ms,
		   struct hx_dnsns_listeners *l);

/* Closes those of l that are open. */
void hx_dnsns_listeners_close(const struct hx_dnsns_listeners *l);

/* socket(domain, type | SOCK_CLOEXEC, protocol) made in the namespace;
 * returns the fd or -errno. */
int hx_dnsns_socket(struct hx_dnsns *ns, int domain, int type, int protocol);

/* Whether the socket sfd is one of the namespace's. */
bool hx_dnsns_holds(const struct hx_dnsns *ns, int sfd);

/* Ends the keeper and waits for it (no socket is made after: -EPIPE);
 * the listeners go on answering. NULL: no-op. */
void hx_dnsns_close(struct hx_dnsns *ns);

void hx_dnsns_free(struct hx_dnsns *ns);

#endif
