/* YAML -> compiled policy. The document API gives every node its
 * position, so every error can name its line and column. */
#include "policy/load_int.h"
#include "policy/yamlpack.h"
#include "common/glob.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HX_POLICY_MAX_SIZE (16u << 20)

static const char *const top_keys[] = {
    "version", "mode",	      "defaults", "audit",   "files",
    "exec",    "network",     "limits",	  "include", "profile",
    "disable", "ask_timeout", "alerts",	  NULL};
/* An included document adds rules; the session-wide settings are the
 * main policy's alone, so an include cannot turn enforcement off. */
static const char *const include_keys[] = {"version", "files",	 "exec",
					   "network", "include", "profile",
					   "disable", NULL};
static const char *const profile_keys[] = {"description", "detect", NULL};
static const char *const audit_keys[] = {"log_reads", "rate",	"burst",
					 "max_size",  "redact", NULL};
static const char *const verdict_words[] = {"allow", "ask", "deny", NULL};
static const char *const category_words[] = {
    "exec",	   "file_read", "file_write", "net_connect", "net_send",
    "net_resolve", "process",	"net_listen", NULL};

static int load_defaults(struct hx_ld *l, yaml_node_t *n)
{
	int ret = hx_node_keys(l, n, "defaults", category_words), c, v;
	yaml_node_t *val;

	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     !ret && pr < n->data.mapping.pairs.top; pr++) {
		ret = hx_node_get(l, pr->key, &val);
		if (!ret)
			ret = hx_node_word(l, val, "category", category_words,
					   &c);
		if (!ret)
			ret = hx_node_get(l, pr->value, &val);
		if (!ret)
			ret =
			    hx_node_word(l, val, "verdict", verdict_words, &v);
		if (!ret)
			l->p->defaults[c] = (enum hx_verdict)v;
	}
	return ret;
}

/* "12", "64K", "1G" (powers of 1024, for sizes only) or "unlimited"
 * (the same as leaving the key out). */
static int limit_value(struct hx_ld *l, const yaml_node_t *n,
		       enum hx_limit which, uint64_t *out, bool *set)
{
	bool bytes = which == HX_LIMIT_FILE_SIZE ||
		     which == HX_LIMIT_ADDRESS_SPACE || which == HX_LIMIT_CORE;
	const char *s, *hint;
	char msg[128];
	int ret = hx_node_scalar(l, n, hx_limit_name(which), &s);

	if (ret)
		return ret;
	*set = strcmp(s, "unlimited") != 0;
	if (!*set || !hx_load_quantity(s, bytes, out))
		return 0;
	hint = bytes ? "a number of bytes, with K, M, G or T for powers of "
		       "1024, or unlimited"
	       : which == HX_LIMIT_CPU ? "a number of seconds, or unlimited"
				       : "a number, or unlimited";
	snprintf(msg, sizeof(msg), "invalid %s '%.40s'", hx_limit_name(which),
		 s);
	return hx_node_fail(l, n, hint, msg);
}

/* audit: rate, burst (records) or max_size (bytes, K/M/G/T); 0 or
 * "unlimited" lift it. */
static int quota_value(struct hx_ld *l, const yaml_node_t *n, const char *k)
{
	struct hx_audit_quota *q = &l->p->quota;
	bool bytes = !strcmp(k, "max_size");
	uint64_t *dst = bytes		     ? &q->max_size
			: !strcmp(k, "rate") ? &q->rate
					     : &q->burst;
	const char *s;
	char msg[128];
	int ret = hx_node_scalar(l, n, k, &s);

	if (ret)
		return ret;
	if (!strcmp(s, "unlimited")) {
		*dst = 0;
		return 0;
	}
	if (!hx_load_quantity(s, bytes, dst))
		return 0;
	snprintf(msg, sizeof(msg), "invalid %s '%.40s'", k, s);
	return hx_node_fail(
	    l, n,
	    bytes ? "a number of bytes, with K, M, G or T for powers "
		    "of 1024, or unlimited"
		  : "a number of records, or unlimited",
	    msg);
}

