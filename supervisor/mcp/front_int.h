/* harness-mcp's front, shared by its files: front.c (the client's
 * JSON-RPC), rpc.c (what it is sent), calls.c (the calls: the worker's
 * protocol, linking, records), info.c (session_info). Internal. */
#ifndef HX_MCP_FRONT_INT_H
#define HX_MCP_FRONT_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "policy/policy.h"
#include "supervisor/mcp/front.h"
#include "supervisor/mcp/lines.h"
#include "supervisor/mcp/tools.h"
#include "supervisor/proc.h"
#include "supervisor/server.h"

struct json_t;
struct hx_mcp;

#define HX_MCP_CALLS	64 /* calls at once, all tools */
#define HX_MCP_REFUSALS 16 /* of one call's, kept for its result */
#define HX_MCP_CHOICES	32 /* of an ask_user (its schema: 20) */
#define HX_MCP_TOOLS	16
#define HX_MCP_LINKED	1024
#define HX_MCP_ENDED	64 /* code_runs ended, remembered for linking */

enum hx_call_state {
	HX_CALL_FREE = 0,
	HX_CALL_NEW,	 /* taken, being decided */
	HX_CALL_QUEUED,	 /* waits for the worker */
	HX_CALL_SENT,	 /* the worker has it */
	HX_CALL_RUNNING, /* code_run: its process started */
};

struct hx_call {
	enum hx_call_state state;
	struct json_t *rpc_id; /* the client's id */
	const struct hx_tool *tool;
	struct json_t *args;  /* prepared (tools.h) */
	struct json_t *wargs; /* what the worker is given */
	struct json_t *token; /* progressToken, or NULL */
	unsigned long n;      /* ours, the worker's id */
	char id[24];	      /* "mcp-N": call_id in every record */
	pid_t pid;	      /* code_run's process */
	int pidfd;	      /* pins it (hx_proc_pin), when pid > 0 */
	struct hx_proc proc;  /* its number and start time */
	struct timespec t0;
	struct hx_decision d; /* the policy's word before it ran */
	bool cancelled;	      /* no reply: the client's gone or asked */
	bool killed;	      /* its processes killed by the front */
	double progress;
	struct json_t *refusals; /* the kernel's and shim's, of its work */
	/* ask_user through the session's approvals (the client cannot
	 * elicit): its question there, while it waits, or 0 */
	unsigned ask;
	struct hx_mcp *m; /* for the approvals' answer */
};

struct hx_quota {
	uint64_t *stamps; /* the last per_minute calls' times, a ring */
	size_t n, at;
	unsigned per_minute, concurrent, running;
};

struct hx_mcp {
	struct hx_pipeline *pl;
	struct hx_server *srv;
	struct hx_mcp_opts o;
	char project[PATH_MAX];
	struct hx_lines cl, wk;	  /* the client's stdio, the worker's socket */
	struct hx_mcp_http *http; /* the client over HTTP instead, or NULL */
	struct hx_source in_src, out_src, wk_src;
	struct hx_source grace; /* a timerfd once the client is gone */
	bool out_watched, wk_out_watched;
	bool initialized, client_gone, worker_gone, told_exit;
	const char *lost;  /* the client cannot be written to: why */
	bool worker_ready; /* it said hello: its own start is behind it */
	bool elicitation;  /* the client can ask its user (ask_user) */
	struct hx_call calls[HX_MCP_CALLS];
	unsigned long next;
	int file_busy;	  /* the file call the worker has, or -1 */
	int run_starting; /* the code_run sent, not started yet, or -1 */
	struct hx_quota q[HX_MCP_TOOLS];
	/* the call each process was last linked to (hx_mcp_call_of) */
	struct hx_mcp_link {
		pid_t pid;
		unsigned long long start; /* its start time: a pid reused */
		char id[24];		  /* is another process */
	} linked[HX_MCP_LINKED];
	/* the code_runs that ended, by their first process: the records
	 * of what they left (killed at their end) are still theirs */
	struct {
		pid_t pid;
		char id[24];
	} ended[HX_MCP_ENDED];
	size_t ended_at;
	void (*prev_observe)(void *arg, struct json_t *rec, uint64_t seq);
	void *prev_arg;
};

/* ---- rpc.c ---- */
/* Sends a JSON-RPC result or error (data may be NULL; taken). */
void hx_mcp_reply(struct hx_mcp *m, struct json_t *id, struct json_t *result);
void hx_mcp_error(struct hx_mcp *m, struct json_t *id, int code,
		  const char *msg, struct json_t *data);
/* A notification to the client (params taken), related to the request
 * whose id is related (NULL: none; over HTTP it goes on that request's
 * stream). */
void hx_mcp_notify(struct hx_mcp *m, struct json_t *related, const char *method,
		   struct json_t *params);
/* A request to the client (params taken), related as above; its answer
 * comes to hx_mcp_response. */
void hx_mcp_request(struct hx_mcp *m, struct json_t *related, const char *id,
		    const char *method, struct json_t *params);

/* ---- calls.c ---- */
/* tools/call: params checked, the call decided, queued or answered. */
void hx_mcp_call(struct hx_mcp *m, struct json_t *id, struct json_t *params);
/* The client's answer (msg: result or error) to our request id. */
void hx_mcp_response(struct hx_mcp *m, struct json_t *id, struct json_t *msg);
/* notifications/cancelled of request id. */
void hx_mcp_cancel(struct hx_mcp *m, struct json_t *id);
/* What the worker said (one line); its end. */
void hx_mcp_worker_line(struct hx_mcp *m, const char *line, size_t len);
void hx_mcp_worker_gone(struct hx_mcp *m);
/* The client is gone: every call is ended (recorded), the worker told
 * to exit. */
void hx_mcp_end_calls(struct hx_mcp *m, const char *why);
/* pipeline's call_of and observe hooks. */
const char *hx_mcp_call_of(void *arg, pid_t pid);
void hx_mcp_observe(void *arg, struct json_t *rec, uint64_t seq);

/* ---- info.c ---- */
/* session_info's result. */
struct json_t *hx_mcp_session_info(const struct hx_mcp *m);

#endif
