/* A shim request for an exec that claims one argv, then the exec of
 * another by raw syscall (it is linked statically: no shim).
 *
 *   static_exec_claim [-c] PATH CLAIMED... -- RAN...
 *       asks for PATH with argv CLAIMED, prints "verdict V", then
 *       execve(PATH, RAN); with -c, a child it forks makes that execve
 *       (its pid printed: "child N") and it waits for it */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/helpers/wire_client.h"

int main(int argc, char **argv)
{
	static uint8_t buf[HX_WIRE_MAX];
	struct hx_wbuf w;
	int fd, i, sep = 0, st;
	bool by_child = argc > 1 && !strcmp(argv[1], "-c");
	pid_t kid;

	argc -= by_child;
	argv += by_child;
	for (i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			sep = i;
	if (argc < 4 || !sep || (fd = wire_session()) < 0)
		return 2;
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 9);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_EXECVE);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_EXEC);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_str(&w, HX_TAG_PATH, argv[1]);
	for (i = 2; i < sep; i++)
		hx_wire_put_str(&w, HX_TAG_ARG, argv[i]);
	if (wire_ask(fd, buf, &w))
		return 2;
	if (by_child && (kid = fork()) > 0) {
		printf("child %d\n", (int)kid);
		fflush(stdout);
		if (waitpid(kid, &st, 0) != kid)
			return 1;
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	execve(argv[1], argv + sep + 1, NULL);
	perror("execve");
	return 1;
}
