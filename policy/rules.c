/* The rule sections of a policy document (files, exec, network: each
 * rule's verdict, patterns and examples) and the rules the session adds
 * to every policy (load_int.h). */
#include "policy/load_int.h"
#include "common/glob.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const file_keys[] = {
    "id",    "description", "allow",	     "deny",	  "ask", "access",
    "match", "not_match",   "keep_existing", "own_files", NULL};
static const char *const rule_keys[] = {"id",	     "description", "allow",
					"deny",	     "ask",	    "match",
					"not_match", "neighbours",  NULL};

static const char *rule_name(struct hx_ld *l, const yaml_node_t *n)
{
	char buf[320];

	snprintf(buf, sizeof(buf), "%s:%u", l->file, hx_node_pos(n).line);
	return hx_arena_strdup(&l->p->arena, buf);
}

static int check_id(struct hx_ld *l, const yaml_node_t *n, const char *id)
{
	if (!*id || strlen(id) > 128 || strpbrk(id, " \t\n\r"))
		return hx_node_fail(
		    l, n, "e.g. id: ssh-keys",
		    "a rule id is a non-empty word of at most 128 bytes");
	if (!strncmp(id, "default:", 8) || !strncmp(id, "harness:", 8))
		return hx_node_fail(
		    l, n, NULL,
		    "rule ids starting with 'default:' or 'harness:' "
		    "are reserved");
	for (size_t s = 0; s < HX_SEC_COUNT; s++)
		for (size_t i = 0; i < l->p->nrules[s]; i++) {
			char msg[200];

			if (strcmp(l->p->rules[s][i].name, id))
				continue;
			snprintf(msg, sizeof(msg),
				 "duplicate rule id (first at %.150s)",
				 l->p->rules[s][i].origin);
			return hx_node_fail(l, n, NULL, msg);
		}
	return 0;
}

static int compile_examples(struct hx_ld *l, struct hx_rule *r, yaml_node_t *n,
			    bool should)
{
	yaml_node_t **items;
	size_t cnt;
	int ret =
	    hx_node_strings(l, n, should ? "match" : "not_match", &items, &cnt);

	if (ret)
		return ret;
	for (size_t i = 0; i < cnt; i++) {
		ret = hx_compile_example(
		    l->p, l->vars, (const char *)items[i]->data.scalar.value,
		    hx_node_pos(items[i]), should, &r->ex[r->nex], l->err);
		if (ret)
			goto out;
		r->nex++;
	}
out:
	if (ret == -EINVAL)
		snprintf(l->err->file, sizeof(l->err->file), "%s", l->file);
	return ret;
}

static int load_rule(struct hx_ld *l, enum hx_section sec, yaml_node_t *n,
		     struct hx_rule *r)
{
	static const char *const access_words[] = {"read", "write", "any",
						   NULL};
	const char *const *keys = sec == HX_SEC_FILES ? file_keys : rule_keys;
	yaml_node_t *pats = NULL, *ex[2] = {NULL, NULL}, *v;
	yaml_node_t **items;
	size_t cnt;
	int ret = hx_node_keys(l, n, "a rule", keys), i = 0;

