/* Path globs for policy rules. Pure functions: no allocation, no locks,
 * no errno; safe in the shim, in signal handlers and vfork children.
 *
 * Syntax: '*' matches any run of characters within one path segment,
 * '?' one character other than '/', '[...]' a class ('!' or '^' negates,
 * ranges with '-'), '\' escapes the next character, and '**' as a whole
 * segment matches any number of segments, none included: "/a/" "**"
 * matches "/a" itself, "/a/" "**" "/b" matches "/a/b". */
#ifndef HX_COMMON_GLOB_H
#define HX_COMMON_GLOB_H

#include <stdbool.h>
#include <stddef.h>

/* True when path matches the (validated) pattern. */
bool hx_glob_match(const char *pattern, const char *path);

/* True when pattern matches some path strictly beneath directory dir
 * (dir + "/" + a non-empty rest): what a rename of dir would move. A
 * path too long to tell gives true. */
bool hx_glob_match_beneath(const char *pattern, const char *dir);

/* True when pattern matches every path strictly beneath directory dir:
 * a pattern PREFIX/"**" whose PREFIX matches dir or a directory above
 * it. False when unsure (a path too long). */
bool hx_glob_covers_beneath(const char *pattern, const char *dir);

/* True when renaming directory from to to cannot change which paths
 * beneath them match pattern: a pattern PREFIX/"**" matching both, or
 * PREFIX/"**"/SUFFIX (SUFFIX with no "**" but a last one) with from and
 * to both strictly beneath PREFIX and neither named like the start of
 * SUFFIX. False when unsure. */
bool hx_glob_rename_keeps(const char *pattern, const char *from,
			  const char *to);

/* 0 when pattern is well formed; otherwise -1, with *offset set to the
 * byte where the problem is and *why to a static message. */
int hx_glob_validate(const char *pattern, size_t *offset, const char **why);

/* How specific a pattern is: the count of its literal characters. The
 * most specific of several matching rules is the one reported. */
unsigned hx_glob_specificity(const char *pattern);

/* True when the pattern has no wildcard at all. */
bool hx_glob_is_literal(const char *pattern);

/* Escapes glob metacharacters of a literal path (\ * ? [ ]) into out,
 * and '$', which a policy's pattern reads as a variable ("\$" is a '$':
 * policy/vars.c): a name holding "a$b" made a learned policy fail to
 * load. */
int hx_glob_escape(const char *path, char *out, size_t size);

#endif
