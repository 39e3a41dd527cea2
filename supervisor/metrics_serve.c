/* The metrics endpoint and textfile; see metrics_serve.h. The HTTP is
 * the least a scraper needs: one request per connection, GET or HEAD
 * of /metrics, a reply with its length, then close. A request is read
 * for at most a second and 8 KiB: a client that sends less, slower, or
 * more gets an error or nothing, and the next one is served. */
#define _GNU_SOURCE
#include "supervisor/metrics_serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/sockaddr.h"
#include "supervisor/metrics.h"
#include "supervisor/server.h"

#define REQ_MAX	   8192
#define IO_MS	   1000
#define FILE_EVERY 5000 /* ms between the textfile's rewrites */

struct hx_metrics_serve {
	struct hx_metrics *m;
	int lfd, stop[2];
	char unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *file;
	pthread_t thread;
};

/* "--metrics ADDR: why (strerror)", and -e. */
static int fail(char *err, size_t errlen, int e, const char *addr,
		const char *why)
{
	snprintf(err, errlen, "--metrics %s: %s%s(%s)", addr, why,
		 why[0] ? " " : "", strerror(e));
	return -e;
}

static int listen_unix(const char *path, int *fd, char *bound, size_t boundlen,
		       char *err, size_t errlen)
{
	int s = path[0] == '/' ? hx_server_listen_unix(path, SOCK_STREAM, 16)
			       : -EINVAL;

	if (s < 0)
		return fail(err, errlen, -s, path,
			    s == -EADDRINUSE ? "the file exists: remove it or "
					       "choose another"
			    : s == -EINVAL || s == -ENAMETOOLONG
				? "expected an absolute path of at most 107 "
				  "bytes"
				: "");
	*fd = s;
	snprintf(bound, boundlen, "unix:%s", path);
	return 0;
}

/* [HOST:]PORT into sa; only loopback hosts. */
static int parse_inet(const char *addr, struct sockaddr_storage *sa,
		      socklen_t *len)
{
	const char *colon = strrchr(addr, ':');
	char host[64] = "127.0.0.1", *end;
	unsigned long port;
	struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;

	if (colon) {
		size_t n = (size_t)(colon - addr);

		if (n >= sizeof(host))
			return -EINVAL;
		memcpy(host, addr, n);
		host[n] = '\0';
		if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
			memmove(host, host + 1, n - 2);
			host[n - 2] = '\0';
		}
		addr = colon + 1;
	}
	port = strtoul(addr, &end, 10);
	if (!addr[0] || *end || port > 65535)
		return -EINVAL;
	memset(sa, 0, sizeof(*sa));
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		if ((ntohl(v4->sin_addr.s_addr) >> 24) != 127)
			return -EPERM;
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		*len = sizeof(*v4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr))
			return -EPERM;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*v6);
		return 0;
	}
	return -EINVAL;
}

static void name_bound(int s, char *bound, size_t boundlen)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	if (!getsockname(s, (struct sockaddr *)&sa, &len))
		hx_sockaddr_format(&sa, len, bound, boundlen);
}

int hx_metrics_listen(const char *addr, int *fd, char *bound, size_t boundlen,
		      char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t len = 0;
	int s, r, one = 1;

	*fd = -1;
	if (!strncmp(addr, "unix:", 5))
		return listen_unix(addr + 5, fd, bound, boundlen, err, errlen);
	if (addr[0] == '/')
		return listen_unix(addr, fd, bound, boundlen, err, errlen);
	if ((r = parse_inet(addr, &sa, &len)))
		return fail(err, errlen, -r, addr,
			    r == -EPERM ? "is not a loopback address, and the "
					  "metrics are no business of the "
					  "network: use 127.0.0.1, [::1] or a "
					  "Unix socket"
					: "expected [HOST:]PORT, unix:PATH or "
					  "/PATH");
	s = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return fail(err, errlen, errno, addr, "");
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&sa, len) || listen(s, 16)) {
		int e = errno;

		close(s);
		return fail(err, errlen, e, addr, "");
	}
	name_bound(s, bound, boundlen);
	*fd = s;
	return 0;
}

/* ---- HTTP ---- */

