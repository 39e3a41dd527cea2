/* See say.h. */
#include "supervisor/say.h"

#include <stdarg.h>
#include <stdio.h>

#include "common/notice.h"

void hx_say(const char *fmt, ...)
{
	char text[2048], out[8192];
	va_list ap;

	/* Its paths and git's errors can name the agent's files: escaped
	 * for the terminal (hx_text_escape). */
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	hx_text_escape(out, sizeof(out), text);
	fprintf(stderr, "harness-exec: %s\n", out);
}
