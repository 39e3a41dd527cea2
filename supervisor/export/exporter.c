/* The live OTLP exporter; see exporter.h. */
#define _GNU_SOURCE
#include "supervisor/export/exporter.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "supervisor/export/httppost.h"
#include "supervisor/export/logline.h"
#include "supervisor/export/otlp.h"
#include "supervisor/export/proctree.h"
#include "supervisor/export/protobuf.h"

#define EVERY_MS    2000
#define BACKOFF_MAX 30000
#define POST_MS	    2000
#define PENDING_MAX 10000
#define SCOPE	    "harness-exec"

struct hx_exporter {
	char url[2048];
	/* An --audit-log given to sessions before holds their records
	 * first: the trace was the first session's (its session_start, its
	 * trace_id) with its processes sent again as this one's. */
	char session[256];
	int fd, stop[2];
	off_t off;
	char *part; /* a line not ended yet */
	size_t npart;
	struct hx_ptree t;
	struct hx_ptree_proc **pending; /* ended, not sent yet */
	size_t npending, cap;
	unsigned backoff_ms;
	uint64_t next_ms;
	/* The collector was reached this session (a batch taken, or an
	 * HTTP answer): the last batch is worth retrying for a while. */
	bool reached;
	struct hx_exporter_stats st;
	pthread_t thread;
};

/* The log's new whole lines into the process model. */
static void follow(struct hx_exporter *e)
{
	char buf[65536];
	ssize_t n;

	while ((n = pread(e->fd, buf, sizeof(buf), e->off)) > 0) {
		char *p = buf, *end = buf + n, *nl;

		e->off += n;
		while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
			size_t k = (size_t)(nl - p) + 1;
			char *line = realloc(e->part, e->npart + k + 1);

			if (!line)
				return;
			memcpy(line + e->npart, p, k);
			line[e->npart + k] = '\0';
			if (hx_logline_is_session(line, e->npart + k,
						  e->session))
				hx_ptree_take_line(&e->t, line, e->npart + k);
			free(line);
			e->part = NULL;
			e->npart = 0;
			p = nl + 1;
		}
		if (p < end) { /* the start of a line still being written */
			char *q =
			    realloc(e->part, e->npart + (size_t)(end - p));

			if (!q)
				return;
			memcpy(q + e->npart, p, (size_t)(end - p));
			e->part = q;
			e->npart += (size_t)(end - p);
		}
	}
}

/* The processes that ended since, or all (at the end), to pending. */
static void collect(struct hx_exporter *e, bool all)
{
	for (size_t i = 0; i < e->t.n; i++) {
		struct hx_ptree_proc *p = e->t.all[i];

		if (p->exported || (!all && !p->closed))
			continue;
		if (e->npending == e->cap) {
			size_t cap = e->cap ? e->cap * 2 : 256;
			struct hx_ptree_proc **v =
			    reallocarray(e->pending, cap, sizeof(*v));

			if (!v)
				return;
			e->pending = v;
			e->cap = cap;
		}
		p->exported = true;
		e->pending[e->npending++] = p;
	}
	/* A collector away for long: the oldest go, counted. */
	if (e->npending > PENDING_MAX) {
		size_t drop = e->npending - PENDING_MAX;

		e->st.spans_dropped += drop;
		memmove(e->pending, e->pending + drop,
			PENDING_MAX * sizeof(*e->pending));
		e->npending = PENDING_MAX;
	}
}

/* A refusal a later POST of the same bytes cannot change (OTLP/HTTP:
 * only 408, 429, 502-504 are retried; a 400 or 413 is for good). */
static bool refused_for_good(int code)
{
	return code >= 400 && code < 500 && code != 408 && code != 429;
}

/* One POST of the first pending, as many as fit a request; the session's
 * span with the last. 1: taken, 0: refused for good (dropped, counted),
 * -1: to be tried again. */
