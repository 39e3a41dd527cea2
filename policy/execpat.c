/* Exec patterns: "EXE ARG... [*]"; see struct hx_execpat. */
#include "policy/cmdview.h"
#include "common/glob.h"

#include <errno.h>
#include <fnmatch.h>
#include <string.h>

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int hx_execpat_parse(struct hx_arena *a, const char *text,
		     struct hx_execpat *ep, size_t *bad, const char **why)
{
	size_t nwords = 0, off;
	char *copy = hx_arena_strdup(a, text);
	char **words;

	memset(ep, 0, sizeof(*ep));
	if (!copy)
		return -ENOMEM;
	if (!strncmp(text, "class:", 6)) {
		ep->cls = hx_cmd_class_parse(text + 6);
		if (ep->cls == HX_CLASS_NONE) {
			*bad = 6;
			*why = "no such class (read_only, mutating, other, "
			       "code, package_install, network, unparsable, "
			       "destructive, privilege)";
			return -EINVAL;
		}
		ep->exe = copy;
		return 0;
	}
	for (const char *p = text; *p;) {
		while (is_space(*p))
			p++;
		if (!*p)
			break;
		nwords++;
		while (*p && !is_space(*p))
			p++;
	}
	if (nwords == 0) {
		*bad = 0;
		*why = "empty exec pattern";
		return -EINVAL;
	}
	words = hx_arena_alloc(a, nwords * sizeof(*words));
	if (!words)
		return -ENOMEM;
	nwords = 0;
	for (char *p = copy; *p;) {
		while (is_space(*p))
			*p++ = '\0';
		if (!*p)
			break;
		words[nwords++] = p;
		while (*p && !is_space(*p))
			p++;
	}
	ep->exe = words[0];
	ep->exe_is_path = strchr(words[0], '/') != NULL;
	if (ep->exe_is_path && words[0][0] != '/' &&
	    strncmp(words[0], "**/", 3)) {
		*bad = (size_t)(words[0] - copy);
		*why =
		    "an executable path must be absolute or start with '**/'";
		return -EINVAL;
	}
	if (hx_glob_validate(words[0], &off, why)) {
		*bad = (size_t)(words[0] - copy) + off;
		return -EINVAL;
	}
	ep->rest = nwords > 1 && !strcmp(words[nwords - 1], "*");
	ep->nargs = nwords - 1 - (ep->rest ? 1 : 0);
	if (ep->nargs > HX_EXECPAT_MAX_ARGS) {
		*bad = 0;
		*why = "too many words in an exec pattern (at most 32)";
		return -EINVAL;
	}
	ep->args = (const char **)(words + 1);
	return 0;
}

unsigned hx_execpat_specificity(const struct hx_execpat *ep)
{
	unsigned n;

	if (ep->cls)
		return 1; /* below any command: "git push *" names more */
	n = hx_glob_specificity(ep->exe);

	for (size_t i = 0; i < ep->nargs; i++)
		n += hx_glob_specificity(ep->args[i]);
	return n;
}

bool hx_execpat_match(const struct hx_execpat *ep, const char *path,
		      const char *const *argv, size_t argc)
{
	const char *exe = path ? path : argc > 0 ? argv[0] : NULL;
	size_t nrest = argc > 0 ? argc - 1 : 0;

	if (!exe || ep->cls)
		return false;
	if (ep->rest ? nrest < ep->nargs : nrest != ep->nargs)
		return false;
	if (ep->exe_is_path) {
		if (!hx_glob_match(ep->exe, exe))
			return false;
	} else {
		const char *base = strrchr(exe, '/');

		if (!hx_glob_match(ep->exe, base ? base + 1 : exe))
			return false;
	}
	/* Arguments are not paths: '*' crosses '/' ("origin/main"). */
	for (size_t i = 0; i < ep->nargs; i++)
		if (!argv[1 + i] || fnmatch(ep->args[i], argv[1 + i], 0))
			return false;
	return true;
}

static bool exe_matches(const struct hx_execpat *ep,
			const struct hx_cmd_part *p)
{
	const char *name = p->path ? p->path : p->argv[0];
	const char *base = strrchr(name, '/'), *pb;

	base = base ? base + 1 : name;
	if (!ep->exe_is_path)
		return hx_glob_match(ep->exe, base);
	if (p->path || name[0] == '/')
		return hx_glob_match(ep->exe, name);
	/* A name read from a script is found through a $PATH this cannot
	 * see: any executable of that name may be the one. */
	pb = strrchr(ep->exe, '/');
	return pb && hx_glob_match(pb + 1, base);
}

/* The pattern's arguments against words 1.. of p: a word of unknown
 * value matches any one pattern word, one that may split (unquoted $x)
 * any run of them, none included. Dynamic programming over (pattern
 * word, part word), one column at a time from the end: linear in the
 * part's words whatever the agent writes. */
static bool args_match(const struct hx_execpat *ep, const struct hx_cmd_part *p)
{
	bool next[HX_EXECPAT_MAX_ARGS + 1], cur[HX_EXECPAT_MAX_ARGS + 1];
	size_t np = ep->nargs;

	/* past the last word: all pattern words used */
	for (size_t i = 0; i <= np; i++)
		next[i] = i == np;
	for (size_t w = p->argc; w-- > 1;) {
		unsigned f = p->flags ? p->flags[w] : 0;

		for (size_t i = np + 1; i-- > 0;) {
			if (f & HX_SHW_SPLIT) {
				/* none, or one or more pattern words */
				cur[i] =
				    next[i] || (i < np ? cur[i + 1] : ep->rest);
			} else if (i == np) {
				cur[i] = ep->rest;
			} else {
				cur[i] =
				    ((f & (HX_SHW_DYNAMIC | HX_SHW_GLOB)) ||
				     !fnmatch(ep->args[i], p->argv[w], 0)) &&
				    next[i + 1];
			}
		}
		memcpy(next, cur, (np + 1) * sizeof(*cur));
	}
	return next[0];
}

bool hx_execpat_match_part(const struct hx_execpat *ep,
			   const struct hx_cmd_part *p)
{
	if (ep->cls)
		return p->cls == ep->cls;
	if (p->argc == 0 || !exe_matches(ep, p))
		return false;
	return args_match(ep, p);
}
