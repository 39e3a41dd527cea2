/* libFuzzer target over the DNS messages the supervisor's resolver reads
 * (supervisor/dnsmsg.c): every question an agent sends, and every answer
 * the network gives. Whatever the bytes, nothing reads or writes out of
 * bounds; a question that parses makes a refusal of exactly its length;
 * the input as its own answer relays only within the sizes asked. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/dnsmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[70000];
	struct hx_dnsaddr a[8];
	struct hx_dnsq q;
	size_t n, max;

	if (size > 65535)
		return 0;
	n = hx_dnsmsg_addresses(data, size, a, 8);
	if (n > 8)
		abort();
	hx_dnsmsg_rcode(data, size);
	if (hx_dnsmsg_question(data, size, &q))
		return 0;
	if (q.end > size || q.end < 12 || q.udp_max < 512 ||
	    q.udp_max > HX_DNS_UDP_MAX || strlen(q.name) >= sizeof(q.name))
		abort();
	if (hx_dnsmsg_refusal(data, &q, 3, out, sizeof(out)) != q.end)
		abort();
	/* The question, made an answer (QR set), relayed to itself. */
	memcpy(out, data, size);
	out[2] |= 0x80;
	max = q.udp_max;
	n = hx_dnsmsg_relay(data, &q, out, size, max, out + 65536 - 4096, 4096);
	if (n && (n > max || n > size))
		abort();
	return 0;
}
