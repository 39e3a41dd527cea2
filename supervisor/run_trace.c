/* A session's traces sent as it runs (supervisor/export/exporter.h), as
 * run.c starts and ends them: the collector from --otlp-endpoint or the
 * standard OTEL_ variables, the exporter started once the agent is
 * forked, finished after session_end, which its last batch carries. */
#define _GNU_SOURCE
#include "supervisor/run_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/export/exporter.h"
#include "supervisor/say.h"

#define FINISH_MS 3000

/* The collector: the option, else the variables OpenTelemetry's SDKs
 * read (a traces URL as it is, a base URL with /v1/traces). */
static const char *endpoint(const struct run *r, char *buf, size_t size)
{
	const char *v;

	if (r->o->otlp_endpoint)
		return r->o->otlp_endpoint;
	if ((v = getenv("OTEL_TRACES_EXPORTER")) && !strcmp(v, "none"))
		return NULL;
	if ((v = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) && v[0])
		return v;
	if ((v = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) && v[0]) {
		snprintf(buf, size, "%s%s", v,
			 v[strlen(v) - 1] == '/' ? "v1/traces" : "/v1/traces");
		return buf;
	}
	return NULL;
}

void hx_run_start_trace(struct run *r)
{
	char buf[2048];
	const char *url = endpoint(r, buf, sizeof(buf));
	int e;

	if (!url)
		return;
	if (strncmp(url, "http://", 7)) {
		if (!r->o->quiet)
			fprintf(stderr,
				"harness-exec: warning: %s: only http:// "
				"collectors are reached; no traces are sent\n",
				url);
		return;
	}
	if ((e = hx_exporter_start(url, r->sess.audit_path, r->sess.id,
				   &r->exporter)) &&
	    !r->o->quiet)
		fprintf(stderr,
			"harness-exec: warning: traces cannot be sent: %s\n",
			strerror(-e));
}

void hx_run_finish_trace(struct run *r)
{
	struct hx_exporter_stats st;

	if (!r->exporter)
		return;
	hx_exporter_finish(r->exporter, FINISH_MS, &st);
	r->exporter = NULL;
	if (r->o->quiet || (!st.spans_dropped && !st.failures))
		return;
	fprintf(stderr,
		"harness-exec: traces: %llu spans sent in %llu batches, %llu "
		"dropped; %llu tries failed (last: %s)\n",
		st.spans_sent, st.batches, st.spans_dropped, st.failures,
		st.last_error[0] ? st.last_error : "-");
}
