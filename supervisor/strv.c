/* String vectors; see strv.h. */
#include "supervisor/strv.h"

#include <stdlib.h>
#include <string.h>

char **hx_strv_dup(const char *const *v, size_t n)
{
	char **o = calloc(n + 1, sizeof(*o));

	for (size_t i = 0; o && i < n; i++)
		if (!(o[i] = strdup(v[i] ? v[i] : ""))) {
			hx_strv_free(o, i);
			return NULL;
		}
	return o;
}

void hx_strv_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}
