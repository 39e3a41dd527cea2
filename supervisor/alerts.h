/* Alerts (the policy's alerts:, policy.h struct hx_alert_rule): the
 * session's records watched as they are written (coalesced ones too,
 * so a flood that the rate folds into audit_overflow still counts),
 * and the log's file system once a second. A condition that holds
 * writes an "alert" record and a line on stderr, then acts: ask is done
 * here (the next sensitive call is asked, hx_alerts_escalate); notify,
 * pause and kill by the function the session gives (run_alerts.c).
 *
 * After it fires a condition starts again from nothing: another alert
 * needs another count of calls (disk_low: the space must come back
 * first). Every function may be called from any thread; a NULL
 * hx_alerts is a session without alerts and each call is nothing. */
#ifndef HX_ALERTS_H
#define HX_ALERTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct json_t;
struct hx_policy;
struct hx_pipeline;
struct hx_alert_rule;
struct hx_alerts;

/* What fired. */
struct hx_alert_fired {
	const struct hx_alert_rule *rule;
	pid_t tree;	/* the process whose tree the calls came from, or 0 */
	pid_t pid;	/* the last call's process, or 0 */
	uint64_t value; /* what was counted (disk_low: bytes free) */
	char what[192]; /* for people: "25 denied calls in a row..." */
};

/* Runs an alert's notify, pause and kill: rec is its record (borrowed),
 * seq its number in the log (0: not written). Called without any lock
 * of the alerts, on the thread whose record made it fire. */
typedef void hx_alert_act_fn(void *arg, const struct hx_alert_fired *f,
			     struct json_t *rec, uint64_t seq);

/* The policy's rules (borrowed: p outlives the set); *out is NULL when
 * there are none. quiet: no stderr line. 0 or -ENOMEM. */
int hx_alerts_new(const struct hx_policy *p, bool quiet,
		  struct hx_alerts **out);
void hx_alerts_free(struct hx_alerts *a);
void hx_alerts_set_act(struct hx_alerts *a, hx_alert_act_fn *fn, void *arg);
/* The agent's first process: the tree a process whose parent is
 * harness-exec (an orphan, reparented to it) is counted in. */
void hx_alerts_set_root(struct hx_alerts *a, pid_t root);

/* A record of pl's log, appended or coalesced (rec borrowed). */
void hx_alerts_record(struct hx_pipeline *pl, struct json_t *rec);
/* The timer's: the log's file system (disk_low). */
void hx_alerts_tick(struct hx_pipeline *pl);

/* The rule of an ask action waiting for the next sensitive call ("alert:
 * ID", owned by the set), taken: once; NULL: none waits. */
const char *hx_alerts_escalate(struct hx_alerts *a);
/* Whether a call of category c, allowed, is one an ask action turns into
 * a question: what runs, writes or reaches the network, not reads. */
bool hx_alerts_sensitive(unsigned category);

/* disk_low's test, on free of size bytes. */
bool hx_alerts_disk_low(const struct hx_alert_rule *r, uint64_t free,
			uint64_t size);

#endif
