/* The fourteenth attack review's static probes (tests/integration/
 * test_attack14.py). No shim: each call is a raw system call.
 *
 *   wire-sendmsg PATH
 *	connects to the session socket as the shim does and sends, by
 *	sendmsg (which the kernel layer emulates, sending from a process
 *	of its own), a request to write PATH; prints "pid P send R reply N"
 *	(R: the sendmsg's result or errno name, N: the reply's bytes or
 *	-1). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
	fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC,
			  0);
	if (fd < 0 ||
	    syscall(SYS_connect, fd, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("connect %s\n", err(errno));
		exit(2);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static int wire_sendmsg(const char *path)
{
	uint8_t buf[8192], reply[HX_WIRE_MAX];
	struct hx_wbuf w;
	struct iovec io;
	struct msghdr m = {0};
	int fd = dial();
	long s;
	ssize_t got = -1;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 9);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPEN);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	io = (struct iovec){buf, hx_wire_finish(&w)};
	m.msg_iov = &io;
	m.msg_iovlen = 1;
	s = syscall(SYS_sendmsg, fd, &m, MSG_NOSIGNAL);
	if (s < 0)
		printf("pid %d send %s", (int)getpid(), err(errno));
	else
		printf("pid %d send %ld", (int)getpid(), s);
	if (s > 0)
		got = recv(fd, reply, sizeof(reply), 0);
	printf(" reply %zd\n", got);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "wire-sendmsg"))
		return wire_sendmsg(argv[2]);
	fprintf(stderr, "usage: static_attack14 wire-sendmsg PATH\n");
	return 2;
}
