/* harness-mcp's Streamable HTTP transport (MCP 2025-03-26 and later):
 * one endpoint, /mcp, on a loopback port. A POST carries one JSON-RPC
 * message; a request is answered on its own response as a stream of
 * Server-Sent Events (the progress and questions of its call, then its
 * response), a notification or a response with 202. GET (a stream the
 * server would open by itself) is 405; DELETE ends the session.
 *
 * Every request must carry "Authorization: Bearer TOKEN": a loopback
 * port is any local user's to connect to, and the tools run as this
 * user. A request with an Origin that is not a loopback one is 403 (a
 * web page's request through DNS rebinding); after initialize, the
 * Mcp-Session-Id the server gave is required (400 without it, 404 for
 * another). At most HX_MCP_HTTP_CONNS connections: past them the
 * oldest that waits for no answer is dropped. On the supervisor's
 * loop, holding its lock. */
#ifndef HX_MCP_HTTP_H
#define HX_MCP_HTTP_H

#include <stdbool.h>

struct hx_server;
struct hx_mcp_http;
struct json_t;

#define HX_MCP_HTTP_CONNS 64

struct hx_mcp_http_opts {
	int lfd;	     /* the listening socket (taken) */
	const char *token;   /* the bearer token (copied) */
	const char *session; /* the Mcp-Session-Id given (copied) */
	/* a message of a POST (borrowed), and the client's DELETE */
	void (*on_message)(void *arg, struct json_t *msg);
	void (*on_end)(void *arg);
	void *arg;
};

/* 0 or -errno. */
int hx_mcp_http_start(struct hx_server *srv, const struct hx_mcp_http_opts *o,
		      struct hx_mcp_http **out);
/* Closes every connection and the listener. NULL is a no-op. */
void hx_mcp_http_free(struct hx_mcp_http *h);

/* msg (borrowed) on the stream of the request whose id is related
 * (NULL: the request being read now); final: it is that request's
 * response, and its stream ends with it. false: no such stream (the
 * client went away): dropped. */
bool hx_mcp_http_send(struct hx_mcp_http *h, struct json_t *msg,
		      struct json_t *related, bool final);

#endif
