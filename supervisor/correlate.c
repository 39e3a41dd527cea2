/* The shim's and the kernel layer's views of one call, matched: recent
 * shim decisions by thread, and the processes that run the shim. See
 * correlate.h. */
#define _GNU_SOURCE
#include "supervisor/correlate.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "policy/policy.h"
#include "supervisor/record.h"
#include "supervisor/sha256.h"

/* Recent shim decisions, by thread: 4-way sets indexed by tid, so that
 * one thread the scheduler holds back keeps its claim while others
 * make thousands (a ring of the last 256 dropped it under load, and the
 * kernel's view of the call became a second record). */
#define CORR_WAYS 4
#define CORR_SETS 1024
#define CORR_N	  (CORR_WAYS * CORR_SETS)
#define CORR_MS	  2000 /* a shim request older than this is not "just before" */
#define HELLO_N	  4096 /* processes that said HELLO, direct-mapped by pid */
#define GONE_N	  1024 /* tasks the exec gate saw exit, the newest kept */

struct corr {
	pid_t tid, pid;
	int op;
	uint64_t ms, seq;
	struct hx_corr_key key;
	enum hx_verdict verdict;
	uint64_t exits; /* hx_pl_kernel.ngone when it was made */
	bool used;
	/* Logged as "shim+kernel" before the kernel saw it (the record is
	 * written before the call may happen); cleared when it does, else
	 * a kernel_unconfirmed record says so. */
	bool pending;
};

struct hx_pl_kernel {
	struct corr c[CORR_N];
	bool sees_exec, sees_reads; /* notified beyond the fixed list */
	struct {
		pid_t pid;
		uint64_t exe;
		bool shim;	/* said HELLO, or has the shim mapped */
		uint64_t exits; /* ngone when last known to hold */
	} hello[HELLO_N];
	/* The tasks seen to exit (a ring, written by the exec gate's
	 * thread alone) and how many: a claim is its thread's only while
	 * that thread lives. Its number freed, another process given it
	 * (an agent cycles them all in about a second under the gate)
	 * made the claimed call, and the claimer's record, through the
	 * shim, stood for it. */
	_Atomic uint64_t ngone;
	_Atomic pid_t gone[GONE_N];
};

/* A HELLO's image, by name: a hint of which processes have the shim,
 * never what a record stands for. */
static uint64_t exe_key(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; s && *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

struct hx_corr_key hx_correlate_key(const char *obj, const char *detail,
				    const char *const *v, size_t n)
{
	struct hx_corr_key k;
	uint8_t md[32];

	hx_sha256_strv2(obj ? obj : "", detail ? detail : "", v, n, md);
	memcpy(k.w, md, sizeof(k.w));
	return k;
}

int hx_correlate_enable(struct hx_pipeline *pl)
{
	if (!pl->kern)
		pl->kern = calloc(1, sizeof(*pl->kern));
	return pl->kern ? 0 : -ENOMEM;
}

void hx_correlate_free(struct hx_pipeline *pl)
{
	free(pl->kern);
	pl->kern = NULL;
}

void hx_correlate_gone(struct hx_pipeline *pl, pid_t tid)
{
	struct hx_pl_kernel *k = pl ? pl->kern : NULL;
	uint64_t n;

	if (!k)
		return;
	n = atomic_load_explicit(&k->ngone, memory_order_relaxed);
	atomic_store_explicit(&k->gone[n & (GONE_N - 1)], tid,
			      memory_order_relaxed);
	atomic_store_explicit(&k->ngone, n + 1, memory_order_release);
}

/* Whether task tid has exited since the ring counted since (n now), or
 * too many tasks have to tell (the ring's older half may be written
 * meanwhile). Most are looked up before any task exits: no scan. */
static bool gone_since(const struct hx_pl_kernel *k, uint64_t since, uint64_t n,
		       pid_t tid)
{
	if (n - since >= GONE_N / 2)
		return true;
	for (uint64_t i = since; i < n; i++)
		if (atomic_load_explicit(&k->gone[i & (GONE_N - 1)],
					 memory_order_relaxed) == tid)
			return true;
	return false;
}

/* Whether c's thread has exited since c was made. */
static bool claimer_gone(const struct hx_pl_kernel *k, const struct corr *c)
{
	return gone_since(k, c->exits,
			  atomic_load_explicit(&k->ngone, memory_order_acquire),
			  c->tid);
}

void hx_correlate_hello(struct hx_pipeline *pl, pid_t pid, const char *exe)
{
	size_t i = (size_t)pid % HELLO_N;

	if (!pl->kern || pid <= 0)
		return;
	pl->kern->hello[i].pid = pid;
	pl->kern->hello[i].exe = exe_key(exe);
	pl->kern->hello[i].shim = true;
	pl->kern->hello[i].exits =
	    atomic_load_explicit(&pl->kern->ngone, memory_order_acquire);
}

/* Whether the shim is mapped into pid: the HELLO travels on another
 * channel than the kernel's notification and may not have been read
 * yet when the process's first raw syscall arrives. */
/* Through the calling thread (tid; 0: the leader): a zombie leader's
 * maps read nothing while its other threads run on (an unmarked bypass
 * of a raw call, whenever its HELLO had not been seen first). */
static bool maps_have_shim(pid_t pid, pid_t tid)
{
	char path[64], buf[8192];
	bool found = false;
	size_t keep = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)pid,
		 (int)(tid > 0 ? tid : pid));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (!found &&
	       (n = read(fd, buf + keep, sizeof(buf) - 1 - keep)) > 0) {
		buf[keep + (size_t)n] = '\0';
		found = strstr(buf, "/libharness-shim.so") != NULL;
		/* Carry a tail over, in case the name straddles two reads. */
		keep = keep + (size_t)n > 32 ? 32 : keep + (size_t)n;
		memmove(buf, buf + strlen(buf) - keep, keep);
	}
	close(fd);
	return found;
}

