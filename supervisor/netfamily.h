/* Address families the policy has no patterns for: the user-notify layer
 * knows AF_INET, AF_INET6 and AF_UNIX (decided by the policy's network
 * rules, unix paths as paths) and AF_NETLINK (decided here, by fixed
 * rules); every other family (AF_PACKET, AF_VSOCK, AF_ALG, AF_UNSPEC
 * in a send...) is denied here as "harness:family", named in the
 * record. Pure. */
#ifndef HX_NETFAMILY_H
#define HX_NETFAMILY_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* Decides a connect or send to sa (len bytes) on a socket of protocol
 * proto (SO_PROTOCOL; -1: unknown) when the policy cannot: fills d's
 * verdict, rule and pattern (static strings) and returns true; false for
 * AF_INET, AF_INET6 and AF_UNIX, which the policy decides, and for an
 * address too short to name a family (left "harness:malformed"). */
bool hx_netfamily_decide(const void *sa, size_t len, int proto,
			 struct hx_decision *d);

/* The family's name for the record ("netlink", "packet"), or NULL. */
const char *hx_netfamily_name(int family);
/* A netlink protocol's name ("route", "generic"), or NULL. */
const char *hx_netlink_proto_name(int proto);

#endif
