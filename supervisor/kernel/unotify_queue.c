/* A worker's decision with the pipeline, the hand-over of an adopted
 * connection to the loop's thread, and the one judgement every handler
 * acts on (unotify_int.h). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include "common/clock.h"
#include "supervisor/ask.h"
#include "supervisor/correlate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The target's fd, in the supervisor (close it). */
void hx_un_done(struct hx_unotify *u, struct answer *a, int e)
{
	if (e) {
		a->err = -e;
		return;
	}
	atomic_fetch_add(&u->n_emul, 1);
	a->kind = ANS_VALUE;
	a->val = 0;
}

int hx_un_denied(const struct target *t, const struct hx_outcome *o,
		 struct hx_kargs *k)
{
	char p1[PATH_MAX + 32], p2[PATH_MAX + 32];
	int e = o->err ? o->err : EACCES;

	/* The probe runs with this worker's rights, which are the
	 * target's only when their uids agree (drop_worker_caps). */
	if (o->tell && t->peer.uid == geteuid() && k->path &&
	    !hx_un_proc_path(t, k->path, p1, sizeof(p1)) &&
	    (!k->path2 || !hx_un_proc_path(t, k->path2, p2, sizeof(p2)))) {
		k->dirfd = k->dirfd2 = AT_FDCWD;
		k->path = p1;
		if (k->path2)
			k->path2 = p2;
		e = hx_kerrno(k);
	}
	if (o->tell)
		hx_pipeline_notice(o, e);
	return e;
}

int hx_un_judge(struct hx_unotify *u, const struct target *t, struct job *j,
		struct hx_kargs *k)
{
	struct hx_kargs none = {0};

	if (!hx_un_submit(u, j))
		return EACCES;
	if (j->out.reply == HX_VERDICT_ALLOW && hx_un_masked_way(t, j)) {
		hx_un_revoke(u, j, "harness:mask", "beneath a mask");
		atomic_fetch_add(&u->n_denied, 1);
		return EACCES; /* as the mask answers the kernel's open */
	}
	if (j->out.reply == HX_VERDICT_ALLOW)
		return 0;
	atomic_fetch_add(&u->n_denied, 1);
	return hx_un_denied(t, &j->out, k ? k : &none);
}

