/* The fifteenth attack review's probes (linked statically: no shim).
 *
 *   static_attack15 longunix wire OP    a shim request (OP: connect,
 *                                       send, listen) naming a unix
 *                                       address of 128 bytes, no NUL
 *   static_attack15 longunix SYSCALL    connect, sendto or bind with
 *                                       such an address (raw syscall);
 *                                       abstract: a connect of an
 *                                       abstract name of 127 bytes
 *   static_attack15 truncclaim PATH ARG...
 *                                       a shim request for the exec of
 *                                       PATH ARG... that says its argv
 *                                       was cut, then execve(PATH) with
 *                                       an empty argv; prints "verdict V"
 *   static_attack15 inherit PATH [FD]   on the connection the exec that
 *                                       ran it left open (FD, else
 *                                       HARNESS_CONN's),
 *                                       a request for the write of PATH,
 *                                       then that write; prints
 *                                       "verdict V" and "done"
 *   static_attack15 unconfirmed PATH ARG...
 *                                       opens in a loop (past the log's
 *                                       rate), a shim request
 *                                       for the exec of PATH ARG... that
 *                                       is never made, 3 s more of the
 *                                       loop; prints "verdict V"
 *
 * Prints "verdict V" / "verdict none", or the call's "ok" / "error E",
 * then "alive V" when the session socket still answers a second
 * request (the supervisor survived), else "alive none". */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tests/helpers/wire_client.h"

/* Sends a request of op on addr (len bytes); prints its verdict. */
static void ask(int fd, enum hx_call call, enum hx_op op, const void *addr,
		size_t len)
{
	static uint8_t buf[HX_WIRE_MAX];
	struct hx_wbuf w;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 5);
	hx_wire_put_u32(&w, HX_TAG_CALL, call);
	hx_wire_put_u32(&w, HX_TAG_OP, op);
	hx_wire_put_bytes(&w, HX_TAG_ADDR, addr, len);
	wire_ask(fd, buf, &w);
}

/* A second request, on a connection of its own: a write outside every
 * root, which the supervisor refuses at once (verdict 2) when alive. */
static void alive(void)
{
	static uint8_t buf[HX_WIRE_MAX];
	struct hx_wbuf w;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 6);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPENAT);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_str(&w, HX_TAG_PATH, "/etc/hx-alive");
	wire_ask_as(wire_session(), buf, &w, "alive");
}

static int longunix(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct sockaddr_un *un = (struct sockaddr_un *)&ss;
	socklen_t len = sizeof(ss);
	long r = 0;
	int s;

	memset(&ss, 'a', sizeof(ss));
	un->sun_family = AF_UNIX;
	un->sun_path[0] = '/';
	if (argc == 4 && !strcmp(argv[2], "wire")) {
		enum hx_op op = !strcmp(argv[3], "send")     ? HX_OP_SEND
				: !strcmp(argv[3], "listen") ? HX_OP_LISTEN
							     : HX_OP_CONNECT;

		ask(wire_session(), HX_CALL_CONNECT, op, &ss, len);
	} else if (argc == 3 && !strcmp(argv[2], "abstract")) {
		un->sun_path[0] = '\0'; /* "\0aaa...": an abstract name */
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		r = syscall(SYS_connect, s, &ss, len);
		if (r < 0)
			printf("error %s\n", strerrorname_np(errno));
		else
			printf("ok\n");
		fflush(stdout);
	} else if (argc == 3) {
		s = socket(
		    AF_UNIX,
		    !strcmp(argv[2], "sendto") ? SOCK_DGRAM : SOCK_STREAM, 0);
		if (!strcmp(argv[2], "connect"))
			r = syscall(SYS_connect, s, &ss, len);
		else if (!strcmp(argv[2], "sendto"))
			r = syscall(SYS_sendto, s, "x", 1, 0, &ss, len);
		else if (!strcmp(argv[2], "bind"))
			r = syscall(SYS_bind, s, &ss, len);
		else
			return 2;
		if (r < 0)
			printf("error %s\n", strerrorname_np(errno));
		else
			printf("ok\n");
		fflush(stdout);
	} else {
		return 2;
	}
	usleep(200000);
	alive();
	return 0;
}

/* Opens refused for writing, for ms milliseconds. */
static void flood(long ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		/* allowed (the project), coalesced past the rate as files
		 * are; a refused one is written past it in audit mode, where
		 * it is made (as root it made /etc/hx-flood) */
		close((int)syscall(SYS_openat, AT_FDCWD, "hx-flood",
				   O_WRONLY | O_CREAT, 0600));
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		     (t.tv_nsec - t0.tv_nsec) / 1000000 <
		 ms);
}

/* Claims, on fd, an exec of argv[2] with the argv argv[3..] (its
 * argv said cut when truncated); prints its verdict. */
static void claim_exec(int fd, int argc, char **argv, bool truncated)
{
	static uint8_t buf[HX_WIRE_MAX];
	struct hx_wbuf w;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 9);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_EXECVE);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_EXEC);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	if (truncated)
		hx_wire_put_u32(&w, HX_TAG_TRUNCATED, 1);
	hx_wire_put_str(&w, HX_TAG_PATH, argv[2]);
	for (int i = 3; i < argc; i++)
		hx_wire_put_str(&w, HX_TAG_ARG, argv[i]);
	wire_ask(fd, buf, &w);
}

static int unconfirmed(int argc, char **argv)
{
	int fd = wire_session();

	flood(500);
	claim_exec(fd, argc, argv, false);
	flood(3000);
	return 0;
}

static int truncclaim(int argc, char **argv)
{
	char *none[] = {NULL};

	claim_exec(wire_session(), argc, argv, true);
	syscall(SYS_execve, argv[2], none, none);
	printf("error %s\n", strerrorname_np(errno));
	return 1;
}

static int inherit(const char *path, const char *fdarg)
{
	static uint8_t buf[HX_WIRE_MAX];
	const char *v = getenv(HX_ENV_CONN);
	struct hx_wbuf w;
	int fd = fdarg ? atoi(fdarg) : v ? atoi(v) : -1, out;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 10);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPENAT);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	hx_wire_put_u32(&w, HX_TAG_FLAGS, O_WRONLY | O_CREAT | O_TRUNC);
	hx_wire_put_u32(&w, HX_TAG_MODE, 0644);
	wire_ask(fd, buf, &w);
	out = (int)syscall(SYS_openat, AT_FDCWD, path,
			   O_WRONLY | O_CREAT | O_TRUNC, 0644);
	printf(out >= 0 ? "done\n" : "error\n");
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "inherit"))
		return inherit(argv[2], argc == 4 ? argv[3] : NULL);
	if (argc >= 3 && !strcmp(argv[1], "truncclaim"))
		return truncclaim(argc, argv);
	if (argc >= 4 && !strcmp(argv[1], "unconfirmed"))
		return unconfirmed(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "longunix"))
		return longunix(argc, argv);
	return 2;
}
