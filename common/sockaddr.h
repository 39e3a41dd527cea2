/* A socket address as text: the one spelling of the audit log, the
 * refusal notice and `harness-policy explain`. No allocation, no stdio:
 * safe in the shim. */
#ifndef HX_COMMON_SOCKADDR_H
#define HX_COMMON_SOCKADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define HX_SOCKADDR_LEN 128

/* A sockaddr of len bytes as "1.2.3.4:443", "[::1]:80", "unix:/path",
 * "unix:@abstract" (bytes that are not printable as "\xNN"), "unix:"
 * (unnamed), "netlink:PID[/groups=0xN]", "family:N", or "invalid" when
 * len cannot hold a family. Hostile input is fine: len is checked
 * against each family's size. Writes at most size bytes, always
 * NUL-terminated when size > 0; returns buf. */
char *hx_sockaddr_format(const void *sa, size_t len, char *buf, size_t size);

/* Whether len is a length the kernel takes for sa's family: a unix
 * address is at most a struct sockaddr_un (110 bytes), though the
 * caller's buffer may hold 128 (EINVAL natively). Every reader of a
 * unix address's sun_path relies on it: a 128-byte one, its path
 * without a NUL, was copied into a buffer of 109 bytes, and a raw
 * connect or a shim request of one aborted harness-exec (the
 * fifteenth attack review). */
bool hx_sockaddr_len_ok(const void *sa, size_t len);

/* An IP address as rules and the kernel see it: ::ffff:a.b.c.d is the
 * IPv4 address a.b.c.d. */
struct hx_ipaddr {
	sa_family_t family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];   /* 4 bytes for AF_INET */
	uint16_t port;	    /* host order */
};

/* Whether a and b are the same address and port. */
bool hx_ipaddr_equal(const struct hx_ipaddr *a, const struct hx_ipaddr *b);

/* Fills *out from an IPv4 or IPv6 sa (len bytes); false for another
 * family or a short one. */
bool hx_sockaddr_ip(const void *sa, size_t len, struct hx_ipaddr *out);

/* The port of an IPv4 or IPv6 sa (len bytes), or -1 for another. */
int hx_sockaddr_port(const void *sa, size_t len);

/* Whether sa (len bytes) is the unspecified address of its family as a
 * destination (0.0.0.0, ::, ::ffff:0.0.0.0), which the kernel connects
 * to this machine's loopback: then *out is sa with 127.0.0.1 / ::1 /
 * ::ffff:127.0.0.1 in its place, what a connect to it reaches. */
struct sockaddr_storage;
bool hx_sockaddr_unspecified(const void *sa, size_t len,
			     struct sockaddr_storage *out);

/* Whether the kernel ignores a send's address on socket fd: a connected
 * TCP or MPTCP socket sends to its peer (a Fast Open send there is
 * EISCONN), a unix seqpacket one always does. Judging and recording the
 * address named a host the data never went to (an attack review:
 * "send 127.0.0.1:B" for bytes that reached the connected A); so does
 * one whose connect is under way (SYN_SENT: a Fast Open connect
 * deferred to the first send, whose SYN goes to the address connected).
 * An unconnected TCP socket's address is used by a Fast Open send:
 * false.
 * The shim and the kernel layer alike; errno kept. */
bool hx_sock_name_ignored(int fd);

#endif
