/* A session as OpenTelemetry traces (OTLP, protobuf): one trace, the
 * session's span from session_start to session_end, a span per process
 * under its parent's (from its first record to its exit, with its pid,
 * executable, command line and exit), and an event per refused call;
 * the resource names the session, its policy's hash and mode. */
#ifndef HX_OTLP_H
#define HX_OTLP_H

struct hx_ptree;
struct hx_pb;

/* An ExportTraceServiceRequest for t into out. 0, or -1 (no
 * session_start, out of memory). */
int hx_otlp_traces(const struct hx_ptree *t, struct hx_pb *out);

#endif
