/* The git configuration that forces a push; see gitforce.h. */
#include "policy/gitforce.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

bool hx_git_remote_forces(const char *key, size_t klen, const char *v,
			  const char *end)
{
	static const char *const no[] = {"false", "no", "off", "0"};
	const char *w;

	for (; v && v < end && (isspace((unsigned char)*v) || *v == '"');)
		v++;
	if (klen == 4 && !strncasecmp(key, "push", 4))
		return v && v < end && (*v == '+' || *v == ':');
	if (klen != 6 || strncasecmp(key, "mirror", 6))
		return false;
	if (!v)
		return true; /* a bare key is true */
	for (w = v; w < end && isalnum((unsigned char)*w);)
		w++;
	for (const char *t = w; t < end && *t != '#' && *t != ';'; t++)
		if (!isspace((unsigned char)*t) && *t != '"')
			return true;
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		if ((size_t)(w - v) == strlen(no[i]) &&
		    !strncasecmp(v, no[i], strlen(no[i])))
			return false;
	return true;
}
