/* The poll loop; see loop.h. */
#define _GNU_SOURCE
#include "tools/mcpwork/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "tools/mcpwork/args.h"
#include "tools/mcpwork/bounds.h"
#include "tools/mcpwork/coderun.h"
#include "tools/mcpwork/fileops.h"
#include "tools/mcpwork/search.h"
#include "tools/mcpwork/walk.h"
#include "tools/mcpwork/wire.h"

#define READ_CHUNK (64u << 10)

struct loop {
	int fd;
	bool exiting;
	struct hx_mw_wire_framer framer;
	struct hx_mw_coderun *runs[HX_MW_RUNS_MAX];
	unsigned nruns;
};

static const struct {
	const char *name;
	int (*fn)(json_t *args, json_t **res);
} tools[] = {
    {"file_read", hx_mw_fileops_read},	 {"file_write", hx_mw_fileops_write},
    {"file_patch", hx_mw_fileops_patch}, {"list_dir", hx_mw_walk_list_dir},
    {"search", hx_mw_search_run},
};

/* SIGCHLD wakes the poll through this pipe. */
static int wake_fd[2] = {-1, -1};

static void on_sigchld(int sig)
{
	int saved = errno;
	ssize_t w = write(wake_fd[1], "c", 1);

	(void)sig;
	(void)w;
	errno = saved;
}

static void send_msg(struct loop *l, json_t *msg)
{
	int rc;

	if (!msg)
		return;
	rc = hx_mw_wire_send(l->fd, msg);
	json_decref(msg);
	if (rc == -EPIPE || rc == -ECONNRESET)
		l->exiting = true;
}

static void reply(struct loop *l, uint64_t id, int rc, json_t *body)
{
	int s;

	if (!body) /* a tool out of memory while making its answer */
		hx_mw_args_error(&body, ENOMEM, "out of memory");
	s = hx_mw_wire_reply(l->fd, id, rc < 0, body);
	if (s == -EPIPE || s == -ECONNRESET)
		l->exiting = true;
}

static void start_run(struct loop *l, uint64_t id, json_t *args)
{
	struct hx_mw_coderun *r;
	json_t *res = NULL;
	int rc;

	if (l->nruns == HX_MW_RUNS_MAX) {
		rc = hx_mw_args_error(&res, EAGAIN,
				      "%u code_run calls run already",
				      HX_MW_RUNS_MAX);
		return reply(l, id, rc, res);
	}
	rc = hx_mw_coderun_start(id, args, hx_mono_ms(), &r, &res);
	if (rc < 0)
		return reply(l, id, rc, res);
	l->runs[l->nruns++] = r;
	send_msg(l, json_pack("{s:I, s:{s:i}}", "id", (json_int_t)id, "started",
			      "pid", (int)hx_mw_coderun_pid(r)));
}

static void request(struct loop *l, const struct hx_mw_msg *m)
{
	json_t *res = NULL;
	size_t i;
	int rc;

	if (!strcmp(m->tool, "code_run"))
		return start_run(l, m->id, m->args);
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (!strcmp(m->tool, tools[i].name))
			break;
	if (i == sizeof(tools) / sizeof(tools[0]))
		rc = hx_mw_args_error(&res, ENOSYS, "unknown tool \"%s\"",
				      m->tool);
	else
		rc = tools[i].fn(m->args, &res);
	reply(l, m->id, rc, res);
}

static void cancel(struct loop *l, uint64_t id)
{
	unsigned i;

	for (i = 0; i < l->nruns; i++)
		if (hx_mw_coderun_id(l->runs[i]) == id)
			hx_mw_coderun_cancel(l->runs[i]);
}

static void on_line(void *ctx, char *p, size_t n, bool too_long)
{
	struct loop *l = ctx;
	struct hx_mw_msg m;
	json_t *res;
	uint64_t id;
	int rc;

	if (l->exiting)
		return;
	if (too_long) {
		if (hx_mw_wire_peek_id(p, n, &id) < 0) {
			fprintf(stderr,
				"harness-mcp-worker: a line longer "
				"than %u bytes, ignored\n",
				HX_MW_LINE_MAX);
			return;
		}
		rc = hx_mw_args_error(&res, E2BIG,
				      "the request is longer than %u bytes",
				      HX_MW_LINE_MAX);
		return reply(l, id, rc, res);
	}
	hx_mw_wire_parse(p, n, &m);
	switch (m.kind) {
	case HX_MW_MSG_REQUEST:
		request(l, &m);
		break;
	case HX_MW_MSG_CANCEL:
		cancel(l, m.id);
		break;
	case HX_MW_MSG_EXIT:
		l->exiting = true;
		break;
	case HX_MW_MSG_BAD:
		if (!m.has_id) {
			fprintf(stderr, "harness-mcp-worker: %s; ignored\n",
				m.why);
			break;
		}
		rc = hx_mw_args_error(&res, EINVAL, "%s", m.why);
		reply(l, m.id, rc, res);
		break;
	}
	hx_mw_wire_msg_clear(&m);
}

