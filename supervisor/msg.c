/* See msg.h. */
#include "msg.h"

#include <stdarg.h>
#include <stdio.h>

void hx_say(const char *fmt, ...)
{
	va_list ap;

	fputs("harness-exec: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
