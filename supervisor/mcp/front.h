/* harness-mcp's front (issue 15): an MCP server on the supervisor's
 * loop, whose tools run in the session's sandbox. The client speaks
 * JSON-RPC on harness-mcp's stdin and stdout (MCP's stdio transport);
 * every tools/call passes validate (tools.h) -> permission (the
 * session's policy, the same rules as every system call) -> quota ->
 * execute -> filter (size bounds, secrets redacted) -> audit, where
 * execute is the worker's: harness-mcp-worker, the session's first
 * process, inside every kernel layer, so that what a call does is
 * decided again by the kernel on what it really touches. Each call is
 * one "tool_call" record in the session's chain, and every record of
 * the processes doing its work carries its "call_id".
 *
 * Lifecycle, on the loop's thread, holding its lock: hx_mcp_start once
 * the worker is forked; the client's EOF ends the calls and tells the
 * worker to exit, which ends the session; hx_mcp_free after the loop. */
#ifndef HX_MCP_FRONT_H
#define HX_MCP_FRONT_H

#include <sys/types.h>

struct hx_pipeline;
struct hx_server;
struct hx_execgate;
struct hx_mcp;
struct hx_worktree;

struct hx_mcp_opts {
	int in_fd, out_fd; /* the client's (0 and 1); made non-blocking */
	/* --http: the endpoint's listening socket (taken; -1: stdio) and
	 * the bearer token its requests must carry */
	int http_fd;
	const char *http_token;
	int worker_fd;	   /* our end of the worker's socket (taken) */
	pid_t worker;	   /* the worker's pid: the session's first */
	int worker_fd_pin; /* its pidfd (harness-exec's), or -1 */
	/* where the session's exec gate is once it runs (it outlives the
	 * front): its fork events say which code_run a process is of,
	 * however it left its parent (calls.c); NULL there: /proc's
	 * parent links */
	struct hx_execgate *const *gate;
	const char *project;
	struct hx_worktree *wt; /* --worktree's (checkpoint), or NULL */
	const char *session;
	/* quotas for every tool instead of each tool's own; 0: its own */
	unsigned per_minute, concurrent;
	unsigned long max_output; /* bytes of a result's text; 0: 1 MiB */
};

/* Serves the client on srv's loop; takes http_fd, even on failure. 0
 * or -errno. */
int hx_mcp_start(struct hx_pipeline *pl, struct hx_server *srv,
		 const struct hx_mcp_opts *o, struct hx_mcp **out);
/* Ends what still runs (recorded) and frees m. NULL is a no-op. */
void hx_mcp_free(struct hx_mcp *m);

#endif
