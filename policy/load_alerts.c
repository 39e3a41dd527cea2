/* The alerts: section of a policy (load_int.h, policy.h struct
 * hx_alert_rule): a list of rules, each a condition on the session's
 * records (when:, with its count, window, category, rules or free) and
 * what happens when it holds (action:, command: for notify). Every key
 * is checked against the condition it belongs to, so that a rule never
 * silently watches something else than it says. */
#include "policy/load_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/names.h"

#define WINDOW_MAX_MS (24ull * 3600 * 1000)
#define COMMAND_MAX   64

static const char *const rule_keys[] = {
    "id",    "description", "when",   "count",	 "window", "category",
    "rules", "free",	    "action", "command", NULL};
static const char *const kind_words[] = {
    "consecutive_denials", "rate",     "sensitive_burst",
    "checkpoint_failed",   "disk_low", NULL};
static const char *const action_words[] = {"log", "notify", "pause",
					   "ask", "kill",   NULL};
/* The categories a rate is counted in: what an agent does, not what it
 * reads (reads are not recorded unless log_reads is on). */
static const char *const rate_words[] = {
    "exec",	  "file_write", "net_connect", "net_send",
    "net_listen", "file_read",	NULL};

const char *hx_alert_kind_name(enum hx_alert_kind k)
{
	return (unsigned)k < HX_ALERT_KIND_COUNT ? kind_words[k] : "?";
}

const char *hx_alert_action_name(enum hx_alert_action a)
{
	for (unsigned i = 1; action_words[i]; i++)
		if (a == 1u << (i - 1))
			return action_words[i];
	return "log";
}

/* Which keys each kind takes beside id, description, when, action and
 * command; the others are errors. */
static bool kind_takes(enum hx_alert_kind k, const char *key)
{
	if (!strcmp(key, "count"))
		return k == HX_ALERT_DENIALS || k == HX_ALERT_RATE ||
		       k == HX_ALERT_SECRETS;
	if (!strcmp(key, "window"))
		return k == HX_ALERT_RATE || k == HX_ALERT_SECRETS;
	if (!strcmp(key, "category"))
		return k == HX_ALERT_RATE;
	if (!strcmp(key, "rules"))
		return k == HX_ALERT_SECRETS;
	if (!strcmp(key, "free"))
		return k == HX_ALERT_DISK;
	return true;
}

static int load_count(struct hx_ld *l, yaml_node_t *n, unsigned *out)
{
	const char *s;
	char msg[128];
	uint64_t v;
	int ret = hx_node_scalar(l, n, "count", &s);

	if (ret)
		return ret;
	if (!hx_load_quantity(s, false, &v) && v >= 1 &&
	    v <= HX_ALERT_COUNT_MAX) {
		*out = (unsigned)v;
		return 0;
	}
	snprintf(msg, sizeof(msg), "invalid count '%.40s'", s);
	return hx_node_fail(l, n, "a number of calls, 1 to 1000000", msg);
}

/* "10s", "500ms", "2m", "1h", or a bare number of seconds. */
static int load_window(struct hx_ld *l, yaml_node_t *n, uint64_t *out)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = {
	    {"", 1000}, {"s", 1000}, {"ms", 1}, {"m", 60000}, {"h", 3600000}};
	const char *s;
	char *end, msg[128];
	unsigned long long v;
	int ret = hx_node_scalar(l, n, "window", &s);

	if (ret)
		return ret;
	errno = 0;
	v = strtoull(s, &end, 10);
	for (size_t i = 0; isdigit((unsigned char)s[0]) && !errno &&
			   i < sizeof(units) / sizeof(units[0]);
	     i++)
		if (!strcmp(end, units[i].unit) && v &&
		    v <= WINDOW_MAX_MS / units[i].ms) {
			*out = v * units[i].ms;
			return 0;
		}
	snprintf(msg, sizeof(msg), "invalid window '%.40s'", s);
	return hx_node_fail(l, n,
			    "a duration up to a day: 500ms, 10s, 5m, 1h (a "
			    "bare number is seconds)",
			    msg);
}

/* "5%" of the file system, or a size with K, M, G or T. */
static int load_free(struct hx_ld *l, yaml_node_t *n, struct hx_alert_rule *a)
{
	const char *s;
	char *end, msg[128];
	unsigned long v;
	int ret = hx_node_scalar(l, n, "free", &s);

	if (ret)
		return ret;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (isdigit((unsigned char)s[0]) && !strcmp(end, "%") && !errno &&
	    v >= 1 && v <= 100) {
		a->free_pct = (unsigned)v;
		return 0;
	}
	if (!hx_load_quantity(s, true, &a->free_bytes) && a->free_bytes)
		return 0;
	snprintf(msg, sizeof(msg), "invalid free '%.40s'", s);
	return hx_node_fail(l, n,
			    "a share of the file system (5%) or a size with "
			    "K, M, G or T (500M)",
			    msg);
}

