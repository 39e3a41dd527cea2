/* Read-only iteration over the compiled rules, for consumers that
 * translate the policy into another mechanism (the Landlock ruleset). */
#include "policy/policy_int.h"

#include <stdlib.h>

void hx_policy_foreach_file_rule(const struct hx_policy *p,
				 void (*fn)(enum hx_verdict v, unsigned access,
					    const char *pattern,
					    const char *rule, void *arg),
				 void *arg)
{
	for (size_t i = 0; i < p->protect.npats; i++)
		fn(HX_VERDICT_DENY, HX_ACCESS_ANY, p->protect.pats[i].text,
		   p->protect.name, arg);
	for (size_t i = 0; i < p->protect_write.npats; i++)
		fn(HX_VERDICT_DENY, HX_ACCESS_WRITE,
		   p->protect_write.pats[i].text, p->protect_write.name, arg);
	for (size_t i = 0; i < p->nrules[HX_SEC_FILES]; i++) {
		const struct hx_rule *r = &p->rules[HX_SEC_FILES][i];

		for (size_t k = 0; k < r->npats; k++)
			fn(r->verdict, r->access, r->pats[k].text, r->name,
			   arg);
	}
}

void hx_policy_foreach_net_rule(const struct hx_policy *p,
				void (*fn)(enum hx_verdict v, bool is_unix,
					   unsigned port_lo, unsigned port_hi,
					   const char *pattern,
					   const char *rule, void *arg),
				void *arg)
{
	for (size_t i = 0; i < p->nrules[HX_SEC_NET]; i++) {
		const struct hx_rule *r = &p->rules[HX_SEC_NET][i];

		for (size_t k = 0; k < r->npats; k++) {
			const struct hx_netpat *np = &r->pats[k].u.net;

			fn(r->verdict, np->kind == HX_NH_UNIX, np->port_lo,
			   np->port_hi, r->pats[k].text, r->name, arg);
		}
	}
}

void hx_policy_foreach_source(const struct hx_policy *p,
			      void (*fn)(const char *name, const char *text,
					 size_t len, void *arg),
			      void *arg)
{
	for (size_t i = 0; i < p->nsources; i++)
		fn(p->sources[i].name, p->sources[i].text, p->sources[i].len,
		   arg);
}

/* fn for one rule, its patterns' texts gathered: every one (the
 * default's cloud-and-registry-tokens has more than 64, which show cut
 * and learn copies), else the first 64 when out of memory. */
static void rule_info(const char *section, const struct hx_rule *r,
		      void (*fn)(const struct hx_rule_info *r, void *arg),
		      void *arg)
{
	const char *few[64], **pats = few;
	struct hx_rule_info ri = {
	    .section = section,
	    .name = r->name,
	    .origin = r->origin ? r->origin : "harness",
	    .verdict = r->verdict,
	    .access = r->access,
	    .neighbours = r->neighbours,
	    .npatterns = r->npats < 64 ? r->npats : 64,
	};

	if (r->npats > 64 && (pats = malloc(r->npats * sizeof(*pats))))
		ri.npatterns = r->npats;
	else if (!pats)
		pats = few;
	ri.patterns = pats;
	for (size_t k = 0; k < ri.npatterns; k++)
		pats[k] = r->pats[k].text;
	fn(&ri, arg);
	if (pats != few)
		free(pats);
}

void hx_policy_foreach_rule(const struct hx_policy *p,
			    void (*fn)(const struct hx_rule_info *r, void *arg),
			    void *arg)
{
	static const char *const names[HX_SEC_COUNT] = {"files", "exec",
							"network"};

	if (p->protect.npats)
		rule_info("files", &p->protect, fn, arg);
	if (p->protect_write.npats)
		rule_info("files", &p->protect_write, fn, arg);
	for (size_t s = 0; s < HX_SEC_COUNT; s++)
		for (size_t i = 0; i < p->nrules[s]; i++)
			rule_info(names[s], &p->rules[s][i], fn, arg);
}
