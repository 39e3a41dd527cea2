/* The twenty-ninth attack review's (part c) static probes (tests/
 * integration/test_attack29c.py). No shim: each call is a raw system
 * call.
 *
 *   wire-sendmsg-again PATH
 *	connects to the session socket as the shim does, sends a request
 *	to write PATH/ok by send (never emulated) and reads its verdict
 *	(the server's end has then sent, which names it), then a request
 *	to write PATH by sendmsg (which the kernel layer emulates, sending
 *	from a process of its own); prints "pid P first N send R reply M"
 *	(N: the first verdict's bytes, R: the sendmsg's result or errno
 *	name, M: its reply's bytes or -1).
 *   hold-conns N CMD
 *	connects to the session socket N times (or until refused) and
 *	holds every connection while /bin/sh runs CMD; prints "held K
 *	ERRNO" first. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/wire.h"

static const char *err(int e)
{
	const char *s = strerrorname_np(e);

	return s ? s : "E?";
}

static int dial_once(void)
{
	const char *path = getenv(HX_ENV_SOCKET);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (!path || strlen(path) >= sizeof(sa.sun_path))
		return -EINVAL;
	strcpy(sa.sun_path, path);
	fd =
	    (int)syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_connect, fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static int hold_conns(int n, const char *cmd)
{
	int held = 0, e = 0;

	while (held < n && (e = dial_once()) >= 0) {
		held++;
		e = 0;
	}
	printf("held %d %s\n", held, e ? err(-e) : "0");
	fflush(stdout);
	return system(cmd) ? 1 : 0;
}

static int dial(void)
{
	const char *path = getenv(HX_ENV_SOCKET);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 5};
	int fd;

	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "no %s\n", HX_ENV_SOCKET);
		exit(2);
	}
	strcpy(sa.sun_path, path);
	fd =
	    (int)syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    syscall(SYS_connect, fd, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("connect %s\n", err(errno));
		exit(2);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static size_t request(uint8_t *buf, size_t cap, const char *path)
{
	struct hx_wbuf w;

	hx_wire_begin(&w, buf, cap, HX_MSG_REQUEST, 9);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPEN);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	return hx_wire_finish(&w);
}

static int wire_sendmsg_again(const char *path)
{
	uint8_t buf[8192], reply[HX_WIRE_MAX];
	char ok[4096];
	struct iovec io;
	struct msghdr m = {0};
	int fd = dial();
	ssize_t first, got = -1;
	long s;

	snprintf(ok, sizeof(ok), "%s/ok", path);
	first = syscall(SYS_sendto, fd, buf, request(buf, sizeof(buf), ok),
			MSG_NOSIGNAL, NULL, 0);
	if (first > 0)
		first = recv(fd, reply, sizeof(reply), 0);
	io = (struct iovec){buf, request(buf, sizeof(buf), path)};
	m.msg_iov = &io;
	m.msg_iovlen = 1;
	s = syscall(SYS_sendmsg, fd, &m, MSG_NOSIGNAL);
	printf("pid %d first %zd", (int)getpid(), first);
	if (s < 0)
		printf(" send %s", err(errno));
	else
		printf(" send %ld", s);
	if (s > 0)
		got = recv(fd, reply, sizeof(reply), 0);
	printf(" reply %zd\n", got);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "wire-sendmsg-again"))
		return wire_sendmsg_again(argv[2]);
	if (argc > 3 && !strcmp(argv[1], "hold-conns"))
		return hold_conns(atoi(argv[2]), argv[3]);
	fprintf(stderr, "usage: static_attack29c wire-sendmsg-again PATH | "
			"hold-conns N CMD\n");
	return 2;
}
