/* audit.redact of a policy (load_int.h): whether secrets are redacted in
 * the audit log, and the variable names and patterns the policy adds.
 * Each pattern is compiled here once, so that a session never starts
 * with one the supervisor (supervisor/redact.c) cannot use. */
#include "policy/load_int.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>

#define TAG_MAX 32

static const char *const redact_keys[] = {"enabled", "env_names", "patterns",
					  NULL};

/* A variable's name as a glob: what names are made of, and * ? [ ]. */
static bool name_glob_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_-*?[]!", *s))
			return false;
	return true;
}

static int load_env_names(struct hx_ld *l, yaml_node_t *n)
{
	struct hx_redact_conf *c = &l->p->redact;
	yaml_node_t **items;
	const char **v;
	char msg[128];
	size_t cnt;
	int ret = hx_node_strings(l, n, "env_names", &items, &cnt);

	if (ret)
		return ret;
	v = hx_arena_alloc(&l->p->arena, (cnt ? cnt : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < cnt; i++) {
		const char *s = (const char *)items[i]->data.scalar.value;

		if (!name_glob_ok(s)) {
			snprintf(msg, sizeof(msg),
				 "invalid variable name pattern '%.60s'", s);
			return hx_node_fail(
			    l, items[i],
			    "letters, digits, _ and -, with * and ? "
			    "(VAULT_*, *_PAT); matched without case",
			    msg);
		}
		if (!(v[i] = hx_arena_strdup(&l->p->arena, s)))
			return -ENOMEM;
	}
	c->env_names = v;
	c->nenv_names = cnt;
	return 0;
}

/* A type tag: it is written into the log, «redacted:TAG:HASH». */
static bool tag_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > TAG_MAX)
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) &&
		    !isdigit((unsigned char)*s) && *s != '-')
			return false;
	return true;
}

static int check_regex(struct hx_ld *l, yaml_node_t *n, const char *re)
{
	char why[160], msg[128];
	regex_t rx;
	bool empty;
	int e = regcomp(&rx, re, REG_EXTENDED | REG_NOSUB);

	if (e) {
		size_t k = (size_t)snprintf(why, sizeof(why),
					    "a POSIX extended regular "
					    "expression: ");

		regerror(e, &rx, why + k, sizeof(why) - k);
		snprintf(msg, sizeof(msg), "invalid pattern '%.60s'", re);
		return hx_node_fail(l, n, why, msg);
	}
	/* An empty match would redact nothing, at every position. */
	empty = !regexec(&rx, "", 0, NULL, 0);
	regfree(&rx);
	if (!empty)
		return 0;
	snprintf(msg, sizeof(msg), "pattern '%.60s' matches the empty text",
		 re);
	return hx_node_fail(l, n, "a pattern must match at least one character",
			    msg);
}

static int load_pattern(struct hx_ld *l, yaml_node_pair_t *pr,
			struct hx_redact_pattern *out)
{
	yaml_node_t *k, *v;
	const char *name, *re;
	char msg[128];
	int ret = hx_node_get(l, pr->key, &k);

	if (!ret)
		ret = hx_node_scalar(l, k, "a pattern's name", &name);
	if (!ret && !tag_ok(name)) {
		snprintf(msg, sizeof(msg), "invalid pattern name '%.60s'",
			 name);
		return hx_node_fail(l, k,
				    "the type tag written in its place: "
				    "lower-case letters, digits and -, "
				    "up to 32 (corp-token)",
				    msg);
	}
	if (!ret)
		ret = hx_node_get(l, pr->value, &v);
	if (!ret)
		ret = hx_node_scalar(l, v, "a pattern", &re);
	if (!ret)
		ret = check_regex(l, v, re);
	if (ret)
		return ret;
	out->name = hx_arena_strdup(&l->p->arena, name);
	out->regex = hx_arena_strdup(&l->p->arena, re);
	return out->name && out->regex ? 0 : -ENOMEM;
}

static int load_patterns(struct hx_ld *l, yaml_node_t *n)
{
	struct hx_redact_conf *c = &l->p->redact;
	yaml_node_pair_t *a, *b;
	struct hx_redact_pattern *v;
	size_t cnt, i = 0;

	if (n->type != YAML_MAPPING_NODE)
		return hx_node_fail(l, n,
				    "NAME: REGEX pairs, e.g. corp-token: "
				    "'corp_[A-Za-z0-9]{32}'",
				    "patterns must be a mapping");
	cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	v = hx_arena_alloc(&l->p->arena, (cnt ? cnt : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (a = n->data.mapping.pairs.start; a < n->data.mapping.pairs.top;
	     a++, i++) {
		int ret = load_pattern(l, a, &v[i]);

		if (ret)
			return ret;
		for (b = n->data.mapping.pairs.start; b < a; b++)
			if (!strcmp(v[b - n->data.mapping.pairs.start].name,
				    v[i].name))
				return hx_node_fail(
				    l, yaml_document_get_node(&l->doc, a->key),
				    NULL, "duplicate pattern name");
	}
	c->patterns = v;
	c->npatterns = cnt;
	return 0;
}

int hx_load_redact(struct hx_ld *l, yaml_node_t *n)
{
	struct hx_redact_conf *c = &l->p->redact;
	int ret;

	if (n->type == YAML_SCALAR_NODE)
		return hx_node_bool(l, n, "redact", &c->enabled);
	if (n->type != YAML_MAPPING_NODE)
		return hx_node_fail(l, n,
				    "true, false, or a mapping of enabled, "
				    "env_names and patterns",
				    "redact must be true, false or a mapping");
	ret = hx_node_keys(l, n, "redact", redact_keys);
	c->enabled = true; /* a mapping says what to add */
	for (yaml_node_pair_t *a = n->data.mapping.pairs.start;
	     !ret && a < n->data.mapping.pairs.top; a++) {
		const char *k = hx_node_key(l, a);
		yaml_node_t *v;

		ret = hx_node_get(l, a->value, &v);
		if (ret)
			break;
		if (!strcmp(k, "enabled"))
			ret = hx_node_bool(l, v, "enabled", &c->enabled);
		else if (!strcmp(k, "env_names"))
			ret = load_env_names(l, v);
		else
			ret = load_patterns(l, v);
	}
	return ret;
}