static void read_front(struct loop *l)
{
	char *buf = malloc(READ_CHUNK);
	ssize_t n;

	if (!buf)
		return; /* the next poll tries again */
	do
		n = read(l->fd, buf, READ_CHUNK);
	while (n < 0 && errno == EINTR);
	if (n == 0 || (n < 0 && errno != EAGAIN))
		l->exiting = true; /* the front is gone */
	else if (n > 0 &&
		 hx_mw_wire_feed(&l->framer, buf, (size_t)n, on_line, l) < 0)
		fprintf(stderr, "harness-mcp-worker: out of memory; a request "
				"was dropped\n");
	free(buf);
}

/* Ticks every run; finished ones are answered and dropped. The least
 * time until one needs a tick again, -1 for none. */
static int tick_runs(struct loop *l)
{
	uint64_t now = hx_mono_ms();
	unsigned i = 0;
	int wait = -1, w, rc;
	json_t *p, *res;

	while (i < l->nruns) {
		struct hx_mw_coderun *r = l->runs[i];
		uint64_t id = hx_mw_coderun_id(r);

		w = hx_mw_coderun_tick(r, now);
		if (!hx_mw_coderun_done(r)) {
			p = hx_mw_coderun_progress(r, now);
			if (p)
				send_msg(l, json_pack("{s:I, s:o}", "id",
						      (json_int_t)id,
						      "progress", p));
			if (w >= 0 && (wait < 0 || w < wait))
				wait = w;
			i++;
			continue;
		}
		rc = hx_mw_coderun_result(r, &res);
		reply(l, id, rc, res);
		hx_mw_coderun_free(r);
		l->runs[i] = l->runs[--l->nruns];
	}
	return wait;
}

static void wait_loop(struct loop *l)
{
	struct pollfd p[2 + HX_MW_RUNS_MAX * HX_MW_CODERUN_FDS];
	int n, wait;
	unsigned k;
	char drain[64];

	while (!l->exiting) {
		wait = tick_runs(l);
		if (l->exiting)
			break;
		p[0] = (struct pollfd){.fd = l->fd, .events = POLLIN};
		p[1] = (struct pollfd){.fd = wake_fd[0], .events = POLLIN};
		n = 2;
		for (k = 0; k < l->nruns; k++)
			n += hx_mw_coderun_fds(l->runs[k], p + n);
		if (poll(p, (nfds_t)n, wait) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "harness-mcp-worker: poll: %s\n",
				strerror(errno));
			break;
		}
		if (p[1].revents)
			while (read(wake_fd[0], drain, sizeof(drain)) > 0)
				;
		for (k = 0; k < l->nruns; k++)
			hx_mw_coderun_io(l->runs[k], p + 2, n - 2);
		if (p[0].revents)
			read_front(l);
	}
}

int hx_mw_loop_run(int fd)
{
	struct loop *l = calloc(1, sizeof(*l));
	struct sigaction sa = {.sa_handler = on_sigchld,
			       .sa_flags = SA_RESTART | SA_NOCLDSTOP};
	unsigned i;

	if (!l)
		return -ENOMEM;
	if (wake_fd[0] < 0 && pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK) < 0) {
		free(l);
		return -errno;
	}
	l->fd = fd;
	l->framer.max = HX_MW_LINE_MAX;
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	send_msg(l, json_pack("{s:{s:i, s:i}}", "hello", "pid", (int)getpid(),
			      "version", 1));
	wait_loop(l);
	/* The front is gone or said exit: nothing outlives it. */
	for (i = 0; i < l->nruns; i++)
		hx_mw_coderun_free(l->runs[i]);
	hx_mw_wire_framer_free(&l->framer);
	free(l);
	return 0;
}
