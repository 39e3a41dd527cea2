/* harness-mcp's messages to the client: JSON-RPC results, errors and
 * notifications, one line each, queued without blocking; see
 * front_int.h. */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "supervisor/mcp/front_int.h"
#include "supervisor/mcp/http.h"
#include "supervisor/say.h"

/* msg (taken) to the client: on stdio a line; over HTTP on the stream
 * of the request related to it (final: that request's response). */
static void send_json(struct hx_mcp *m, json_t *msg, json_t *related,
		      bool final)
{
	char *s;
	int e;

	if (m->client_gone || m->lost || !msg)
		goto out;
	if (m->http) {
		if (!hx_mcp_http_send(m->http, msg, related, final))
			hx_say("mcp: an answer for a client that went away "
			       "was dropped");
		goto out;
	}
	s = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!s) {
		hx_say("mcp: a reply could not be encoded");
		goto out;
	}
	e = hx_lines_write(&m->cl, s, strlen(s));
	free(s);
	if (e) {
		hx_say("mcp: the client does not read (%s): given up",
		       strerror(-e));
		m->lost = "the client stopped reading"; /* front.c ends it */
		goto out;
	}
	if (hx_lines_pending(&m->cl) && !m->out_watched &&
	    hx_server_add(m->srv, &m->out_src, EPOLLOUT) == 0)
		m->out_watched = true;
out:
	json_decref(msg);
}

void hx_mcp_reply(struct hx_mcp *m, json_t *id, json_t *result)
{
	send_json(m,
		  json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id,
			    "result", result),
		  id, true);
}

void hx_mcp_error(struct hx_mcp *m, json_t *id, int code, const char *msg,
		  json_t *data)
{
	json_t *e = json_pack("{s:i,s:s}", "code", code, "message", msg);

	if (e && data)
		json_object_set_new(e, "data", data);
	else
		json_decref(data);
	send_json(m,
		  json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id",
			    id ? id : json_null(), "error", e),
		  id, true);
}

void hx_mcp_notify(struct hx_mcp *m, json_t *related, const char *method,
		   json_t *params)
{
	send_json(m,
		  json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method", method,
			    "params", params),
		  related, false);
}

void hx_mcp_request(struct hx_mcp *m, json_t *related, const char *id,
		    const char *method, json_t *params)
{
	send_json(m,
		  json_pack("{s:s,s:s,s:s,s:o}", "jsonrpc", "2.0", "id", id,
			    "method", method, "params", params),
		  related, false);
}
