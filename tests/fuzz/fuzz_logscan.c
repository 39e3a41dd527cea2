/* libFuzzer target over the member scanner of harness-audit's summary,
 * tree and export (supervisor/export/logscan.c): the input is a log line, which
 * a damaged or hand-edited log makes anything. Whatever it is, the scan ends,
 * stays within the line, and every span it gives lies inside it, nested objects
 * included. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/export/logscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const struct hx_span *s, const char *p, size_t n)
{
	if (s->p && (s->p < p || s->p + s->n > p + n))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {"event", "pid", "args", "time",
					   "verdict"};
	struct hx_span m[5], a[2];
	char *line = malloc(size ? size : 1), buf[64];

	if (!line)
		return 0;
	memcpy(line, data, size);
	if (!hx_scan_members(line, size, keys, 5, m)) {
		for (int i = 0; i < 5; i++) {
			inside(&m[i], line, size);
			hx_span_str(&m[i], buf, sizeof(buf));
			hx_span_int(&m[i], 0);
		}
		if (m[2].p && !hx_scan_members(
				  m[2].p, m[2].n,
				  (const char *const[]){"argv", "path"}, 2, a))
			for (int i = 0; i < 2; i++)
				inside(&a[i], m[2].p, m[2].n);
	}
	free(line);
	return 0;
}
