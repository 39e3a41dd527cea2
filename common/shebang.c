/* See shebang.h. */
#include "common/shebang.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static bool spacetab(char c)
{
	return c == ' ' || c == '\t';
}

int hx_shebang_parse(char *buf, size_t n, char **name, char **arg)
{
	char *end, *p, *sep;

	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return -ENOEXEC;
	buf[n < HX_BINPRM_BUF ? n : HX_BINPRM_BUF - 1] = '\0';
	end = memchr(buf, '\n', strlen(buf));
	if (!end)
		end = buf + strlen(buf); /* a truncated line: best effort */
	while (end > buf + 2 && spacetab(end[-1]))
		end--;
	*end = '\0';
	for (p = buf + 2; spacetab(*p); p++)
		;
	if (!*p)
		return -ENOEXEC;
	*name = p;
	*arg = NULL;
	for (sep = p; *sep && !spacetab(*sep); sep++)
		;
	if (*sep) {
		*sep++ = '\0';
		while (spacetab(*sep))
			sep++;
		if (*sep)
			*arg = sep;
	}
	return 0;
}