static int load_strings(struct hx_ld *l, yaml_node_t *n, const char *what,
			size_t max, const char *const **out, size_t *count)
{
	yaml_node_t **items;
	const char **v;
	size_t cnt;
	int ret = hx_node_strings(l, n, what, &items, &cnt);

	if (ret)
		return ret;
	if (!cnt || cnt > max)
		return hx_node_fail(l, n, NULL,
				    cnt ? "too many items" : "an empty list");
	v = hx_arena_alloc(&l->p->arena, (cnt + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < cnt; i++)
		if (!(v[i] = hx_arena_strdup(
			  &l->p->arena,
			  (const char *)items[i]->data.scalar.value)))
			return -ENOMEM;
	v[cnt] = NULL;
	*out = v;
	*count = cnt;
	return 0;
}

/* action: one word or a list; log alone adds nothing (every alert is
 * logged), kill goes with nothing that needs the tree afterwards. */
static int load_actions(struct hx_ld *l, yaml_node_t *n, unsigned *out)
{
	yaml_node_t **items;
	size_t cnt;
	int ret = hx_node_strings(l, n, "action", &items, &cnt), w;

	*out = 0;
	for (size_t i = 0; !ret && i < cnt; i++) {
		ret = hx_node_word(l, items[i], "action", action_words, &w);
		if (!ret && w)
			*out |= 1u << (w - 1);
	}
	if (!ret && (*out & HX_ACT_KILL) &&
	    (*out & (HX_ACT_PAUSE | HX_ACT_ASK)))
		return hx_node_fail(l, n,
				    "kill ends the tree: pause or ask would "
				    "act on nothing",
				    "kill goes with log or notify only");
	return ret;
}

static bool id_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return false;
	return true;
}

static int load_key(struct hx_ld *l, const char *k, yaml_node_t *v,
		    struct hx_alert_rule *a)
{
	const char *id;
	size_t cnt;
	int w, ret;

	if (!strcmp(k, "id")) {
		ret = hx_node_scalar(l, v, "id", &id);
		if (!ret && !id_ok(id))
			return hx_node_fail(l, v,
					    "letters, digits, '-', '_' and "
					    "'.', up to 64",
					    "invalid alert id");
		if (!ret && !(a->id = hx_arena_strdup(&l->p->arena, id)))
			return -ENOMEM;
		return ret;
	}
	if (!strcmp(k, "count"))
		return load_count(l, v, &a->count);
	if (!strcmp(k, "window"))
		return load_window(l, v, &a->window_ms);
	if (!strcmp(k, "free"))
		return load_free(l, v, a);
	if (!strcmp(k, "category")) {
		ret = hx_node_word(l, v, "category", rate_words, &w);
		for (unsigned c = 0; !ret && c < HX_CAT_COUNT; c++)
			if (!strcmp(hx_category_name((enum hx_category)c),
				    rate_words[w]))
				a->category = (enum hx_category)c;
		return ret;
	}
	if (!strcmp(k, "rules"))
		return load_strings(l, v, "rules", 256, &a->rules, &a->nrules);
	if (!strcmp(k, "action"))
		return load_actions(l, v, &a->actions);
	if (!strcmp(k, "command")) {
		ret = load_strings(l, v, "command", COMMAND_MAX, &a->command,
				   &cnt);
		/* from harness-exec's directory: the agent's project */
		if (!ret && strchr(a->command[0], '/') &&
		    a->command[0][0] != '/')
			return hx_node_fail(l, v,
					    "an absolute path, or a name "
					    "looked up on PATH",
					    "a relative program");
		return ret;
	}
	return 0; /* description: for people */
}

/* What a kind needs that the rule left out, and a command for notify
 * (and only then). */
