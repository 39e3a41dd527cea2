/* harness-mcp's front: the client's JSON-RPC on stdio; see front.h. */
#define _GNU_SOURCE
#include "supervisor/mcp/front_int.h"
#include "supervisor/mcp/http.h"
#include "supervisor/mcp/result.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "supervisor/pipeline.h"
#include "supervisor/run.h"
#include "supervisor/say.h"

/* A client's message: a file_write's content (16 MiB, escaped) and
 * room; the worker's: a file_read's base64 of the same. */
#define CLIENT_IN_MAX  (40u << 20)
#define CLIENT_OUT_MAX (256u << 20)
#define WORKER_IN_MAX  (40u << 20)
#define WORKER_OUT_MAX (256u << 20)

/* Newest first: the client's own if we speak it, else the newest. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
				       "2024-11-05", NULL};

static const char instructions[] =
    "Every tool runs inside a harness session: the same policy, kernel "
    "sandbox and audit log as every command the session runs. Call "
    "session_info first to learn what may be written, read and "
    "reached. A refusal names its rule; do not retry a refused call, "
    "change the plan or ask the user.";

/* After the client's end, the worker's own: what it still does (one
 * system call that does not return, a tool's loop) may not keep the
 * session, and its records, from ending. */
#define WORKER_GRACE_S 5

/* EPOLLOUT wanted or not on src (del and add: the loop has no mod). */
static void watch(struct hx_mcp *m, struct hx_source *src, bool *watched,
		  bool out, uint32_t base)
{
	if (*watched == out)
		return;
	hx_server_del(m->srv, src);
	if (hx_server_add(m->srv, src, base | (out ? EPOLLOUT : 0)) == 0)
		*watched = out;
}

static void on_grace(struct hx_server *s, struct hx_source *src,
		     uint32_t events)
{
	struct hx_mcp *m = src->arg;

	(void)s;
	(void)events;
	hx_server_del(m->srv, &m->grace);
	if (m->worker_gone)
		return;
	/* Our child, through its pidfd: the exec gate's tracer may have
	 * reaped it before its socket's end is read here. */
	hx_say("mcp: the worker did not end %d s after its client: killed",
	       WORKER_GRACE_S);
	hx_proc_kill(m->o.worker_fd_pin, m->o.worker, SIGKILL);
}

/* The worker is told to exit; if it has not in WORKER_GRACE_S, it is
 * killed (and so the session's tree): its calls are recorded ended. */
static void arm_grace(struct hx_mcp *m)
{
	struct itimerspec its = {.it_value = {.tv_sec = WORKER_GRACE_S}};
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

	m->grace = (struct hx_source){fd, on_grace, m};
	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) ||
	    hx_server_add(m->srv, &m->grace, EPOLLIN)) {
		hx_say("mcp: no timer for the worker's end: killed now");
		if (fd >= 0)
			close(fd);
		m->grace.fd = -1;
		if (!m->worker_gone)
			hx_proc_kill(m->o.worker_fd_pin, m->o.worker, SIGKILL);
	}
}

static void client_lost(struct hx_mcp *m, const char *why)
{
	if (m->client_gone)
		return;
	m->client_gone = true;
	if (!m->http)
		hx_server_del(m->srv, &m->in_src);
	if (m->out_watched)
		hx_server_del(m->srv, &m->out_src);
	m->out_watched = false;
	hx_mcp_end_calls(m, why);
	if (!m->worker_gone)
		arm_grace(m);
}

/* A reply that could not be queued (rpc.c) ends the client here. */
static void settle(struct hx_mcp *m)
{
	if (m->lost)
		client_lost(m, m->lost);
}

static void initialize(struct hx_mcp *m, json_t *id, json_t *params)
{
	const char *want =
	    json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = versions[0];

	for (size_t i = 0; want && versions[i]; i++)
		if (!strcmp(want, versions[i]))
			v = versions[i];
	m->initialized = true;
	m->elicitation = json_is_object(json_object_get(
	    json_object_get(params, "capabilities"), "elicitation"));
	hx_mcp_record_client(m->pl, params, v, m->http != NULL);
	hx_mcp_reply(m, id,
		     json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s,s:s},s:s}",
			       "protocolVersion", v, "capabilities", "tools",
			       "listChanged", 0, "serverInfo", "name",
			       "harness-mcp", "title",
			       "harness: tools in a sandbox", "version",
			       HX_VERSION, "instructions", instructions));
}

