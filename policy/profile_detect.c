/* The choice of a built-in profile from the wrapped command: the first
 * whose "profile: detect:" globs match one of its paths. Above both the
 * blob reader (builtin_profiles.c) and the loader (load.c). */
#include "policy/policy_int.h"
#include "common/glob.h"

#include <stdio.h>
#include <string.h>

/* A detect glob "** /node_modules/PKG/..." (or site-packages) names a
 * package installed as itself, and is matched against what follows the
 * path's first package root of any kind: a directory of that name inside
 * another package is that package's own layout. The program chooses its path:
 * a third-party agent whose entry point was
 * .../evil-agent/node_modules/@anthropic-ai/claude-code/agent.py got
 * the claude profile, which opens Claude Code's login
 * (~/.claude/.credentials.json), and read it (seventeenth attack
 * review). npm and pip install a package as the first entry of its
 * tree, and a scope (@anthropic-ai) or a name is its owner's on the
 * registry. */
static const char *const roots[] = {"node_modules/", "site-packages/",
				    "dist-packages/"};
#define NROOTS (sizeof(roots) / sizeof(roots[0]))

/* The path's first package root of any kind ("/node_modules/",
 * "/site-packages/", "/dist-packages/"): the slash before it, its kind
 * in *which; NULL for none. A package nested in another package's tree,
 * whatever installed the outer one, is that package's layout: pip's
 * evilagent/node_modules/@anthropic-ai/claude-code/ got the claude
 * profile while the first node_modules alone was looked at (eighteenth
 * attack review). */
static const char *first_root(const char *path, size_t *which)
{
	const char *first = NULL;
	char sep[32];

	for (size_t i = 0; i < NROOTS; i++) {
		const char *at;

		snprintf(sep, sizeof(sep), "/%s", roots[i]);
		if ((at = strstr(path, sep)) && (!first || at < first)) {
			first = at;
			*which = i;
		}
	}
	return first;
}

static bool detect_match(const char *glob, const char *path)
{
	for (size_t i = 0; i < NROOTS; i++) {
		size_t n = strlen(roots[i]), which = 0;
		const char *first;

		if (strncmp(glob, "**/", 3) || strncmp(glob + 3, roots[i], n))
			continue;
		first = first_root(path, &which);
		return first && which == i &&
		       hx_glob_match(glob + 3 + n, first + 1 + n);
	}
	return hx_glob_match(glob, path);
}

const char *hx_profile_detect(const char *home, const char *const *paths,
			      size_t npaths)
{
	struct hx_policy_vars vars = {.home = home};
	const char *n;

	for (size_t i = 0; (n = hx_profile_name(i)); i++) {
		struct hx_policy *p;
		struct hx_policy_error err;
		bool hit = false;

		if (hx_profile_load_meta(n, &vars, &p, &err))
			continue; /* a broken profile fails the build's tests */
		for (size_t d = 0; d < p->ndetect && !hit; d++)
			for (size_t k = 0; k < npaths && !hit; k++)
				hit = paths[k] &&
				      detect_match(p->detect[d], paths[k]);
		hx_policy_free(p);
		if (hit)
			return n;
	}
	return NULL;
}