static int load_audit(struct hx_ld *l, yaml_node_t *map)
{
	int ret = hx_node_keys(l, map, "audit", audit_keys);

	for (yaml_node_pair_t *a = map->data.mapping.pairs.start;
	     !ret && a < map->data.mapping.pairs.top; a++) {
		const char *k = hx_node_key(l, a);
		yaml_node_t *v;

		ret = hx_node_get(l, a->value, &v);
		if (ret)
			break;
		if (!strcmp(k, "log_reads"))
			ret = hx_node_bool(l, v, "log_reads", &l->p->log_reads);
		else if (!strcmp(k, "redact"))
			ret = hx_load_redact(l, v);
		else
			ret = quota_value(l, v, k);
	}
	return ret;
}

/* ask_timeout: seconds a question waits for a person (0: an ask is
 * refused at once, as with nobody there). */
static int load_ask_timeout(struct hx_ld *l, const yaml_node_t *n)
{
	const char *s;
	char *end;
	unsigned long v;
	char msg[128];
	int ret = hx_node_scalar(l, n, "ask_timeout", &s);

	if (ret)
		return ret;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s >= '0' && *s <= '9' && !*end && !errno &&
	    v <= HX_ASK_TIMEOUT_MAX) {
		l->p->ask_timeout = (unsigned)v;
		return 0;
	}
	snprintf(msg, sizeof(msg), "invalid ask_timeout '%.40s'", s);
	return hx_node_fail(
	    l, n, "seconds, 0 to 86400 (0: refuse an ask at once)", msg);
}

static int load_limits(struct hx_ld *l, yaml_node_t *map)
{
	int ret = hx_node_keys(l, map, "limits", hx_limit_names);

	for (yaml_node_pair_t *a = map->data.mapping.pairs.start;
	     !ret && a < map->data.mapping.pairs.top; a++) {
		const char *k = hx_node_key(l, a);
		yaml_node_t *v;
		bool set;
		int w = 0;

		while (strcmp(hx_limit_names[w], k))
			w++; /* check_keys knows it is one of them */
		ret = hx_node_get(l, a->value, &v);
		if (!ret)
			ret = limit_value(l, v, (enum hx_limit)w,
					  &l->p->limits[w], &set);
		/* "unlimited" also lifts a limit set by default. */
		if (!ret && set)
			l->p->limits_set |= 1u << w;
		else if (!ret)
			l->p->limits_set &= ~(1u << w);
	}
	return ret;
}

static int load_document(struct hx_ld *parent, const char *name,
			 const char *text, size_t len, const char *dir,
			 const yaml_node_t *at);

/* Whether the document called name is already part of the policy. */
static bool loaded(const struct hx_policy *p, const char *name)
{
	for (size_t i = 0; i < p->nsources; i++)
		if (!strcmp(p->sources[i].name, name))
			return true;
	return false;
}

static int read_all(int fd, char **out, size_t *outlen);

/* include: default-protections: the embedded default read for its deny
 * and ask rules alone (rules.c skips the rest, load_top its settings).
 * A document of its own name: the default's profiles loaded so do not
 * count as loaded for an include of them whole. */
static int load_protections(struct hx_ld *l, const yaml_node_t *n)
{
	size_t len;
	const char *text = hx_policy_default_text(&len);
	bool was = l->protective;
	int ret;

	if (loaded(l->p, HX_DEFAULT_PROTECTIONS))
		return 0;
	l->protective = true; /* load_document's child takes it */
	ret = load_document(l, HX_DEFAULT_PROTECTIONS, text, len, NULL, n);
	l->protective = was;
	return ret;
}