/* A request's id: a string or an integer (MCP: never null). */
static bool id_ok(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

static void request(struct hx_mcp *m, const char *method, json_t *id,
		    json_t *params)
{
	if (!strcmp(method, "initialize"))
		initialize(m, id, params);
	else if (!strcmp(method, "ping"))
		hx_mcp_reply(m, id, json_object());
	else if (!m->initialized)
		hx_mcp_error(m, id, -32600,
			     "not initialized: send initialize first", NULL);
	else if (!strcmp(method, "tools/list"))
		hx_mcp_reply(m, id,
			     json_pack("{s:O}", "tools", hx_tools_list()));
	else if (!strcmp(method, "tools/call"))
		hx_mcp_call(m, id, params);
	else
		hx_mcp_error(m, id, -32601, "method not found",
			     json_pack("{s:s}", "method", method));
}

static void notification(struct hx_mcp *m, const char *method, json_t *params)
{
	if (!strcmp(method, "notifications/cancelled"))
		hx_mcp_cancel(m, json_object_get(params, "requestId"));
	/* initialized, roots/list_changed, ...: nothing to do */
}

/* One message of the client's, parsed: from a line of stdin or a POST
 * (http.c). */
static void dispatch(struct hx_mcp *m, json_t *msg)
{
	json_t *id, *params;
	const char *method;

	id = json_object_get(msg, "id");
	method = json_string_value(json_object_get(msg, "method"));
	params = json_object_get(msg, "params");
	if (!json_is_object(msg) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc"))
		       ? json_string_value(json_object_get(msg, "jsonrpc"))
		       : "",
		   "2.0") ||
	    (id && !id_ok(id)) || (params && !json_is_object(params))) {
		hx_mcp_error(m, id && id_ok(id) ? id : NULL, -32600,
			     json_is_array(msg)
				 ? "invalid request: batches are not "
				   "part of MCP"
				 : "invalid request",
			     NULL);
	} else if (method && id) {
		request(m, method, id, params);
	} else if (method) {
		notification(m, method, params);
	} else if (id && (json_object_get(msg, "result") ||
			  json_object_get(msg, "error"))) {
		hx_mcp_response(m, id, msg); /* to an elicitation/create */
	}
}

static void message(struct hx_mcp *m, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(line, len, JSON_ALLOW_NUL, &jerr);

	if (!msg) {
		hx_mcp_error(m, NULL, -32700, "parse error",
			     json_pack("{s:s,s:i}", "reason", jerr.text,
				       "column", jerr.column));
		return;
	}
	dispatch(m, msg);
	json_decref(msg);
}

static void http_message(void *arg, json_t *msg)
{
	struct hx_mcp *m = arg;

	dispatch(m, msg);
	settle(m);
}

static void http_end(void *arg)
{
	client_lost(arg, "the client ended the session (DELETE)");
}

static void on_client_in(struct hx_server *s, struct hx_source *src,
			 uint32_t events)
{
	struct hx_mcp *m = src->arg;
	char *line;
	size_t len;

	(void)s;
	(void)events;
	for (int n = 0; n < 64 && !m->client_gone && !m->lost; n++) {
		switch (hx_lines_next(&m->cl, &line, &len)) {
		case HX_LINES_NONE:
			settle(m);
			return;
		case HX_LINES_LINE:
			if (len)
				message(m, line, len);
			break;
		case HX_LINES_TOO_LONG:
			hx_mcp_error(m, NULL, -32600,
				     "message too large: at most 40 MiB", NULL);
			break;
		case HX_LINES_EOF:
			client_lost(m, "the client closed its input");
			return;
		}
	}
	settle(m);
}

static void on_client_out(struct hx_server *s, struct hx_source *src,
			  uint32_t events)
{
	struct hx_mcp *m = src->arg;

	(void)s;
	(void)events;
	if (hx_lines_flush(&m->cl)) {
		client_lost(m, "the client's output is closed");
		return;
	}
	if (!hx_lines_pending(&m->cl)) {
		hx_server_del(m->srv, &m->out_src);
		m->out_watched = false;
	}
}

