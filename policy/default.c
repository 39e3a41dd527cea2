/* The embedded default policy: policy/default.yaml, pulled in by
 * default_policy.S with .incbin (followed by a NUL byte). */
#include "policy/policy_int.h"

extern const char hx_default_policy_start[], hx_default_policy_end[];

const char *hx_policy_default_text(size_t *len)
{
	if (len)
		*len =
		    (size_t)(hx_default_policy_end - hx_default_policy_start);
	return hx_default_policy_start;
}

int hx_policy_load_default(const struct hx_policy_vars *vars,
			   struct hx_policy **out, struct hx_policy_error *err)
{
	size_t len;
	const char *text = hx_policy_default_text(&len);

	return hx_policy_load_buffer("<default>", text, len, vars, out, err);
}
