/* Network patterns: "HOST:PORT" and "unix:GLOB"; parse, rank, match. */
#include "policy/policy_int.h"
#include "common/glob.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

int hx_parse_ip(const char *s, size_t len, uint8_t addr[16])
{
	char buf[64];

	if (len == 0 || len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, buf, addr) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, buf, addr) == 1)
		return AF_INET6;
	return 0;
}

bool hx_host_name_ok(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!isalnum(c) && c != '-' && c != '.' && c != '_')
			return false;
	}
	return true;
}

/* "N", returns -1 when not a port number. */
static long parse_num(const char *s, size_t len)
{
	long n = 0;

	if (len == 0 || len > 5)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		n = n * 10 + (s[i] - '0');
	}
	return n <= 65535 ? n : -1;
}

static int parse_port(const char *s, struct hx_netpat *np, const char **why)
{
	const char *dash = strchr(s, '-');
	long lo, hi;

	if (!strcmp(s, "*")) {
		np->port_lo = 0;
		np->port_hi = 65535;
		return 0;
	}
	if (dash) {
		lo = parse_num(s, (size_t)(dash - s));
		hi = parse_num(dash + 1, strlen(dash + 1));
	} else {
		lo = hi = parse_num(s, strlen(s));
	}
	if (lo < 0 || hi < 0) {
		*why = "bad port: expected *, N or N-M with N, M in 0..65535";
		return -EINVAL;
	}
	if (lo > hi) {
		*why = "bad port range: the first port is above the second";
		return -EINVAL;
	}
	np->port_lo = (unsigned)lo;
	np->port_hi = (unsigned)hi;
	return 0;
}

/* "ADDR" or "ADDR/LEN" for the given family; host is [s, s+len). */
static int parse_cidr(const char *s, size_t len, int family,
		      struct hx_netpat *np, size_t *bad, const char **why)
{
	const char *slash = memchr(s, '/', len);
	size_t alen = slash ? (size_t)(slash - s) : len;
	unsigned max = family == AF_INET ? 32 : 128;
	uint8_t addr[16];

	if (hx_parse_ip(s, alen, addr) != family) {
		*bad = 0;
		*why =
		    family == AF_INET ? "bad IPv4 address" : "bad IPv6 address";
		return -EINVAL;
	}
	np->prefix = max;
	if (slash) {
		long n = parse_num(slash + 1, len - alen - 1);

		if (n < 0 || (unsigned long)n > max) {
			*bad = alen + 1;
			*why = family == AF_INET
				   ? "bad CIDR prefix length (0..32)"
				   : "bad CIDR prefix length (0..128)";
			return -EINVAL;
		}
		np->prefix = (unsigned)n;
	}
	/* Keep the host bits out of the way of the comparison. */
	for (unsigned i = 0; i < 16; i++) {
		unsigned bits = i * 8;

		if (bits >= np->prefix)
			addr[i] = 0;
		else if (np->prefix - bits < 8)
			addr[i] &= (uint8_t)(0xff00u >> (np->prefix - bits));
	}
	memcpy(np->addr, addr, 16);
	np->kind = family == AF_INET ? HX_NH_V4 : HX_NH_V6;
	return 0;
}

static char *lower_dup(struct hx_arena *a, const char *s, size_t len)
{
	char *d = hx_arena_strndup(a, s, len);

	for (size_t i = 0; d && i < len; i++)
		d[i] = (char)tolower((unsigned char)d[i]);
	return d;
}

static int parse_host(struct hx_arena *a, const char *h, size_t len,
		      struct hx_netpat *np, size_t *bad, const char **why)
{
	*bad = 0;
	if (len == 1 && h[0] == '*') {
		np->kind = HX_NH_ANY;
		return 0;
	}
	if (len > 2 && h[0] == '*' && h[1] == '.') {
		if (!hx_host_name_ok(h + 2, len - 2) ||
		    memchr(h + 1, '*', len - 1)) {
			*bad = 2;
			*why = "bad domain after '*.'";
			return -EINVAL;
		}
		np->kind = HX_NH_SUFFIX;
		np->name = lower_dup(a, h + 1, len - 1);
		return np->name ? 0 : -ENOMEM;
	}
	if (memchr(h, '*', len)) {
		*bad = (size_t)((const char *)memchr(h, '*', len) - h);
		*why = "'*' only as the whole host or as a leading '*.'";
		return -EINVAL;
	}
	/* Digits, dots and a slash: an IPv4 address or CIDR, never a name. */
	if (strspn(h, "0123456789./") >= len)
		return parse_cidr(h, len, AF_INET, np, bad, why);
	if (!hx_host_name_ok(h, len)) {
		*why = "bad host: expected *, a name, *.domain, an IPv4 "
		       "address or CIDR, or [IPv6]";
		return -EINVAL;
	}
	np->kind = HX_NH_NAME;
	np->name = lower_dup(a, h, len);
	return np->name ? 0 : -ENOMEM;
}