/* One include: a built-in profile's name (no '/'), or a file, relative
 * to the including file's directory. A document already loaded is
 * skipped, so a profile named twice (the policy and --profile) or a
 * cycle adds nothing. */
static int load_include(struct hx_ld *l, const yaml_node_t *n, const char *what)
{
	char path[4096], name[4200], dir[4200], msg[300], *buf = NULL, *slash;
	size_t len;
	int ret;

	if (!strcmp(what, HX_DEFAULT_PROTECTIONS))
		return load_protections(l, n);
	if (!hx_profile_is_file(what)) {
		const char *text = hx_profile_text(what, &len);

		if (!text) {
			char hint[256] = "built-in profiles:";

			for (size_t i = 0; hx_profile_name(i); i++)
				snprintf(hint + strlen(hint),
					 sizeof(hint) - strlen(hint), " %s",
					 hx_profile_name(i));
			snprintf(msg, sizeof(msg),
				 "no built-in profile '%.60s'", what);
			return hx_node_fail(l, n, hint, msg);
		}
		snprintf(name, sizeof(name), "%sprofile:%s",
			 l->protective ? HX_DEFAULT_PROTECTIONS ":" : "", what);
		return loaded(l->p, name)
			   ? 0
			   : load_document(l, name, text, len, NULL, n);
	}
	if (what[0] != '/' && !l->dir)
		return hx_node_fail(
		    l, n, "write an absolute path",
		    "a relative include needs a policy file to be "
		    "relative to");
	snprintf(path, sizeof(path), "%s%s%s", what[0] == '/' ? "" : l->dir,
		 what[0] == '/' ? "" : "/", what);
	if (!realpath(path, name)) {
		snprintf(msg, sizeof(msg), "cannot include %.200s: %s", path,
			 strerror(errno));
		return hx_node_fail(l, n, NULL, msg);
	}
	if (loaded(l->p, name))
		return 0;
	if ((ret = hx_policy_read(name, &buf, &len))) {
		snprintf(msg, sizeof(msg), "cannot include %.200s: %s", name,
			 strerror(-ret));
		return hx_node_fail(l, n, NULL, msg);
	}
	if (memchr(buf, '\0', len)) {
		free(buf);
		return hx_node_fail(l, n, NULL,
				    "the included file holds a NUL byte");
	}
	snprintf(dir, sizeof(dir), "%s", name);
	slash = strrchr(dir, '/');
	*(slash == dir ? slash + 1 : slash) = '\0';
	ret = load_document(l, name, buf, len, dir, n);
	free(buf);
	return ret;
}

static int load_includes(struct hx_ld *l, yaml_node_t *n)
{
	yaml_node_t **items;
	size_t cnt;
	int ret = hx_node_strings(l, n, "include", &items, &cnt);

	for (size_t i = 0; !ret && i < cnt; i++)
		ret = load_include(l, items[i],
				   (const char *)items[i]->data.scalar.value);
	return ret;
}

/* One detect glob: variables expanded ($HOME: a native installer's
 * directory), validated; into *out (the arena) unless out is NULL. */
static int detect_glob(struct hx_ld *l, const yaml_node_t *n, const char **out)
{
	char msg[256], hint[256], *x = NULL;
	const char *why;
	size_t bad, off;
	int ret = hx_expand_vars(l->vars, (const char *)n->data.scalar.value,
				 true, &x, NULL, &bad, msg, sizeof(msg), hint,
				 sizeof(hint));

	if (ret == -ENOMEM)
		return ret;
	if (ret)
		return hx_node_fail(l, n, hint[0] ? hint : NULL, msg);
	if (hx_glob_validate(x, &off, &why))
		ret = hx_node_fail(l, n, NULL, why);
	else if (out && !(*out = hx_arena_strdup(&l->p->arena, x)))
		ret = -ENOMEM;
	free(x);
	return ret;
}

/* profile: {description: TEXT, detect: [GLOB...]}; kept for the main
 * document only (a built-in profile loaded on its own). */
