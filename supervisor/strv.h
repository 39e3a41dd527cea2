/* Copies of argv-like string vectors (a question's argv, a script's). */
#ifndef HX_STRV_H
#define HX_STRV_H

#include <stddef.h>

/* A NULL-terminated copy of v's n strings (a NULL one copied as ""), or
 * NULL when out of memory. Free with hx_strv_free. */
char **hx_strv_dup(const char *const *v, size_t n);
/* Frees a copy of n strings; NULL is a no-op. */
void hx_strv_free(char **v, size_t n);

#endif
