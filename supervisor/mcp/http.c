/* harness-mcp's Streamable HTTP transport; see http.h. One request a
 * connection (Connection: close): a stream ends its connection, so no
 * connection holds two answers. */
#define _GNU_SOURCE
#include "supervisor/mcp/http.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "supervisor/proc.h"
#include "supervisor/server.h"

#define HEAD_MAX  16384
#define BODY_MAX  (40u << 20)
#define OUT_MAX	  (256u << 20)
#define READ_SIZE 65536

struct conn {
	struct hx_source src;
	struct hx_mcp_http *h;
	char *in;
	size_t len, cap, head, body;
	json_t *waiting; /* the request id its stream answers */
	bool closing, out_watched;
	bool said_all;	/* closing, all written: our side shut down */
	size_t dropped; /* read after the request, and dropped */
	char *out;
	size_t olen, ooff;
	uint64_t born;
};

struct hx_mcp_http {
	struct hx_server *srv;
	struct hx_source lsrc;
	struct hx_mcp_http_opts o;
	char token[128], session[64];
	struct conn *conns[HX_MCP_HTTP_CONNS];
	struct conn *cur; /* the one whose POST is being handled */
	bool session_given;
	bool unix_socket; /* the listener's family is AF_UNIX */
	int self_filters; /* our seccomp filters (hx_proc_confined) */
};

static void conn_close(struct conn *c)
{
	struct hx_mcp_http *h = c->h;

	for (size_t i = 0; i < HX_MCP_HTTP_CONNS; i++)
		if (h->conns[i] == c)
			h->conns[i] = NULL;
	if (h->cur == c)
		h->cur = NULL;
	hx_server_del(h->srv, &c->src);
	close(c->src.fd);
	json_decref(c->waiting);
	free(c->in);
	free(c->out);
	free(c);
}

/* Writes what the socket takes; the connection ends once a closing one
 * has said all. false: it is gone. */
static bool flush(struct conn *c)
{
	ssize_t n;

	while (c->ooff < c->olen) {
		n = send(c->src.fd, c->out + c->ooff, c->olen - c->ooff,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			conn_close(c);
			return false;
		}
		c->ooff += (size_t)n;
	}
	/* Said all: the client reads its end, and what it still sends (a
	 * body after a refused head) is read and dropped until it closes;
	 * a close now would fail its send (EPIPE on a Unix socket). */
	if (c->ooff == c->olen && c->closing && !c->said_all) {
		c->said_all = true;
		shutdown(c->src.fd, SHUT_WR);
		/* Its stream has ended: no later message is its, and a
		 * client that keeps it open does not keep its slot (room). */
		json_decref(c->waiting);
		c->waiting = NULL;
	}
	if (c->out_watched != (c->ooff < c->olen)) {
		hx_server_del(c->h->srv, &c->src);
		c->out_watched = c->ooff < c->olen;
		hx_server_add(c->h->srv, &c->src,
			      EPOLLIN | (c->out_watched ? EPOLLOUT : 0));
	}
	return true;
}

static bool queue(struct conn *c, const char *s, size_t n)
{
	char *p;

	if (c->ooff) {
		memmove(c->out, c->out + c->ooff, c->olen - c->ooff);
		c->olen -= c->ooff;
		c->ooff = 0;
	}
	if (c->olen + n > OUT_MAX || !(p = realloc(c->out, c->olen + n))) {
		conn_close(c); /* a client that reads nothing */
		return false;
	}
	c->out = p;
	memcpy(c->out + c->olen, s, n);
	c->olen += n;
	return flush(c);
}

/* The whole answer, queued at once: a closing connection ends when
 * what is queued is written. */
