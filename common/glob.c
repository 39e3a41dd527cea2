/* Path glob matcher; see glob.h for the syntax. Patterns are validated
 * before use, so the matcher may assume '**' only appears as a segment. */
#include "common/glob.h"

#include <errno.h>
#include <string.h>

/* Matches one class at *pp against c; advances *pp past the ']'. */
static bool class_match(const char **pp, char c)
{
	const char *p = *pp + 1;
	bool negate = false, hit = false;

	if (*p == '!' || *p == '^') {
		negate = true;
		p++;
	}
	for (bool first = true; *p && (*p != ']' || first); first = false) {
		/* unsigned: with plain (signed) char, a range holding
		 * UTF-8 bytes such as [\x80-\xff] would never match. */
		unsigned char lo =
		    (unsigned char)(*p == '\\' && p[1] ? *++p : *p);
		unsigned char hi = lo;

		p++;
		if (*p == '-' && p[1] && p[1] != ']') {
			p++;
			hi = (unsigned char)(*p == '\\' && p[1] ? *++p : *p);
			p++;
		}
		if ((unsigned char)c >= lo && (unsigned char)c <= hi)
			hit = true;
	}
	*pp = *p == ']' ? p + 1 : p;
	return hit != negate && c != '/';
}

/* What a match attempt says, as git's wildmatch does: a '*' that ran
 * out of its name (at a '/') fails every enclosing '*' of its names up
 * to the nearest "**", and one that ran out of the path fails them all.
 * Without that, each '*' retried every position of the ones after it: a
 * name of 250 bytes took seconds against "*?*?*?*" (found by fuzzing),
 * and the agent chooses the names its calls are decided on. A path
 * whose end is open (a directory's beneath) is not failed at its end:
 * "**" may still take names past it. */
enum { NOMATCH, MATCH, ABORT_ALL, ABORT_TO_STARSTAR };

/* open: s is a directory followed by "/" and some path nobody knows
 * yet: its end matches whatever non-empty rest of p is left. */
static int match_at(const char *p, const char *s, bool open)
{
	int r;

	for (;;) {
		if (open && *s == '\0') /* a validated rest matches something */
			return *p != '\0' ? MATCH : NOMATCH;
		switch (*p) {
		case '\0':
			return *s == '\0' ? MATCH : NOMATCH;
		case '*':
			if (p[1] == '*') {
				/* '**' is a whole segment: "**" at the end
				 * takes the rest; "**\/" takes zero or more
				 * segments. */
				p += 2;
				if (*p == '\0')
					return MATCH;
				p++; /* the '/' */
				for (;;) {
					r = match_at(p, s, open);
					if (r == MATCH || r == ABORT_ALL)
						return r;
					s = strchr(s, '/');
					if (!s)
						return open ? NOMATCH
							    : ABORT_ALL;
					s++;
				}
			}
			p++;
			for (;;) {
				if ((r = match_at(p, s, open)) != NOMATCH)
					return r;
				if (*s == '/')
					return ABORT_TO_STARSTAR;
				if (*s == '\0')
					return open ? NOMATCH : ABORT_ALL;
				s++;
			}
		case '?':
			if (*s == '\0' || *s == '/')
				return NOMATCH;
			p++;
			s++;
			break;
		case '[':
			if (*s == '\0' || !class_match(&p, *s))
				return NOMATCH;
			s++;
			break;
		case '/':
			/* "X/" "**" also matches X itself. */
			if (*s == '\0' && p[1] == '*' && p[2] == '*' &&
			    p[3] == '\0')
				return MATCH;
			/* fall through */
		default:
			if (*p == '\\' && p[1])
				p++;
			if (*p != *s)
				return NOMATCH;
			p++;
			s++;
			break;
		}
	}
}

bool hx_glob_match(const char *pattern, const char *path)
{
	return match_at(pattern, path, false) == MATCH;
}

bool hx_glob_match_beneath(const char *pattern, const char *dir)
{
	char buf[4098];
	size_t n = strlen(dir);

	if (n + 2 > sizeof(buf))
		return true; /* cannot tell: say it might */
	memcpy(buf, dir, n);
	buf[n] = '/';
	buf[n + 1] = '\0';
	if (n == 1 && dir[0] == '/')
		buf[1] = '\0'; /* "/" + rest, not "//" */
	return match_at(pattern, buf, true) == MATCH;
}

bool hx_glob_covers_beneath(const char *pattern, const char *dir)
{
	char pre[4098], at[4098];
	size_t plen = strlen(pattern), n = strlen(dir);

	if (!strcmp(pattern, "**"))
		return true;
	if (plen < 3 || strcmp(pattern + plen - 3, "/**") ||
	    plen - 3 >= sizeof(pre) || n >= sizeof(at))
		return false;
	if (plen == 3)
		return true; /* "/" "**": everything */
	memcpy(pre, pattern, plen - 3);
	pre[plen - 3] = '\0';
	memcpy(at, dir, n + 1);
	/* dir, then each directory above it: PREFIX matching one takes
	 * everything beneath it. */
	for (;;) {
		char *slash;

		if (match_at(pre, at, false) == MATCH)
			return true;
		slash = strrchr(at, '/');
		if (!slash || slash == at)
			return false;
		*slash = '\0';
	}
}

