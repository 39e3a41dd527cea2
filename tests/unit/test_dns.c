/* The agent's DNS: the address -> names map (dnsmap.h) and the DNS
 * messages the supervisor's resolver reads and writes (dnsmsg.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "supervisor/dnsmap.h"
#include "supervisor/dnsmsg.h"
#include "supervisor/options.h"
#include "tests/unit/check_main.h"

/* ---- dnsmap ---- */

START_TEST(dnsmap_basic)
{
	struct hx_dnsmap *m;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(1)};
	struct sockaddr_in b = a;
	char names[4][HX_DNSMAP_NAME_MAX];
	enum hx_dns_source src[4];

	ck_assert_int_eq(hx_dnsmap_new(2, &m), 0);
	inet_pton(AF_INET, "10.0.0.1", &a.sin_addr);
	inet_pton(AF_INET, "10.0.0.2", &b.sin_addr);
	ck_assert_int_eq(hx_dnsmap_add(m, (void *)&a, sizeof(a), "a.example", 0,
				       HX_DNS_POLICY),
			 0);
	ck_assert_int_eq(hx_dnsmap_add(m, (void *)&a, sizeof(a), "a.example", 0,
				       HX_DNS_POLICY),
			 0);
	ck_assert_uint_eq(hx_dnsmap_size(m), 1);
	b.sin_port = htons(443); /* the port does not matter */
	ck_assert_uint_eq(
	    hx_dnsmap_lookup(m, (void *)&b, sizeof(b), names, NULL, 4), 0);
	ck_assert_int_eq(
	    hx_dnsmap_add(m, (void *)&a, sizeof(a), "alias", 5, HX_DNS_LOOKUP),
	    0);
	ck_assert_uint_eq(
	    hx_dnsmap_lookup(m, (void *)&a, sizeof(a), names, src, 4), 2);
	ck_assert_int_eq(src[0] == HX_DNS_LOOKUP ? src[1] : src[0],
			 HX_DNS_POLICY);
	/* full: the entry closest to expiry ("alias", 5 s) goes */
	ck_assert_int_eq(
	    hx_dnsmap_add(m, (void *)&b, sizeof(b), "b", 0, HX_DNS_POLICY), 0);
	ck_assert_uint_eq(hx_dnsmap_size(m), 2);
	ck_assert_uint_eq(
	    hx_dnsmap_lookup(m, (void *)&a, sizeof(a), names, src, 4), 1);
	ck_assert_str_eq(names[0], "a.example");
	/* The agent's own answer wins over the supervisor's guess of it,
	 * and is not taken back by that guess afterwards. */
	ck_assert_int_eq(hx_dnsmap_add(m, (void *)&a, sizeof(a), "a.example", 1,
				       HX_DNS_ANSWER),
			 0);
	ck_assert_int_eq(hx_dnsmap_add(m, (void *)&a, sizeof(a), "a.example", 0,
				       HX_DNS_POLICY),
			 0);
	ck_assert_uint_eq(
	    hx_dnsmap_lookup(m, (void *)&a, sizeof(a), names, src, 4), 1);
	ck_assert_int_eq(src[0], HX_DNS_ANSWER);
	ck_assert_str_eq(hx_dns_source_name(src[0]), "dns");
	ck_assert_int_eq(hx_dnsmap_add(m, (void *)&a, 3, "x", 0, HX_DNS_POLICY),
			 -EINVAL);
	hx_dnsmap_free(m);
	hx_dnsmap_free(NULL);
}
END_TEST

/* More addresses than room: the map stays full, every recent one is
 * found by its own chain, names of one address stay apart. */