static void respond(struct conn *c, const char *status, const char *extra,
		    const char *body)
{
	char *all = NULL;
	int n = asprintf(&all,
			 "HTTP/1.1 %s\r\nContent-Length: %zu\r\n%s%s"
			 "Connection: close\r\n\r\n%s",
			 status, strlen(body),
			 body[0] ? "Content-Type: application/json\r\n" : "",
			 extra, body);

	if (n < 0)
		return conn_close(c);
	c->closing = true;
	queue(c, all, (size_t)n);
	free(all);
}

/* A JSON-RPC error as an HTTP error's body. */
static void refuse(struct conn *c, const char *status, int code,
		   const char *why)
{
	json_t *e = json_pack("{s:s,s:n,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
			      "error", "code", code, "message", why);
	char *s = e ? json_dumps(e, JSON_COMPACT) : NULL;

	respond(c, status, "", s ? s : "");
	free(s);
	json_decref(e);
}

/* The value of header name in head (case-insensitive), copied into
 * out; false when absent. */
static bool header(const char *head, const char *name, char *out, size_t size)
{
	size_t n = strlen(name);
	const char *p = strstr(head, "\r\n");

	while (p && p[2] != '\r') {
		p += 2;
		if (!strncasecmp(p, name, n) && p[n] == ':') {
			const char *v = p + n + 1, *e = strstr(v, "\r\n");

			while (*v == ' ' || *v == '\t')
				v++;
			snprintf(out, size, "%.*s", (int)(e - v), v);
			return true;
		}
		p = strstr(p, "\r\n");
	}
	return false;
}

static bool same(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned char d = n != m;

	for (size_t i = 0; i < n && i < m; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

/* An Origin that is a loopback one (or none): anything else is a web
 * page's request, made through DNS rebinding to this port. */
static bool origin_ok(const char *head)
{
	static const char *const hosts[] = {"localhost", "127.0.0.1", "[::1]",
					    NULL};
	char o[256];
	const char *h;

	if (!header(head, "Origin", o, sizeof(o)))
		return true;
	h = strstr(o, "://");
	if (!h)
		return false;
	h += 3;
	for (size_t i = 0; hosts[i]; i++) {
		size_t n = strlen(hosts[i]);

		if (!strncmp(h, hosts[i], n) && (!h[n] || h[n] == ':'))
			return true;
	}
	return false;
}

/* The head is in: refuse what is not a POST to /mcp from our client;
 * true when a body of c->body bytes is to come. */
static bool judge_head(struct conn *c)
{
	const char *hd = c->in;
	char v[256], want[160];
	bool post =
	    !strncmp(hd, "POST /mcp ", 10) || !strncmp(hd, "POST /mcp?", 10);
	bool del = !strncmp(hd, "DELETE /mcp ", 12);

	snprintf(want, sizeof(want), "Bearer %s", c->h->token);
	if (!post && !del && strncmp(hd, "GET /mcp ", 9))
		return refuse(c, "404 Not Found", -32600, "no such endpoint"),
		       false;
	if (!header(hd, "Authorization", v, sizeof(v)) || !same(v, want))
		return respond(c, "401 Unauthorized",
			       "WWW-Authenticate: Bearer\r\n", ""),
		       false;
	if (!origin_ok(hd))
		return refuse(c, "403 Forbidden", -32600,
			      "a request from a web page's origin"),
		       false;
	if (!post && !del)
		return respond(c, "405 Method Not Allowed",
			       "Allow: POST, DELETE\r\n", ""),
		       false;
	if (c->h->session_given && header(hd, "Mcp-Session-Id", v, sizeof(v)) &&
	    !same(v, c->h->session))
		return refuse(c, "404 Not Found", -32001, "no such session"),
		       false;
	if (del) {
		respond(c, "200 OK", "", "");
		c->h->o.on_end(c->h->o.arg);
		return false;
	}
	if (!header(hd, "Content-Length", v, sizeof(v)))
		return refuse(c, "411 Length Required", -32600,
			      "a body needs its Content-Length"),
		       false;
	c->body = strtoul(v, NULL, 10);
	if (c->body > BODY_MAX)
		return refuse(c, "413 Content Too Large", -32600,
			      "message too large: at most 40 MiB"),
		       false;
	return true;
}

/* A request: its answer is a stream of events, the response last. */
static void stream(struct conn *c, json_t *id)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"
			 "\r\nCache-Control: no-cache\r\nMcp-Session-Id: %s"
			 "\r\nConnection: close\r\n\r\n",
			 c->h->session);

	c->waiting = json_incref(id);
	c->h->session_given = true;
	queue(c, head, (size_t)n);
}

