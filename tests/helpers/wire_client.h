/* What the static test programs that speak the shim's protocol
 * themselves share (they are linked statically: no shim): a connection
 * to the session's socket, and a request's verdict, printed. */
#ifndef HX_TEST_WIRE_CLIENT_H
#define HX_TEST_WIRE_CLIENT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/wire.h"

/* A connection to the session's socket ($HARNESS_SOCKET), or -1. */
static inline int wire_session(void)
{
	const char *sock = getenv(HX_ENV_SOCKET);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (!sock || strlen(sock) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends the request w holds (in buf) on fd and prints its verdict as
 * "LABEL V", or "LABEL none" when no answer came. -1 when it could not
 * be sent. */
static inline int wire_ask_as(int fd, const uint8_t *buf, struct hx_wbuf *w,
			      const char *label)
{
	static uint8_t reply[HX_WIRE_MAX];
	static struct hx_msg m;
	ssize_t got = -1;
	int sent = fd >= 0 && send(fd, buf, hx_wire_finish(w), 0) > 0;

	if (sent)
		got = recv(fd, reply, sizeof(reply), 0);
	if (got > 0 && hx_wire_decode(reply, (size_t)got, &m) == HX_WIRE_OK)
		printf("%s %u\n", label, m.verdict);
	else
		printf("%s none\n", label);
	fflush(stdout);
	return sent ? 0 : -1;
}

/* wire_ask_as, printed as "verdict V". */
static inline int wire_ask(int fd, const uint8_t *buf, struct hx_wbuf *w)
{
	return wire_ask_as(fd, buf, w, "verdict");
}

#endif