/* "tcp:" or "udp:": its IPPROTO_*, else 0. */
static int proto_prefix(const char *text)
{
	return !strncmp(text, "tcp:", 4)   ? IPPROTO_TCP
	       : !strncmp(text, "udp:", 4) ? IPPROTO_UDP
					   : 0;
}

static int parse_addr(struct hx_arena *a, const char *text,
		      struct hx_netpat *np, size_t *bad, const char **why);

int hx_netpat_parse(struct hx_arena *a, const char *text, struct hx_netpat *np,
		    size_t *bad, const char **why)
{
	int proto, ret;

	/* "listen:[tcp:|udp:]HOST:PORT": an address a server binds */
	if (!strncmp(text, "listen:", 7)) {
		ret = hx_netpat_parse(a, text + 7, np, bad, why);
		*bad += 7;
		if (!ret && (np->kind == HX_NH_UNIX || np->listen)) {
			*bad = 0;
			*why = "listen: goes with [tcp:|udp:]HOST:PORT once";
			return -EINVAL;
		}
		np->listen = true;
		return ret;
	}
	proto = proto_prefix(text);

	if (!proto)
		return parse_addr(a, text, np, bad, why);
	ret = parse_addr(a, text + 4, np, bad, why);
	*bad += 4;
	if (!ret && np->kind == HX_NH_UNIX) {
		*bad = 0;
		*why = "tcp: and udp: go with HOST:PORT, not a unix socket";
		return -EINVAL;
	}
	np->proto = proto;
	return ret;
}

static int parse_addr(struct hx_arena *a, const char *text,
		      struct hx_netpat *np, size_t *bad, const char **why)
{
	const char *colon;
	size_t off = 0;
	int ret;

	memset(np, 0, sizeof(*np));
	if (!strncmp(text, "unix:", 5)) {
		const char *g = text + 5;

		*bad = 5;
		if (g[0] != '/' && g[0] != '@' && strncmp(g, "**/", 3)) {
			*why =
			    "a unix socket pattern is unix:/PATH or unix:@NAME";
			return -EINVAL;
		}
		if (hx_glob_validate(g, &off, why)) {
			*bad = 5 + off;
			return -EINVAL;
		}
		np->kind = HX_NH_UNIX;
		np->name = hx_arena_strdup(a, g);
		return np->name ? 0 : -ENOMEM;
	}
	if (text[0] == '[') {
		const char *end = strchr(text, ']');

		if (!end) {
			*bad = 0;
			*why = "unclosed '[' in an IPv6 host";
			return -EINVAL;
		}
		ret = parse_cidr(text + 1, (size_t)(end - text - 1), AF_INET6,
				 np, &off, why);
		if (ret) {
			*bad = 1 + off;
			return ret;
		}
		colon = end + 1;
		if (*colon != ':') {
			*bad = (size_t)(colon - text);
			*why = "expected ':PORT' after ']'";
			return -EINVAL;
		}
	} else {
		colon = strrchr(text, ':');
		if (!colon) {
			*bad = strlen(text);
			*why = "expected HOST:PORT";
			return -EINVAL;
		}
		if (memchr(text, ':', (size_t)(colon - text))) {
			*bad = 0;
			*why = "an IPv6 address goes in brackets: [ADDR]:PORT";
			return -EINVAL;
		}
		ret =
		    parse_host(a, text, (size_t)(colon - text), np, &off, why);
		if (ret) {
			*bad = off;
			return ret;
		}
	}
	ret = parse_port(colon + 1, np, why);
	if (ret)
		*bad = (size_t)(colon + 1 - text);
	return ret;
}

unsigned hx_netpat_specificity(const struct hx_netpat *np)
{
	unsigned host = 0, port;

	/* exact name > *.domain > CIDR by prefix > *; v4 prefixes are
	 * ranked as their v4-mapped v6 equivalents. */
	switch (np->kind) {
	case HX_NH_ANY:
		host = 0;
		break;
	case HX_NH_V4:
		host = 1 + 96 + np->prefix;
		break;
	case HX_NH_V6:
		host = 1 + np->prefix;
		break;
	case HX_NH_SUFFIX:
		host = 200 + (unsigned)strlen(np->name);
		break;
	case HX_NH_NAME:
		host = 1000 + (unsigned)strlen(np->name);
		break;
	case HX_NH_UNIX:
		return hx_glob_specificity(np->name);
	}
	if (np->port_lo == np->port_hi)
		port = 2;
	else if (np->port_lo == 0 && np->port_hi == 65535)
		port = 0;
	else
		port = 1;
	/* "tcp:" or "udp:" is more specific than either */
	return (host * 4 + port) * 2 + (np->proto != 0);
}

