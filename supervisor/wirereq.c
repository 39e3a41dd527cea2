/* See wirereq.h. */
#include "supervisor/wirereq.h"

#include <stdlib.h>
#include <string.h>

#include "supervisor/procstrv.h"

/* Fills rq from a decoded REQUEST or REPORT (pointers into m and st):
 * the one place where the transport becomes a request. */
void hx_wirereq_from_msg(const struct hx_msg *m, struct hx_request *rq,
			 struct hx_request_storage *st)
{
	size_t i;

	memset(rq, 0, sizeof(*rq));
	rq->call = m->call;
	rq->op = (enum hx_op)m->op;
	rq->path = m->path.s;
	rq->path2 = m->path2.s;
	rq->host = m->host.s;
	rq->has_flags = hx_msg_has(m, HX_TAG_FLAGS);
	rq->flags = m->flags;
	rq->has_mode = hx_msg_has(m, HX_TAG_MODE);
	rq->mode = m->mode;
	rq->has_result = hx_msg_has(m, HX_TAG_RESULT);
	rq->result = m->result;
	rq->truncated = hx_msg_has(m, HX_TAG_TRUNCATED) && m->truncated;
	for (i = 0; i < m->nargs; i++)
		st->argv[i] = m->args[i].s;
	rq->argv = st->argv;
	rq->argc = m->nargs;
	for (i = 0; i < m->nframes; i++)
		st->frames[i] = m->frames[i].s;
	rq->frames = st->frames;
	rq->nframes = m->nframes;
	if (m->naddrs) {
		rq->addr = m->addrs[0].p;
		rq->addrlen = m->addrs[0].len;
	}
	/* the shim's word: rules by protocol are judged on it, and again by
	 * the kernel layer on what the socket is */
	rq->has_proto = hx_msg_has(m, HX_TAG_PROTO);
	rq->proto = (int)m->proto;
}

/* The kernel's bound on an exec's argv and environment (fs/exec.c):
 * more is no environment an exec runs with. */
#define ENV_MAX (6u << 20)

/* An exec's environment, read where the shim says its caller's envp is
 * (in the requester's memory, which waits for the answer): what the
 * question shows and an answer "once" holds for. A claim, as all of the
 * request is: the kernel layer reads the environment the kernel copies
 * again, and an answer for one stands for no other. Not told, or not
 * readable: env_unread (asked again at the exec, if asked). */
void hx_wirereq_env(const struct hx_msg *m, const struct hx_peer *peer,
		    struct hx_request *rq, struct hx_request_storage *st)
{
	struct hx_strblob b = {NULL, 0, 0};
	size_t n = 0, k = 0;
	int e;

	if (rq->op != HX_OP_EXEC || rq->report)
		return; /* a report is of a call made: nothing to hold */
	rq->env_unread = true;
	if (!hx_msg_has(m, HX_TAG_ENVP) || peer->gone || peer->pid <= 0)
		return;
	e = hx_proc_read_strv(peer->tid ? peer->tid : peer->pid, m->envp,
			      ENV_MAX, &b, &n);
	st->env = b.p; /* freed after the decision, read or not */
	if (e || !(st->envp = calloc(n + 1, sizeof(*st->envp))))
		return;
	for (size_t i = 0; i < n; i++) {
		st->envp[i] = st->env + k;
		k += strlen(st->env + k) + 1;
	}
	rq->envp = st->envp;
	rq->envc = n;
	rq->env_unread = false;
}
