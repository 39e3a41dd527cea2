/* DNS messages, as the supervisor's resolver reads and writes them
 * (unotify_dns.c): the agent's question, the answer made the agent's,
 * a refusal. Parsing is glibc's libresolv (ns_initparse, dn_skipname);
 * every message is the agent's or the network's, so bounded. Pure. */
#ifndef HX_DNSMSG_H
#define HX_DNSMSG_H

#include <arpa/nameser.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define HX_DNS_UDP_MAX 4096 /* what a reply over UDP may be at most */

/* The one question of a query. */
struct hx_dnsq {
	char name[NS_MAXDNAME]; /* presentation form, "\." escaped */
	uint16_t id, type, cls;
	size_t end;	/* offset just past the question */
	size_t udp_max; /* what the asker takes over UDP (EDNS, or 512) */
};

/* The question of msg: 0, or -EINVAL when msg is no standard query of
 * exactly one question. */
int hx_dnsmsg_question(const uint8_t *msg, size_t len, struct hx_dnsq *q);

/* A reply to query (q its question) with rcode (ns_r_nxdomain,
 * ns_r_refused, ns_r_servfail, ns_r_formerr) and no records, into out;
 * returns its length, 0 when cap is too small. */
size_t hx_dnsmsg_refusal(const uint8_t *query, const struct hx_dnsq *q,
			 int rcode, uint8_t *out, size_t cap);

/* The upstream's answer (to a query of q's name, type and class) made
 * the reply to the agent's query: its id and its own question bytes
 * (the letter case it chose); over max bytes, the question alone with
 * TC set (the asker retries over TCP). Returns the length, or 0 when
 * ans does not answer q. */
size_t hx_dnsmsg_relay(const uint8_t *query, const struct hx_dnsq *q,
		       const uint8_t *ans, size_t alen, size_t max,
		       uint8_t *out, size_t cap);

/* One address of an answer. */
struct hx_dnsaddr {
	struct sockaddr_storage sa;
	socklen_t len;
	uint32_t ttl;
};

/* The A and AAAA records of ans into a[0..max); returns how many. */
size_t hx_dnsmsg_addresses(const uint8_t *ans, size_t alen,
			   struct hx_dnsaddr *a, size_t max);

/* ans's response code (ns_r_*), or -1. */
int hx_dnsmsg_rcode(const uint8_t *ans, size_t alen);

/* "AAAA", or "TYPE99" into buf. */
const char *hx_dnsmsg_type_name(unsigned type, char *buf, size_t size);
/* "NXDOMAIN"; "other" past REFUSED. */
const char *hx_dnsmsg_rcode_name(int rcode);

#endif
