/* Path globs for policy rules. Pure functions: no allocation, no locks,
 * no errno; safe in the shim, in signal handlers and vfork children.
 *
 * Syntax: '*' matches any run of characters within one path segment,
 * '?' one character other than '/', '[...]' a class ('!' or '^' negates,
 * ranges with '-'), '\' escapes the next character, and '**' as a whole
 * segment matches any number of segments, none included: "/a/" "**"
 * matches "/a" itself, "/a/" "**" "/b" matches "/a/b". */
#ifndef HX_GLOB_H
#define HX_GLOB_H

#include <stdbool.h>
#include <stddef.h>

/* True when path matches the (validated) pattern. */
bool hx_glob_match(const char *pattern, const char *path);

/* 0 when pattern is well formed; otherwise -1, with *offset set to the
 * byte where the problem is and *why to a static message. */
int hx_glob_validate(const char *pattern, size_t *offset, const char **why);

/* How specific a pattern is: the count of its literal characters. The
 * most specific of several matching rules is the one reported. */
unsigned hx_glob_specificity(const char *pattern);

/* True when the pattern has no wildcard at all. */
bool hx_glob_is_literal(const char *pattern);

#endif