static void on_worker(struct hx_server *s, struct hx_source *src,
		      uint32_t events)
{
	struct hx_mcp *m = src->arg;
	char *line;
	size_t len;

	(void)s;
	if ((events & EPOLLOUT) && hx_lines_flush(&m->wk)) {
		hx_mcp_worker_gone(m); /* its socket is broken */
		settle(m);
		return;
	}
	for (int n = 0; n < 64 && !m->worker_gone; n++) {
		enum hx_lines_got g = hx_lines_next(&m->wk, &line, &len);

		if (g == HX_LINES_NONE)
			break;
		if (g == HX_LINES_LINE)
			hx_mcp_worker_line(m, line, len);
		else if (g == HX_LINES_TOO_LONG)
			hx_say("mcp: the worker sent an oversized line");
		else
			hx_mcp_worker_gone(m);
	}
	if (!m->worker_gone)
		watch(m, &m->wk_src, &m->wk_out_watched,
		      hx_lines_pending(&m->wk), EPOLLIN);
	settle(m);
}

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -errno : 0;
}

/* The client: stdio, or the HTTP endpoint when one is given. */
static int client_start(struct hx_mcp *m)
{
	const struct hx_mcp_opts *o = &m->o;
	struct hx_mcp_http_opts h = {
	    .lfd = o->http_fd,
	    .token = o->http_token,
	    .session = o->session,
	    .on_message = http_message,
	    .on_end = http_end,
	    .arg = m,
	};
	int e;

	if (o->http_fd >= 0)
		return hx_mcp_http_start(m->srv, &h, &m->http);
	if ((e = nonblock(o->in_fd)) || (e = nonblock(o->out_fd)))
		return e;
	return hx_server_add(m->srv, &m->in_src, EPOLLIN);
}

int hx_mcp_start(struct hx_pipeline *pl, struct hx_server *srv,
		 const struct hx_mcp_opts *o, struct hx_mcp **out)
{
	struct hx_mcp *m;
	int e;

	*out = NULL;
	if ((e = hx_tools_load()))
		return e;
	if (!(m = calloc(1, sizeof(*m))))
		return -ENOMEM;
	m->pl = pl;
	m->srv = srv;
	m->o = *o;
	m->file_busy = m->run_starting = -1;
	m->grace.fd = -1;
	snprintf(m->project, sizeof(m->project), "%s", o->project);
	hx_lines_init(&m->cl, o->in_fd, o->out_fd, CLIENT_IN_MAX,
		      CLIENT_OUT_MAX);
	hx_lines_init(&m->wk, o->worker_fd, o->worker_fd, WORKER_IN_MAX,
		      WORKER_OUT_MAX);
	m->in_src = (struct hx_source){o->in_fd, on_client_in, m};
	m->out_src = (struct hx_source){o->out_fd, on_client_out, m};
	m->wk_src = (struct hx_source){o->worker_fd, on_worker, m};
	if ((e = nonblock(o->worker_fd)) || (e = client_start(m)) ||
	    (e = hx_server_add(srv, &m->wk_src, EPOLLIN))) {
		if (m->http)
			hx_mcp_http_free(m->http); /* and its listener */
		else if (o->http_fd >= 0)
			close(o->http_fd);
		hx_server_del(srv, &m->in_src);
		free(m);
		return e == -EPERM ? -EBADF : e; /* stdin a regular file */
	}
	m->prev_observe = pl->observe;
	m->prev_arg = pl->observe_arg;
	pl->observe = hx_mcp_observe;
	pl->observe_arg = m;
	pl->call_of = hx_mcp_call_of;
	pl->call_arg = m;
	*out = m;
	return 0;
}

void hx_mcp_free(struct hx_mcp *m)
{
	if (!m)
		return;
	hx_mcp_end_calls(m, "the session ended");
	hx_mcp_worker_gone(m);
	m->pl->call_of = NULL;
	m->pl->observe = m->prev_observe;
	m->pl->observe_arg = m->prev_arg;
	hx_mcp_http_free(m->http);
	if (!m->client_gone && !m->http) {
		hx_server_del(m->srv, &m->in_src);
		if (m->out_watched)
			hx_server_del(m->srv, &m->out_src);
		/* what is queued for the client still goes, blocking */
		fcntl(m->o.out_fd, F_SETFL,
		      fcntl(m->o.out_fd, F_GETFL) & ~O_NONBLOCK);
		hx_lines_flush(&m->cl);
	}
	if (m->grace.fd >= 0) {
		hx_server_del(m->srv, &m->grace);
		close(m->grace.fd);
	}
	hx_lines_free(&m->cl);
	hx_lines_free(&m->wk);
	close(m->o.worker_fd);
	for (size_t i = 0; i < HX_MCP_TOOLS; i++)
		free(m->q[i].stamps);
	free(m);
}
