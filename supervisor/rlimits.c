/* The agent's rlimits; see rlimits.h. */
#include "rlimits.h"

#include <errno.h>
#include <jansson.h>

static const int resources[HX_LIMIT_COUNT] = {
	[HX_LIMIT_CPU] = RLIMIT_CPU,
	[HX_LIMIT_FILE_SIZE] = RLIMIT_FSIZE,
	[HX_LIMIT_OPEN_FILES] = RLIMIT_NOFILE,
	[HX_LIMIT_ADDRESS_SPACE] = RLIMIT_AS,
	[HX_LIMIT_CORE] = RLIMIT_CORE,
};

void hx_limits_from_policy(const struct hx_policy *p, struct hx_limits *out)
{
	uint64_t v;

	out->set = 0;
	for (int i = 0; i < HX_LIMIT_COUNT; i++) {
		if (!hx_policy_limit(p, (enum hx_limit)i, &v))
			continue;
		out->set |= 1u << i;
		out->value[i] = v >= RLIM_INFINITY ? RLIM_INFINITY - 1 : v;
	}
}

int hx_limits_apply(const struct hx_limits *l, const char **what)
{
	struct rlimit cur, want;

	for (int i = 0; i < HX_LIMIT_COUNT; i++) {
		if (!(l->set & (1u << i)))
			continue;
		*what = hx_limit_name((enum hx_limit)i);
		if (getrlimit(resources[i], &cur))
			return -errno;
		want.rlim_max = l->value[i] < cur.rlim_max ? l->value[i]
							   : cur.rlim_max;
		want.rlim_cur = want.rlim_max;
		if (setrlimit(resources[i], &want))
			return -errno;
	}
	return 0;
}

json_t *hx_limits_json(const struct hx_limits *l)
{
	json_t *o = json_object();

	for (int i = 0; o && i < HX_LIMIT_COUNT; i++)
		if (l->set & (1u << i))
			json_object_set_new(o, hx_limit_name((enum hx_limit)i),
					    json_integer((json_int_t)l->value[i]));
	return o;
}