void hx_un_on_jobs(struct hx_server *s, struct hx_source *src, uint32_t ev)
{
	struct hx_unotify *u = src->arg;
	struct job *j, *list;
	uint64_t v;

	(void)s;
	(void)ev;
	if (read(u->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&u->lock);
	list = u->head;
	u->head = u->tail = NULL;
	pthread_mutex_unlock(&u->lock);
	for (j = list; j;) {
		struct job *next = j->next;

		/* Refused: it closes our end, and the target's shim reads
		 * EOF (unreachable: fail closed). */
		hx_server_adopt(u->srv, j->adopt_fd, j->peer.pid, j->peer.uid,
				j->adopt_pidfd);
		free(j);
		j = next;
	}
}

void hx_un_job(struct job *j, const struct target *t, uint32_t call,
	       enum hx_op op)
{
	memset(j, 0, sizeof(*j));
	j->peer = t->peer;
	j->rq.call = call;
	j->rq.op = op;
}

bool hx_un_adopt_later(struct hx_unotify *u, struct job *j)
{
	uint64_t one = 1;

	j->next = NULL;
	pthread_mutex_lock(&u->lock);
	if (atomic_load(&u->stopping)) {
		pthread_mutex_unlock(&u->lock);
		return false;
	}
	if (u->tail)
		u->tail->next = j;
	else
		u->head = j;
	u->tail = j;
	pthread_mutex_unlock(&u->lock);
	if (write(u->efd, &one, sizeof(one)) < 0 && errno != EAGAIN) {
		/* Unreachable in practice; the stop path answers it. */
	}
	return true;
}

/* ---- waits on what the agent controls (unotify_int.h) ---- */

static __thread struct un_slot *slot;
static __thread struct hx_unotify *slot_u; /* the slot's */
static __thread pid_t target_tid;
static __thread struct {
	struct hx_peer peer;
	int op;
	struct hx_corr_key key;
	uint64_t seq;
	enum hx_verdict v;
	bool set;
	char *path, *path2; /* the allowed call's, for hx_un_failed */
} last;

void hx_un_wait_attach(struct hx_unotify *u, struct un_slot *s)
{
	slot = s;
	slot_u = u;
	s->th = pthread_self();
}

void hx_un_wait_serving(pid_t tid)
{
	target_tid = tid;
	last.set = false;
}

void hx_un_remember(const struct job *j)
{
	last.set = j->out.reply == HX_VERDICT_ALLOW;
	last.peer = j->peer;
	last.op = (int)j->rq.op;
	last.key = j->out.key;
	last.seq = j->out.seq;
	last.v = j->out.verdict;
	hx_un_forget();
	if (last.set) {
		last.path = j->rq.path ? strdup(j->rq.path) : NULL;
		last.path2 = j->rq.path2 ? strdup(j->rq.path2) : NULL;
	}
}

void hx_un_forget(void)
{
	free(last.path);
	free(last.path2);
	last.path = last.path2 = NULL;
}

void hx_un_failed(struct hx_unotify *u, int err)
{
	/* Not failures: a non-blocking connect under way, a send or a
	 * FIFO's open to retry; a restart is the same call seen again.
	 * Nor a read of a name that is not there (--trace-reads): nothing
	 * was opened, and a search path's probes would double the log
	 * (python's imports: 590 of 1,600 reads). */
	if (!last.set || err == EINPROGRESS || err == EAGAIN ||
	    err == EALREADY || err == HX_ERESTARTSYS ||
	    (last.op == HX_OP_READ && (err == ENOENT || err == ENOTDIR)))
		return;
	last.set = false;
	hx_server_lock(u->srv);
	if (!atomic_load(&u->stopping))
		hx_pipeline_failed(u->pl, &last.peer, (enum hx_op)last.op,
				   last.path, last.path2, last.seq, err);
	hx_server_unlock(u->srv);
}

void hx_un_wait_begin(int kind)
{
	if (!slot)
		return;
	pthread_mutex_lock(&slot->lock);
	slot->id = hx_un_notif_id;
	slot->tid = target_tid;
	slot->kind = kind;
	slot->conn = hx_un_conn;
	slot->ticks = 0;
	slot->spared = false;
	atomic_store(&slot->cut, false);
	atomic_store(&slot->again, false);
	slot->since_ms = hx_mono_ms();
	pthread_mutex_unlock(&slot->lock);
}

int hx_un_wait_end(struct hx_unotify *u, int e)
{
	bool spared;

	if (!slot)
		return e;
	pthread_mutex_lock(&slot->lock);
	slot->since_ms = 0;
	spared = slot->spared;
	slot->spared = false;
	pthread_mutex_unlock(&slot->lock);
	if (spared)
		hx_un_spare(u, -1);
	if (e != -EINTR || !atomic_load(&slot->again))
		return e;
	/* Seen again after the restart: the same call, already decided
	 * and recorded (its claim, as the shim's would be). */
	if (last.set) {
		hx_server_lock(u->srv);
		hx_correlate_put(u->pl, &last.peer, last.op, last.key, last.v,
				 last.seq, false);
		hx_server_unlock(u->srv);
	}
	return -HX_ERESTARTSYS;
}

void hx_un_put_fd(int fd)
{
	if (fd < 0)
		return;
	if (!slot) { /* not a worker's */
		close(fd);
		return;
	}
	hx_un_wait_begin(HX_WAIT_RELEASE);
	close(fd);
	hx_un_wait_end(slot_u, 0);
}

bool hx_un_wait_cut(void)
{
	return slot && atomic_load(&slot->cut);
}

void hx_un_spare(struct hx_unotify *u, int delta)
{
	pthread_mutex_lock(&u->lock);
	u->waiting += delta;
	if (delta > 0 && !atomic_load(&u->stopping) &&
	    u->nthreads - u->waiting < 2 && u->nthreads < MAX_THREADS &&
	    pthread_create(&u->th[u->nthreads], NULL, u->worker, u) == 0)
		u->nthreads++;
	pthread_mutex_unlock(&u->lock);
}

struct asker {
	struct hx_unotify *u;
	uint64_t id;
};

/* The thread that asked no longer waits (killed, its call interrupted),
 * or the session ends. */
static bool asker_gone(void *arg)
{
	struct asker *k = arg;

	return atomic_load(&k->u->stopping) || !hx_un_id_valid(k->u, k->id);
}

/* A person decides (ask.h); the target's thread waits in its call
 * meanwhile, and others serve the rest of the tree. */
static void wait_answer(struct hx_unotify *u, struct job *j)
{
	struct asker k = {u, hx_un_notif_id};
	struct hx_ask_result r;
	struct hx_ask_wait w;
	bool busy;

	/* Two workers always serve the tree: past that, an ask is refused
	 * at once (a flood of questions cannot stall every call). */
	pthread_mutex_lock(&u->lock);
	busy = u->waiting >= MAX_THREADS - 2;
	pthread_mutex_unlock(&u->lock);
	if (hx_ask_wait_begin(u->pl->ask, j->out.ask, &w) && !busy) {
		hx_server_unlock(u->srv);
		hx_un_spare(u, 1);
		hx_ask_wait_sleep(u->pl->ask, &w, asker_gone, &k);
		hx_un_spare(u, -1);
		hx_server_lock(u->srv);
	}
	hx_ask_wait_end(u->pl->ask, &w, busy ? "busy" : "gone", &r);
	j->out.reply = r.verdict;
	j->out.err = r.verdict == HX_VERDICT_ALLOW ? 0 : EACCES;
	j->out.tell = false;
	if (r.verdict == HX_VERDICT_ALLOW) /* the refusal's notice is void */
		j->out.notice[0] = '\0';
	else
		hx_pipeline_notice(&j->out, EACCES);
	if (r.seq)
		j->out.seq = r.seq;
}

/* Decided on this worker's thread, holding the loop's lock: as if on the
 * loop's thread (server.h), without the two wake-ups of a hand-over. */
bool hx_un_submit(struct hx_unotify *u, struct job *j)
{
	uint64_t one = 1;
	bool failed;

	hx_server_lock(u->srv);
	if (atomic_load(&u->stopping)) {
		hx_server_unlock(u->srv);
		return false;
	}
	hx_pipeline_decide_kernel(u->pl, &j->peer, &j->rq, &j->out, j->decided,
				  sizeof(j->decided));
	if (j->out.ask)
		wait_answer(u, j);
	hx_un_remember(j);
	failed = u->pl->failed != 0;
	hx_server_unlock(u->srv);
	/* A log that takes no more records ends the session (run.c): the
	 * loop's thread, maybe asleep, is woken to see it. */
	if (failed && write(u->efd, &one, sizeof(one)) < 0 && errno != EAGAIN) {
		/* its 1 s timer wakes it too */
	}
	return true;
}

void hx_un_revoke(struct hx_unotify *u, const struct job *j, const char *rule,
		  const char *why)
{
	last.set = false; /* its refusal is the revoked record */
	hx_server_lock(u->srv);
	if (!atomic_load(&u->stopping))
		hx_pipeline_revoke(u->pl, &j->peer, &j->rq, j->out.seq, rule,
				   why);
	hx_server_unlock(u->srv);
}
