/* The end of a harness-mcp call: its tool_call record (one per call, in
 * the session's chain) and what the client is answered (MCP's
 * CallToolResult), filtered: text bounded with a marker where it was
 * cut, each secret replaced by its redaction tag (redact.h). Pure but
 * for the record's append. */
#ifndef HX_MCP_RESULT_H
#define HX_MCP_RESULT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "common/types.h"

struct json_t;
struct hx_pipeline;
struct hx_tool;
struct hx_decision;
struct hx_redact;

struct hx_mcp_end {
	const struct hx_tool *tool;
	const char *call_id;
	struct json_t *args;	     /* prepared (tools.h) */
	const struct hx_decision *d; /* the policy's word before */
	struct json_t *result;	     /* the worker's, or NULL */
	struct json_t *error;	     /* the worker's, or NULL */
	const char *outcome;	     /* "refused", "cancelled", ...; NULL:
				      * from result or error */
	struct json_t *refusals;     /* of its work, or NULL */
	const struct timespec *t0;   /* CLOCK_MONOTONIC */
	enum hx_mode mode;
	const struct hx_redact *redact; /* NULL: none */
	unsigned long max_output;	/* bytes of text; 0: 1 MiB */
	size_t leftovers; /* code_run: processes left running, killed */
};

/* The call's record. */
void hx_mcp_record_call(struct hx_pipeline *pl, const struct hx_mcp_end *e);
/* The client said who it is (initialize's params, borrowed; protocol:
 * the version agreed): an mcp_client record, its words redacted and
 * coalesced past the log's rate like every record a client causes. */
void hx_mcp_record_client(struct hx_pipeline *pl, struct json_t *params,
			  const char *protocol, bool http);
/* A call refused by its quota (coalesced past the log's rate). */
void hx_mcp_record_quota(struct hx_pipeline *pl, const struct hx_tool *t,
			 const char *what);
/* The CallToolResult (new reference), or NULL without memory. */
struct json_t *hx_mcp_result(const struct hx_mcp_end *e);
/* What a refusal record of the call's work says, for its result. */
struct json_t *hx_mcp_refusal_of(struct json_t *rec, int64_t seq);

#endif
