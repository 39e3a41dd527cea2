/* Alerts (policy/load_alerts.c, supervisor/alerts.h): the alerts: section
 * loaded and its mistakes named at their line and column; the engine fed
 * records as the pipeline appends them, into a real audit log: streaks
 * per process tree, windows, a condition that starts again once it has
 * fired, the ask action taken once, disk_low's arithmetic. */
#define _GNU_SOURCE
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy.h"
#include "supervisor/alerts.h"
#include "supervisor/audit.h"
#include "supervisor/pipeline.h"
#include "tests/unit/check_main.h"

static const struct hx_policy_vars vars = {.home = "/home/u", .cwd = "/p"};

static struct hx_policy *load(const char *yaml)
{
	struct hx_policy_error err;
	struct hx_policy *p = NULL;
	char buf[512];
	int r = hx_policy_load_buffer("t.yaml", yaml, strlen(yaml), &vars, &p,
				      &err);

	hx_policy_error_format(&err, buf, sizeof(buf));
	ck_assert_msg(!r, "%s: %s", yaml, buf);
	return p;
}

START_TEST(rules_loaded)
{
	struct hx_policy *p = load(
	    "alerts:\n"
	    "  - id: a\n    when: consecutive_denials\n    count: 3\n"
	    "  - id: b\n    when: rate\n    category: net_connect\n"
	    "    count: 10\n    window: 500ms\n    action: [notify, pause]\n"
	    "    command: [logger, -t, h]\n"
	    "  - id: c\n    when: sensitive_burst\n    count: 2\n"
	    "    window: 2m\n    rules: [ssh, 'cloud-*']\n    action: ask\n"
	    "  - id: d\n    when: disk_low\n    free: 5%\n    action: kill\n"
	    "  - id: e\n    when: disk_low\n    free: 2G\n");
	size_t n;
	const struct hx_alert_rule *r = hx_policy_alerts(p, &n);

	ck_assert_uint_eq(n, 5);
	ck_assert_str_eq(r[0].id, "a");
	ck_assert_int_eq(r[0].kind, HX_ALERT_DENIALS);
	ck_assert_uint_eq(r[0].count, 3);
	ck_assert_uint_eq(r[0].line, 2);
	ck_assert_uint_eq(r[0].actions, 0);
	ck_assert_int_eq(r[1].category, HX_CAT_NET_CONNECT);
	ck_assert_uint_eq(r[1].window_ms, 500);
	ck_assert_uint_eq(r[1].actions, HX_ACT_NOTIFY | HX_ACT_PAUSE);
	ck_assert_str_eq(r[1].command[2], "h");
	ck_assert_ptr_null(r[1].command[3]);
	ck_assert_uint_eq(r[2].window_ms, 120000);
	ck_assert_uint_eq(r[2].nrules, 2);
	ck_assert_uint_eq(r[2].actions, HX_ACT_ASK);
	ck_assert_uint_eq(r[3].free_pct, 5);
	ck_assert_uint_eq(r[4].free_bytes, 2ull << 30);
	hx_policy_free(p);
}
END_TEST

struct ecase {
	const char *yaml;
	unsigned line, column;
	const char *message, *hint;
};

