/* A session's metrics in Prometheus's text format (version 0.0.4): what
 * the audit log records, counted as it is appended (coalesced records
 * too), the calls the kernel layers saw, and the agent's resource use
 * sampled from /proc when they are read. Served by metrics_serve.h.
 *
 * Every function may be called from any thread; a NULL hx_metrics is a
 * session without metrics and each call is then nothing. */
#ifndef HX_METRICS_H
#define HX_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct json_t;
struct hx_audit;
struct hx_metrics;

/* What the kernel layers and the shim's server count themselves, read
 * when the metrics are (hx_metrics_set_source). */
struct hx_metrics_source {
	bool notify; /* the user-notify layer runs */
	unsigned long long notified, emulated, denied, continued, errors;
	unsigned long long gate_checked, gate_mismatches;
	unsigned long long shim_connections, shim_protocol_errors;
};
typedef void hx_metrics_source_fn(void *arg, struct hx_metrics_source *out);

/* A new set for session id (mode and the policy's hash as labels of
 * harness_session_info). 0 or -ENOMEM. */
int hx_metrics_new(const char *session, const char *mode,
		   const char *policy_sha, struct hx_metrics **out);
void hx_metrics_free(struct hx_metrics *m);

/* The agent's first process (its tree is sampled) and the log (its
 * size); either may come later than hx_metrics_new. */
void hx_metrics_set_tree(struct hx_metrics *m, pid_t root);
void hx_metrics_set_audit(struct hx_metrics *m, struct hx_audit *a);
/* The session has ended: harness_session_running 0 from now on. */
void hx_metrics_set_ended(struct hx_metrics *m);
/* fn(arg) fills the counts above when the metrics are read; NULL: no
 * longer (before what it reads is freed: it is called under the
 * metrics' lock, which this takes). */
void hx_metrics_set_source(struct hx_metrics *m, hx_metrics_source_fn *fn,
			   void *arg);

/* A record appended to the log, or folded into an audit_overflow
 * (coalesced): counted by its event, category, verdict and layer, its
 * decision latency and an answer's wait. rec is borrowed. */
void hx_metrics_record(struct hx_metrics *m, struct json_t *rec,
		       bool coalesced);
/* One fdatasync of the log took ns. */
void hx_metrics_sync(struct hx_metrics *m, uint64_t ns);

/* The exposition, NUL-terminated, into a new buffer (*len without the
 * NUL). 0 or -ENOMEM. */
int hx_metrics_render(struct hx_metrics *m, char **out, size_t *len);

#endif
