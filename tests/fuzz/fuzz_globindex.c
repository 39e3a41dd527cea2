/* libFuzzer target over what the glob index claims (common/globindex.h):
 * the input is a glob and a path (split at the first NUL); when the
 * glob is valid and matches the path, the index must not have dismissed
 * it: its key is the path up to one of its '/' or the whole path, and
 * the path holds its literal end and inner run. A failure here is a
 * read or write the index would decide by the wrong rule. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/glob.h"
#include "common/globindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The key is among those hx_glob_groups_visit looks up for path. */
static bool key_looked_up(const char *glob, size_t klen, const char *path)
{
	size_t plen = strlen(path);

	if (!klen)
		return true; /* the empty key: every path */
	if (klen > plen || memcmp(glob, path, klen))
		return false;
	return klen == plen || path[klen] == '/';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	char glob[512], path[512];
	struct hx_glob_need need;
	size_t glen, plen, off;
	const char *why;

	if (!nul)
		return 0;
	glen = (size_t)(nul - data);
	plen = size - glen - 1;
	if (glen >= sizeof(glob) || plen >= sizeof(path) ||
	    memchr(nul + 1, 0, plen))
		return 0;
	memcpy(glob, data, glen);
	glob[glen] = '\0';
	memcpy(path, nul + 1, plen);
	path[plen] = '\0';
	/* the index is for absolute paths ("**" "/x" matches "x" too) */
	if (path[0] != '/' || hx_glob_validate(glob, &off, &why) ||
	    !hx_glob_match(glob, path))
		return 0;
	hx_glob_need_of(glob, &need);
	if (!key_looked_up(glob, need.key, path))
		abort();
	if (!hx_glob_need_holds(glob, &need, path, plen))
		abort();
	return 0;
}
