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
#include <sys/time.h>

#include "tests/helpers/wire_client.h"

static int claim(const char *path)
{
	struct timeval tv = {.tv_sec = 5}; /* no answer: "verdict none" */
	uint8_t buf[8192];
	struct hx_wbuf w;
	int fd = wire_session();

	if (fd < 0) {
		printf("no session socket\n");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 3);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPEN);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	hx_wire_put_u32(&w, HX_TAG_FLAGS, O_WRONLY | O_CREAT | O_TRUNC);
	hx_wire_put_u32(&w, HX_TAG_MODE, 0666);
	return wire_ask(fd, buf, &w) ? 1 : 0;
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
