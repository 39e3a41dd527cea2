/* See shebang.h. */
#include "common/shebang.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static bool spacetab(char c)
{
	return c == ' ' || c == '\t';
}

/* A first line longer than the kernel reads whose interpreter's name
 * may be cut (no space, tab or NUL after it within the head): the
 * kernel refuses it (ENOEXEC, fs/binfmt_script.c) rather than run a
 * shorter name, which may be another file. */
static bool truncated(const char *buf, size_t n)
{
	size_t i = 2;

	if (n < HX_BINPRM_BUF)
		return false; /* the kernel's head is NUL-padded */
	while (i < n && spacetab(buf[i]))
		i++;
	if (i == n)
		return true; /* spaces and tabs only */
	for (; i < n; i++)
		if (spacetab(buf[i]) || !buf[i])
			return false;
	return true;
}

int hx_shebang_parse(char *buf, size_t n, char **name, char **arg)
{
	char *end, *p, *sep;

	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return -ENOEXEC;
	if (n > HX_BINPRM_BUF)
		n = HX_BINPRM_BUF;
	end = memchr(buf, '\n', strnlen(buf, n));
	if (!end && truncated(buf, n))
		return -ENOEXEC;
	buf[n < HX_BINPRM_BUF ? n : HX_BINPRM_BUF - 1] = '\0';
	if (!end)
		end = buf + strlen(buf); /* a line cut: its argument is */
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
