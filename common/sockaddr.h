/* A socket address as text: the one spelling of the audit log, the
 * refusal notice and `harness-policy explain`. No allocation, no stdio:
 * safe in the shim. */
#ifndef HX_COMMON_SOCKADDR_H
#define HX_COMMON_SOCKADDR_H

#include <stddef.h>

#define HX_SOCKADDR_LEN 128

/* A sockaddr of len bytes as "1.2.3.4:443", "[::1]:80", "unix:/path",
 * "unix:@abstract" (bytes that are not printable as "\xNN"), "unix:"
 * (unnamed), "netlink:PID[/groups=0xN]", "family:N", or "invalid" when
 * len cannot hold a family. Hostile input is fine: len is checked
 * against each family's size. Writes at most size bytes, always
 * NUL-terminated when size > 0; returns buf. */
char *hx_sockaddr_format(const void *sa, size_t len, char *buf, size_t size);

#endif