	if (ret)
		return ret;
	if (!(r->origin = rule_name(l, n)))
		return -ENOMEM;
	r->access = HX_ACCESS_ANY;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     pr < n->data.mapping.pairs.top; pr++) {
		const char *k = hx_node_key(l, pr), *s;

		ret = hx_node_get(l, pr->value, &v);
		if (ret)
			return ret;
		if (!strcmp(k, "id")) {
			ret = hx_node_scalar(l, v, "id", &s);
			if (!ret)
				ret = check_id(l, v, s);
			if (!ret &&
			    !(r->name = hx_arena_strdup(&l->p->arena, s)))
				ret = -ENOMEM;
		} else if (!strcmp(k, "description")) {
			ret = hx_node_scalar(l, v, "description", &s);
		} else if (!strcmp(k, "access")) {
			ret = hx_node_word(l, v, "access", access_words, &i);
			r->access = (unsigned)i + 1;
		} else if (!strcmp(k, "neighbours")) {
			if (sec != HX_SEC_NET)
				return hx_node_fail(
				    l, v, NULL,
				    "neighbours is a network rule's key");
			ret = hx_node_bool(l, v, "neighbours", &r->neighbours);
		} else if (!strcmp(k, "keep_existing")) {
			if (sec != HX_SEC_FILES)
				return hx_node_fail(
				    l, v, NULL,
				    "keep_existing is a file rule's key");
			ret = hx_node_bool(l, v, "keep_existing",
					   &r->keep_existing);
			l->p->keeps_existing |= r->keep_existing;
		} else if (!strcmp(k, "own_files")) {
			if (sec != HX_SEC_FILES)
				return hx_node_fail(
				    l, v, NULL,
				    "own_files is a file rule's key");
			ret = hx_node_bool(l, v, "own_files", &r->own_files);
			l->p->owns_files |= r->own_files;
		} else if (!strcmp(k, "match")) {
			ex[0] = v;
		} else if (!strcmp(k, "not_match")) {
			ex[1] = v;
		} else {
			if (pats)
				return hx_node_fail(
				    l, v, "write one rule per verdict",
				    "a rule has exactly one of allow, "
				    "deny, ask");
			pats = v;
			r->verdict = !strcmp(k, "allow") ? HX_VERDICT_ALLOW
				     : !strcmp(k, "ask") ? HX_VERDICT_ASK
							 : HX_VERDICT_DENY;
		}
		if (ret)
			return ret;
	}
	if (!pats)
		return hx_node_fail(l, n, "e.g. deny: [\"$HOME/.ssh/**\"]",
				    "a rule needs one of allow, deny, ask");
	if (!r->name && !(r->name = r->origin))
		return -ENOMEM;
	ret = hx_node_strings(l, pats, "a pattern", &items, &cnt);
	if (ret)
		return ret;
	if (cnt == 0)
		return hx_node_fail(l, pats, NULL,
				    "a rule needs at least one pattern");
	r->pats = hx_arena_alloc(&l->p->arena, cnt * sizeof(*r->pats));
	if (!r->pats)
		return -ENOMEM;
	for (size_t k = 0; k < cnt; k++) {
		ret = hx_compile_pattern(
		    l->p, sec, l->vars,
		    (const char *)items[k]->data.scalar.value,
		    hx_node_pos(items[k]), &r->pats[k], l->err);
		if (!ret && sec == HX_SEC_EXEC && r->pats[k].u.exec.cls &&
		    r->verdict == HX_VERDICT_ALLOW)
			ret = hx_node_fail(
			    l, items[k],
			    "allow the commands by name (\"git status *\"), "
			    "or deny or ask the class",
			    "a class: pattern cannot allow: the class comes "
			    "from reading the arguments, which adds meaning, "
			    "never permission");
		if (ret) {
			snprintf(l->err->file, sizeof(l->err->file), "%s",
				 l->file);
			return ret;
		}
		r->npats++;
	}
	cnt =
	    (ex[0] ? hx_node_len(ex[0]) : 0) + (ex[1] ? hx_node_len(ex[1]) : 0);
	r->ex = hx_arena_alloc(&l->p->arena, (cnt ? cnt : 1) * sizeof(*r->ex));
	if (!r->ex)
		return -ENOMEM;
	for (int e = 0; e < 2; e++) {
		if (ex[e] && (ret = compile_examples(l, r, ex[e], e == 0)))
			return ret;
	}
	return 0;
}

