/* The choice of a built-in profile from the wrapped command: the first
 * whose "profile: detect:" globs match one of its paths. Above both the
 * blob reader (builtin_profiles.c) and the loader (load.c). */
#include "policy/policy_int.h"
#include "common/glob.h"

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
				      hx_glob_match(p->detect[d], paths[k]);
		hx_policy_free(p);
		if (hit)
			return n;
	}
	return NULL;
}
