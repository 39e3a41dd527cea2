/* The seventeenth attack review's claim that is never made: a shim
 * request for an open of PATH for writing, sent by a program that
 * speaks the protocol itself (it is linked statically: no shim), and
 * no call after it.
 *
 *   static_attack17 PATH
 *
 * Prints "verdict V" for the claim (none: no answer). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/wire.h"

static int claim(const char *path)
{
	static uint8_t buf[HX_WIRE_MAX], reply[HX_WIRE_MAX];
	static struct hx_msg m;
	const char *sock = getenv(HX_ENV_SOCKET);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct hx_wbuf w;
	ssize_t got;
	int fd;

	if (!sock || strlen(sock) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 7);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPENAT);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	hx_wire_put_u32(&w, HX_TAG_FLAGS, O_WRONLY | O_CREAT | O_APPEND);
	hx_wire_put_u32(&w, HX_TAG_MODE, 0644);
	if (send(fd, buf, hx_wire_finish(&w), 0) < 0)
		return -1;
	got = recv(fd, reply, sizeof(reply), 0);
	if (got > 0 && hx_wire_decode(reply, (size_t)got, &m) == HX_WIRE_OK)
		printf("verdict %u\n", m.verdict);
	else
		printf("verdict none\n");
	fflush(stdout);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	return claim(argv[1]) ? 1 : 0;
}