int hx_rules_section(struct hx_ld *l, enum hx_section sec, yaml_node_t *n,
		     const char *what)
{
	struct hx_rule *rules;
	char msg[128];
	size_t cnt, old;
	int ret;

	if (n->type == YAML_SCALAR_NODE && n->data.scalar.length == 0 &&
	    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		return 0; /* "files:" with nothing: no rules */
	if (n->type != YAML_SEQUENCE_NODE) {
		snprintf(msg, sizeof(msg), "%s must be a list of rules", what);
		return hx_node_fail(l, n, "each rule starts with '- '", msg);
	}
	cnt = hx_node_len(n);
	old = l->p->nrules[sec];
	/* Appended: includes add to the rules of the documents before. */
	rules = hx_arena_alloc(&l->p->arena, (old + cnt + 1) * sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	if (old)
		memcpy(rules, l->p->rules[sec], old * sizeof(*rules));
	l->p->rules[sec] = rules;
	for (size_t i = 0; i < cnt; i++) {
		struct hx_rule *rule = &rules[l->p->nrules[sec]];
		bool keeps = l->p->keeps_existing, owns = l->p->owns_files;
		yaml_node_t *r;

		ret = hx_node_get(l, n->data.sequence.items.start[i], &r);
		if (!ret)
			ret = load_rule(l, sec, r, rule);
		if (ret)
			return ret;
		/* default-protections: what the default opens is not
		 * theirs to open, only what it refuses or asks */
		if (l->protective && rule->verdict == HX_VERDICT_ALLOW) {
			l->p->keeps_existing = keeps;
			l->p->owns_files = owns;
			memset(rule, 0, sizeof(*rule));
			continue;
		}
		l->p->nrules[sec]++;
	}
	return 0;
}

/* A literal path as a glob that matches only it. */
static char *glob_quote(struct hx_arena *a, const char *path)
{
	size_t n = strlen(path), k = 0;
	char *q = hx_arena_alloc(a, 2 * n + 1);

	for (size_t i = 0; q && i < n; i++) {
		if (strchr("*?[]\\", path[i]))
			q[k++] = '\\';
		q[k++] = path[i];
	}
	return q;
}

/* r's needs (struct hx_rule), once its patterns are final. */
static int protect_needs(struct hx_ld *l, struct hx_rule *r)
{
	if (!r->npats)
		return 0;
	r->needs = hx_arena_alloc(&l->p->arena, r->npats * sizeof(*r->needs));
	if (!r->needs)
		return -ENOMEM;
	for (size_t i = 0; i < r->npats; i++)
		hx_glob_need_of(r->pats[i].text, &r->needs[i]);
	r->nneeds = r->npats;
	return 0;
}

int hx_rules_protect_needs(struct hx_ld *l)
{
	int ret = protect_needs(l, &l->p->protect);

	return ret;
}

int hx_rules_protect(struct hx_ld *l)
{
	const struct hx_policy_vars *v = l->vars;
	struct hx_rule *r = &l->p->protect;
	size_t n = v->nprotect;

	r->name = "harness:protect";
	r->origin = "harness";
	r->verdict = HX_VERDICT_DENY;
	r->access = HX_ACCESS_ANY;
	for (size_t i = 1; i < l->p->nsources; i++)
		n += l->p->sources[i].name[0] == '/';
	if (!n)
		return 0;
	r->pats = hx_arena_alloc(&l->p->arena, n * sizeof(*r->pats));
	if (!r->pats)
		return -ENOMEM;
	for (size_t i = 0; i < v->nprotect; i++) {
		const char *why;
		size_t off;

		if (!v->protect[i] || v->protect[i][0] != '/' ||
		    hx_glob_validate(v->protect[i], &off, &why))
			return hx_policy_fail(l->err, l->file, 0, 0, NULL,
					      "protected path %zu is not an "
					      "absolute glob",
					      i);
		r->pats[i].text = hx_arena_strdup(&l->p->arena, v->protect[i]);
		if (!r->pats[i].text)
			return -ENOMEM;
		r->npats++;
	}
	for (size_t i = 1; i < l->p->nsources; i++) {
		if (l->p->sources[i].name[0] != '/')
			continue;
		r->pats[r->npats].text =
		    glob_quote(&l->p->arena, l->p->sources[i].name);
		if (!r->pats[r->npats++].text)
			return -ENOMEM;
	}
	return 0;
}

/* Fills r with the session's extra write globs (see hx_policy_vars). */
static int session_rule(struct hx_ld *l, struct hx_rule *r, const char *name,
			enum hx_verdict verdict, const char *const *globs,
			size_t n)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->origin = "harness";
	r->verdict = verdict;
	r->access = HX_ACCESS_WRITE;
	r->pats = hx_arena_alloc(&l->p->arena, n * sizeof(*r->pats));
	if (!r->pats)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *why;
		size_t off;

		if (!globs[i] || globs[i][0] != '/' ||
		    hx_glob_validate(globs[i], &off, &why))
			return hx_policy_fail(l->err, l->file, 0, 0, NULL,
					      "%s path %zu is not an absolute "
					      "glob",
					      name, i);
		r->pats[i].text = hx_arena_strdup(&l->p->arena, globs[i]);
		if (!r->pats[i].text)
			return -ENOMEM;
		r->pats[i].spec = hx_glob_specificity(globs[i]);
		r->npats++;
	}
	return 0;
}