static bool send_all(int c, const char *p, size_t n)
{
	uint64_t until = hx_mono_ms() + IO_MS;

	while (n) {
		struct pollfd pf = {.fd = c, .events = POLLOUT};
		uint64_t now = hx_mono_ms();
		ssize_t w;

		if (now >= until || poll(&pf, 1, (int)(until - now)) <= 0)
			return false;
		w = send(c, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

static void reply(int c, const char *status, const char *type, const char *body,
		  size_t n, bool head_only)
{
	char h[256];
	int hn = snprintf(h, sizeof(h),
			  "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
			  "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			  status, type, n);

	if (send_all(c, h, (size_t)hn) && !head_only)
		send_all(c, body, n);
}

static void refuse(int c, const char *status, const char *why)
{
	reply(c, status, "text/plain; charset=utf-8", why, strlen(why), false);
}

/* The request's head, until its blank line; its length, 0 when it did
 * not come whole in time, -1 when it is too long. */
static ssize_t read_head(int c, char *buf, size_t size)
{
	uint64_t until = hx_mono_ms() + IO_MS;
	size_t n = 0;

	while (n < size - 1) {
		struct pollfd pf = {.fd = c, .events = POLLIN};
		uint64_t now = hx_mono_ms();
		ssize_t r;

		if (now >= until || poll(&pf, 1, (int)(until - now)) <= 0)
			return 0;
		r = recv(c, buf + n, size - 1 - n, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0)
			return 0;
		n += (size_t)r;
		buf[n] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return (ssize_t)n;
	}
	return -1;
}

static void answer(struct hx_metrics_serve *s, int c)
{
	static char req[REQ_MAX]; /* the serving thread's only */
	ssize_t n = read_head(c, req, sizeof(req));
	char *sp, *target, *q;
	bool head_only;
	char *body;
	size_t len;

	if (n < 0) {
		refuse(c, "431 Request Header Fields Too Large",
		       "request too long\n");
		return;
	}
	if (n == 0)
		return;
	head_only = !strncmp(req, "HEAD ", 5);
	if (strncmp(req, "GET ", 4) && !head_only) {
		refuse(c, "405 Method Not Allowed", "only GET /metrics\n");
		return;
	}
	target = req + (head_only ? 5 : 4);
	if (!(sp = strchr(target, ' ')) || strncmp(sp + 1, "HTTP/1.", 7)) {
		refuse(c, "400 Bad Request", "not an HTTP/1 request\n");
		return;
	}
	*sp = '\0';
	if ((q = strchr(target, '?')))
		*q = '\0';
	if (strcmp(target, "/metrics") && strcmp(target, "/")) {
		refuse(c, "404 Not Found", "the metrics are at /metrics\n");
		return;
	}
	if (hx_metrics_render(s->m, &body, &len)) {
		refuse(c, "503 Service Unavailable", "out of memory\n");
		return;
	}
	reply(c, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body,
	      len, head_only);
	free(body);
}

/* ---- the textfile ---- */

int hx_metrics_write_file(struct hx_metrics *m, const char *path)
{
	char tmp[PATH_MAX], *body;
	size_t len;
	int fd, e = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (hx_metrics_render(m, &body, &len))
		return -ENOMEM;
	unlink(tmp); /* a leftover of a session that died */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		free(body);
		return -errno;
	}
	if (write(fd, body, len) != (ssize_t)len)
		e = errno ? -errno : -EIO;
	if (close(fd) && !e)
		e = -errno;
	if (!e && rename(tmp, path))
		e = -errno;
	if (e)
		unlink(tmp);
	free(body);
	return e;
}

static void *serve(void *arg)
{
	struct hx_metrics_serve *s = arg;
	struct pollfd p[2] = {{.fd = s->stop[0], .events = POLLIN},
			      {.fd = s->lfd, .events = POLLIN}};
	uint64_t next = hx_mono_ms();

	for (;;) {
		uint64_t now = hx_mono_ms();
		int c;

		if (s->file && now >= next) {
			hx_metrics_write_file(s->m, s->file);
			next = now + FILE_EVERY;
		}
		p[0].revents = p[1].revents = 0;
		if (poll(p, s->lfd >= 0 ? 2 : 1,
			 s->file ? (int)(next - now) + 1 : -1) < 0 &&
		    errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (!(p[1].revents & POLLIN))
			continue;
		c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		answer(s, c);
		close(c);
	}
	return NULL;
}

int hx_metrics_serve_start(struct hx_metrics *m, int lfd, const char *unix_path,
			   const char *file, struct hx_metrics_serve **out)
{
	struct hx_metrics_serve *s = calloc(1, sizeof(*s));
	int e;

	*out = NULL;
	if (!s || pipe2(s->stop, O_CLOEXEC)) {
		e = s ? -errno : -ENOMEM;
		free(s);
		if (lfd >= 0)
			close(lfd);
		return e;
	}
	s->m = m;
	s->lfd = lfd;
	if (unix_path)
		snprintf(s->unix_path, sizeof(s->unix_path), "%s", unix_path);
	if (file && !(s->file = strdup(file)))
		e = -ENOMEM;
	else
		e = -pthread_create(&s->thread, NULL, serve, s);
	if (e) {
		close(s->stop[0]);
		close(s->stop[1]);
		if (lfd >= 0)
			close(lfd);
		free(s->file);
		free(s);
		return e;
	}
	*out = s;
	return 0;
}

void hx_metrics_serve_stop(struct hx_metrics_serve *s)
{
	if (!s)
		return;
	if (write(s->stop[1], "x", 1) != 1) {
		/* the pipe is ours and empty: cannot fail */
	}
	pthread_join(s->thread, NULL);
	if (s->file)
		hx_metrics_write_file(s->m, s->file);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->unix_path[0])
		unlink(s->unix_path);
	close(s->stop[0]);
	close(s->stop[1]);
	free(s->file);
	free(s);
}
