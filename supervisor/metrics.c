/* The session's counters and their exposition; see metrics.h. The
 * label sets are few and fixed by the harness (categories, verdicts,
 * layers, record kinds), so each family is a small table searched in
 * order; nothing the agent names (paths, hosts, programs) becomes a
 * label, which would let it grow the tables without bound; process
 * groups, which it makes, are bounded apart (metrics_groups.h). */
#define _GNU_SOURCE
#include "supervisor/metrics.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/audit.h"
#include "supervisor/metrics_groups.h"
#include "supervisor/metrics_tree.h"

#define LABELS_MAX 160
#define SERIES_MAX 96
#define HIST_MAX   48
#define BUCKETS	   14

struct series {
	char labels[LABELS_MAX];
	uint64_t n;
};

struct family {
	struct series s[SERIES_MAX];
	size_t n;
};

struct hist {
	char labels[LABELS_MAX];
	uint64_t
	    b[BUCKETS]; /* b[i]: observations <= bound[i] (not cumulated) */
	uint64_t count;
	double sum;
};

struct histfam {
	const double *bound; /* ascending, then +Inf */
	size_t nbound;
	struct hist h[HIST_MAX];
	size_t n;
};

/* Decisions take microseconds; an ask's answer, seconds; a sync, ms. */
static const double decision_s[] = {1e-5,   2.5e-5, 5e-5,   1e-4, 2.5e-4,
				    5e-4,   1e-3,   2.5e-3, 5e-3, 1e-2,
				    2.5e-2, 0.1,    1};
static const double answer_s[] = {0.5, 1, 2, 5, 10, 30, 60, 120, 300};
static const double sync_s[] = {1e-4, 5e-4, 1e-3, 5e-3, 1e-2,
				5e-2, 0.1,  0.5,  1};

struct hx_metrics {
	pthread_mutex_t lock;
	char session[72], mode[16], sha[72];
	struct timespec started;
	pid_t root;
	struct hx_audit *audit;
	bool ended;
	struct family events, records, answers;
	uint64_t coalesced, dropped;
	struct histfam latency, wait, sync;
	struct hx_pgroups *groups;
	hx_metrics_source_fn *source;
	void *source_arg;
	struct hx_metrics_source last; /* the source's, once it is gone */
};

int hx_metrics_new(const char *session, const char *mode,
		   const char *policy_sha, struct hx_metrics **out)
{
	struct hx_metrics *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m || hx_pgroups_new(&m->groups)) {
		free(m);
		return -ENOMEM;
	}
	pthread_mutex_init(&m->lock, NULL);
	snprintf(m->session, sizeof(m->session), "%s", session);
	snprintf(m->mode, sizeof(m->mode), "%s", mode);
	snprintf(m->sha, sizeof(m->sha), "%s", policy_sha ? policy_sha : "");
	clock_gettime(CLOCK_REALTIME, &m->started);
	m->latency = (struct histfam){.bound = decision_s, .nbound = 13};
	m->wait = (struct histfam){.bound = answer_s, .nbound = 9};
	m->sync = (struct histfam){.bound = sync_s, .nbound = 9};
	*out = m;
	return 0;
}

void hx_metrics_free(struct hx_metrics *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	hx_pgroups_free(m->groups);
	free(m);
}

void hx_metrics_set_tree(struct hx_metrics *m, pid_t root)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->root = root;
	pthread_mutex_unlock(&m->lock);
}

void hx_metrics_set_audit(struct hx_metrics *m, struct hx_audit *a)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->audit = a;
	pthread_mutex_unlock(&m->lock);
}

void hx_metrics_set_ended(struct hx_metrics *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->ended = true;
	pthread_mutex_unlock(&m->lock);
}

/* A label value as the text format writes it: \, " and newline
 * escaped. */
static void put_value(char *out, size_t size, size_t *at, const char *v)
{
	for (; *v && *at + 3 < size; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n')
			out[(*at)++] = '\\';
		out[(*at)++] = *v == '\n' ? 'n' : *v;
	}
	out[*at] = '\0';
}

/* `k1="v1",k2="v2"` from n names and the record's values of them
 * ("" when absent). */
static void labels_of(json_t *rec, const char *const *keys, size_t n, char *out,
		      size_t size)
{
	size_t at = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *v =
		    json_string_value(json_object_get(rec, keys[i]));
		int w = snprintf(out + at, size - at, "%s%s=\"", i ? "," : "",
				 keys[i]);

		if (w < 0 || (size_t)w >= size - at)
			return;
		at += (size_t)w;
		put_value(out, size, &at, v ? v : "");
		if (at + 2 >= size)
			return;
		out[at++] = '"';
		out[at] = '\0';
	}
}

