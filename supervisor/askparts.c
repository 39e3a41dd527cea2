/* The grants of a script's parts; see askparts.h. */
#include "supervisor/askparts.h"
#include "policy/policy.h"
#include "supervisor/ask.h"
#include "supervisor/command.h"

#include <limits.h>
#include <stdio.h>

struct parts {
	struct hx_ask *a;
	const struct hx_ask_subject *s;
	size_t n;
	bool all;
	char how[48];
};

static void one(const struct hx_exec_part *part, void *arg)
{
	struct parts *c = arg;
	char cand[PATH_MAX], real[PATH_MAX], how[40];
	struct hx_ask_subject sub;

	c->n++;
	if (!c->all)
		return;
	/* A deny is no question; a word of unknown value names nothing a
	 * grant can be matched on. */
	if (part->verdict != HX_VERDICT_ASK || !part->known || !part->dir ||
	    !hx_command_find(part->argv[0], part->dir, cand, real)) {
		c->all = false;
		return;
	}
	sub = *c->s;
	sub.path = real;
	sub.argv = part->argv;
	sub.argc = part->argc;
	sub.image = NULL;
	sub.rule = part->rule;
	sub.judged_as = NULL;
	if (hx_ask_granted(c->a, &sub, how, sizeof(how)) != HX_VERDICT_ALLOW)
		c->all = false;
	else if (!c->how[0])
		snprintf(c->how, sizeof(c->how), "parts %s", how);
}

enum hx_verdict hx_askparts_granted(struct hx_ask *a, const struct hx_policy *p,
				    const struct hx_event *ev,
				    const struct hx_ask_subject *s, char *how,
				    size_t hlen)
{
	struct parts c = {.a = a, .s = s, .all = true};

	if (hx_policy_exec_parts(p, ev, one, &c) || !c.n || !c.all)
		return HX_VERDICT_ASK;
	snprintf(how, hlen, "%s", c.how);
	return HX_VERDICT_ALLOW;
}
