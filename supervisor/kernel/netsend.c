/* What an emulated send does beyond the decision; see netsend.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/netsend.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "supervisor/kernel/localaddr.h"

#ifndef MSG_PROBE
#define MSG_PROBE 0x10 /* the kernel's; glibc calls it MSG_PROXY */
#endif

/* The interface a send's own IP_PKTINFO or IPV6_PKTINFO names: 0 (the
 * route's) or loopback (LOOPBACK_IFINDEX: 1 in every namespace), which
 * a server echoing the pktinfo of a loopback client names, are where
 * the decided address goes; any other sent a datagram judged as to
 * 127.0.0.1 out of eth0 for the gateway (an attack review). */
bool hx_send_forces_interface(const struct cmsghdr *c)
{
	struct in_pktinfo p4;
	struct in6_pktinfo p6;

	if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO &&
	    c->cmsg_len >= CMSG_LEN(sizeof(p4))) {
		memcpy(&p4, CMSG_DATA(c), sizeof(p4));
		return p4.ipi_ifindex > 1;
	}
	if (c->cmsg_level == IPPROTO_IPV6 &&
	    (c->cmsg_type == IPV6_PKTINFO ||
	     c->cmsg_type == IPV6_2292PKTINFO) &&
	    c->cmsg_len >= CMSG_LEN(sizeof(p6))) {
		struct sockaddr_in6 src = {.sin6_family = AF_INET6};

		memcpy(&p6, CMSG_DATA(c), sizeof(p6));
		src.sin6_addr = p6.ipi6_addr;
		/* its source too, where nonlocal binds are on */
		return p6.ipi6_ifindex > 1 ||
		       hx_foreign_source(&src, sizeof(src));
	}
	return false;
}

/* The buffer of a send's bytes. A zerocopy send (MSG_ZEROCOPY on a
 * socket with SO_ZEROCOPY) has the kernel read it after sendmsg
 * returns, until the agent's completion: from the heap, freed and
 * reused at once, the agent's listener got harness-exec's own memory
 * (heap pointers, the tcache key) in place of the zeros sent (an attack
 * review). Such a buffer is a mapping of its own, unmapped after the
 * send: the pinned pages keep our copy until the kernel is done. */
void *hx_send_buf_alloc(size_t n, bool zerocopy)
{
	void *p;

	if (!zerocopy)
		return malloc(n);
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void hx_send_buf_free(void *p, size_t n, bool zerocopy)
{
	if (!zerocopy)
		free(p);
	else if (p)
		munmap(p, n);
}

/* What MSG_MORE left pending on a UDP socket takes the bytes of the
 * next send, whatever address that one names (the kernel ignores it):
 * sent first, to where it was decided, by an empty MSG_PROBE send (no
 * datagram of its own: none is made with nothing pending). */
void hx_send_push_pending(int sfd)
{
	int type = 0, proto = 0;
	socklen_t tl = sizeof(type), pl = sizeof(proto);

	if (getsockopt(sfd, SOL_SOCKET, SO_TYPE, &type, &tl) ||
	    type != SOCK_DGRAM ||
	    getsockopt(sfd, SOL_SOCKET, SO_PROTOCOL, &proto, &pl) ||
	    (proto != IPPROTO_UDP && proto != IPPROTO_UDPLITE))
		return;
	(void)sendto(sfd, "", 0, MSG_PROBE | MSG_DONTWAIT | MSG_NOSIGNAL, NULL,
		     0);
}