static bool prefix_match(const uint8_t *a, const uint8_t *net, unsigned prefix)
{
	unsigned full = prefix / 8, rest = prefix % 8;

	if (memcmp(a, net, full))
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff00u >> rest);

	return (a[full] & mask) == net[full];
}

/* Case-insensitive; a trailing '.' (absolute DNS name) is ignored. */
static bool name_eq(const char *name, const char *pat)
{
	size_t n = strlen(name), m = strlen(pat);

	if (n > 0 && name[n - 1] == '.')
		n--;
	return n == m && !strncasecmp(name, pat, n);
}

static bool suffix_match(const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix);

	if (n > 0 && name[n - 1] == '.')
		n--;
	return n > m && !strncasecmp(name + n - m, suffix, m);
}

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262 /* 5.6; Debian 12's headers lack it */
#endif

/* The protocol a tcp: or udp: pattern means: MPTCP is TCP on the wire
 * (it falls back to plain TCP with any peer), UDP-Lite is UDP's. */
static int proto_class(int p)
{
	return p == IPPROTO_MPTCP     ? IPPROTO_TCP
	       : p == IPPROTO_UDPLITE ? IPPROTO_UDP
				      : p;
}

bool hx_netpat_match(const struct hx_netpat *np, const struct hx_netsubj *s)
{
	if (np->kind == HX_NH_UNIX)
		return s->family == AF_UNIX && s->unix_path &&
		       hx_glob_match(np->name, s->unix_path);
	if (s->family == AF_UNIX)
		return false;
	if (np->listen != s->listen ||
	    (np->proto && s->proto && np->proto != proto_class(s->proto)))
		return false;
	if (s->port >= 0 && ((unsigned)s->port < np->port_lo ||
			     (unsigned)s->port > np->port_hi))
		return false;
	switch (np->kind) {
	case HX_NH_ANY:
		return true;
	case HX_NH_NAME:
		for (size_t i = 0; i < s->nnames; i++)
			if (s->names[i] && name_eq(s->names[i], np->name))
				return true;
		return false;
	case HX_NH_SUFFIX:
		for (size_t i = 0; i < s->nnames; i++)
			if (s->names[i] && suffix_match(s->names[i], np->name))
				return true;
		return false;
	case HX_NH_V4:
		return s->family == AF_INET &&
		       prefix_match(s->addr, np->addr, np->prefix);
	case HX_NH_V6:
		return s->family == AF_INET6 &&
		       prefix_match(s->addr, np->addr, np->prefix);
	case HX_NH_UNIX:
		break;
	}
	return false;
}

int hx_netsubj_parse_example(const char *text, struct hx_netsubj *s,
			     char *namebuf, const char **namev)
{
	const char *host, *colon;
	size_t hlen;
	long port;

	memset(s, 0, sizeof(*s));
	if (!strncmp(text, "listen:", 7)) {
		s->listen = true;
		text += 7;
	}
	if ((s->proto = proto_prefix(text)))
		text += 4;
	else if (!strncmp(text, "unix:", 5)) {
		s->family = AF_UNIX;
		s->unix_path = text + 5;
		s->port = -1;
		return 0;
	}
	if (text[0] == '[') {
		const char *end = strchr(text, ']');

		if (!end || end[1] != ':')
			return -EINVAL;
		host = text + 1;
		hlen = (size_t)(end - host);
		colon = end + 1;
		if (hx_parse_ip(host, hlen, s->addr) != AF_INET6)
			return -EINVAL;
		s->family = AF_INET6;
	} else {
		colon = strrchr(text, ':');
		if (!colon)
			return -EINVAL;
		host = text;
		hlen = (size_t)(colon - text);
		s->family = hx_parse_ip(host, hlen, s->addr);
		if (s->family == 0) {
			if (!hx_host_name_ok(host, hlen))
				return -EINVAL;
			s->family = AF_UNSPEC;
			memcpy(namebuf, host, hlen);
			namebuf[hlen] = '\0';
			namev[0] = namebuf;
			s->names = namev;
			s->nnames = 1;
		}
	}
	port = parse_num(colon + 1, strlen(colon + 1));
	if (port < 0)
		return -EINVAL;
	s->port = (int)port;
	return 0;
}
