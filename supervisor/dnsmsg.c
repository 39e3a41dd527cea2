/* DNS messages; see dnsmsg.h. */
#define _GNU_SOURCE
#include "supervisor/dnsmsg.h"

#include <errno.h>
#include <netinet/in.h>
#include <resolv.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define HDR 12

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The question of msg (a query or an answer) into q, without the
 * header checks. */
static int question(const uint8_t *msg, size_t len, ns_msg *m,
		    struct hx_dnsq *q)
{
	ns_rr rr;
	int n;

	if (len < HDR || len > 65535 || get16(msg + 4) != 1 ||
	    ns_initparse(msg, (int)len, m) || ns_parserr(m, ns_s_qd, 0, &rr))
		return -EINVAL;
	n = dn_skipname(msg + HDR, msg + len);
	if (n < 1 || HDR + (size_t)n + 4 > len)
		return -EINVAL;
	/* ns_rr_name is "." (a literal) for the root */
	snprintf(q->name, sizeof(q->name), "%s", ns_rr_name(rr));
	q->id = get16(msg);
	q->type = ns_rr_type(rr);
	q->cls = ns_rr_class(rr);
	q->end = HDR + (size_t)n + 4;
	return 0;
}

int hx_dnsmsg_question(const uint8_t *msg, size_t len, struct hx_dnsq *q)
{
	ns_msg m;
	ns_rr rr;

	memset(q, 0, sizeof(*q));
	/* A query (QR 0), opcode QUERY, asking for nothing but its one
	 * question (no answers, no authority). */
	if (len < HDR || (msg[2] & 0xf8) || get16(msg + 6) || get16(msg + 8) ||
	    question(msg, len, &m, q))
		return -EINVAL;
	q->udp_max = 512;
	for (int i = 0; i < ns_msg_count(m, ns_s_ar); i++) {
		if (ns_parserr(&m, ns_s_ar, i, &rr))
			return -EINVAL;
		if (ns_rr_type(rr) == ns_t_opt && ns_rr_class(rr) > 512)
			q->udp_max = ns_rr_class(rr) < HX_DNS_UDP_MAX
					 ? ns_rr_class(rr)
					 : HX_DNS_UDP_MAX;
	}
	return 0;
}

size_t hx_dnsmsg_refusal(const uint8_t *query, const struct hx_dnsq *q,
			 int rcode, uint8_t *out, size_t cap)
{
	if (q->end > cap || q->end < HDR)
		return 0;
	memset(out, 0, HDR);
	put16(out, q->id);
	out[2] = (uint8_t)(0x80 | (query[2] & 0x01)); /* QR, the asker's RD */
	out[3] = (uint8_t)(0x80 | (rcode & 0x0f));    /* RA */
	put16(out + 4, 1);
	memcpy(out + HDR, query + HDR, q->end - HDR);
	return q->end;
}

size_t hx_dnsmsg_relay(const uint8_t *query, const struct hx_dnsq *q,
		       const uint8_t *ans, size_t alen, size_t max,
		       uint8_t *out, size_t cap)
{
	struct hx_dnsq aq;
	ns_msg m;
	size_t n;

	if (alen < HDR || !(ans[2] & 0x80) || question(ans, alen, &m, &aq) ||
	    aq.end != q->end || aq.type != q->type || aq.cls != q->cls ||
	    strcasecmp(aq.name, q->name))
		return 0;
	n = alen <= max ? alen : q->end;
	if (n > cap)
		return 0;
	memcpy(out, ans, n);
	if (n < alen) {
		out[2] |= 0x02; /* TC */
		memset(out + 6, 0, 6);
	}
	put16(out, q->id);
	memcpy(out + HDR, query + HDR, q->end - HDR);
	return n;
}

size_t hx_dnsmsg_addresses(const uint8_t *ans, size_t alen,
			   struct hx_dnsaddr *a, size_t max)
{
	ns_msg m;
	ns_rr rr;
	size_t n = 0;

	if (alen < HDR || alen > 65535 || ns_initparse(ans, (int)alen, &m))
		return 0;
	for (int i = 0; i < ns_msg_count(m, ns_s_an) && n < max; i++) {
		struct hx_dnsaddr *d = &a[n];

		if (ns_parserr(&m, ns_s_an, i, &rr))
			break;
		if (ns_rr_class(rr) != ns_c_in)
			continue;
		memset(d, 0, sizeof(*d));
		d->ttl = ns_rr_ttl(rr);
		if (ns_rr_type(rr) == ns_t_a && ns_rr_rdlen(rr) == 4) {
			struct sockaddr_in *in = (void *)&d->sa;

			in->sin_family = AF_INET;
			memcpy(&in->sin_addr, ns_rr_rdata(rr), 4);
			d->len = sizeof(*in);
			n++;
		} else if (ns_rr_type(rr) == ns_t_aaaa &&
			   ns_rr_rdlen(rr) == 16) {
			struct sockaddr_in6 *in6 = (void *)&d->sa;

			in6->sin6_family = AF_INET6;
			memcpy(&in6->sin6_addr, ns_rr_rdata(rr), 16);
			d->len = sizeof(*in6);
			n++;
		}
	}
	return n;
}

int hx_dnsmsg_rcode(const uint8_t *ans, size_t alen)
{
	return alen < HDR ? -1 : ans[3] & 0x0f;
}

const char *hx_dnsmsg_type_name(unsigned type, char *buf, size_t size)
{
	static const struct {
		unsigned type;
		const char *name;
	} names[] = {
	    {ns_t_a, "A"},	   {ns_t_ns, "NS"},	{ns_t_cname, "CNAME"},
	    {ns_t_soa, "SOA"},	   {ns_t_ptr, "PTR"},	{ns_t_mx, "MX"},
	    {ns_t_txt, "TXT"},	   {ns_t_aaaa, "AAAA"}, {ns_t_srv, "SRV"},
	    {ns_t_naptr, "NAPTR"}, {64, "SVCB"},	{65, "HTTPS"},
	    {ns_t_caa, "CAA"},	   {ns_t_any, "ANY"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].type == type)
			return names[i].name;
	snprintf(buf, size, "TYPE%u", type); /* RFC 3597's spelling */
	return buf;
}

const char *hx_dnsmsg_rcode_name(int rcode)
{
	static const char *const names[] = {"NOERROR",	"FORMERR", "SERVFAIL",
					    "NXDOMAIN", "NOTIMP",  "REFUSED"};

	return rcode >= 0 && rcode < 6 ? names[rcode] : "other";
}
