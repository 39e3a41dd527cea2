/* Exec patterns: "EXE ARG... [*]"; see struct hx_execpat. */
#include "policy/policy_int.h"
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
	ep->args = (const char **)(words + 1);
	return 0;
}

unsigned hx_execpat_specificity(const struct hx_execpat *ep)
{
	unsigned n = hx_glob_specificity(ep->exe);

	for (size_t i = 0; i < ep->nargs; i++)
		n += hx_glob_specificity(ep->args[i]);
	return n;
}

bool hx_execpat_match(const struct hx_execpat *ep, const char *path,
		      const char *const *argv, size_t argc)
{
	const char *exe = path ? path : argc > 0 ? argv[0] : NULL;
	size_t nrest = argc > 0 ? argc - 1 : 0;

	if (!exe)
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
