/* The embedded default policy's text: policy/default.yaml, pulled in by
 * default_policy.S with .incbin (followed by a NUL byte). Apart from
 * default.c, which loads it: the loader reads it too (include:
 * default-protections), and calls go one way. */
#include "policy/policy_int.h"

extern const char hx_default_policy_start[], hx_default_policy_end[];

const char *hx_policy_default_text(size_t *len)
{
	if (len)
		*len =
		    (size_t)(hx_default_policy_end - hx_default_policy_start);
	return hx_default_policy_start;
}