/* The process runs an image with the shim loaded: known from its HELLO,
 * else looked up once per image and remembered. */
bool hx_correlate_has_shim(const struct hx_pipeline *pl,
			   const struct hx_peer *p)
{
	struct hx_pl_kernel *k = pl->kern;
	size_t i = (size_t)p->pid % HELLO_N;
	uint64_t exe = exe_key(p->exe),
		 n = atomic_load_explicit(&k->ngone, memory_order_acquire);

	/* A mark is its process's only while that process lives: given its
	 * number, another of the same image without the shim had its raw
	 * calls recorded as bypasses of a shim it never loaded. The exec
	 * gate's ring of exits says so (no scan while none exited). */
	if (k->hello[i].pid != p->pid || k->hello[i].exe != exe ||
	    gone_since(k, k->hello[i].exits, n, p->pid)) {
		k->hello[i].pid = p->pid;
		k->hello[i].exe = exe;
		k->hello[i].shim = maps_have_shim(p->pid, p->tid);
	}
	k->hello[i].exits = n;
	return k->hello[i].shim;
}

static void unconfirmed(struct hx_pipeline *pl, struct corr *c)
{
	struct hx_peer peer = {.pid = c->pid, .tid = c->tid};
	json_t *rec = hx_record_new(pl, &peer, "kernel_unconfirmed", NULL);

	c->pending = false;
	if (!rec)
		return;
	hx_record_set_str(rec, "op", hx_op_name((enum hx_op)c->op));
	/* 0: the shim's record was coalesced (audit_overflow counts it). */
	if (c->seq)
		json_object_set_new(rec, "ref_seq",
				    json_integer((json_int_t)c->seq));
	hx_record_set_str(rec, "layer", "shim");
	hx_record_append_event(pl, rec, NULL, NULL);
	json_decref(rec);
}

void hx_correlate_sees(struct hx_pipeline *pl, bool exec, bool reads)
{
	if (pl->kern) {
		pl->kern->sees_exec = exec;
		pl->kern->sees_reads = reads;
	}
}

/* Whether an allowed call of this kind reaches the user-notify layer
 * next (seccomp_deny.c's notify tables). */
bool hx_correlate_kernel_sees(const struct hx_pipeline *pl,
			      const struct hx_request *rq)
{
	const struct hx_pl_kernel *k = pl->kern;

	if (!k)
		return false;
	switch (hx_op_category(rq->op)) {
	case HX_CAT_FILE_WRITE:
	case HX_CAT_NET_CONNECT:
	case HX_CAT_NET_SEND:
		return true;
	case HX_CAT_EXEC:
		return k->sees_exec;
	case HX_CAT_FILE_READ:
		return k->sees_reads;
	default:
		return false;
	}
}

