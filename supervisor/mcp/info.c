/* session_info: the policy as the model should know it, so that it can
 * plan instead of probing; see front.h. */
#define _GNU_SOURCE
#include "supervisor/mcp/front_int.h"

#include <jansson.h>
#include <string.h>

#include "common/names.h"
#include "supervisor/pipeline.h"

#define LIST_MAX 256 /* patterns of a list; the rest counted */

struct lists {
	json_t *write, *denied, *asked, *net;
};

static const char *access_name(unsigned access)
{
	if (access == HX_ACCESS_READ)
		return "read";
	if (access == HX_ACCESS_WRITE)
		return "write";
	return "read and write";
}

static void add_capped(json_t *a, json_t *v)
{
	if (json_array_size(a) < LIST_MAX)
		json_array_append_new(a, v);
	else
		json_decref(v);
}

static void file_rule(enum hx_verdict v, unsigned access, const char *pattern,
		      const char *rule, void *arg)
{
	struct lists *l = arg;

	if (v == HX_VERDICT_ALLOW && (access & HX_ACCESS_WRITE))
		add_capped(l->write, json_string(pattern));
	else if (v != HX_VERDICT_ALLOW)
		add_capped(v == HX_VERDICT_DENY ? l->denied : l->asked,
			   json_pack("{s:s,s:s,s:s}", "pattern", pattern,
				     "access", access_name(access), "rule",
				     rule));
}

static void net_rule(enum hx_verdict v, bool is_unix, unsigned lo, unsigned hi,
		     const char *pattern, const char *rule, void *arg)
{
	struct lists *l = arg;

	(void)is_unix;
	(void)lo;
	(void)hi;
	(void)rule;
	if (v == HX_VERDICT_ALLOW)
		add_capped(l->net, json_string(pattern));
}

static json_t *quotas(const struct hx_mcp *m)
{
	json_t *o = json_object();
	size_t n;
	const struct hx_tool *t = hx_tools_all(&n);

	for (size_t i = 0; i < n; i++)
		json_object_set_new(
		    o, t[i].name,
		    json_pack(
			"{s:i,s:i}", "calls_per_minute",
			m->o.per_minute ? m->o.per_minute : t[i].per_minute,
			"at_once",
			m->o.concurrent ? m->o.concurrent : t[i].concurrent));
	return o;
}

/* The verdict of what no rule names, by category. */
static json_t *defaults(const struct hx_policy *p)
{
	static const enum hx_category cats[] = {
	    HX_CAT_FILE_READ, HX_CAT_FILE_WRITE, HX_CAT_EXEC,
	    HX_CAT_NET_CONNECT, HX_CAT_NET_RESOLVE};
	json_t *o = json_object();

	for (size_t i = 0; i < sizeof(cats) / sizeof(cats[0]); i++)
		json_object_set_new(
		    o, hx_category_name(cats[i]),
		    json_string(hx_verdict_name(
			hx_policy_default_verdict(p, cats[i]))));
	return o;
}

json_t *hx_mcp_session_info(const struct hx_mcp *m)
{
	const struct hx_policy *p = m->pl->policy;
	struct lists l = {json_array(), json_array(), json_array(),
			  json_array()};

	hx_policy_foreach_file_rule(p, file_rule, &l);
	hx_policy_foreach_net_rule(p, net_rule, &l);
	return json_pack(
	    "{s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:s}", "session",
	    m->o.session ? m->o.session : "", "mode",
	    m->pl->mode == HX_MODE_AUDIT ? "audit" : "enforce", "project",
	    m->project, "policy", hx_policy_source(p), "write_allowed", l.write,
	    "denied", l.denied, "asked", l.asked, "network_allowed", l.net,
	    "quotas", quotas(m), "defaults", defaults(p), "note",
	    "What no pattern names gets its category's default. A denied "
	    "or asked pattern wins over an allowed one; an asked call "
	    "waits for the user's answer.");
}