static int load_profile_meta(struct hx_ld *l, yaml_node_t *map)
{
	int ret = hx_node_keys(l, map, "profile", profile_keys);

	for (yaml_node_pair_t *a = map->data.mapping.pairs.start;
	     !ret && a < map->data.mapping.pairs.top; a++) {
		const char *k = hx_node_key(l, a), *s;
		yaml_node_t *v, **items;
		size_t cnt;

		ret = hx_node_get(l, a->value, &v);
		if (!ret && !strcmp(k, "description")) {
			ret = hx_node_scalar(l, v, "description", &s);
			if (!ret && !l->depth &&
			    !(l->p->description =
				  hx_arena_strdup(&l->p->arena, s)))
				ret = -ENOMEM;
		} else if (!ret) {
			ret = hx_node_strings(l, v, "detect", &items, &cnt);
			if (!ret && !l->depth) {
				l->p->detect = hx_arena_alloc(
				    &l->p->arena, (cnt + 1) * sizeof(char *));
				if (!l->p->detect)
					return -ENOMEM;
			}
			for (size_t i = 0; !ret && i < cnt; i++)
				ret = detect_glob(l, items[i],
						  l->depth ? NULL
							   : &l->p->detect[i]);
			if (!ret && !l->depth)
				l->p->ndetect = cnt;
		}
	}
	return ret;
}

/* disable: [ID...]: rules of this or another document that this one
 * drops (a profile opening what the default closes: the ssh agent for
 * git over ssh). Applied once every document is loaded. */
static int load_disable(struct hx_ld *l, yaml_node_t *n)
{
	yaml_node_t **items;
	size_t cnt;
	int ret = hx_node_strings(l, n, "disable", &items, &cnt);

	for (size_t i = 0; !ret && i < cnt; i++) {
		struct hx_disable *d = &l->p->disable[l->p->ndisable];
		const char *id = (const char *)items[i]->data.scalar.value;

		if (l->p->ndisable == HX_POLICY_MAX_DISABLE)
			return hx_node_fail(l, items[i], NULL,
					    "too many disabled rules");
		/* The session's own protections are not the policy's. */
		if (!strcmp(id, "harness:protect") ||
		    !strncmp(id, "harness:worktree", 16))
			return hx_node_fail(
			    l, items[i], NULL,
			    "harness:protect and the worktree's rules "
			    "cannot be disabled");
		d->id = hx_arena_strdup(&l->p->arena, id);
		d->file = l->file;
		d->pos = hx_node_pos(items[i]);
		if (!d->id)
			return -ENOMEM;
		l->p->ndisable++;
	}
	return ret;
}

/* Drops the disabled rules; an id no rule has is an error. */
static int apply_disable(struct hx_ld *l)
{
	for (size_t i = 0; i < l->p->ndisable; i++) {
		const struct hx_disable *d = &l->p->disable[i];
		bool found = false;

		/* named again (a learned policy's disable and a profile's):
		 * dropped by the first */
		for (size_t k = 0; !found && k < i; k++)
			found = !strcmp(l->p->disable[k].id, d->id);

		for (size_t s = 0; s < HX_SEC_COUNT; s++) {
			struct hx_rule *r = l->p->rules[s];
			size_t n = l->p->nrules[s], k = 0;

			for (size_t j = 0; j < n; j++) {
				if (!strcmp(r[j].name, d->id)) {
					found = true;
					continue;
				}
				r[k++] = r[j];
			}
			l->p->nrules[s] = k;
		}
		/* A session rule with nothing to deny this time (no
		 * $SSH_AUTH_SOCK) is not there to drop: fine. */
		if (!found && strncmp(d->id, "harness:", 8))
			return hx_policy_fail(
			    l->err, d->file, d->pos.line, d->pos.column,
			    "harness-policy show lists the "
			    "rule ids",
			    "disable: no rule '%.100s'", d->id);
	}
	return 0;
}