static struct series *series_of(struct hx_metrics *m, struct family *f,
				const char *labels)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->s[i].labels, labels))
			return &f->s[i];
	if (f->n == SERIES_MAX) {
		m->dropped++;
		return NULL;
	}
	snprintf(f->s[f->n].labels, LABELS_MAX, "%s", labels);
	return &f->s[f->n++];
}

static void observe(struct hx_metrics *m, struct histfam *f, const char *labels,
		    double v)
{
	struct hist *h = NULL;
	size_t i;

	for (i = 0; i < f->n && !h; i++)
		if (!strcmp(f->h[i].labels, labels))
			h = &f->h[i];
	if (!h) {
		if (f->n == HIST_MAX) {
			m->dropped++;
			return;
		}
		h = &f->h[f->n++];
		snprintf(h->labels, LABELS_MAX, "%s", labels);
	}
	for (i = 0; i < f->nbound && v > f->bound[i]; i++)
		;
	h->b[i]++; /* i == nbound: +Inf */
	h->count++;
	h->sum += v;
}

void hx_metrics_record(struct hx_metrics *m, json_t *rec, bool coalesced)
{
	static const char *const ev_keys[] = {"category", "verdict", "layer"};
	static const char *const group_keys[] = {"category", "verdict"};
	static const char *const lat_keys[] = {"category", "layer"};
	static const char *const ans_keys[] = {"verdict", "by"};
	const char *event = json_string_value(json_object_get(rec, "event"));
	const char *cat = json_string_value(json_object_get(rec, "category"));
	pid_t pid = (pid_t)json_integer_value(json_object_get(rec, "pid"));
	json_t *lat = json_object_get(rec, "latency_ns");
	json_t *wait = json_object_get(rec, "latency_ms");
	char l[LABELS_MAX];
	struct series *s;

	if (!m || !rec)
		return;
	pthread_mutex_lock(&m->lock);
	m->coalesced += coalesced;
	labels_of(rec, (const char *const[]){"event"}, 1, l, sizeof(l));
	if ((s = series_of(m, &m->records, l)))
		s->n++;
	if (event && !strcmp(event, "process_start"))
		hx_pgroups_seen(m->groups, pid);
	if (event && !strcmp(event, "ask_answer")) {
		labels_of(rec, ans_keys, 2, l, sizeof(l));
		if ((s = series_of(m, &m->answers, l)))
			s->n++;
		if (json_is_number(wait))
			observe(m, &m->wait, "", json_number_value(wait) / 1e3);
	} else if (json_object_get(rec, "verdict")) {
		labels_of(rec, ev_keys, 3, l, sizeof(l));
		if ((s = series_of(m, &m->events, l)))
			s->n++;
		/* an exec's record is made before it, after a setsid */
		if (cat && !strcmp(cat, "exec"))
			hx_pgroups_seen(m->groups, pid);
		labels_of(rec, group_keys, 2, l, sizeof(l));
		if (!hx_pgroups_count(m->groups, pid, l))
			m->dropped++;
		if (json_is_integer(lat)) {
			labels_of(rec, lat_keys, 2, l, sizeof(l));
			observe(m, &m->latency, l,
				(double)json_integer_value(lat) / 1e9);
		}
	}
	pthread_mutex_unlock(&m->lock);
}

void hx_metrics_set_source(struct hx_metrics *m, hx_metrics_source_fn *fn,
			   void *arg)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	if (m->source && !fn) /* its last word stays */
		m->source(m->source_arg, &m->last);
	m->source = fn;
	m->source_arg = arg;
	pthread_mutex_unlock(&m->lock);
}

void hx_metrics_sync(struct hx_metrics *m, uint64_t ns)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	observe(m, &m->sync, "", (double)ns / 1e9);
	pthread_mutex_unlock(&m->lock);
}

/* ---- exposition ---- */

struct out {
	FILE *f;
	const char *session; /* its label, escaped */
};

