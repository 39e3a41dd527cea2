/* Socket addresses as text; see sockaddr.h. */
#include "common/sockaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/sbuf.h"

/* A unix socket's name: a path up to its NUL, or an abstract name (any
 * bytes) after '@'; either as terminal-safe text, so a record or a
 * notice stays one readable line. */
static void put_unix(struct hx_sbuf *o, const char *p, size_t n)
{
	bool abstract = n > 0 && p[0] == '\0';

	hx_sbuf_put(o, abstract ? "unix:@" : "unix:");
	if (abstract)
		hx_sbuf_put_escaped(o, p + 1, n - 1);
	else
		hx_sbuf_put_escaped(o, p, strnlen(p, n));
}

bool hx_sockaddr_len_ok(const void *sa, size_t len)
{
	sa_family_t fam;

	if (!sa || len < sizeof(fam) || len > HX_SOCKADDR_LEN)
		return false;
	memcpy(&fam, sa, sizeof(fam));
	return fam != AF_UNIX || len <= sizeof(struct sockaddr_un);
}

char *hx_sockaddr_format(const void *sa, size_t len, char *buf, size_t size)
{
	struct hx_sbuf o = {buf, size, 0};
	char ip[INET6_ADDRSTRLEN];
	sa_family_t fam;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	if (!sa || len < sizeof(sa_family_t)) {
		hx_sbuf_put(&o, "invalid");
		return buf;
	}
	memcpy(&fam, sa, sizeof(fam));
	if (fam == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in in;

		memcpy(&in, sa, sizeof(in));
		inet_ntop(AF_INET, &in.sin_addr, ip, sizeof(ip));
		hx_sbuf_put(&o, ip);
		hx_sbuf_put(&o, ":");
		hx_sbuf_put_uint(&o, ntohs(in.sin_port));
	} else if (fam == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 in6;

		memcpy(&in6, sa, sizeof(in6));
		inet_ntop(AF_INET6, &in6.sin6_addr, ip, sizeof(ip));
		hx_sbuf_put(&o, "[");
		hx_sbuf_put(&o, ip);
		hx_sbuf_put(&o, "]:");
		hx_sbuf_put_uint(&o, ntohs(in6.sin6_port));
	} else if (fam == AF_UNIX) {
		size_t off = offsetof(struct sockaddr_un, sun_path);
		size_t n = len > off ? len - off : 0;

		if (n > sizeof(((struct sockaddr_un *)0)->sun_path))
			n = sizeof(((struct sockaddr_un *)0)->sun_path);
		put_unix(&o, (const char *)sa + off, n);
	} else if (fam == AF_NETLINK && len >= sizeof(struct sockaddr_nl)) {
		struct sockaddr_nl nl;

		memcpy(&nl, sa, sizeof(nl));
		hx_sbuf_put(&o, "netlink:");
		hx_sbuf_put_uint(&o, nl.nl_pid);
		if (nl.nl_groups) {
			hx_sbuf_put(&o, "/groups=0x");
			hx_sbuf_put_hex(&o, nl.nl_groups);
		}
	} else {
		hx_sbuf_put(&o, "family:");
		hx_sbuf_put_uint(&o, fam);
	}
	return buf;
}

bool hx_sockaddr_unspecified(const void *sa, size_t len,
			     struct sockaddr_storage *out)
{
	static const uint8_t zero[16], mapped[12] = {[10] = 0xff, [11] = 0xff};
	struct sockaddr_in *in = (void *)out;
	struct sockaddr_in6 *in6 = (void *)out;

	if (len < sizeof(sa_family_t) || len > sizeof(*out))
		return false;
	memcpy(out, sa, len);
	if (out->ss_family == AF_INET && len >= sizeof(*in) &&
	    !in->sin_addr.s_addr) {
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return true;
	}
	if (out->ss_family != AF_INET6 || len < sizeof(*in6))
		return false;
	if (!memcmp(in6->sin6_addr.s6_addr, zero, 16)) {
		in6->sin6_addr.s6_addr[15] = 1;
		return true;
	}
	if (!memcmp(in6->sin6_addr.s6_addr, mapped, 12) &&
	    !memcmp(in6->sin6_addr.s6_addr + 12, zero, 4)) {
		in6->sin6_addr.s6_addr[12] = 127;
		in6->sin6_addr.s6_addr[15] = 1;
		return true;
	}
	return false;
}

bool hx_sockaddr_ip(const void *sa, size_t len, struct hx_ipaddr *out)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
	sa_family_t f;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(f))
		return false;
	memcpy(&f, sa, sizeof(f));
	if (f == AF_INET && len >= sizeof(in)) {
		memcpy(&in, sa, sizeof(in));
		out->family = AF_INET;
		memcpy(out->addr, &in.sin_addr, 4);
		out->port = ntohs(in.sin_port);
		return true;
	}
	if (f != AF_INET6 || len < sizeof(in6))
		return false;
	memcpy(&in6, sa, sizeof(in6));
	out->port = ntohs(in6.sin6_port);
	if (!memcmp(in6.sin6_addr.s6_addr, mapped, 12)) {
		out->family = AF_INET;
		memcpy(out->addr, in6.sin6_addr.s6_addr + 12, 4);
	} else {
		out->family = AF_INET6;
		memcpy(out->addr, in6.sin6_addr.s6_addr, 16);
	}
	return true;
}

int hx_sockaddr_port(const void *sa, size_t len)
{
	struct hx_ipaddr ip;

	return hx_sockaddr_ip(sa, len, &ip) ? ip.port : -1;
}

bool hx_ipaddr_equal(const struct hx_ipaddr *a, const struct hx_ipaddr *b)
{
	return a->family == b->family && a->port == b->port &&
	       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
}

/* A TCP connect under way: in progress, or deferred by
 * TCP_FASTOPEN_CONNECT until the first send, which makes the SYN to
 * the address connected whatever that send names (TCP_FASTOPEN_NO_COOKIE
 * defers one on loopback). getpeername says ENOTCONN there, and the
 * address named was judged and recorded for bytes that reached the
 * connected one (thirty-second attack review, part b). One getsockopt,
 * on an inet stream send with an address only. */
static bool tcp_connecting(int fd)
{
	unsigned char st = 0;
	socklen_t l = sizeof(st);

	return !getsockopt(fd, IPPROTO_TCP, TCP_INFO, &st, &l) && l == 1 &&
	       st == TCP_SYN_SENT;
}

bool hx_sock_name_ignored(int fd)
{
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer), tl = sizeof(int), dl = sizeof(int);
	int type = 0, dom = 0, e = errno;
	bool ignored = false;

	/* A datagram socket's send goes where it names: one call for the
	 * common case (every DNS question). */
	if (!getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) &&
	    (type == SOCK_STREAM || type == SOCK_SEQPACKET) &&
	    !getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &dl))
		ignored = dom == AF_UNIX
			      ? type == SOCK_SEQPACKET
			      : (dom == AF_INET || dom == AF_INET6) &&
				    type == SOCK_STREAM &&
				    (!getpeername(fd, (struct sockaddr *)&peer,
						  &pl) ||
				     tcp_connecting(fd));
	errno = e;
	return ignored;
}