/* In an included document, a key only the main policy may set. */
static int main_only_keys(struct hx_ld *l, yaml_node_t *root)
{
	static const char *const main_only[] = {
	    "mode",	   "defaults", "audit", "limits",
	    "ask_timeout", "alerts",   NULL};

	if (root->type != YAML_MAPPING_NODE)
		return 0; /* check_keys says what is wrong */
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
	     pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&l->doc, pr->key);

		for (size_t i = 0;
		     k && k->type == YAML_SCALAR_NODE && main_only[i]; i++)
			if (!strcmp((const char *)k->data.scalar.value,
				    main_only[i]))
				return hx_node_fail(
				    l, k,
				    "only the main policy sets mode, "
				    "defaults, audit, limits, ask_timeout "
				    "and alerts",
				    "not allowed in an included policy");
	}
	return 0;
}

/* What default-protections takes of the default: its includes and
 * rules (not its disable: a rule it drops stays, which refuses more). */
static bool protective_key(const char *k)
{
	return !strcmp(k, "include") || !strcmp(k, "files") ||
	       !strcmp(k, "exec") || !strcmp(k, "network");
}

static int load_top(struct hx_ld *l, yaml_node_t *root)
{
	static const char *const modes[] = {"enforce", "audit", NULL};
	static const char *const versions[] = {"1", NULL};
	static const char *const sections[] = {"files", "exec", "network"};
	/* the default read for its protections has every key; only
	 * include and the rule sections are taken from it */
	bool inc = l->depth && !l->protective;
	int ret = inc ? main_only_keys(l, root) : 0, i;
	yaml_node_t *v;

	if (!ret)
		ret = hx_node_keys(l, root, "the policy",
				   inc ? include_keys : top_keys);
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
	     !ret && pr < root->data.mapping.pairs.top; pr++) {
		const char *k = hx_node_key(l, pr);

		ret = hx_node_get(l, pr->value, &v);
		if (ret)
			break;
		if (!strcmp(k, "version")) {
			ret = hx_node_word(l, v, "version", versions, &i);
		} else if (!strcmp(k, "profile")) {
			ret = load_profile_meta(l, v);
		} else if (l->meta_only ||
			   (l->protective && !protective_key(k))) {
			continue;
		} else if (!strcmp(k, "include")) {
			ret = load_includes(l, v);
		} else if (!strcmp(k, "disable")) {
			ret = load_disable(l, v);
		} else if (!strcmp(k, "mode")) {
			ret = hx_node_word(l, v, "mode", modes, &i);
			l->p->mode = (enum hx_mode)i;
		} else if (!strcmp(k, "defaults")) {
			ret = load_defaults(l, v);
		} else if (!strcmp(k, "audit")) {
			ret = load_audit(l, v);
		} else if (!strcmp(k, "limits")) {
			ret = load_limits(l, v);
		} else if (!strcmp(k, "ask_timeout")) {
			ret = load_ask_timeout(l, v);
		} else if (!strcmp(k, "alerts")) {
			ret = hx_load_alerts(l, v);
		} else {
			for (i = 0; i < HX_SEC_COUNT; i++)
				if (!strcmp(k, sections[i]))
					ret = hx_rules_section(
					    l, (enum hx_section)i, v, k);
		}
	}
	return ret;
}