static void head(struct out *o, const char *name, const char *type,
		 const char *help)
{
	fprintf(o->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{session="...",labels} v */
static void sample(struct out *o, const char *name, const char *labels,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void sample(struct out *o, const char *name, const char *labels,
		   const char *fmt, ...)
{
	va_list ap;

	fprintf(o->f, "%s{session=\"%s\"%s%s} ", name, o->session,
		labels && labels[0] ? "," : "", labels ? labels : "");
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
	fputc('\n', o->f);
}

static void family(struct out *o, const char *name, const char *help,
		   const struct family *f)
{
	head(o, name, "counter", help);
	for (size_t i = 0; i < f->n; i++)
		sample(o, name, f->s[i].labels, "%llu",
		       (unsigned long long)f->s[i].n);
}

static void histograms(struct out *o, const char *name, const char *help,
		       const struct histfam *f)
{
	char n[96], l[LABELS_MAX + 32];

	head(o, name, "histogram", help);
	for (size_t i = 0; i < f->n; i++) {
		const struct hist *h = &f->h[i];
		const char *sep = h->labels[0] ? "," : "";
		uint64_t cum = 0;

		snprintf(n, sizeof(n), "%s_bucket", name);
		for (size_t k = 0; k <= f->nbound; k++) {
			cum += h->b[k];
			if (k < f->nbound)
				snprintf(l, sizeof(l), "%s%sle=\"%g\"",
					 h->labels, sep, f->bound[k]);
			else
				snprintf(l, sizeof(l), "%s%sle=\"+Inf\"",
					 h->labels, sep);
			sample(o, n, l, "%llu", (unsigned long long)cum);
		}
		snprintf(n, sizeof(n), "%s_sum", name);
		sample(o, n, h->labels, "%.9g", h->sum);
		snprintf(n, sizeof(n), "%s_count", name);
		sample(o, n, h->labels, "%llu", (unsigned long long)h->count);
	}
}

static void group_sample(void *arg, pid_t pgid, const char *labels, uint64_t n)
{
	char l[LABELS_MAX + 32];

	if (pgid)
		snprintf(l, sizeof(l), "pgid=\"%d\",%s", (int)pgid, labels);
	else
		snprintf(l, sizeof(l), "pgid=\"other\",%s", labels);
	sample(arg, "harness_process_group_events_total", l, "%llu",
	       (unsigned long long)n);
}

static void gauge(struct out *o, const char *name, const char *type,
		  const char *help, double v)
{
	head(o, name, type, help);
	if (v == (double)(uint64_t)v)
		sample(o, name, NULL, "%llu", (unsigned long long)v);
	else
		sample(o, name, NULL, "%.9g", v);
}

static void render_groups(struct out *o, const struct hx_tree_usage *u)
{
	static const char *const name[] = {
	    "harness_process_group_processes",
	    "harness_process_group_cpu_seconds",
	    "harness_process_group_resident_memory_bytes"};
	static const char *const help[] = {
	    "Living processes of the agent's, by process group.",
	    ("CPU time (user and system) of a group's living processes and "
	     "of the children they waited for."),
	    "Resident memory of a group's living processes."};
	char l[32];

	for (int k = 0; k < 3; k++) {
		head(o, name[k], "gauge", help[k]);
		for (size_t i = 0; i < u->ngroups; i++) {
			const struct hx_group_usage *g = &u->groups[i];

			snprintf(l, sizeof(l), "pgid=\"%d\"", (int)g->pgid);
			if (k == 0)
				sample(o, name[k], l, "%zu", g->processes);
			else if (k == 1)
				sample(o, name[k], l, "%.2f", g->cpu_seconds);
			else
				sample(o, name[k], l, "%llu",
				       (unsigned long long)g->rss_bytes);
		}
		if (k == 0 && u->groups_left_out)
			sample(o, name[k], "pgid=\"other\"", "%zu",
			       u->groups_left_out);
	}
}

static void render_usage(struct out *o, pid_t root)
{
	struct hx_tree_usage u;
	long rss_pages = 0;
	FILE *statm;

	hx_metrics_tree_usage(root, &u);
	gauge(o, "harness_agent_processes", "gauge",
	      "Processes of the agent's tree now.", (double)u.processes);
	gauge(o, "harness_agent_cpu_seconds_total", "counter",
	      "CPU time (user and system) of the agent's processes, living "
	      "and ended.",
	      u.cpu_seconds);
	gauge(o, "harness_agent_resident_memory_bytes", "gauge",
	      "Resident memory of the agent's processes now.",
	      (double)u.rss_bytes);
	gauge(o, "harness_agent_open_fds", "gauge",
	      "Open file descriptors of the agent's processes now.",
	      (double)u.open_fds);
	render_groups(o, &u);
	gauge(o, "harness_supervisor_cpu_seconds_total", "counter",
	      "CPU time of harness-exec itself.",
	      hx_metrics_cpu_seconds(RUSAGE_SELF));
	statm = fopen("/proc/self/statm", "re");
	if (statm) {
		if (fscanf(statm, "%*s %ld", &rss_pages) != 1)
			rss_pages = 0;
		fclose(statm);
	}
	gauge(o, "harness_supervisor_resident_memory_bytes", "gauge",
	      "Resident memory of harness-exec itself.",
	      (double)rss_pages * (double)sysconf(_SC_PAGESIZE));
}

static void render_source(struct hx_metrics *m, struct out *o)
{
	static const char *const outcome[] = {"emulated", "denied", "continued",
					      "error"};
	struct hx_metrics_source k = m->last;
	unsigned long long by[4];
	char l[32];

	if (m->source)
		m->source(m->source_arg, &k);
	gauge(o, "harness_notified_syscalls_total", "counter",
	      "System calls the seccomp user-notify layer received.",
	      (double)k.notified);
	head(o, "harness_notified_syscall_outcomes_total", "counter",
	     "What became of them: emulated by the supervisor, denied, "
	     "continued to the kernel, or failed.");
	by[0] = k.emulated;
	by[1] = k.denied;
	by[2] = k.continued;
	by[3] = k.errors;
	for (size_t i = 0; k.notify && i < 4; i++) {
		snprintf(l, sizeof(l), "outcome=\"%s\"", outcome[i]);
		sample(o, "harness_notified_syscall_outcomes_total", l, "%llu",
		       by[i]);
	}
	gauge(o, "harness_exec_gate_checks_total", "counter",
	      "Execs the exec gate checked.", (double)k.gate_checked);
	gauge(o, "harness_exec_gate_mismatches_total", "counter",
	      "Execs whose image was not the program approved (killed).",
	      (double)k.gate_mismatches);
	gauge(o, "harness_shim_connections_total", "counter",
	      "Connections of the shim in the agent's processes.",
	      (double)k.shim_connections);
	gauge(o, "harness_shim_protocol_errors_total", "counter",
	      "Shim connections closed for a malformed message.",
	      (double)k.shim_protocol_errors);
}

static void render_locked(struct hx_metrics *m, struct out *o)
{
	char info[LABELS_MAX * 2];
	size_t at = 0;

	info[0] = '\0';
	at = (size_t)snprintf(info, sizeof(info), "mode=\"");
	put_value(info, sizeof(info), &at, m->mode);
	at += (size_t)snprintf(info + at, sizeof(info) - at,
			       "\",policy_sha256=\"%s\"", m->sha);
	head(o, "harness_session_info", "gauge",
	     "The session, its mode and its policy's hash (value 1).");
	sample(o, "harness_session_info", info, "1");
	head(o, "harness_session_start_time_seconds", "gauge",
	     "When the session started, in seconds since the epoch.");
	sample(o, "harness_session_start_time_seconds", NULL, "%lld.%03ld",
	       (long long)m->started.tv_sec, m->started.tv_nsec / 1000000);
	gauge(o, "harness_session_running", "gauge",
	      "1 while the agent runs, 0 once the session has ended.",
	      m->ended ? 0 : 1);
	family(o, "harness_events_total",
	       "Decisions recorded, by category, verdict and layer (those "
	       "coalesced under the log's rate too).",
	       &m->events);
	histograms(o, "harness_decision_latency_seconds",
		   "Time from a request to its decision, by category and "
		   "layer.",
		   &m->latency);
	head(o, "harness_process_group_events_total", "counter",
	     "Decisions recorded, by the process group of the process that "
	     "made the call (\"other\": groups no longer counted apart, or "
	     "unknown), category and verdict.");
	hx_pgroups_each(m->groups, group_sample, o);
	family(o, "harness_audit_records_total",
	       "Records for the audit log, by event (those coalesced too).",
	       &m->records);
	gauge(o, "harness_audit_records_coalesced_total", "counter",
	      "Records folded into audit_overflow records by the log's rate.",
	      (double)m->coalesced);
	gauge(o, "harness_audit_bytes_total", "counter",
	      "Bytes this session appended to its audit log.",
	      m->audit ? (double)hx_audit_written(m->audit) : 0);
	histograms(o, "harness_audit_sync_seconds",
		   "Time of each fdatasync of the audit log.", &m->sync);
	family(o, "harness_asks_answered_total",
	       "Questions answered, by verdict and by whom.", &m->answers);
	histograms(o, "harness_ask_wait_seconds",
		   "Time a question waited for its answer.", &m->wait);
	render_source(m, o);
	gauge(o, "harness_metrics_series_dropped_total", "counter",
	      "Observations not counted because a family's table was full.",
	      (double)m->dropped);
}

int hx_metrics_render(struct hx_metrics *m, char **out, size_t *len)
{
	struct out o;
	char session[LABELS_MAX];
	size_t at = 0;
	pid_t root;

	*out = NULL;
	*len = 0;
	o.f = open_memstream(out, len);
	if (!o.f)
		return -ENOMEM;
	pthread_mutex_lock(&m->lock);
	put_value(session, sizeof(session), &at, m->session);
	o.session = session;
	render_locked(m, &o);
	root = m->root;
	pthread_mutex_unlock(&m->lock);
	/* /proc is read without the lock: the records go on meanwhile. */
	render_usage(&o, root);
	if (fclose(o.f) || !*out) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}
