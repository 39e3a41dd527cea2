/* Records of the kernel's own refusals; see refusal.h. */
#include "supervisor/refusal.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/names.h"
#include "common/notice.h"
#include "policy/policy.h"
#include "supervisor/pipeline.h"
#include "supervisor/record.h"

json_t *hx_refusal_record(struct hx_pipeline *pl, const struct hx_refusal *r,
			  json_t **args)
{
	const char *rule = r->rule, *pattern = NULL;
	enum hx_category cat = r->cat;
	enum hx_risk risk = r->risk;
	bool policy_allows = false;
	json_t *rec;

	/* The policy's rule for it, when it has one: the kernel holds the
	 * policy's decision, or is stricter (a file created in $HOME after
	 * the start: policy_verdict "allow"). */
	if (r->op >= 0 && r->op != HX_OP_CONNECT && r->path &&
	    r->path[0] == '/') {
		struct hx_event ev = {.op = (enum hx_op)r->op, .path = r->path};
		struct hx_decision d;

		hx_policy_decide(pl->policy, &ev, &d);
		policy_allows = d.verdict == HX_VERDICT_ALLOW;
		if (!policy_allows) {
			rule = d.rule;
			pattern = d.pattern;
			cat = d.category;
			risk = d.risk;
		}
	}
	rec = hx_record_new(pl, r->peer, r->event, r->when);
	if (!rec)
		return NULL;
	if (!r->peer) /* not harness's own: unknown */
		json_object_set_new(rec, "pid", json_null());
	json_object_set_new(rec, "op",
			    json_string(r->op >= 0
					    ? hx_op_name((enum hx_op)r->op)
					    : r->op_name));
	*args = json_object();
	if (r->path && r->path[0])
		json_object_set_new(*args, "path",
				    hx_record_text(rec, "args.path", r->path));
	json_object_set_new(rec, "args", *args);
	json_object_set_new(rec, "category",
			    json_string(hx_category_name(cat)));
	json_object_set_new(rec, "risk", json_string(hx_risk_name(risk)));
	json_object_set_new(rec, "verdict", json_string("deny"));
	json_object_set_new(rec, "enforced", json_true());
	json_object_set_new(rec, "rule", json_string(rule));
	if (pattern)
		json_object_set_new(rec, "pattern",
				    hx_record_text(rec, "pattern", pattern));
	if (policy_allows)
		json_object_set_new(rec, "policy_verdict",
				    json_string("allow"));
	json_object_set_new(rec, "layer", json_string(r->layer));
	if (r->repeated) {
		json_object_set_new(rec, "repeated",
				    json_integer((json_int_t)r->repeated));
		if (r->ref_seq)
			json_object_set_new(
			    rec, "ref_seq",
			    json_integer((json_int_t)r->ref_seq));
	}
	return rec;
}

static void notice(const struct hx_refusal *r, const char *rule)
{
	static unsigned printed;
	struct hx_notice n = {
	    .op = r->op >= 0 ? (enum hx_op)r->op : HX_OP_COUNT,
	    .verdict = HX_VERDICT_DENY,
	    .target = r->path && r->path[0] ? r->path : r->op_name,
	    .rule = rule};
	char line[1024];

	if (hx_notice_repeat(&n, r->peer ? r->peer->pid : 0))
		return;
	if (printed < HX_REFUSAL_NOTICES)
		hx_notice_format(line, sizeof(line), &n);
	else if (printed == HX_REFUSAL_NOTICES)
		snprintf(line, sizeof(line),
			 "harness: more refusals: see the audit log\n");
	if (printed++ <= HX_REFUSAL_NOTICES)
		fputs(line, stderr);
}

uint64_t hx_refusal_append(struct hx_pipeline *pl, const struct hx_refusal *r,
			   json_t *rec)
{
	uint64_t seq = 0;
	bool coalesced = false;

	if (hx_record_append_event(pl, rec, &seq, &coalesced))
		seq = 0;
	if (!r->repeated)
		notice(r, json_string_value(json_object_get(rec, "rule")));
	return seq;
}
