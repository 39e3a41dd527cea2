/* What an emulated send (unotify_net.c) does beyond its decision, so
 * that what is sent is what was decided and recorded: the interface a
 * control message names, an address the kernel would ignore, a pending
 * corked datagram, the buffer a zerocopy send is read from. */
#ifndef HX_NETSEND_H
#define HX_NETSEND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Whether control message c picks an interface other than the route's
 * (or, where nonlocal binds are on, a source not the machine's). */
bool hx_send_forces_interface(const struct cmsghdr *c);

/* Sends what MSG_MORE left pending on a UDP socket sfd, if anything. */
void hx_send_push_pending(int sfd);

/* n bytes for a send's copy, from the heap or, for a zerocopy send, a
 * mapping of its own; freed with hx_send_buf_free(p, n, zerocopy). */
void *hx_send_buf_alloc(size_t n, bool zerocopy);
void hx_send_buf_free(void *p, size_t n, bool zerocopy);

#endif
