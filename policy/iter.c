/* Read-only iteration over the compiled rules, for consumers that
 * translate the policy into another mechanism (the Landlock ruleset). */
#include "policy_int.h"

void hx_policy_foreach_file_rule(const struct hx_policy *p,
				 void (*fn)(enum hx_verdict v, unsigned access,
					    const char *pattern,
					    const char *rule, void *arg),
				 void *arg)
{
	for (size_t i = 0; i < p->protect.npats; i++)
		fn(HX_VERDICT_DENY, HX_ACCESS_ANY, p->protect.pats[i].text,
		   p->protect.name, arg);
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
