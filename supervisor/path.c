/* Lexical path handling; see path.h. */
#include "supervisor/path.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int hx_path_normalize(const char *in, char *out, size_t size)
{
	size_t o = 0, n;
	const char *p = in, *seg;

	if (!in || in[0] != '/')
		return -EINVAL;
	if (strnlen(in, PATH_MAX) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (size < 2)
		return -ENAMETOOLONG;
	while (*p) {
		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - seg);
		if (n == 0 || (n == 1 && seg[0] == '.'))
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--; /* the '/' before the popped segment */
			continue;
		}
		if (o + 1 + n + 1 > size)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, seg, n);
		o += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

static int replace_prefix(char *buf, size_t size, size_t plen, const char *with)
{
	size_t wlen = strlen(with), rest = strlen(buf + plen);

	if (wlen + rest + 1 > size)
		return -ENAMETOOLONG;
	memmove(buf + wlen, buf + plen, rest + 1);
	memcpy(buf, with, wlen);
	return 0;
}

static bool has_prefix(const char *buf, const char *pre)
{
	size_t n = strlen(pre);

	return !strncmp(buf, pre, n) && (buf[n] == '\0' || buf[n] == '/');
}

int hx_path_rewrite_proc_self(char *buf, size_t size, pid_t pid, pid_t tid)
{
	char with[64];

	if (has_prefix(buf, "/proc/self")) {
		snprintf(with, sizeof(with), "/proc/%d", (int)pid);
		return replace_prefix(buf, size, strlen("/proc/self"), with);
	}
	if (has_prefix(buf, "/proc/thread-self")) {
		snprintf(with, sizeof(with), "/proc/%d/task/%d", (int)pid,
			 (int)(tid ? tid : pid));
		return replace_prefix(buf, size, strlen("/proc/thread-self"),
				      with);
	}
	return 0;
}
