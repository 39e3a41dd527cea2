/* One call, two views: the shim asks before the call, the kernel layer
 * sees it happen. The pipeline remembers recent shim decisions by thread
 * (4-way sets, so a thread the scheduler holds back keeps its claim
 * while others make thousands) and which processes run the shim, so
 * that one record stands for both layers when they agree, a second one
 * says when they do not, and a call the shim should have asked about
 * but did not is marked a bypass. */
#ifndef HX_CORRELATE_H
#define HX_CORRELATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervisor/pipeline.h"

/* Starts remembering shim decisions and HELLOs for the kernel layer.
 * Returns 0 or -ENOMEM. hx_correlate_free undoes it. */
int hx_correlate_enable(struct hx_pipeline *pl);
void hx_correlate_free(struct hx_pipeline *pl);

/* Which calls beyond the fixed notify list the kernel layer sees:
 * execs (the exec gate is on), read-only opens (--trace-reads). A shim
 * request of a kind the kernel sees next is logged "shim+kernel". */
void hx_correlate_sees(struct hx_pipeline *pl, bool exec, bool reads);
/* Whether an allowed rq reaches the user-notify layer next. */
bool hx_correlate_kernel_sees(const struct hx_pipeline *pl,
			      const struct hx_request *rq);

/* Task tid of the agent's tree has exited (the exec gate saw it): a
 * claim it made stands for no later call, whoever is given its number.
 * Any thread; one writer at a time (the gate's tracer). */
void hx_correlate_gone(struct hx_pipeline *pl, pid_t tid);

/* pid said HELLO running exe: it has the shim. */
void hx_correlate_hello(struct hx_pipeline *pl, pid_t pid, const char *exe);
/* The process runs an image with the shim loaded: known from its HELLO,
 * else looked up once per image (its maps) and remembered. */
bool hx_correlate_has_shim(const struct hx_pipeline *pl,
			   const struct hx_peer *p);

/* The key of a call's object (its path or address text), of what
 * else its record shows of it (detail: the second path, flags, mode,
 * which call), and, for an exec whose argv a request carries whole, of
 * its n strings (v NULL: none), each with its NUL (corrkey.h). */
struct hx_corr_key hx_correlate_key(const char *obj, const char *detail,
				    const char *const *v, size_t n);

/* Or'ed into a claim's op for a spawn (posix_spawn, system, popen),
 * whose exec the caller's child makes: only such a claim stands for an
 * exec of the claimer's child (one of an execve, made by a child the
 * claimer forked, was recorded as the claimer's). */
#define HX_CORR_SPAWN 0x100
static inline int hx_correlate_op(int op, bool spawn)
{
	return spawn ? op | HX_CORR_SPAWN : op;
}

/* Remembers the shim's decision v (record seq) of op (HX_CORR_SPAWN
 * or'ed in for a spawn) on key for peer's thread; pending: logged
 * "shim+kernel" before the kernel saw it. */
void hx_correlate_put(struct hx_pipeline *pl, const struct hx_peer *peer,
		      int op, struct hx_corr_key key, enum hx_verdict v,
		      uint64_t seq, bool pending);

enum hx_corr_match {
	HX_CORR_NONE,	   /* the shim did not ask just before */
	HX_CORR_AGREES,	   /* it did, with verdict v: *seq is its record */
	HX_CORR_DISAGREES, /* it did, and decided otherwise */
};
/* The kernel layer's view of op on key for peer (or, for an exec, its
 * parent's spawn: posix_spawn asks in the parent) against the shim's;
 * an agreeing claim is used up. */
enum hx_corr_match hx_correlate_claim(struct hx_pipeline *pl,
				      const struct hx_peer *peer, int op,
				      struct hx_corr_key key, enum hx_verdict v,
				      uint64_t *seq);

/* A kernel_unconfirmed record (ref_seq: the shim's record) for each
 * "shim+kernel" event the kernel layer has not seen within the window,
 * or for all of them when all is true (the session's end). */
void hx_correlate_expire(struct hx_pipeline *pl, bool all);

#endif