/* The session's network rules (hx_policy_vars.net_rules), appended. */
static int load_net_session_rules(struct hx_ld *l)
{
	const struct hx_policy_vars *v = l->vars;
	size_t n = l->p->nrules[HX_SEC_NET];
	struct hx_rule *rules;
	int ret;

	if (!v->nnet_rules)
		return 0;
	rules =
	    hx_arena_alloc(&l->p->arena, (n + v->nnet_rules) * sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	if (n)
		memcpy(rules, l->p->rules[HX_SEC_NET], n * sizeof(*rules));
	for (size_t i = 0; i < v->nnet_rules; i++) {
		const struct hx_session_rule *sr = &v->net_rules[i];
		struct hx_rule *r = &rules[n];

		if (!sr->npatterns)
			continue;
		r->name = sr->name;
		r->origin = "harness";
		r->verdict = sr->verdict;
		r->access = HX_ACCESS_ANY;
		r->neighbours = sr->neighbours;
		r->decisive = sr->decisive;
		r->pats = hx_arena_alloc(&l->p->arena,
					 sr->npatterns * sizeof(*r->pats));
		if (!r->pats)
			return -ENOMEM;
		for (size_t k = 0; k < sr->npatterns; k++) {
			ret = hx_compile_pattern(
			    l->p, HX_SEC_NET, v, sr->patterns[k],
			    (struct hx_pos){0, 0}, &r->pats[k], l->err);
			if (ret) {
				snprintf(l->err->file, sizeof(l->err->file),
					 "%s %.200s", sr->name,
					 sr->patterns[k]);
				return ret;
			}
			r->npats++;
		}
		n++;
	}
	l->p->rules[HX_SEC_NET] = rules;
	l->p->nrules[HX_SEC_NET] = n;
	return 0;
}

/* harness:protect for writes only (hx_policy_vars.protect_write). */
int hx_rules_protect_write(struct hx_ld *l)
{
	const struct hx_policy_vars *v = l->vars;
	if (!v->nprotect_write)
		return 0;
	return session_rule(l, &l->p->protect_write, "harness:protect",
			    HX_VERDICT_DENY, v->protect_write,
			    v->nprotect_write);
}

int hx_rules_session(struct hx_ld *l)
{
	const struct hx_policy_vars *v = l->vars;
	size_t n = l->p->nrules[HX_SEC_FILES], add = 0;
	struct hx_rule *rules;
	int ret = 0;

	if ((ret = load_net_session_rules(l)))
		return ret;
	add = (v->nwrite_deny ? 1 : 0) + (v->nwrite_allow ? 1 : 0) +
	      (v->ngit_deny ? 1 : 0) + (v->ngit_secret ? 1 : 0);
	if (!add)
		return 0;
	rules = hx_arena_alloc(&l->p->arena, (n + add) * sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	if (n)
		memcpy(rules, l->p->rules[HX_SEC_FILES], n * sizeof(*rules));
	if (v->nwrite_deny)
		ret = session_rule(l, &rules[n++], "harness:worktree-deny",
				   HX_VERDICT_DENY, v->write_deny,
				   v->nwrite_deny);
	if (!ret && v->nwrite_allow)
		ret = session_rule(l, &rules[n++], "harness:worktree",
				   HX_VERDICT_ALLOW, v->write_allow,
				   v->nwrite_allow);
	if (!ret && v->ngit_deny)
		ret = session_rule(l, &rules[n++], "harness:git-config",
				   HX_VERDICT_DENY, v->git_deny, v->ngit_deny);
	if (!ret && v->ngit_secret) {
		ret = session_rule(l, &rules[n], "harness:git-credentials",
				   HX_VERDICT_DENY, v->git_secret,
				   v->ngit_secret);
		rules[n++].access = HX_ACCESS_ANY;
	}
	if (ret)
		return ret;
	l->p->rules[HX_SEC_FILES] = rules;
	l->p->nrules[HX_SEC_FILES] = n;
	return 0;
}