static void init_defaults(struct hx_policy *p)
{
	p->mode = HX_MODE_ENFORCE;
	p->ask_timeout = HX_ASK_TIMEOUT_DEFAULT;
	p->defaults[HX_CAT_EXEC] = HX_VERDICT_ALLOW;
	p->defaults[HX_CAT_FILE_READ] = HX_VERDICT_ALLOW;
	p->defaults[HX_CAT_FILE_WRITE] = HX_VERDICT_DENY;
	p->defaults[HX_CAT_NET_CONNECT] = HX_VERDICT_DENY;
	p->defaults[HX_CAT_NET_SEND] = HX_VERDICT_DENY;
	p->defaults[HX_CAT_NET_RESOLVE] = HX_VERDICT_ALLOW;
	p->defaults[HX_CAT_PROCESS] = HX_VERDICT_ALLOW;
	p->defaults[HX_CAT_NET_LISTEN] = HX_VERDICT_ALLOW;
	p->limits[HX_LIMIT_PROCESSES] = HX_PROCESSES_DEFAULT;
	p->limits_set = 1u << HX_LIMIT_PROCESSES;
	p->quota = (struct hx_audit_quota){HX_AUDIT_RATE_DEFAULT,
					   HX_AUDIT_BURST_DEFAULT,
					   HX_AUDIT_MAX_SIZE_DEFAULT};
	p->redact.enabled = true; /* what a policy that says nothing gets */
}

static int syntax_error(struct hx_ld *l, const yaml_parser_t *ps)
{
	char hint[256] = "";

	if (ps->error == YAML_MEMORY_ERROR)
		return -ENOMEM;
	if (ps->context)
		snprintf(hint, sizeof(hint), "%s at line %zu, column %zu",
			 ps->context, ps->context_mark.line + 1,
			 ps->context_mark.column + 1);
	return hx_policy_fail(
	    l->err, l->file, (unsigned)ps->problem_mark.line + 1,
	    (unsigned)ps->problem_mark.column + 1, hint[0] ? hint : NULL,
	    "YAML syntax error: %s", ps->problem ? ps->problem : "unknown");
}

static int parse_doc(struct hx_ld *l, const char *text, size_t len)
{
	yaml_parser_t ps;
	yaml_document_t extra;
	yaml_node_t *root;
	const void *packed;
	size_t size;
	int ret = 0;

	/* An embedded text was parsed at build time (yamlpack.h). */
	if ((packed = hx_yamlpack_embedded(text, &size)) &&
	    !(ret = hx_yamlpack_unpack(packed, size, &l->doc))) {
		l->packed = true;
		return 0;
	}
	if (ret == -ENOMEM)
		return ret;
	if (!yaml_parser_initialize(&ps))
		return -ENOMEM;
	yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
	if (!yaml_parser_load(&ps, &l->doc)) {
		ret = syntax_error(l, &ps);
		memset(&l->doc, 0, sizeof(l->doc));
		goto out;
	}
	root = yaml_document_get_root_node(&l->doc);
	if (!root) {
		ret = hx_policy_fail(l->err, l->file, 1, 1,
				     "start with: version: 1", "empty policy");
		goto out;
	}
	if (!yaml_parser_load(&ps, &extra)) {
		ret = syntax_error(l, &ps);
		goto out;
	}
	if (yaml_document_get_root_node(&extra)) {
		ret = hx_policy_fail(
		    l->err, l->file, (unsigned)extra.start_mark.line + 1,
		    (unsigned)extra.start_mark.column + 1, NULL,
		    "a policy file holds one YAML document, not several");
	}
	yaml_document_delete(&extra);
out:
	yaml_parser_delete(&ps);
	return ret;
}

/* Copies a document into the policy's list of sources. */
static int add_source(struct hx_policy *p, const char *name, const char *text,
		      size_t len, const char **saved_name)
{
	struct hx_source *src = &p->sources[p->nsources];

	src->name = hx_arena_strdup(&p->arena, name);
	src->text = hx_arena_strndup(&p->arena, text, len);
	src->len = len;
	if (!src->name || !src->text)
		return -ENOMEM;
	p->nsources++;
	*saved_name = src->name;
	return 0;
}