static void handle_body(struct conn *c)
{
	struct hx_mcp_http *h = c->h;
	json_t *msg =
	    json_loadb(c->in + c->head, c->body, JSON_ALLOW_NUL, NULL);
	json_t *id = json_object_get(msg, "id");
	char v[160];
	bool request = json_object_get(msg, "method") && id;

	if (!json_is_object(msg)) {
		refuse(c, "400 Bad Request", msg ? -32600 : -32700,
		       msg ? "one JSON-RPC message a POST" : "parse error");
	} else if (h->session_given &&
		   !header(c->in, "Mcp-Session-Id", v, sizeof(v)) &&
		   strcmp(
		       json_string_value(json_object_get(msg, "method"))
			   ? json_string_value(json_object_get(msg, "method"))
			   : "",
		       "initialize")) {
		refuse(c, "400 Bad Request", -32600,
		       "Mcp-Session-Id is required after initialize");
	} else if (request) {
		stream(c, id);
		h->cur = c;
		h->o.on_message(h->o.arg, msg);
		h->cur = NULL;
	} else {
		h->o.on_message(h->o.arg, msg);
		respond(c, "202 Accepted", "", "");
	}
	json_decref(msg);
}

static void on_conn(struct hx_server *s, struct hx_source *src, uint32_t events)
{
	struct conn *c = src->arg;
	char *p;
	ssize_t n;

	(void)s;
	if ((events & EPOLLOUT) && !flush(c))
		return;
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	if (c->closing || c->waiting) { /* one request a connection */
		char sink[4096];

		n = recv(c->src.fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
		    (n > 0 && (c->dropped += (size_t)n) > BODY_MAX))
			conn_close(c); /* the client went: its answer too */
		return;
	}
	if (c->cap - c->len < READ_SIZE) {
		if (!(p = realloc(c->in, c->len + READ_SIZE + 1)))
			return conn_close(c);
		c->in = p;
		c->cap = c->len + READ_SIZE;
	}
	n = recv(c->src.fd, c->in + c->len, READ_SIZE, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0)
		return conn_close(c);
	c->len += (size_t)n;
	c->in[c->len] = '\0';
	if (!c->head) {
		char *end = memmem(c->in, c->len, "\r\n\r\n", 4);

		if (!end && c->len > HEAD_MAX)
			return refuse(c, "431 Request Header Fields Too Large",
				      -32600, "headers too large");
		if (!end)
			return;
		c->head = (size_t)(end - c->in) + 4;
		end[2] = '\0'; /* the head as a string, its last CRLF kept */
		if (!judge_head(c))
			return;
	}
	if (c->len >= c->head + c->body)
		handle_body(c);
}

/* The oldest connection that waits for no answer makes room. */
static bool room(struct hx_mcp_http *h, size_t *slot)
{
	struct conn *old = NULL;

	for (size_t i = 0; i < HX_MCP_HTTP_CONNS; i++) {
		if (!h->conns[i]) {
			*slot = i;
			return true;
		}
		if (!h->conns[i]->waiting &&
		    (!old || h->conns[i]->born < old->born))
			old = h->conns[i];
	}
	if (!old)
		return false;
	conn_close(old);
	return room(h, slot);
}

/* A Unix socket's peer must be this user (or root) and not a process
 * of the session's (hx_proc_confined: under the sandbox's filters,
 * which an orphan that left the tree keeps too): the file's mode and
 * harness:protect keep them out, this whatever else lets them reach
 * it (audit mode, no kernel layer). A TCP peer has no credentials: the
 * bearer token stands alone. */
