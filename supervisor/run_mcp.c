/* harness-mcp in harness-exec's flow: the worker is the session's first
 * process, the front serves the client on the loop; see run_int.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "supervisor/mcp/front.h"
#include "supervisor/run_int.h"
#include "supervisor/say.h"

int hx_run_mcp_pair(struct run *r)
{
	r->mcp_fd[0] = r->mcp_fd[1] = -1;
	if (!r->o->mcp)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->mcp_fd)) {
		hx_say("mcp: socketpair: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The sandbox closes every fd past 2 (sandbox.h): the socket waits at
 * 0 meanwhile, and the client's stdin and stdout never reach the
 * worker. */
void hx_run_mcp_child(struct run *r)
{
	int null;

	if (!r->o->mcp)
		return;
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(r->mcp_fd[1], 0) < 0 || dup2(null, 1) < 0) {
		fprintf(stderr, "harness-mcp: worker's fds: %s\n",
			strerror(errno));
		_exit(126);
	}
}

void hx_run_mcp_child_sandboxed(struct run *r)
{
	if (r->o->mcp && (dup2(0, 3) < 0 || dup2(1, 0) < 0)) {
		fprintf(stderr, "harness-mcp: worker's fds: %s\n",
			strerror(errno));
		_exit(126);
	}
}

int hx_run_mcp_start(struct run *r)
{
	struct hx_mcp_opts mo = {
	    .in_fd = 0,
	    .out_fd = 1,
	    .worker_fd = r->mcp_fd[0],
	    .worker = r->child,
	    .gate = &r->gate, /* started later, before the worker's exec */
	    .project = r->cwd,
	    .session = r->sess.id,
	    .per_minute = r->o->mcp_per_minute,
	    .concurrent = r->o->mcp_concurrent,
	    .max_output = r->o->mcp_max_output,
	};
	int e;

	if (!r->o->mcp)
		return 0;
	close(r->mcp_fd[1]);
	r->mcp_fd[1] = -1;
	e = hx_mcp_start(&r->pl, r->srv, &mo, &r->mcp);
	if (e) {
		hx_say("mcp: cannot serve the client%s: %s",
		       e == -EBADF ? " (stdin must be a pipe or a socket)" : "",
		       strerror(-e));
		return -1;
	}
	r->mcp_fd[0] = -1; /* the front's now */
	return 0;
}

void hx_run_mcp_stop(struct run *r)
{
	hx_mcp_free(r->mcp);
	r->mcp = NULL;
	for (int i = 0; i < 2; i++)
		if (r->mcp_fd[i] >= 0)
			close(r->mcp_fd[i]);
	r->mcp_fd[0] = r->mcp_fd[1] = -1;
}
