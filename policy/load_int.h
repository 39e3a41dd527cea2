/* What the loader's three files share: load.c (documents, includes and
 * the settings), node.c (reading YAML nodes) and rules.c (the rule
 * sections and the rules the session adds). Apart from policy_int.h
 * because it needs <yaml.h>, which no other file of policy/ sees. */
#ifndef HX_POLICY_LOAD_INT_H
#define HX_POLICY_LOAD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "policy/policy_int.h"

/* One document being loaded into p. */
struct hx_ld {
	yaml_document_t doc;
	bool packed; /* doc is yamlpack.h's, not libyaml's */
	struct hx_policy *p;
	struct hx_policy_error *err;
	const char *file;
	const struct hx_policy_vars *vars;
	unsigned char *seen;
	size_t nnodes;
	unsigned depth;	 /* 0: the main document, else an include */
	bool meta_only;	 /* the profile: mapping only, no rules */
	bool protective; /* default-protections: deny and ask rules only */
	const char *dir; /* where relative includes are, or NULL */
};

/* ---- node.c: every error names the node's line and column ---- */

/* Position of the first byte of n's text. */
struct hx_pos hx_node_pos(const yaml_node_t *n);
/* Fills l->err with msg and hint (may be NULL) at n (NULL: no
 * position); returns -EINVAL. */
int hx_node_fail(struct hx_ld *l, const yaml_node_t *n, const char *hint,
		 const char *msg);
/* Fetches node id, refusing to interpret any node twice: aliases would
 * let a small file expand into an exponential tree. 0 or -EINVAL. */
int hx_node_get(struct hx_ld *l, int id, yaml_node_t **out);
/* n's string (no NUL inside) into *out; what names it in the error. */
int hx_node_scalar(struct hx_ld *l, const yaml_node_t *n, const char *what,
		   const char **out);
/* Index of n's string in words (NULL-terminated), or an error listing
 * them. */
int hx_node_word(struct hx_ld *l, const yaml_node_t *n, const char *what,
		 const char *const *words, int *out);
/* true/yes or false/no. */
int hx_node_bool(struct hx_ld *l, const yaml_node_t *n, const char *what,
		 bool *out);
/* Checks that map is a mapping whose keys are in valid
 * (NULL-terminated): unknown or repeated keys are errors. */
int hx_node_keys(struct hx_ld *l, const yaml_node_t *map, const char *where,
		 const char *const *valid);
/* The key of a pair of a mapping hx_node_keys accepted. */
const char *hx_node_key(struct hx_ld *l, const yaml_node_pair_t *pair);
/* A string or a list of strings: the item nodes (in the arena),
 * counted. */
int hx_node_strings(struct hx_ld *l, yaml_node_t *n, const char *what,
		    yaml_node_t ***items, size_t *count);
/* Items of a sequence; 1 for any other node. */
size_t hx_node_len(const yaml_node_t *n);
/* A count, or with bytes a size that may end in K, M, G or T (powers of
 * 1024), into *out: 0, or -EINVAL. */
int hx_load_quantity(const char *s, bool bytes, uint64_t *out);

/* ---- load_redact.c ---- */

/* audit.redact: true/false, or a mapping of enabled, env_names and
 * patterns (policy.h, struct hx_redact_conf). */
int hx_load_redact(struct hx_ld *l, yaml_node_t *n);

/* ---- load_alerts.c ---- */

/* alerts: a list of rules (policy.h, struct hx_alert_rule). */
int hx_load_alerts(struct hx_ld *l, yaml_node_t *n);

/* ---- rules.c ---- */

/* Appends the rules of section sec (the list n, the key what) to the
 * policy's: includes add to the documents before. */
int hx_rules_section(struct hx_ld *l, enum hx_section sec, yaml_node_t *n,
		     const char *what);
/* harness:protect: the session's own paths, and every policy file an
 * include read (the agent must not rewrite its next session's rules). */
int hx_rules_protect(struct hx_ld *l);
/* The session's rules (hx_policy_vars): its network rules, then the
 * worktree's write deny and allow rules, appended. */
int hx_rules_session(struct hx_ld *l);
/* The session's write-only protection (hx_policy_vars.protect_write). */
int hx_rules_protect_write(struct hx_ld *l);
/* harness:protect's needs (struct hx_rule), once every pattern of it is
 * there: after hx_rules_aliases. */
int hx_rules_protect_needs(struct hx_ld *l);

/* ---- alias.c ---- */

/* Every deny and ask rule's patterns (harness:protect's too) rebased
 * through hx_policy_vars.aliases, appended to the rule's. */
int hx_rules_aliases(struct hx_ld *l);

#endif
