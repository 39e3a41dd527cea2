/* A session as OpenTelemetry traces (OTLP, protobuf): one trace, the
 * session's span from session_start to session_end, a span per process
 * under its parent's (from its first record to its exit, with its pid,
 * executable, command line and exit), and an event per refused call;
 * the resource names the session, its policy's hash and mode. */
#ifndef HX_OTLP_H
#define HX_OTLP_H

#include <stdbool.h>
#include <stddef.h>

struct hx_ptree;
struct hx_ptree_proc;
struct hx_pb;

/* A request with the spans of n processes of t (and the session's own
 * span when with_session), from the instrumentation scope_name: what an
 * exporter sends a batch at a time. 0 or -1. */
int hx_otlp_batch(const struct hx_ptree *t, struct hx_ptree_proc *const *procs,
		  size_t n, bool with_session, const char *scope_name,
		  struct hx_pb *out);

/* An ExportTraceServiceRequest for t into out. 0, or -1 (no
 * session_start, out of memory). */
int hx_otlp_traces(const struct hx_ptree *t, struct hx_pb *out);

/* base as the traces' URL: an http:// URL without a path gets
 * /v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT's rule). Returns out. */
char *hx_otlp_url(const char *base, char *out, size_t size);

#endif