START_TEST(dnsmap_full)
{
	struct hx_dnsmap *m;
	struct sockaddr_in6 a = {.sin6_family = AF_INET6};
	char names[4][HX_DNSMAP_NAME_MAX];
	enum hx_dns_source src[4];

	ck_assert_int_eq(hx_dnsmap_new(64, &m), 0);
	/* ::, a blocked name's answer, is nobody's address */
	ck_assert_int_eq(
	    hx_dnsmap_add(m, (void *)&a, sizeof(a), "n", 0, HX_DNS_ANSWER),
	    -EINVAL);
	for (uint32_t i = 1; i <= 1000; i++) {
		memcpy(&a.sin6_addr.s6_addr[12], &i, 4);
		ck_assert_int_eq(hx_dnsmap_add(m, (void *)&a, sizeof(a), "n",
					       100 + i, HX_DNS_ANSWER),
				 0);
		ck_assert_int_eq(hx_dnsmap_add(m, (void *)&a, sizeof(a), "m",
					       100 + i, HX_DNS_POLICY),
				 0);
	}
	ck_assert_uint_eq(hx_dnsmap_size(m), 64);
	for (uint32_t i = 1000 - 31; i <= 1000; i++) {
		memcpy(&a.sin6_addr.s6_addr[12], &i, 4);
		ck_assert_uint_eq(
		    hx_dnsmap_lookup(m, (void *)&a, sizeof(a), names, src, 4),
		    2);
	}
	{
		uint32_t old = 3;

		memcpy(&a.sin6_addr.s6_addr[12], &old, 4);
		ck_assert_uint_eq(
		    hx_dnsmap_lookup(m, (void *)&a, sizeof(a), names, NULL, 4),
		    0);
	}
	hx_dnsmap_free(m);
}
END_TEST

/* ---- DNS messages (dnsmsg.h) ---- */

/* A query for name (qtype, class IN), as resolvers write it. */
static size_t dns_query(uint8_t *b, const char *name, unsigned qtype, bool edns)
{
	static const uint8_t hdr[12] = {0x12, 0x34, 0x01, 0, 0, 1,
					0,    0,    0,	  0, 0, 0};
	size_t n = sizeof(hdr);
	const char *l = name;

	memcpy(b, hdr, n);
	while (*l) {
		size_t k = strcspn(l, ".");

		b[n++] = (uint8_t)k;
		memcpy(b + n, l, k);
		n += k;
		l += k + (l[k] == '.');
	}
	b[n++] = 0;
	b[n++] = (uint8_t)(qtype >> 8);
	b[n++] = (uint8_t)qtype;
	b[n++] = 0;
	b[n++] = 1;
	if (edns) {
		static const uint8_t opt[11] = {0, 0, 41, 0x10, 0, 0,
						0, 0, 0,  0,	0};

		b[11] = 1; /* ARCOUNT: an OPT of 4096 bytes */
		memcpy(b + n, opt, sizeof(opt));
		n += sizeof(opt);
	}
	return n;
}

START_TEST(dnsmsg_question_and_replies)
{
	uint8_t q[512], ans[600], out[700];
	struct hx_dnsq dq;
	struct hx_dnsaddr a[4];
	size_t n = dns_query(q, "Api.Example.com", 1, false), m, an;

	ck_assert_int_eq(hx_dnsmsg_question(q, n, &dq), 0);
	ck_assert_str_eq(dq.name, "Api.Example.com");
	ck_assert_uint_eq(dq.type, 1);
	ck_assert_uint_eq(dq.end, n);
	ck_assert_uint_eq(dq.udp_max, 512);
	/* A refusal: NXDOMAIN, the asker's id and question. */
	m = hx_dnsmsg_refusal(q, &dq, 3, out, sizeof(out));
	ck_assert_uint_eq(m, n);
	ck_assert_int_eq(hx_dnsmsg_rcode(out, m), 3);
	ck_assert_int_eq(out[0] == 0x12 && out[1] == 0x34 && (out[2] & 0x80),
			 1);
	/* The upstream's answer (other id, other letter case, one A). */
	an = dns_query(ans, "api.example.COM", 1, false);
	ans[0] = 0xab;
	ans[2] = 0x81;
	ans[3] = 0x80;
	ans[7] = 1;
	{
		static const uint8_t rr[16] = {0xc0, 12, 0, 1, 0,  1, 0, 0,
					       0,    60, 0, 4, 10, 1, 2, 3};

		memcpy(ans + an, rr, sizeof(rr));
		an += sizeof(rr);
	}
	m = hx_dnsmsg_relay(q, &dq, ans, an, 512, out, sizeof(out));
	ck_assert_uint_eq(m, an);
	ck_assert_int_eq(out[0] == 0x12 && out[1] == 0x34, 1);
	ck_assert_int_eq(memcmp(out + 12, q + 12, dq.end - 12), 0);
	ck_assert_uint_eq(hx_dnsmsg_addresses(out, m, a, 4), 1);
	ck_assert_uint_eq(a[0].ttl, 60);
	/* Over what the asker takes: the question alone, TC set. */
	m = hx_dnsmsg_relay(q, &dq, ans, an, dq.end + 4, out, sizeof(out));
	ck_assert_uint_eq(m, dq.end);
	ck_assert_int_eq(out[2] & 0x02, 0x02);
	ck_assert_int_eq(out[7], 0);
	/* An answer to another question is no answer. */
	an = dns_query(ans, "other.example.com", 1, false);
	ans[2] = 0x81;
	ck_assert_uint_eq(hx_dnsmsg_relay(q, &dq, ans, an, 512, out, 700), 0);
	/* EDNS: the asker's size, at most HX_DNS_UDP_MAX. */
	n = dns_query(q, "a.b", 28, true);
	ck_assert_int_eq(hx_dnsmsg_question(q, n, &dq), 0);
	ck_assert_uint_eq(dq.udp_max, 4096);
	char tb[16];
	ck_assert_str_eq(hx_dnsmsg_type_name(28, tb, sizeof(tb)), "AAAA");
	ck_assert_str_eq(hx_dnsmsg_type_name(999, tb, sizeof(tb)), "TYPE999");
	ck_assert_str_eq(hx_dnsmsg_rcode_name(3), "NXDOMAIN");
}
END_TEST