#define A "alerts:\n  - id: x\n"
static const struct ecase ecases[] = {
    {"alerts: {}\n", 1, 9, "alerts must be a list", NULL},
    {A "    when: often\n", 3, 11, "invalid when", "consecutive_denials"},
    {A "    count: 3\n", 2, 5, "alert without when", NULL},
    {A "    when: rate\n    window: 1s\n    category: exec\n", 2, 5,
     "rate needs a count", "count"},
    {A "    when: rate\n    count: 5\n    category: exec\n", 2, 5,
     "rate needs a window", NULL},
    {A "    when: rate\n    count: 5\n    window: 1s\n", 2, 5,
     "rate needs a category", NULL},
    {A "    when: rate\n    count: 5\n    window: 1s\n    category: x\n", 6, 15,
     "invalid category", "file_write"},
    {A "    when: consecutive_denials\n    count: 0\n", 4, 12,
     "invalid count '0'", "1 to 1000000"},
    {A "    when: consecutive_denials\n    count: 3\n    window: 1s\n", 5, 5,
     "consecutive_denials takes no window", NULL},
    {A "    when: sensitive_burst\n    count: 3\n    window: 10 s\n", 5, 13,
     "invalid window", "10s"},
    {A "    when: sensitive_burst\n    count: 3\n    window: 2d\n", 5, 13,
     "invalid window", NULL},
    {A "    when: disk_low\n    free: 0%\n", 4, 11, "invalid free", "5%"},
    {A "    when: disk_low\n", 2, 5, "disk_low needs free", NULL},
    {A "    when: checkpoint_failed\n    action: notify\n", 2, 5,
     "notify needs a command", "stdin"},
    {A "    when: checkpoint_failed\n    command: [x]\n", 2, 5,
     "command without notify", NULL},
    {A "    when: checkpoint_failed\n    action: [kill, pause]\n", 4, 13,
     "kill goes with log or notify only", NULL},
    {A "    when: checkpoint_failed\n    action: stop\n", 4, 13,
     "invalid action", "pause"},
    {A "    when: checkpoint_failed\n    sound: loud\n", 4, 5,
     "unknown key 'sound'", NULL},
    {"alerts:\n  - when: checkpoint_failed\n", 2, 5, "alert without id", NULL},
    {"alerts:\n  - id: 'a b'\n    when: checkpoint_failed\n", 2, 10,
     "invalid alert id", NULL},
    {A "    when: checkpoint_failed\n  - id: x\n    when: disk_low\n"
       "    free: 1%\n",
     4, 5, "duplicate alert id", NULL},
    {"alerts:\n  - 5\n", 2, 5, "an alert must be a mapping", NULL},
    {A "    when: disk_low\n    free: 1%\n    action: notify\n"
       "    command: [bin/hook]\n",
     6, 14, "a relative program", "PATH"},
};

START_TEST(load_errors)
{
	const struct ecase *c = &ecases[_i];
	struct hx_policy_error err;
	struct hx_policy *p = NULL;
	char buf[1024];
	int ret = hx_policy_load_buffer("t.yaml", c->yaml, strlen(c->yaml),
					&vars, &p, &err);

	ck_assert_msg(ret == -22, "%s: loaded (ret %d)", c->yaml, ret);
	hx_policy_error_format(&err, buf, sizeof(buf));
	ck_assert_msg(err.line == c->line && err.column == c->column,
		      "%s: got %s, want line %u column %u", c->yaml, buf,
		      c->line, c->column);
	ck_assert_msg(strstr(err.message, c->message), "%s: got %s", c->yaml,
		      buf);
	if (c->hint)
		ck_assert_msg(strstr(err.hint, c->hint), "%s: got %s", c->yaml,
			      buf);
}
END_TEST

/* A pipeline with only what records need: a log in a fresh directory. */
struct rig {
	char dir[64], log[96];
	struct hx_policy *p;
	struct hx_pipeline pl;
};

static void rig_open(struct rig *g, const char *yaml)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->dir, sizeof(g->dir), "/tmp/hx-alerts-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g->dir));
	snprintf(g->log, sizeof(g->log), "%s/audit.jsonl", g->dir);
	g->p = load(yaml);
	ck_assert_int_eq(hx_audit_open(g->log, &g->pl.audit), 0);
	g->pl.policy = g->p;
	g->pl.session = "s";
	ck_assert_int_eq(hx_alerts_new(g->p, true, &g->pl.alerts), 0);
	ck_assert_ptr_nonnull(g->pl.alerts);
	g->pl.watch = hx_alerts_record; /* as run_alerts.c */
}

static void rig_close(struct rig *g)
{
	hx_alerts_free(g->pl.alerts);
	hx_audit_close(g->pl.audit);
	hx_policy_free(g->p);
	unlink(g->log);
	rmdir(g->dir);
}

/* A decision of pid (child of ppid) as the pipeline records it. */
static void call(struct rig *g, pid_t pid, pid_t ppid, const char *cat,
		 const char *verdict, const char *rule)
{
	json_t *r = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:s}", "event",
			      "open", "pid", (json_int_t)pid, "ppid",
			      (json_int_t)ppid, "category", cat, "verdict",
			      verdict, "layer", "shim", "rule", rule);

	hx_alerts_record(&g->pl, r);
	json_decref(r);
}

