/* harness-mcp in harness-exec's flow: the worker is the session's first
 * process, the front serves the client on the loop; see run_int.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "supervisor/fmt.h"
#include "supervisor/metrics_serve.h"
#include "supervisor/mcp/front.h"
#include "supervisor/run_int.h"
#include "supervisor/say.h"
#include "supervisor/unixlisten.h"

/* --http's token: $HARNESS_MCP_TOKEN, else 128 random bits. */
static int make_token(struct run *r)
{
	const char *env = getenv("HARNESS_MCP_TOKEN");
	uint8_t raw[16];
	size_t n = env ? strlen(env) : 0;

	if (env && n >= 16 && n < sizeof(r->mcp_token) &&
	    strspn(env, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			"0123456789-._~+/=") == n) {
		memcpy(r->mcp_token, env, n + 1);
		return 0;
	}
	if (env) {
		hx_say("mcp: HARNESS_MCP_TOKEN must be 16 to 127 characters "
		       "of a bearer token ([A-Za-z0-9-._~+/=])");
		return -1;
	}
	if (getrandom(raw, sizeof(raw), 0) != sizeof(raw))
		return -1;
	hx_fmt_hex(raw, sizeof(raw), r->mcp_token);
	return 0;
}

/* The URL and the token in the session dir, which only the user
 * reads (the agent's policy denies it). */
static int write_endpoint(struct run *r, const char *bound)
{
	char path[PATH_MAX + 16];
	const char *host = r->mcp_sock[0] ? "localhost" : bound;
	char url[160];
	json_t *ep;
	FILE *f;
	int fd, e;

	snprintf(path, sizeof(path), "%s/mcp.json", r->sess.dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		hx_say("mcp: %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(url, sizeof(url), "http://%s/mcp", host);
	ep = json_pack("{s:s,s:s,s:s}", "url", url, "token", r->mcp_token,
		       "session", r->sess.id);
	if (ep && r->mcp_sock[0])
		json_object_set_new(ep, "socket", json_string(r->mcp_sock));
	e = ep ? json_dumpf(ep, f, JSON_COMPACT) : -1;
	json_decref(ep);
	if (e || fputc('\n', f) == EOF) {
		fclose(f);
		return -1;
	}
	if (fclose(f))
		return -1;
	fprintf(stderr,
		"harness-mcp: MCP at %s%s%s (its bearer token is in %s)\n", url,
		r->mcp_sock[0] ? " on unix:" : "", r->mcp_sock, path);
	return 0;
}

/* --http unix:PATH: a socket file only the user may connect to (0600,
 * made where nobody can touch it first: unixlisten.h; http.c also
 * refuses a peer of another user or of the session), which the agent
 * cannot reach, remove or rename (harness:protect, by inode), nor
 * re-point by moving or replacing a directory or symlink on its path
 * (the way to it, hx_pipeline_protect_way). A stale one (nothing
 * listens) is replaced. */
static int unix_listen(struct run *r, const char *path)
{
	struct stat *st = &r->mcp_sock_file;
	int fd, e;

	if (path[0] != '/' || strlen(path) >= sizeof(r->mcp_sock)) {
		hx_say("mcp: --http unix:PATH takes an absolute path of at "
		       "most %zu bytes",
		       sizeof(r->mcp_sock) - 1);
		return -1;
	}
	fd = hx_unix_listen(path, SOCK_STREAM, 64, true, st);
	if (fd < 0) {
		hx_say("mcp: %s: %s", path,
		       fd == -EADDRINUSE ? "in use (another session's?)"
					 : strerror(-fd));
		return -1;
	}
	snprintf(r->mcp_sock, sizeof(r->mcp_sock), "%s", path);
	r->mcp_http_fd = fd;
	/* and every other session's agent's (hx_session_register) */
	if ((e = hx_session_note_file(&r->sess, path)) ||
	    (e = hx_pipeline_protect_ino(&r->pl, st->st_dev, st->st_ino)) ||
	    (e = hx_pipeline_protect_way(&r->pl, path))) {
		hx_say("mcp: %s: %s", path,
		       e == -ENOSPC ? "too many directories and symlinks on "
				      "its way to protect"
				    : strerror(-e));
		return -1;
	}
	return 0;
}

/* --http: a loopback TCP listener or a Unix socket, out of the agent's
 * reach. */
static int open_http(struct run *r)
{
	const char *a = r->o->mcp_http;
	char bound[128], err[256];
	int e;

	if (make_token(r)) {
		hx_say("mcp: no token");
		return -1;
	}
	if (!strncmp(a, "unix:", 5))
		return unix_listen(r, a + 5) ? -1 : write_endpoint(r, "");
	if (a[0] == '/') {
		hx_say("mcp: --http takes a loopback [HOST:]PORT or unix:PATH");
		return -1;
	}
	if (hx_metrics_listen(a, &r->mcp_http_fd, bound, sizeof(bound), err,
			      sizeof(err))) {
		hx_say("mcp: %s", err);
		return -1;
	}
	if ((e = hx_pipeline_protect_endpoint(&r->pl, r->mcp_http_fd))) {
		hx_say("mcp: %s", strerror(-e));
		return -1;
	}
	return write_endpoint(r, bound);
}

int hx_run_mcp_pair(struct run *r)
{
	r->mcp_fd[0] = r->mcp_fd[1] = -1;
	if (!r->o->mcp)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->mcp_fd)) {
		hx_say("mcp: socketpair: %s", strerror(errno));
		return -1;
	}
	return r->o->mcp_http ? open_http(r) : 0;
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
	    .worker_fd_pin = r->child_fd,
	    .gate = &r->gate, /* started later, before the worker's exec */
	    .project = r->cwd,
	    .wt = r->wt,
	    .session = r->sess.id,
	    .per_minute = r->o->mcp_per_minute,
	    .concurrent = r->o->mcp_concurrent,
	    .max_output = r->o->mcp_max_output,
	    .http_fd = r->mcp_http_fd,
	    .http_token = r->mcp_token,
	};
	int e;

	if (!r->o->mcp)
		return 0;
	close(r->mcp_fd[1]);
	r->mcp_fd[1] = -1;
	e = hx_mcp_start(&r->pl, r->srv, &mo, &r->mcp);
	r->mcp_http_fd = -1; /* the front's now, or closed */
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
	if (r->mcp_http_fd >= 0)
		close(r->mcp_http_fd);
	r->mcp_fd[0] = r->mcp_fd[1] = r->mcp_http_fd = -1;
	if (r->mcp_sock[0])
		hx_unix_remove(r->mcp_sock, &r->mcp_sock_file);
	r->mcp_sock[0] = '\0';
}
