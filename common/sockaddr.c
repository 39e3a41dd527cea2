/* Socket addresses as text; see sockaddr.h. */
#include "common/sockaddr.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/path.h"

struct out {
	char *p;
	size_t cap, len;
};

static void put_n(struct out *o, const char *s, size_t n)
{
	if (o->len + 1 >= o->cap)
		return;
	if (n > o->cap - 1 - o->len)
		n = o->cap - 1 - o->len;
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void put(struct out *o, const char *s)
{
	put_n(o, s, strlen(s));
}

static void put_uint(struct out *o, unsigned long v)
{
	char d[21];

	put_n(o, d, hx_utoa(v, d));
}

static void put_hex(struct out *o, unsigned long v)
{
	static const char digits[] = "0123456789abcdef";
	char d[16];
	size_t n = 0, k;
	char r[16];

	do
		d[n++] = digits[v & 15];
	while ((v >>= 4));
	for (k = 0; k < n; k++)
		r[k] = d[n - 1 - k];
	put_n(o, r, n);
}

/* A unix socket's name: a path up to its NUL, or an abstract name (any
 * bytes) after '@'; what is not printable as "\xNN" so a record stays
 * one readable line. */
static void put_unix(struct out *o, const char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	bool abstract = n > 0 && p[0] == '\0';
	size_t i;

	put(o, abstract ? "unix:@" : "unix:");
	if (!abstract)
		n = strnlen(p, n);
	for (i = abstract ? 1 : 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		char esc[4] = {'\\', 'x', digits[c >> 4], digits[c & 15]};

		if (c >= 0x20 && c < 0x7f && c != '\\')
			put_n(o, (const char *)&c, 1);
		else
			put_n(o, esc, sizeof(esc));
	}
}

char *hx_sockaddr_format(const void *sa, size_t len, char *buf, size_t size)
{
	struct out o = {buf, size, 0};
	char ip[INET6_ADDRSTRLEN];
	sa_family_t fam;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	if (!sa || len < sizeof(sa_family_t)) {
		put(&o, "invalid");
		return buf;
	}
	memcpy(&fam, sa, sizeof(fam));
	if (fam == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in in;

		memcpy(&in, sa, sizeof(in));
		inet_ntop(AF_INET, &in.sin_addr, ip, sizeof(ip));
		put(&o, ip);
		put(&o, ":");
		put_uint(&o, ntohs(in.sin_port));
	} else if (fam == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 in6;

		memcpy(&in6, sa, sizeof(in6));
		inet_ntop(AF_INET6, &in6.sin6_addr, ip, sizeof(ip));
		put(&o, "[");
		put(&o, ip);
		put(&o, "]:");
		put_uint(&o, ntohs(in6.sin6_port));
	} else if (fam == AF_UNIX) {
		size_t off = offsetof(struct sockaddr_un, sun_path);
		size_t n = len > off ? len - off : 0;

		if (n > sizeof(((struct sockaddr_un *)0)->sun_path))
			n = sizeof(((struct sockaddr_un *)0)->sun_path);
		put_unix(&o, (const char *)sa + off, n);
	} else if (fam == AF_NETLINK && len >= sizeof(struct sockaddr_nl)) {
		struct sockaddr_nl nl;

		memcpy(&nl, sa, sizeof(nl));
		put(&o, "netlink:");
		put_uint(&o, nl.nl_pid);
		if (nl.nl_groups) {
			put(&o, "/groups=0x");
			put_hex(&o, nl.nl_groups);
		}
	} else {
		put(&o, "family:");
		put_uint(&o, fam);
	}
	return buf;
}
