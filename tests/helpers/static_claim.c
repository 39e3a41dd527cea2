/* A shim's claim made by a static program (no shim of its own), as
 * the shim asks before a call, for the attack reviews' claim tests:
 *   static_claim claim PATH
 *     asks the session socket (HARNESS_SOCKET) for an open of PATH for
 *     writing (O_WRONLY|O_CREAT|O_TRUNC, mode 0666: what a shell's
 *     "> PATH" opens with); prints "verdict V" and exits without
 *     opening anything (twenty-ninth review, part b: a process gone).
 *   static_claim claim-exec PATH PROG [ARG...]
 *     the same, then execs PROG (the same thread: its number and
 *     process stay; thirtieth review, part a).
 *   static_claim claim-thread-exec PATH PROG [ARG...]
 *     the same, the exec made by a second thread (the leader that
 *     claimed is gone, the new image takes its number). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/wire.h"

static int dial(void)
{
	const char *path = getenv(HX_ENV_SOCKET);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 5};
	int fd;

	if (!path || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static int claim(const char *path)
{
	uint8_t buf[8192], reply[HX_WIRE_MAX];
	struct hx_wreader r;
	struct hx_wire_hdr h;
	struct hx_wbuf w;
	const uint8_t *v;
	uint16_t tag;
	uint16_t len;
	int fd = dial(), verdict = -1;
	ssize_t got;
	size_t n;

	if (fd < 0) {
		printf("no session socket\n");
		return 1;
	}
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 3);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPEN);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	hx_wire_put_u32(&w, HX_TAG_FLAGS, O_WRONLY | O_CREAT | O_TRUNC);
	hx_wire_put_u32(&w, HX_TAG_MODE, 0666);
	n = hx_wire_finish(&w);
	if (send(fd, buf, n, 0) < 0 ||
	    (got = recv(fd, reply, sizeof(reply), 0)) <= 0) {
		printf("closed\n");
		return 1;
	}
	if (hx_wire_open(&r, reply, (size_t)got, &h) == HX_WIRE_OK)
		while (hx_wire_next(&r, &tag, &v, &len) > 0)
			if (tag == HX_TAG_VERDICT && len == 4)
				memcpy(&verdict, v, 4);
	printf("verdict %d\n", verdict);
	return 0;
}

static char **prog;

static void *exec_it(void *arg)
{
	(void)arg;
	execv(prog[0], prog);
	_exit(126);
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc == 3 && !strcmp(argv[1], "claim"))
		return claim(argv[2]);
	if (argc >= 4 && (!strcmp(argv[1], "claim-exec") ||
			  !strcmp(argv[1], "claim-thread-exec"))) {
		if (claim(argv[2]))
			return 1;
		fflush(stdout);
		prog = argv + 3;
		if (!strcmp(argv[1], "claim-exec"))
			exec_it(NULL);
		if (pthread_create(&t, NULL, exec_it, NULL))
			return 1;
		pause();
	}
	fprintf(stderr, "usage: static_claim claim PATH\n"
			"       static_claim claim-exec|claim-thread-exec "
			"PATH PROG [ARG...]\n");
	return 2;
}