/* Whether the first n bytes of s hold a "**". */
static bool has_globstar(const char *s, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (s[i] == '*' && s[i + 1] == '*')
			return true;
	return false;
}

bool hx_glob_rename_keeps(const char *pattern, const char *from, const char *to)
{
	char g[4200];
	const char *mid, *b;
	size_t alen, blen;

	/* PREFIX "/" "**" and both inside PREFIX: everything beneath each
	 * matches, before and after. */
	blen = strlen(pattern);
	if (blen > 3 && !strcmp(pattern + blen - 3, "/**") &&
	    !has_globstar(pattern, blen - 3))
		return hx_glob_match(pattern, from) &&
		       hx_glob_match(pattern, to);
	/* PREFIX "/" "**" "/" SUFFIX, or "**" "/" SUFFIX; a SUFFIX may end
	 * in "/" "**" (".husky/" "**"): everything under its last name. */
	if (!strncmp(pattern, "**/", 3)) {
		alen = 0;
		b = pattern + 3;
	} else if ((mid = strstr(pattern, "/**/"))) {
		alen = (size_t)(mid - pattern);
		b = mid + 4;
	} else {
		return false;
	}
	blen = strlen(b);
	if (blen >= 3 && !strcmp(b + blen - 3, "/**"))
		blen -= 3;
	else if (blen == 2 && !strcmp(b, "**"))
		return false;
	if (alen + 6 > sizeof(g) || blen + 4 > sizeof(g))
		return false;
	if (has_globstar(b, blen))
		return false;
	/* Both strictly beneath PREFIX: "**" takes the same part of each. */
	memcpy(g, pattern, alen);
	memcpy(g + alen, "/*/**", 6);
	if (!hx_glob_match(g, from) || !hx_glob_match(g, to))
		return false;
	/* And SUFFIX's match never begins in from's or to's own names: a
	 * suffix ".vscode/tasks.json" is moved by a rename of ".vscode". The
	 * names checked: each proper start of SUFFIX, and all of it when it
	 * ended in "/" "**". */
	for (size_t i = 1; i <= blen; i++) {
		if (i < blen ? b[i] != '/' : blen == strlen(b))
			continue;
		memcpy(g, "**/", 3);
		memcpy(g + 3, b, i);
		g[3 + i] = '\0';
		if (hx_glob_match(g, from) || hx_glob_match(g, to))
			return false;
	}
	return true;
}

int hx_glob_validate(const char *pattern, size_t *offset, const char **why)
{
	const char *p = pattern;

	if (*p == '\0') {
		*offset = 0;
		*why = "empty pattern";
		return -1;
	}
	while (*p) {
		if (*p == '\\') {
			if (p[1] == '\0') {
				*why = "trailing backslash";
				goto bad;
			}
			p += 2;
			continue;
		}
		if (*p == '[') {
			const char *q = p + 1;

			if (*q == '!' || *q == '^')
				q++;
			if (*q == ']')
				q++;
			while (*q && *q != ']') {
				if (*q == '/') {
					*why = "'/' inside a character class";
					goto bad;
				}
				q += *q == '\\' && q[1] ? 2 : 1;
			}
			if (*q != ']') {
				*why = "unclosed '['";
				goto bad;
			}
			p = q + 1;
			continue;
		}
		if (*p == '*' && p[1] == '*') {
			bool starts = p == pattern || p[-1] == '/';
			bool ends = p[2] == '\0' || p[2] == '/';

			if (p[2] == '*') {
				*why = "'***' is not a pattern";
				goto bad;
			}
			if (!starts || !ends) {
				*why = "'**' must be a whole path segment";
				goto bad;
			}
			p += 2;
			continue;
		}
		p++;
	}
	return 0;
bad:
	*offset = (size_t)(p - pattern);
	return -1;
}

unsigned hx_glob_specificity(const char *pattern)
{
	unsigned n = 0;

	for (const char *p = pattern; *p; p++) {
		switch (*p) {
		case '*':
		case '?':
			break;
		case '[':
			/* Skip the class as class_match reads it: a ']' first
			 * (or after '!') and escaped characters are members,
			 * not the end. */
			p++;
			if (*p == '!' || *p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p && *p != ']')
				p += *p == '\\' && p[1] ? 2 : 1;
			if (!*p)
				return n;
			break;
		case '\\':
			if (p[1])
				p++;
			n++;
			break;
		default:
			n++;
		}
	}
	return n;
}

bool hx_glob_is_literal(const char *pattern)
{
	return strpbrk(pattern, "*?[\\") == NULL;
}

int hx_glob_escape(const char *path, char *out, size_t size)
{
	size_t o = 0;

	for (; *path; path++) {
		if (strchr("\\*?[]$", *path)) {
			if (o + 1 >= size)
				return -ENAMETOOLONG;
			out[o++] = '\\';
		}
		if (o + 1 >= size)
			return -ENAMETOOLONG;
		out[o++] = *path;
	}
	if (o >= size)
		return -ENAMETOOLONG;
	out[o] = '\0';
	return 0;
}
