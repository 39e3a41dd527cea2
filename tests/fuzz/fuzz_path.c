/* libFuzzer target over the one path normalizer (common/path.c) that the
 * shim, the supervisor and `harness-policy explain` share. Input: a base
 * and a path separated by the first NUL (no NUL: an absolute path alone).
 * Whatever it is, a result must be canonical (absolute, no empty, "." or
 * ".." segment, no trailing '/'), normalizing it again must change
 * nothing, and a relative path must mean what base + "/" + path means. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void canonical(const char *p, long n)
{
	const char *seg = p + 1;

	if (n <= 0 || p[0] != '/' || (size_t)n != strlen(p))
		abort();
	if (n == 1)
		return;
	if (p[n - 1] == '/')
		abort();
	while (seg) {
		const char *end = strchr(seg, '/');
		size_t len = end ? (size_t)(end - seg) : strlen(seg);

		if (len == 0 || (len == 1 && seg[0] == '.') ||
		    (len == 2 && seg[0] == '.' && seg[1] == '.'))
			abort();
		seg = end ? end + 1 : NULL;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char in[2 * PATH_MAX + 2], out[PATH_MAX], again[PATH_MAX],
	    joined[2 * PATH_MAX + 2], viajoin[PATH_MAX];
	const char *base = NULL, *path = in;
	char *nul;
	long n, m;

	if (size >= sizeof(in))
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	nul = memchr(in, '\0', size);
	if (nul && nul < in + size) {
		base = in;
		path = nul + 1;
	}
	n = hx_path_normalize(base, path, out, sizeof(out));
	if (n < 0)
		return 0;
	canonical(out, n);
	m = hx_path_normalize(NULL, out, again, sizeof(again));
	if (m != n || strcmp(out, again))
		abort();
	if (base && path[0] != '/') {
		snprintf(joined, sizeof(joined), "%s/%s", base, path);
		if (strlen(path) < PATH_MAX && strlen(joined) < PATH_MAX) {
			m = hx_path_normalize(NULL, joined, viajoin,
					      sizeof(viajoin));
			if (m != n || strcmp(out, viajoin))
				abort();
		}
	}
	return 0;
}
