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

#include "tests/helpers/wire_client.h"

static int claim(const char *path)
{
	static uint8_t buf[HX_WIRE_MAX];
	struct hx_wbuf w;
	int fd = wire_session(), e;

	if (fd < 0)
		return -1;
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 7);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPENAT);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	hx_wire_put_u32(&w, HX_TAG_FLAGS, O_WRONLY | O_CREAT | O_APPEND);
	hx_wire_put_u32(&w, HX_TAG_MODE, 0644);
	e = wire_ask(fd, buf, &w);
	close(fd);
	return e;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	return claim(argv[1]) ? 1 : 0;
}
