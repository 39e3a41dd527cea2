/* libFuzzer target over the index file bytes the agent writes and the
 * session's end reads (supervisor/git/indexfile.h): the input as a whole
 * index (its extensions found past its entries) and as an untracked
 * cache's payload; nothing may crash or read past it, and a cache that
 * parses names only directories that start at the root. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/git/indexfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cache(const uint8_t *p, size_t n)
{
	struct hx_untr u;

	if (hx_untr_parse(p, n, &u))
		return;
	for (size_t i = 0; i < u.n; i++)
		if (!u.dirs[i].path || (i == 0) != !*u.dirs[i].path)
			abort();
	hx_untr_free(&u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const unsigned char *ext;
	size_t len, *bits, n, used;

	for (size_t nth = 0; nth < 4; nth++) {
		if (hx_index_extension(data, size, "UNTR", nth, &ext, &len) ==
		    1)
			cache(ext, len);
		if (hx_index_extension_eoie(data, size, "UNTR", nth, &ext,
					    &len) == 1) {
			if (ext < data || ext + len > data + size)
				abort();
			cache(ext, len);
		}
	}
	cache(data, size);
	if (!hx_ewah_bits(data, size, 1u << 16, &bits, &n, &used)) {
		if (used > size)
			abort();
		free(bits);
	}
	return 0;
}
