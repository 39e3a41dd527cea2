/* The built-in profiles (policy/profiles/NAME.yaml, packed by the
 * Makefile as "NAME\0TEXT\0" pairs): the embedded blob's reader. The
 * choice of one from the command is profile_detect.c. */
#include "policy/policy_int.h"

#include <string.h>

extern const char hx_profiles_start[], hx_profiles_end[];

/* The i-th profile's name and text, or false past the last. */
static bool nth(size_t i, const char **name, const char **text, size_t *len)
{
	const char *p = hx_profiles_start, *end = hx_profiles_end;

	for (;;) {
		const char *n = p, *t;
		size_t nl, tl;

		if (p >= end)
			return false;
		nl = strnlen(n, (size_t)(end - n));
		t = n + nl + 1;
		if (t >= end)
			return false;
		tl = strnlen(t, (size_t)(end - t));
		if (i-- == 0) {
			*name = n;
			*text = t;
			*len = tl;
			return true;
		}
		p = t + tl + 1;
	}
}

const char *hx_profile_name(size_t i)
{
	const char *n, *t;
	size_t len;

	return nth(i, &n, &t, &len) ? n : NULL;
}

const char *hx_profile_text(const char *name, size_t *len)
{
	const char *n, *t;
	size_t l;

	for (size_t i = 0; nth(i, &n, &t, &l); i++)
		if (!strcmp(n, name)) {
			if (len)
				*len = l;
			return t;
		}
	return NULL;
}

bool hx_profile_is_file(const char *what)
{
	size_t n = strlen(what);

	return strchr(what, '/') || (n > 5 && !strcmp(what + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(what + n - 4, ".yml"));
}
