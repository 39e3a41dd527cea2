/* A source address that is not the machine's: what an allowed host
 * answers to it goes to a host no rule names. The kernel refuses such a
 * bind unless the socket has IP_FREEBIND or IP_TRANSPARENT (refused in
 * BPF, seccomp_deny.c) or the namespace's ip_nonlocal_bind is set,
 * which is what is checked here. */
#ifndef HX_LOCALADDR_H
#define HX_LOCALADDR_H

#include <stdbool.h>
#include <stddef.h>

/* Whether sa (AF_INET/AF_INET6, v4-mapped as IPv4; len bytes) is an
 * address the kernel would bind (nonlocal binds on for its family) that
 * is none of the machine's interfaces' (nor loopback's, unspecified). */
bool hx_foreign_source(const void *sa, size_t len);

#endif