/* Parses l's text and loads its top-level keys. */
static int parse_and_load(struct hx_ld *l, const char *text, size_t len)
{
	yaml_node_t *root;
	int ret = parse_doc(l, text, len);

	if (ret)
		goto out;
	l->nnodes = (size_t)(l->doc.nodes.top - l->doc.nodes.start);
	l->seen = calloc(l->nnodes ? l->nnodes : 1, 1);
	if (!l->seen) {
		ret = -ENOMEM;
		goto out;
	}
	ret = hx_node_get(l, 1, &root);
	if (!ret)
		ret = load_top(l, root);
out:
	if (l->packed)
		hx_yamlpack_free(&l->doc);
	else
		yaml_document_delete(&l->doc);
	free(l->seen);
	l->seen = NULL;
	return ret;
}

static int load_document(struct hx_ld *parent, const char *name,
			 const char *text, size_t len, const char *dir,
			 const yaml_node_t *at)
{
	struct hx_ld l = {.p = parent->p,
			  .err = parent->err,
			  .vars = parent->vars,
			  .depth = parent->depth + 1,
			  .protective = parent->protective,
			  .dir = dir};
	char from[300];
	int ret;

	if (l.depth > HX_POLICY_MAX_DEPTH)
		return hx_node_fail(parent, at, "an include loop?",
				    "includes nested too deep");
	if (l.p->nsources == HX_POLICY_MAX_SOURCES)
		return hx_node_fail(parent, at, NULL,
				    "too many included policies");
	if (at)
		snprintf(from, sizeof(from), "%.250s:%u", parent->file,
			 hx_node_pos(at).line);
	else
		snprintf(from, sizeof(from), "the command line");
	ret = add_source(l.p, name, text, len, &l.file);
	if (!ret)
		ret = parse_and_load(&l, text, len);
	/* The innermost include names the file the error is in. */
	if (ret == -EINVAL && !strstr(l.err->hint, "included from")) {
		size_t k = strlen(l.err->hint);

		snprintf(l.err->hint + k, sizeof(l.err->hint) - k,
			 "%sincluded from %s", k ? "; " : "", from);
	}
	return ret;
}

/* The directory of the policy file name, for its relative includes;
 * false for a name that is no file ("<default>", a pipe). */
static bool policy_dir(const char *name, char *dir, size_t size)
{
	char real[4096], *slash;

	if (name[0] == '<' || !realpath(name, real) || strlen(real) >= size)
		return false;
	slash = strrchr(real, '/');
	*(slash == real ? slash + 1 : slash) = '\0';
	snprintf(dir, size, "%s", real);
	return true;
}

static int load_policy(struct hx_ld *l, const char *name, const char *text,
		       size_t len, bool meta_only)
{
	char dir[4096];
	int ret;

	l->meta_only = meta_only;
	l->dir = policy_dir(name, dir, sizeof(dir)) ? dir : NULL;
	ret = add_source(l->p, name, text, len, &l->file);
	if (!ret)
		ret = parse_and_load(l, text, len);
	for (size_t i = 0; !ret && !meta_only && i < l->vars->ninclude; i++)
		ret = load_include(l, NULL, l->vars->include[i]);
	if (!ret && !meta_only)
		ret = hx_rules_protect(l);
	if (!ret && !meta_only)
		ret = hx_rules_protect_write(l);
	if (!ret && !meta_only)
		ret = hx_rules_session(l);
	if (!ret && !meta_only)
		ret = apply_disable(l);
	if (!ret && !meta_only)
		ret = hx_rules_aliases(l);
	/* after the aliases, which add protect patterns of their own */
	if (!ret && !meta_only)
		ret = hx_rules_protect_needs(l);
	if (!ret && !meta_only && hx_file_index_build(l->p))
		ret = -ENOMEM;
	return ret;
}

static const char *abs_copy(struct hx_policy *p, const char *path)
{
	return path && path[0] == '/' ? hx_arena_strdup(&p->arena, path) : NULL;
}

