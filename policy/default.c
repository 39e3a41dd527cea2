/* The embedded default policy loaded as the policy (its text:
 * default_text.c, which the loader reads too, for default-protections). */
#include "policy/policy_int.h"

int hx_policy_load_default(const struct hx_policy_vars *vars,
			   struct hx_policy **out, struct hx_policy_error *err)
{
	size_t len;
	const char *text = hx_policy_default_text(&len);

	return hx_policy_load_buffer("<default>", text, len, vars, out, err);
}
