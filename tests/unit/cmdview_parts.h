/* For the tests of commands understood: whether a view holds a part
 * (beyond the exec itself) that formats as want. */
#ifndef HX_TESTS_CMDVIEW_PARTS_H
#define HX_TESTS_CMDVIEW_PARTS_H

#include <stdbool.h>
#include <string.h>

#include "policy/cmdview.h"

static inline bool has_part(const struct hx_cmd_view *v, const char *want)
{
	char buf[256];

	for (size_t i = 1; i < v->nparts; i++) {
		hx_cmd_part_format(&v->parts[i], buf, sizeof(buf));
		if (!strcmp(buf, want))
			return true;
	}
	return false;
}

#endif
