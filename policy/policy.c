/* The compiled policy's lifecycle and accessors. */
#include "common/glob.h"
#include "policy/policy_int.h"

#include <stdio.h>
#include <stdlib.h>

void hx_policy_free(struct hx_policy *p)
{
	if (!p)
		return;
	hx_arena_free(&p->arena);
	free(p);
}

char *hx_policy_error_format(const struct hx_policy_error *err, char *buf,
			     size_t size)
{
	int n;

	if (!size)
		return buf;
	if (err->line)
		n = snprintf(buf, size, "%s:%u:%u: %s", err->file, err->line,
			     err->column, err->message);
	else /* nothing to point at: the file could not be read */
		n = snprintf(buf, size, "%s: %s", err->file, err->message);
	if (err->hint[0] && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "\n  hint: %s", err->hint);
	return buf;
}

enum hx_mode hx_policy_mode(const struct hx_policy *p)
{
	return p->mode;
}

unsigned hx_policy_ask_timeout(const struct hx_policy *p)
{
	return p->ask_timeout;
}

bool hx_policy_log_reads(const struct hx_policy *p)
{
	return p->log_reads;
}

void hx_policy_audit_quota(const struct hx_policy *p,
			   struct hx_audit_quota *out)
{
	*out = p->quota;
}

const struct hx_redact_conf *hx_policy_redact(const struct hx_policy *p)
{
	return &p->redact;
}

const struct hx_alert_rule *hx_policy_alerts(const struct hx_policy *p,
					     size_t *n)
{
	*n = p->nalerts;
	return p->alerts;
}

bool hx_policy_limit(const struct hx_policy *p, enum hx_limit l,
		     uint64_t *value)
{
	if ((unsigned)l >= HX_LIMIT_COUNT || !(p->limits_set & (1u << l)))
		return false;
	*value = p->limits[l];
	return true;
}

enum hx_verdict hx_policy_default_verdict(const struct hx_policy *p,
					  enum hx_category c)
{
	return (unsigned)c < HX_CAT_COUNT ? p->defaults[c] : HX_VERDICT_DENY;
}

bool hx_policy_keeps_existing(const struct hx_policy *p)
{
	return p->keeps_existing;
}

bool hx_policy_owns_files(const struct hx_policy *p)
{
	return p->owns_files;
}

bool hx_policy_keeps_beneath(const struct hx_policy *p, const char *dir)
{
	for (size_t i = 0; p->keeps_existing && i < p->nrules[HX_SEC_FILES];
	     i++) {
		const struct hx_rule *r = &p->rules[HX_SEC_FILES][i];

		for (size_t k = 0; r->keep_existing && k < r->npats; k++)
			if (hx_glob_match_beneath(r->pats[k].text, dir))
				return true;
	}
	return false;
}

const char *hx_policy_source(const struct hx_policy *p)
{
	return p->source;
}

const char *hx_policy_description(const struct hx_policy *p)
{
	return p->description;
}

void hx_policy_foreach_read_rule(const struct hx_policy *p,
				 void (*fn)(enum hx_verdict v,
					    const char *pattern, void *arg),
				 void *arg)
{
	for (size_t i = 0; i < p->protect.npats; i++)
		fn(HX_VERDICT_DENY, p->protect.pats[i].text, arg);
	for (size_t i = 0; i < p->nrules[HX_SEC_FILES]; i++) {
		const struct hx_rule *r = &p->rules[HX_SEC_FILES][i];

		if (!(r->access & HX_ACCESS_READ))
			continue;
		for (size_t k = 0; k < r->npats; k++)
			fn(r->verdict, r->pats[k].text, arg);
	}
}

void hx_policy_foreach_host(const struct hx_policy *p,
			    void (*fn)(const char *name, void *arg), void *arg)
{
	for (size_t i = 0; i < p->nrules[HX_SEC_NET]; i++) {
		const struct hx_rule *r = &p->rules[HX_SEC_NET][i];

		for (size_t k = 0; k < r->npats; k++)
			if (r->pats[k].u.net.kind == HX_NH_NAME)
				fn(r->pats[k].u.net.name, arg);
	}
}

void hx_policy_stats(const struct hx_policy *p, size_t *nrules,
		     size_t *nexamples)
{
	size_t nr = 0, ne = 0;

	for (size_t s = 0; s < HX_SEC_COUNT; s++) {
		nr += p->nrules[s];
		for (size_t i = 0; i < p->nrules[s]; i++)
			ne += p->rules[s][i].nex;
	}
	if (nrules)
		*nrules = nr;
	if (nexamples)
		*nexamples = ne;
}