/* The alert records of the log, as an array (the caller decrefs). */
static json_t *alerts(struct rig *g)
{
	json_t *out = json_array();
	char line[4096];
	FILE *f = fopen(g->log, "r");

	while (f && fgets(line, sizeof(line), f)) {
		json_t *r = json_loads(line, 0, NULL);

		if (r && !strcmp(json_string_value(json_object_get(r, "event")),
				 "alert"))
			json_array_append(out, r);
		json_decref(r);
	}
	if (f)
		fclose(f);
	return out;
}

static json_int_t int_of(json_t *a, size_t i, const char *k)
{
	return json_integer_value(json_object_get(json_array_get(a, i), k));
}

/* Pids far from getpid() and from one another's slot: 1000 + n. */
#define P(n) ((pid_t)(1000000 + (n)))

START_TEST(streak_per_tree)
{
	struct rig g;
	json_t *a;

	/* pause: an acting rule, never held back (no act here) */
	rig_open(&g, "alerts:\n  - id: s\n    when: consecutive_denials\n"
		     "    count: 3\n    action: pause\n");
	/* two children of P(1), one denial each, then one more: the tree
	 * of P(1) has 3 in a row; no child has */
	call(&g, P(2), P(1), "exec", "deny", "r");
	call(&g, P(3), P(1), "exec", "deny", "r");
	a = alerts(&g);
	ck_assert_uint_eq(json_array_size(a), 0);
	json_decref(a);
	call(&g, P(4), P(1), "exec", "deny", "r");
	a = alerts(&g);
	ck_assert_uint_eq(json_array_size(a), 1);
	ck_assert_int_eq(int_of(a, 0, "tree"), P(1));
	ck_assert_int_eq(int_of(a, 0, "last_pid"), P(4));
	json_decref(a);
	/* started again: two more do not fire; an allowed call in the tree
	 * breaks the streak */
	call(&g, P(5), P(1), "exec", "deny", "r");
	call(&g, P(6), P(1), "exec", "deny", "r");
	call(&g, P(7), P(1), "exec", "allow", "r");
	call(&g, P(8), P(1), "exec", "deny", "r");
	a = alerts(&g);
	ck_assert_uint_eq(json_array_size(a), 1);
	json_decref(a);
	/* one process's own three: its tree is the deepest that fires */
	call(&g, P(9), P(1), "file_read", "deny", "r");
	call(&g, P(9), P(1), "file_read", "deny", "r");
	a = alerts(&g);
	ck_assert_uint_eq(json_array_size(a), 2);
	ck_assert_int_eq(int_of(a, 1, "tree"), P(1));
	json_decref(a);
	call(&g, P(9), P(1), "file_read", "deny", "r");
	call(&g, P(9), P(1), "file_read", "deny", "r");
	call(&g, P(9), P(1), "file_read", "deny", "r");
	a = alerts(&g);
	ck_assert_uint_eq(json_array_size(a), 3);
	ck_assert_int_eq(int_of(a, 2, "tree"), P(9));
	json_decref(a);
	rig_close(&g);
}
END_TEST