/* The slot for tid's new claim: its own, else a free one, else the
 * oldest of its set. */
static struct corr *corr_slot(struct hx_pl_kernel *k, pid_t tid)
{
	struct corr *set = &k->c[((unsigned)tid % CORR_SETS) * CORR_WAYS];
	struct corr *best = &set[0];

	for (int w = 0; w < CORR_WAYS; w++) {
		if (set[w].used && set[w].tid == tid)
			return &set[w];
		if (!set[w].used)
			best = best->used ? &set[w] : best;
		else if (best->used && set[w].ms < best->ms)
			best = &set[w];
	}
	return best;
}

void hx_correlate_put(struct hx_pipeline *pl, const struct hx_peer *peer,
		      int op, struct hx_corr_key key, enum hx_verdict v,
		      uint64_t seq, bool pending)
{
	pid_t tid = peer->tid ? peer->tid : peer->pid;
	struct corr *c = corr_slot(pl->kern, tid);

	if (c->pending)
		unconfirmed(pl, c);
	*c = (struct corr){.tid = tid,
			   .pid = peer->pid,
			   .op = op,
			   .ms = hx_mono_ms(),
			   .seq = seq,
			   .key = key,
			   .verdict = v,
			   .exits = atomic_load_explicit(&pl->kern->ngone,
							 memory_order_acquire),
			   /* Its sender gone before it was read: it
			    * stands for nothing, is only said. */
			   .used = !peer->gone && !peer->exited,
			   .pending = pending};
}

static bool corr_match(const struct hx_pl_kernel *k, const struct corr *c,
		       uint64_t now, int op, const struct hx_corr_key *key)
{
	return c->used && now - c->ms <= CORR_MS && c->op == op &&
	       hx_corr_key_eq(&c->key, key) && !claimer_gone(k, c);
}

/* The claim of tid's process pid: a thread's number given to a thread
 * of another process is no claimer's. */
static struct corr *corr_find(struct hx_pipeline *pl, pid_t tid, pid_t pid,
			      pid_t ppid, int op, const struct hx_corr_key *key)
{
	struct corr *set =
	    &pl->kern->c[((unsigned)tid % CORR_SETS) * CORR_WAYS];
	uint64_t now = hx_mono_ms();

	for (int w = 0; w < CORR_WAYS; w++)
		if (set[w].tid == tid && set[w].pid == pid &&
		    corr_match(pl->kern, &set[w], now, op, key))
			return &set[w];
	/* posix_spawn: the shim asked in the parent, the exec comes from
	 * the (vfork-like) child. Only the record is shared; the verdict
	 * is always decided afresh. Execs are few: a scan. */
	if (op == HX_OP_EXEC && ppid)
		for (size_t i = 0; i < CORR_N; i++)
			if (pl->kern->c[i].pid == ppid &&
			    corr_match(pl->kern, &pl->kern->c[i], now,
				       op | HX_CORR_SPAWN, key))
				return &pl->kern->c[i];
	return NULL;
}

enum hx_corr_match hx_correlate_claim(struct hx_pipeline *pl,
				      const struct hx_peer *peer, int op,
				      struct hx_corr_key key, enum hx_verdict v,
				      uint64_t *seq)
{
	struct corr *c = corr_find(pl, peer->tid ? peer->tid : peer->pid,
				   peer->pid, peer->ppid, op, &key);

	if (!c)
		return HX_CORR_NONE;
	if (c->verdict != v)
		return HX_CORR_DISAGREES;
	c->used = false;    /* one kernel event per request */
	c->pending = false; /* its "shim+kernel" holds */
	*seq = c->seq;
	return HX_CORR_AGREES;
}

void hx_correlate_expire(struct hx_pipeline *pl, bool all)
{
	uint64_t now = hx_mono_ms();

	if (!pl->kern)
		return;
	for (size_t i = 0; i < CORR_N; i++) {
		struct corr *c = &pl->kern->c[i];

		if (c->pending && (all || now - c->ms > CORR_MS))
			unconfirmed(pl, c);
	}
}