static bool peer_ok(const struct hx_mcp_http *h, int fd)
{
	struct hx_procstatus ps;
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (!h->unix_socket)
		return true;
	return !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) &&
	       (cr.uid == geteuid() || cr.uid == 0) && cr.pid > 0 &&
	       /* gone: what it connected may live on in a child */
	       !hx_proc_status(cr.pid, &ps) &&
	       !hx_proc_status_confined(&ps, h->self_filters) &&
	       /* what was read by its number was its own */
	       hx_proc_peer_still(fd);
}

static void on_accept(struct hx_server *s, struct hx_source *src,
		      uint32_t events)
{
	struct hx_mcp_http *h = src->arg;
	struct conn *c;
	size_t slot;
	int fd;

	(void)s;
	(void)events;
	while ((fd = accept4(h->lsrc.fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (!peer_ok(h, fd)) {
			close(fd);
			continue;
		}
		if (!room(h, &slot) || !(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		c->h = h;
		c->born = hx_mono_ms();
		c->src = (struct hx_source){fd, on_conn, c};
		if (hx_server_add(h->srv, &c->src, EPOLLIN)) {
			close(fd);
			free(c);
			continue;
		}
		h->conns[slot] = c;
	}
}

int hx_mcp_http_start(struct hx_server *srv, const struct hx_mcp_http_opts *o,
		      struct hx_mcp_http **out)
{
	struct hx_mcp_http *h = calloc(1, sizeof(*h));
	struct sockaddr_storage sa;
	socklen_t salen = sizeof(sa);
	struct hx_procstatus st;
	int e = 0;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->srv = srv;
	h->o = *o;
	snprintf(h->token, sizeof(h->token), "%s", o->token);
	snprintf(h->session, sizeof(h->session), "%s", o->session);
	h->lsrc = (struct hx_source){o->lfd, on_accept, h};
	h->unix_socket =
	    getsockname(o->lfd, (struct sockaddr *)&sa, &salen) == 0 &&
	    sa.ss_family == AF_UNIX;
	h->self_filters = hx_proc_status(getpid(), &st) ? -1 : st.filters;
	/* accept until EAGAIN: a blocking listener would hold the loop */
	if (fcntl(o->lfd, F_SETFL, fcntl(o->lfd, F_GETFL) | O_NONBLOCK) ||
	    (e = hx_server_add(srv, &h->lsrc, EPOLLIN))) {
		e = e ? e : -errno;
		free(h);
		return e;
	}
	*out = h;
	return 0;
}

void hx_mcp_http_free(struct hx_mcp_http *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < HX_MCP_HTTP_CONNS; i++)
		if (h->conns[i]) {
			/* what is queued still goes, briefly */
			h->conns[i]->closing = true;
			if (h->conns[i] && flush(h->conns[i]))
				conn_close(h->conns[i]);
		}
	hx_server_del(h->srv, &h->lsrc);
	close(h->lsrc.fd);
	free(h);
}

bool hx_mcp_http_send(struct hx_mcp_http *h, json_t *msg, json_t *related,
		      bool final)
{
	struct conn *c = related ? NULL : h->cur;
	char *s, *ev;
	bool ok;

	for (size_t i = 0; related && !c && i < HX_MCP_HTTP_CONNS; i++)
		if (h->conns[i] && h->conns[i]->waiting &&
		    json_equal(h->conns[i]->waiting, related))
			c = h->conns[i];
	if (!c || !c->waiting || !(s = json_dumps(msg, JSON_COMPACT)))
		return false;
	if (asprintf(&ev, "event: message\ndata: %s\n\n", s) < 0)
		ev = NULL;
	free(s);
	if (!ev)
		return false;
	if (final)
		c->closing = true;
	ok = queue(c, ev, strlen(ev));
	free(ev);
	return ok;
}