START_TEST(windows_and_ask)
{
	struct rig g;
	json_t *a;

	rig_open(&g, "alerts:\n"
		     "  - id: w\n    when: rate\n    category: file_write\n"
		     "    count: 4\n    window: 1h\n    action: ask\n"
		     "  - id: k\n    when: sensitive_burst\n    count: 2\n"
		     "    window: 1h\n    rules: ['ssh*']\n");
	ck_assert_ptr_null(hx_alerts_escalate(g.pl.alerts));
	for (int i = 0; i < 3; i++)
		call(&g, P(1), P(0), "file_write", "allow", "x");
	call(&g, P(1), P(0), "file_read", "allow", "x");  /* not counted */
	call(&g, P(1), P(0), "file_read", "deny", "aws"); /* not listed */
	call(&g, P(1), P(0), "file_read", "deny", "ssh");
	a = alerts(&g);
	ck_assert_uint_eq(json_array_size(a), 0);
	json_decref(a);
	call(&g, P(1), P(0), "file_write", "deny", "x");
	call(&g, P(1), P(0), "file_read", "deny", "ssh-agent");
	a = alerts(&g);
	ck_assert_uint_eq(json_array_size(a), 2);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_array_get(a, 0), "alert")),
	    "w");
	ck_assert_int_eq(int_of(a, 0, "value"), 4);
	json_decref(a);
	ck_assert_str_eq(hx_alerts_escalate(g.pl.alerts), "alert:w");
	ck_assert_ptr_null(hx_alerts_escalate(g.pl.alerts)); /* once */
	/* k only records: again within a second is held back, and said
	 * with the next */
	call(&g, P(1), P(0), "file_read", "deny", "ssh");
	call(&g, P(1), P(0), "file_read", "deny", "ssh");
	a = alerts(&g);
	ck_assert_uint_eq(json_array_size(a), 2);
	json_decref(a);
	usleep(1100 * 1000);
	call(&g, P(1), P(0), "file_read", "deny", "ssh");
	call(&g, P(1), P(0), "file_read", "deny", "ssh");
	a = alerts(&g);
	ck_assert_uint_eq(json_array_size(a), 3);
	ck_assert_int_eq(int_of(a, 2, "suppressed"), 1);
	json_decref(a);
	ck_assert(hx_alerts_sensitive(HX_CAT_FILE_WRITE));
	ck_assert(!hx_alerts_sensitive(HX_CAT_FILE_READ));
	rig_close(&g);
}
END_TEST

START_TEST(disk_low_arithmetic)
{
	struct hx_alert_rule pct = {.free_pct = 5}, bytes = {.free_bytes = 100};

	ck_assert(hx_alerts_disk_low(&pct, 4, 100));
	ck_assert(!hx_alerts_disk_low(&pct, 5, 100));
	/* no overflow on an exabyte file system */
	ck_assert(!hx_alerts_disk_low(&pct, 1ull << 60, (1ull << 62)));
	ck_assert(hx_alerts_disk_low(&pct, (1ull << 62) / 21, 1ull << 62));
	ck_assert(!hx_alerts_disk_low(&pct, 0, 0)); /* no size: no share */
	ck_assert(hx_alerts_disk_low(&bytes, 99, 1000));
	ck_assert(!hx_alerts_disk_low(&bytes, 100, 1000));
}
END_TEST

/* Orphans (their parent is harness-exec now) are of the agent's first
 * process's tree; a folded storm (repeated: N) is N calls. */
START_TEST(orphans_and_storms)
{
	struct rig g;
	json_t *a, *r;

	rig_open(&g, "alerts:\n  - id: s\n    when: consecutive_denials\n"
		     "    count: 3\n    action: pause\n");
	hx_alerts_set_root(g.pl.alerts, P(1));
	call(&g, P(20), getpid(), "exec", "deny", "r");
	call(&g, P(21), getpid(), "exec", "deny", "r");
	call(&g, P(22), getpid(), "exec", "deny", "r");
	a = alerts(&g);
	ck_assert_uint_eq(json_array_size(a), 1);
	ck_assert_int_eq(int_of(a, 0, "tree"), P(1));
	json_decref(a);
	/* harness-exec's own records are no call of the tree */
	call(&g, getpid(), getppid(), "exec", "allow", "r");
	call(&g, P(23), getpid(), "exec", "deny", "r");
	r = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:I}", "event",
		      "openat", "pid", (json_int_t)P(23), "ppid",
		      (json_int_t)getpid(), "category", "file_read", "verdict",
		      "deny", "layer", "mask", "rule", "r", "repeated",
		      (json_int_t)2);
	hx_alerts_record(&g.pl, r);
	json_decref(r);
	a = alerts(&g);
	ck_assert_uint_eq(json_array_size(a), 2);
	ck_assert_int_eq(int_of(a, 1, "value"), 3);
	json_decref(a);
	rig_close(&g);
}
END_TEST

static Suite *alerts_suite(void)
{
	Suite *s = suite_create("alerts");
	TCase *tc = tcase_create("alerts");

	tcase_add_test(tc, rules_loaded);
	tcase_add_loop_test(tc, load_errors, 0,
			    (int)(sizeof(ecases) / sizeof(ecases[0])));
	tcase_add_test(tc, streak_per_tree);
	tcase_add_test(tc, orphans_and_storms);
	tcase_add_test(tc, windows_and_ask);
	tcase_add_test(tc, disk_low_arithmetic);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(alerts_suite)
