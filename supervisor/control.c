/* The control socket; see control.h. */
#define _GNU_SOURCE
#include "supervisor/control.h"
#include "supervisor/fdrelease.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "supervisor/server.h"
#include "supervisor/proc.h"

/* A request holds an answer's text (askuser.h); a reply, the agent's
 * questions that wait (up to 4,000 characters each). */
#define REQ_MAX	  4096
#define REPLY_MAX 65536

struct hx_control {
	struct hx_source src;
	struct hx_server *srv;
	hx_control_fn fn;
	void *arg;
	char path[108];
};

/* Whether pid, which connected fd, may be one of our descendants (the
 * agent's tree): it is, or it is gone already and cannot be told (a
 * process that connected, sent its request and exited before it was
 * served; its number may be a process's outside the session by now, so
 * the walk by number stands only if it was still its after). */
static bool descends_from_us(int fd, pid_t pid)
{
	return pid <= 0 || hx_proc_ppid(pid) == 0 ||
	       hx_proc_descends(pid, getpid()) || !hx_proc_peer_still(fd);
}

static void serve_one(struct hx_control *c, int fd)
{
	char req[REQ_MAX + 1], reply[REPLY_MAX];
	struct timeval tv = {1, 0};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	ssize_t n;
	int fl;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    cred.uid != getuid())
		return;
	if (descends_from_us(fd, cred.pid)) {
		snprintf(reply, sizeof(reply),
			 "error refused: the agent "
			 "cannot drive its supervisor");
		send(fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
		return;
	}
	/* The request is sent right after connect; a client that sends
	 * nothing costs us at most this timeout. */
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	do
		n = recv(fd, req, REQ_MAX, MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return;
	/* Cut, it would be another request (an answer shortened). */
	if (n > REQ_MAX) {
		snprintf(reply, sizeof(reply), "error request too long");
		send(fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
		return;
	}
	req[n] = '\0';
	reply[0] = '\0';
	c->fn(c->arg, cred.pid, req, reply, sizeof(reply));
	send(fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void on_ready(struct hx_server *s, struct hx_source *src,
		     uint32_t events)
{
	struct hx_control *c = (struct hx_control *)src;
	int fd;

	(void)s;
	(void)events;
	while ((fd = hx_server_accept(src->fd)) >= 0) {
		serve_one(c, fd);
		hx_fd_release_sock(fd); /* what it left queued, too */
	}
}

int hx_control_listen(struct hx_server *srv, const char *path, hx_control_fn fn,
		      void *arg, struct hx_control **out)
{
	struct hx_control *c;
	int fd, r;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	fd = hx_server_listen_unix(path, SOCK_SEQPACKET | SOCK_NONBLOCK, 16);
	if (fd < 0) {
		free(c);
		return fd;
	}
	c->src.fd = fd;
	c->src.handle = on_ready;
	c->srv = srv;
	c->fn = fn;
	c->arg = arg;
	snprintf(c->path, sizeof(c->path), "%s", path);
	r = hx_server_add(srv, &c->src, EPOLLIN);
	if (r) {
		close(fd);
		unlink(path);
		free(c);
		return r;
	}
	*out = c;
	return 0;
}

void hx_control_free(struct hx_control *c)
{
	if (!c)
		return;
	close(c->src.fd);
	unlink(c->path);
	free(c);
}

int hx_control_request(const char *path, const char *request, char *reply,
		       size_t size, int timeout_ms)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	ssize_t n;
	int fd, r = 0;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, request, strlen(request), MSG_NOSIGNAL) < 0) {
		r = -errno;
		goto out;
	}
	do
		n = recv(fd, reply, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		r = -errno;
		goto out;
	}
	reply[n] = '\0';
out:
	close(fd);
	return r;
}
