/* See grow.h. */
#include "tools/mcpwork/grow.h"

#include <errno.h>
#include <stdlib.h>

int hx_mw_grow(char **buf, size_t *cap, size_t need, size_t limit)
{
	size_t c = *cap ? *cap : 4096;
	char *nb;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (limit && c > limit && limit >= need)
		c = limit;
	if (!(nb = realloc(*buf, c)))
		return -ENOMEM;
	*buf = nb;
	*cap = c;
	return 0;
}