static int check_rule(struct hx_ld *l, yaml_node_t *n,
		      const struct hx_alert_rule *a)
{
	char msg[160];

	if (!a->id)
		return hx_node_fail(l, n,
				    "every alert has an id: the alert "
				    "record names it",
				    "alert without id");
	if ((a->kind == HX_ALERT_DENIALS || a->kind == HX_ALERT_RATE ||
	     a->kind == HX_ALERT_SECRETS) &&
	    !a->count) {
		snprintf(msg, sizeof(msg), "%s needs a count",
			 hx_alert_kind_name(a->kind));
		return hx_node_fail(l, n, "count: N", msg);
	}
	if ((a->kind == HX_ALERT_RATE || a->kind == HX_ALERT_SECRETS) &&
	    !a->window_ms) {
		snprintf(msg, sizeof(msg), "%s needs a window",
			 hx_alert_kind_name(a->kind));
		return hx_node_fail(l, n, "window: 10s", msg);
	}
	if (a->kind == HX_ALERT_RATE && a->category == HX_CAT_COUNT)
		return hx_node_fail(l, n,
				    "category: exec, file_write, "
				    "net_connect...",
				    "rate needs a category");
	if (a->kind == HX_ALERT_DISK && !a->free_pct && !a->free_bytes)
		return hx_node_fail(l, n, "free: 5% (or 500M)",
				    "disk_low needs free");
	if (!(a->actions & HX_ACT_NOTIFY) != !a->command)
		return hx_node_fail(l, n,
				    "notify runs command: [PROGRAM, ARGS...], "
				    "with the alert as JSON on its stdin",
				    a->command ? "command without notify"
					       : "notify needs a command");
	return 0;
}

static int load_rule(struct hx_ld *l, yaml_node_t *n, struct hx_alert_rule *a)
{
	yaml_node_pair_t *pr;
	yaml_node_t *v;
	char msg[96];
	int ret = hx_node_keys(l, n, "an alert", rule_keys), w = -1;

	*a = (struct hx_alert_rule){.file = l->file,
				    .line = hx_node_pos(n).line,
				    .category = HX_CAT_COUNT};
	/* when: first, since it says which other keys are known */
	for (pr = n->data.mapping.pairs.start;
	     !ret && pr < n->data.mapping.pairs.top; pr++)
		if (!strcmp(hx_node_key(l, pr), "when") &&
		    !(ret = hx_node_get(l, pr->value, &v)))
			ret = hx_node_word(l, v, "when", kind_words, &w);
	if (!ret && w < 0)
		return hx_node_fail(l, n,
				    "when: consecutive_denials, rate, "
				    "sensitive_burst, checkpoint_failed or "
				    "disk_low",
				    "alert without when");
	a->kind = (enum hx_alert_kind)w;
	for (pr = n->data.mapping.pairs.start;
	     !ret && pr < n->data.mapping.pairs.top; pr++) {
		const char *k = hx_node_key(l, pr);

		if (!strcmp(k, "when"))
			continue;
		if (!kind_takes(a->kind, k)) {
			snprintf(msg, sizeof(msg), "%s takes no %s",
				 hx_alert_kind_name(a->kind), k);
			return hx_node_fail(
			    l, yaml_document_get_node(&l->doc, pr->key),
			    "docs/alerts.md lists the keys of each kind", msg);
		}
		if (!(ret = hx_node_get(l, pr->value, &v)))
			ret = load_key(l, k, v, a);
	}
	return ret ? ret : check_rule(l, n, a);
}

int hx_load_alerts(struct hx_ld *l, yaml_node_t *n)
{
	struct hx_policy *p = l->p;
	yaml_node_item_t *it;
	size_t cnt = hx_node_len(n), i = 0;
	yaml_node_t *item;
	int ret = 0;

	if (n->type != YAML_SEQUENCE_NODE)
		return hx_node_fail(l, n,
				    "a list of rules: - id: ... when: ...",
				    "alerts must be a list");
	if (cnt > HX_ALERTS_MAX)
		return hx_node_fail(l, n, NULL, "more than 32 alerts");
	p->alerts =
	    hx_arena_alloc(&p->arena, (cnt ? cnt : 1) * sizeof(*p->alerts));
	if (!p->alerts)
		return -ENOMEM;
	for (it = n->data.sequence.items.start;
	     !ret && it < n->data.sequence.items.top; it++, i++) {
		if ((ret = hx_node_get(l, *it, &item)))
			break;
		if (item->type != YAML_MAPPING_NODE)
			return hx_node_fail(l, item, NULL,
					    "an alert must be a mapping");
		ret = load_rule(l, item, &p->alerts[i]);
		for (size_t j = 0; !ret && j < i; j++)
			if (!strcmp(p->alerts[j].id, p->alerts[i].id))
				return hx_node_fail(l, item, NULL,
						    "duplicate alert id");
	}
	p->nalerts = ret ? 0 : cnt;
	return ret;
}
