/* An HTTP POST; see httppost.h. */
#define _GNU_SOURCE
#include "supervisor/export/httppost.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"

struct url {
	char host[256], port[8], path[1024];
};

static int parse(const char *url, struct url *u)
{
	const char *h, *slash, *colon;
	size_t hn;

	if (strncmp(url, "http://", 7))
		return -EINVAL;
	h = url + 7;
	slash = strchr(h, '/');
	hn = slash ? (size_t)(slash - h) : strlen(h);
	colon = memchr(h, ':', hn);
	if (!hn || (colon ? (size_t)(colon - h) : hn) >= sizeof(u->host))
		return -EINVAL;
	snprintf(u->host, sizeof(u->host), "%.*s",
		 (int)(colon ? (size_t)(colon - h) : hn), h);
	snprintf(u->port, sizeof(u->port), "%.*s",
		 colon ? (int)(hn - (size_t)(colon - h) - 1) : 2,
		 colon ? colon + 1 : "80");
	snprintf(u->path, sizeof(u->path), "%s", slash ? slash : "/");
	return u->host[0] && u->port[0] ? 0 : -EINVAL;
}

/* Waits until fd is ready for events, at most until the deadline. */
static int ready(int fd, short events, uint64_t until)
{
	struct pollfd p = {.fd = fd, .events = events};
	uint64_t now = hx_mono_ms();

	if (now >= until || poll(&p, 1, (int)(until - now)) <= 0)
		return -ETIMEDOUT;
	return 0;
}

static int dial(const struct url *u, uint64_t until, char *why, size_t wl)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *a;
	int fd = -1, e = getaddrinfo(u->host, u->port, &hints, &res);

	if (e) {
		snprintf(why, wl, "%s: %s", u->host, gai_strerror(e));
		return -EHOSTUNREACH;
	}
	for (a = res; a && fd < 0; a = a->ai_next) {
		int err = 0;
		socklen_t len = sizeof(err);

		fd = socket(a->ai_family,
			    a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		if ((connect(fd, a->ai_addr, a->ai_addrlen) &&
		     errno != EINPROGRESS) ||
		    ready(fd, POLLOUT, until) ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
			snprintf(why, wl, "connect %s:%s: %s", u->host, u->port,
				 strerror(err ? err : errno));
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd < 0 ? -ECONNREFUSED : fd;
}

static int send_all(int fd, const void *p, size_t n, uint64_t until)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EAGAIN) {
			if (ready(fd, POLLOUT, until))
				return -ETIMEDOUT;
			continue;
		}
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

int hx_http_post(const char *url, const char *type, const void *body, size_t n,
		 int timeout_ms, char *why, size_t wl)
{
	uint64_t until = hx_mono_ms() + (uint64_t)timeout_ms;
	char head[1536], reply[256];
	struct url u;
	int fd, e, code = 0;
	size_t got = 0;

	snprintf(why, wl, "not an http:// URL");
	if ((e = parse(url, &u)))
		return e;
	if ((fd = dial(&u, until, why, wl)) < 0)
		return fd;
	snprintf(head, sizeof(head),
		 "POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: %s\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		 u.path, u.host, u.port, type, n);
	e = send_all(fd, head, strlen(head), until);
	if (!e)
		e = send_all(fd, body, n, until);
	/* The status line is all we need of the reply. */
	while (!e && got < sizeof(reply) - 1 && !memchr(reply, '\n', got)) {
		ssize_t r;

		if ((e = ready(fd, POLLIN, until)))
			break;
		r = recv(fd, reply + got, sizeof(reply) - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	reply[got] = '\0';
	if (e) {
		snprintf(why, wl, "%s: %s", url, strerror(-e));
		return e;
	}
	if (sscanf(reply, "HTTP/1.%*d %d", &code) != 1) {
		snprintf(why, wl, "%s: no HTTP reply", url);
		return -EPROTO;
	}
	snprintf(why, wl, "%s: %.*s", url, (int)strcspn(reply, "\r\n"), reply);
	return code;
}
