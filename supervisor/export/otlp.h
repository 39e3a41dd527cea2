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

/* A collector refuses a request past its size (the OpenTelemetry
 * Collector's HTTP receiver: 20 MiB; its gRPC one: 4 MiB), and the
 * agent's argv make spans of 64 KiB: each request is kept within this. */
#define HX_OTLP_BATCH_BYTES (1u << 20)

/* hx_otlp_batch of the longest of procs' first n, first k, halving, that
 * is within max bytes (one span alone whatever its size), the session's
 * span only with all n; *taken = k. 0 or -1. */
int hx_otlp_batch_fit(const struct hx_ptree *t,
		      struct hx_ptree_proc *const *procs, size_t n,
		      bool with_session, const char *scope_name, size_t max,
		      struct hx_pb *out, size_t *taken);

/* An ExportTraceServiceRequest for t into out. 0, or -1 (no
 * session_start, out of memory). */
int hx_otlp_traces(const struct hx_ptree *t, struct hx_pb *out);

/* base as the traces' URL: an http:// URL without a path gets
 * /v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT's rule). Returns out. */
char *hx_otlp_url(const char *base, char *out, size_t size);

#endif
