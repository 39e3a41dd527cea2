/* libFuzzer target over harness-mcp-worker's decoders of what the front
 * and the agent send: the line framer and message decoder, the unified
 * diff parser and applier, and the edits. Any input must be taken or
 * refused with a reason, never crash; a patch that applies never grows
 * past its bound. Input: a selector byte, then (for patches) the file
 * and the patch split at the first NUL. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/mcpwork/patch.h"
#include "tools/mcpwork/text.h"
#include "tools/mcpwork/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX 4096

static void line(void *ctx, char *p, size_t n, bool too_long)
{
	struct hx_mw_msg m;
	uint64_t id;

	(void)ctx;
	if (too_long) {
		hx_mw_wire_peek_id(p, n, &id);
		return;
	}
	hx_mw_wire_parse(p, n, &m);
	if (m.kind == HX_MW_MSG_REQUEST && (!m.tool || !m.args))
		abort();
	if (m.kind == HX_MW_MSG_BAD && !m.why[0])
		abort();
	hx_mw_wire_msg_clear(&m);
}

static void patch(const char *p, size_t n)
{
	const char *nul = memchr(p, 0, n);
	size_t sn = nul ? (size_t)(nul - p) : n / 2;
	const char *d = p + sn + (nul != NULL);
	size_t dn = n - sn - (nul != NULL);
	struct hx_mw_patch_fail f;
	struct hx_mw_patch_edit e = {d, p, dn / 2, sn / 2, dn & 1};
	unsigned hunks;
	char *out = NULL;
	size_t outn = 0;

	if (hx_mw_patch_diff(p, sn, d, dn, MAX, &out, &outn, &hunks, &f) == 0) {
		if (outn > MAX || out[outn])
			abort();
	} else if (out || !f.why[0]) {
		abort();
	}
	free(out);
	out = NULL;
	if (hx_mw_patch_edits(p, sn, &e, 1, MAX, &out, &outn, &f) == 0 &&
	    outn > MAX)
		abort();
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hx_mw_wire_framer fr = {.max = 64};
	const char *p = (const char *)data + 1;
	size_t n = size ? size - 1 : 0;
	char *lossy;
	size_t ln;

	if (!size)
		return 0;
	switch (data[0] % 3) {
	case 0:
		hx_mw_wire_feed(&fr, p, n, line, NULL);
		hx_mw_wire_framer_free(&fr);
		break;
	case 1:
		patch(p, n);
		break;
	default:
		if (hx_mw_text_lossy(p, n, &lossy, &ln) >= 0) {
			if (!hx_mw_text_utf8_valid(lossy, ln, NULL))
				abort();
			free(lossy);
		}
	}
	return 0;
}
