/* harness-mcp-worker: the executing half of harness-mcp. It runs inside
 * the sandbox as the session's agent process and serves the trusted
 * front (in harness-exec's supervisor) over fd 3, so every file it
 * touches and every command it runs meets the same kernel layers and
 * policy as any agent's (docs/mcp.md, "The worker"). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/mcpwork/loop.h"

int main(int argc, char **argv)
{
	struct stat st;
	int fd, rc;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: harness-mcp-worker (started by "
				"harness-mcp with its socket as fd 3)\n");
		return 2;
	}
	if (fstat(3, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "harness-mcp-worker: fd 3 is not a socket\n");
		return 2;
	}
	fcntl(3, F_SETFD, FD_CLOEXEC);
	/* 0, 1 and 2 open, so that no pipe of a child lands on them. */
	for (fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 &&
		    open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			return 2;
	rc = hx_mw_loop_run(3);
	if (rc < 0) {
		fprintf(stderr, "harness-mcp-worker: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}