static int send_one(struct hx_exporter *e, bool with_session)
{
	struct hx_pb b = {0};
	char why[sizeof(e->st.last_error)];
	size_t k;
	bool session;
	int code;

	if (hx_otlp_batch_fit(&e->t, e->pending, e->npending, with_session,
			      SCOPE, HX_OTLP_BATCH_BYTES, &b, &k)) {
		hx_pb_free(&b);
		return -2; /* no session_start yet, or no memory */
	}
	session = with_session && k == e->npending;
	code = hx_http_post(e->url, "application/x-protobuf", b.p, b.len,
			    POST_MS, why, sizeof(why));
	hx_pb_free(&b);
	e->reached |= code > 0;
	if (code < 200 || code >= 300) {
		e->st.failures++;
		snprintf(e->st.last_error, sizeof(e->st.last_error), "%s", why);
		if (!refused_for_good(code))
			return -1;
		e->st.spans_dropped += k + session;
	} else {
		e->st.batches++;
		e->st.spans_sent += k + session;
	}
	/* One batch the collector will never take held back every later
	 * one, the refusals an agent made after it among them. */
	memmove(e->pending, e->pending + k,
		(e->npending - k) * sizeof(*e->pending));
	e->npending -= k;
	return code >= 200 && code < 300;
}

/* What is pending, a request at a time until the monotonic ms until
 * (the rest next time); false when one is to be tried again. */
static bool send_pending(struct hx_exporter *e, bool with_session,
			 uint64_t until)
{
	if (!e->npending && !with_session)
		return true;
	for (;;) {
		int r;

		if (hx_mono_ms() >= until)
			return true;
		r = send_one(e, with_session);

		if (r == -2)
			return !e->t.session_start; /* nothing to say yet */
		if (r < 0)
			return false;
		if (!e->npending) /* the session's span went with the last */
			return true;
	}
}

static void *run(void *arg)
{
	struct hx_exporter *e = arg;
	struct pollfd p = {.fd = e->stop[0], .events = POLLIN};

	for (;;) {
		uint64_t now = hx_mono_ms();
		int wait = e->next_ms > now ? (int)(e->next_ms - now) : 0;

		if (poll(&p, 1, wait) > 0)
			break;
		follow(e);
		collect(e, false);
		if (send_pending(e, false, hx_mono_ms() + EVERY_MS)) {
			e->backoff_ms = 0;
			e->next_ms = hx_mono_ms() + EVERY_MS;
		} else {
			e->backoff_ms =
			    e->backoff_ms ? e->backoff_ms * 2 : 1000;
			if (e->backoff_ms > BACKOFF_MAX)
				e->backoff_ms = BACKOFF_MAX;
			e->next_ms = hx_mono_ms() + e->backoff_ms;
		}
	}
	return NULL;
}

int hx_exporter_start(const char *url, const char *log, const char *session,
		      struct hx_exporter **out)
{
	struct hx_exporter *e = calloc(1, sizeof(*e));
	int r;

	*out = NULL;
	if (!e)
		return -ENOMEM;
	if ((size_t)snprintf(e->session, sizeof(e->session), "%s", session) >=
	    sizeof(e->session)) {
		free(e);
		return -ENAMETOOLONG;
	}
	hx_otlp_url(url, e->url, sizeof(e->url));
	e->fd = open(log, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0 || pipe2(e->stop, O_CLOEXEC)) {
		r = -errno;
		if (e->fd >= 0)
			close(e->fd);
		free(e);
		return r;
	}
	e->next_ms = hx_mono_ms() + EVERY_MS;
	if ((r = pthread_create(&e->thread, NULL, run, e))) {
		close(e->fd);
		close(e->stop[0]);
		close(e->stop[1]);
		free(e);
		return -r;
	}
	*out = e;
	return 0;
}

void hx_exporter_finish(struct hx_exporter *e, int wait_ms,
			struct hx_exporter_stats *st)
{
	uint64_t until = hx_mono_ms() + (uint64_t)wait_ms;
	bool sent;

	memset(st, 0, sizeof(*st));
	if (!e)
		return;
	if (write(e->stop[1], "x", 1) != 1) {
		/* an empty pipe of ours takes it */
	}
	pthread_join(e->thread, NULL);
	follow(e);
	collect(e, true);
	/* A collector never reached (nothing listens, no route) is tried
	 * once: retried, it held every session's end 3 s. */
	while (!(sent = send_pending(e, true, until)) && e->reached &&
	       hx_mono_ms() + 250 < until)
		usleep(250000);
	if (!sent || e->npending) /* the session's span goes with the last */
		e->st.spans_dropped += e->npending + 1;
	*st = e->st;
	close(e->fd);
	close(e->stop[0]);
	close(e->stop[1]);
	free(e->part);
	free(e->pending);
	hx_ptree_free(&e->t);
	free(e);
}
