/* Which packed document stands for an embedded text; see yamlpack.h.
 * Apart from yamlpack.c, which the build-time packer links alone. */
#include <stdint.h>
#include <string.h>

#include "policy/policy_int.h"
#include "policy/yamlpack.h"

extern const char hx_policy_nodes_start[], hx_policy_nodes_end[];

/* The build's blob: for each embedded text, its name ("default" or a
 * profile's) and a NUL padded to 4 bytes, its packed size (4 bytes),
 * the packed document padded to 4 bytes. */
static const void *packed_named(const char *name, size_t *size)
{
	const char *p = hx_policy_nodes_start, *end = hx_policy_nodes_end;

	while (p < end) {
		size_t hl = (strnlen(p, (size_t)(end - p)) + 4) & ~(size_t)3;
		uint32_t n;

		if ((size_t)(end - p) < hl + 4)
			return NULL;
		memcpy(&n, p + hl, 4);
		if (n > (size_t)(end - p) - hl - 4)
			return NULL;
		if (!strcmp(p, name)) {
			*size = n;
			return p + hl + 4;
		}
		p += hl + 4 + ((n + (size_t)3) & ~(size_t)3);
	}
	return NULL;
}

const void *hx_yamlpack_embedded(const char *text, size_t *size)
{
	const char *name;

	if (text == hx_policy_default_text(NULL))
		return packed_named("default", size);
	for (size_t i = 0; (name = hx_profile_name(i)); i++)
		if (text == hx_profile_text(name, NULL))
			return packed_named(name, size);
	return NULL;
}