START_TEST(dnsmsg_hostile)
{
	uint8_t q[512];
	struct hx_dnsq dq;
	size_t n = dns_query(q, "a.example", 1, false);

	/* a response, two questions, an answer in a query, a name past
	 * the end, a compression loop, a short header: all refused */
	q[2] |= 0x80;
	ck_assert_int_eq(hx_dnsmsg_question(q, n, &dq), -EINVAL);
	q[2] &= 0x7f;
	q[5] = 2;
	ck_assert_int_eq(hx_dnsmsg_question(q, n, &dq), -EINVAL);
	q[5] = 1;
	q[7] = 1;
	ck_assert_int_eq(hx_dnsmsg_question(q, n, &dq), -EINVAL);
	q[7] = 0;
	ck_assert_int_eq(hx_dnsmsg_question(q, n - 3, &dq), -EINVAL);
	q[12] = 0xc0;
	q[13] = 12;
	ck_assert_int_eq(hx_dnsmsg_question(q, n, &dq), -EINVAL);
	ck_assert_int_eq(hx_dnsmsg_question(q, 11, &dq), -EINVAL);
	/* the root, whose name libresolv spells "." (found by fuzz_dnsmsg) */
	n = dns_query(q, "", 2, false);
	ck_assert_int_eq(hx_dnsmsg_question(q, n, &dq), 0);
	ck_assert_str_eq(dq.name, ".");
	ck_assert_uint_eq(hx_dnsmsg_addresses(q, 5, NULL, 0), 0);
	ck_assert_int_eq(hx_dnsmsg_rcode(q, 3), -1);
}
END_TEST

/* --dns-upstream ADDR:PORT */
START_TEST(dns_upstream_option)
{
	static const char *const bad[] = {
	    "127.0.0.1", "127.0.0.1:", "127.0.0.1:0",	"127.0.0.1:65536",
	    "host:53",	 ":53",	       "127.0.0.1:53x", "[::1]:53"};
	struct sockaddr_in in;

	ck_assert_int_eq(hx_options_upstream("127.0.0.1:5353", &in), 0);
	ck_assert_int_eq(ntohs(in.sin_port), 5353);
	ck_assert_int_eq(in.sin_family, AF_INET);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(hx_options_upstream(bad[i], &in) == -EINVAL, "%s",
			      bad[i]);
}
END_TEST

static Suite *dns_suite(void)
{
	Suite *s = suite_create("dns");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, dnsmap_basic);
	tcase_add_test(tc, dnsmap_full);
	tcase_add_test(tc, dnsmsg_question_and_replies);
	tcase_add_test(tc, dnsmsg_hostile);
	tcase_add_test(tc, dns_upstream_option);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(dns_suite)