static void set_workspace(struct hx_policy *p, const struct hx_policy_vars *v)
{
	p->ws.roots[0] = abs_copy(p, v->cwd);
	p->ws.roots[1] = abs_copy(p, v->worktree);
	p->ws.roots[2] = abs_copy(p, v->tmpdir);
	p->ws.home = abs_copy(p, v->home);
}

static int load(const char *name, const char *text, size_t len,
		const struct hx_policy_vars *vars, bool meta_only,
		struct hx_policy **out, struct hx_policy_error *err)
{
	static const struct hx_policy_vars novars;
	struct hx_ld l = {.err = err, .vars = vars ? vars : &novars};
	int ret;

	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", name);
	*out = NULL;
	l.p = calloc(1, sizeof(*l.p));
	if (!l.p)
		return -ENOMEM;
	init_defaults(l.p);
	set_workspace(l.p, l.vars);
	l.p->source = hx_arena_strdup(&l.p->arena, name);
	ret =
	    l.p->source ? load_policy(&l, name, text, len, meta_only) : -ENOMEM;
	if (ret == -ENOMEM)
		hx_policy_fail(err, name, 0, 0, NULL, "out of memory");
	if (ret) {
		hx_policy_free(l.p);
		return ret;
	}
	*out = l.p;
	return 0;
}

int hx_policy_load_buffer(const char *name, const char *text, size_t len,
			  const struct hx_policy_vars *vars,
			  struct hx_policy **out, struct hx_policy_error *err)
{
	return load(name, text, len, vars, false, out, err);
}

/* How much of a profile's text says when it is chosen: up to the
 * top-level key after `profile:`, a complete mapping. Every start asks
 * each built-in profile whether it is the agent's, and its rules need
 * not be parsed for that. */
static size_t meta_len(const char *text, size_t len)
{
	bool seen = false;

	for (size_t o = 0; o < len;) {
		const char *nl = memchr(text + o, '\n', len - o);

		if (seen && isalpha((unsigned char)text[o]))
			return o;
		if (!strncmp(text + o, "profile:", 8))
			seen = true;
		o = nl ? (size_t)(nl - text) + 1 : len;
	}
	return len;
}

int hx_profile_load_meta(const char *name, const struct hx_policy_vars *vars,
			 struct hx_policy **out, struct hx_policy_error *err)
{
	size_t len;
	const char *text = hx_profile_text(name, &len);
	char src[200];

	snprintf(src, sizeof(src), "profile:%s", name);
	if (!text) {
		*out = NULL;
		return hx_policy_fail(err, src, 0, 0, NULL,
				      "no built-in profile '%s'", name);
	}
	return hx_policy_load_meta_buffer(src, text, meta_len(text, len), vars,
					  out, err);
}

int hx_policy_load_meta_buffer(const char *name, const char *text, size_t len,
			       const struct hx_policy_vars *vars,
			       struct hx_policy **out,
			       struct hx_policy_error *err)
{
	return load(name, text, len, vars, true, out, err);
}

int hx_policy_read(const char *path, char **text, size_t *len)
{
	int fd, ret;

	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	ret = read_all(fd, text, len);
	close(fd);
	return ret;
}

/* Reads all of fd (files, pipes, /dev/stdin alike) up to the size cap. */
static int read_all(int fd, char **out, size_t *outlen)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;

	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			if (cap >= HX_POLICY_MAX_SIZE) {
				free(buf);
				return -EFBIG;
			}
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			free(buf);
			return -e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

int hx_policy_load_file(const char *path, const struct hx_policy_vars *vars,
			struct hx_policy **out, struct hx_policy_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	int ret;

	*out = NULL;
	memset(err, 0, sizeof(*err));
	if ((ret = hx_policy_read(path, &buf, &len)))
		goto fail;
	ret = hx_policy_load_buffer(path, buf, len, vars, out, err);
	free(buf);
	return ret;
fail:
	hx_policy_fail(err, path, 0, 0, NULL, "cannot read the policy: %s",
		       strerror(-ret));
	return ret;
}
