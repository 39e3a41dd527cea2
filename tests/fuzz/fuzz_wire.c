/* libFuzzer target over the supervisor's decoder of shim datagrams: any
 * input must decode or be rejected, never crash, and a decoded message's
 * strings must be NUL-terminated within the message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct hx_msg m; /* large: one instance, as in the supervisor */

static void touch(const struct hx_str *s)
{
	if (s->s && strlen(s->s) != s->len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i;

	if (hx_wire_decode(data, size, &m) != HX_WIRE_OK)
		return 0;
	touch(&m.path);
	touch(&m.path2);
	touch(&m.host);
	touch(&m.rule);
	touch(&m.session);
	for (i = 0; i < m.nargs; i++)
		touch(&m.args[i]);
	for (i = 0; i < m.nframes; i++)
		touch(&m.frames[i]);
	for (i = 0; i < m.nrules; i++)
		touch(&m.rules[i].pattern);
	for (i = 0; i < m.naddrs; i++)
		if (m.addrs[i].len < 2 || m.addrs[i].len > HX_WIRE_MAX_SOCKADDR)
			abort();
	return 0;
}
