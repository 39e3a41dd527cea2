/* libFuzzer target over the /proc and audit text whose bytes are partly
 * the agent's (a process name holds spaces, parentheses, newlines; a
 * path in an audit record or a mount point is its own): a stat line
 * (supervisor/proc.c), a mountinfo line (supervisor/mountalias.c), an
 * audit record's header and fields (supervisor/kernel/kaudit_parse.c).
 * Nothing may crash or read past the input; what parses stays within
 * its buffers. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/kernel/kaudit.h"
#include "supervisor/mountalias.c"
#include "supervisor/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void audit(const char *text, size_t len)
{
	static const char *const keys[] = {
	    "path", "name", "comm", "exe", "proctitle", "blockers", "pid"};
	char out[64];
	struct timespec when;
	uint64_t serial;
	int at = hx_kaudit_header(text, len, &when, &serial), n;

	if (at > (int)len)
		abort();
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		n = hx_kaudit_field(text, len, keys[i], out, sizeof(out));
		if (n >= (int)sizeof(out) || (n >= 0 && out[n]))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hx_procstat st;
	struct mnt m;
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	/* the parsers of NUL-terminated text get the input so */
	memcpy(s, data, size);
	s[size] = '\0';
	(void)hx_proc_stat_parse(s, &st);
	if (parse(s, &m) && (strlen(m.root) >= sizeof(m.root) ||
			     strlen(m.point) >= sizeof(m.point)))
		abort();
	memcpy(s, data, size);
	hx_mountinfo_unescape(s);
	free(s);
	/* the audit parsers take a length: an exact-size copy */
	if ((s = malloc(size ? size : 1))) {
		memcpy(s, data, size);
		audit(s, size);
		free(s);
	}
	return 0;
}
