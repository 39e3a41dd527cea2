/* The record and the notice of a refusal the kernel made on its own,
 * with no decision asked for it: a Landlock refusal read from kernel
 * audit (kaudit.h), a look into a mask (maskfs.h). The record names the
 * policy's rule for the object when it has one (the kernel holds the
 * policy's decision), else the layer's own rule. On the loop's thread,
 * like every pipeline call. */
#ifndef HX_REFUSAL_H
#define HX_REFUSAL_H

#include <stdint.h>
#include <time.h>

#include "common/types.h"

struct hx_pipeline;
struct hx_peer;
struct json_t;

struct hx_refusal {
	const struct hx_peer *peer; /* NULL: unknown ("pid": null) */
	const char *event;	    /* the syscall's name */
	const struct timespec *when;
	int op;		     /* enum hx_op, or -1: unknown */
	const char *op_name; /* the record's "op" when op is -1 */
	const char *path;    /* absolute, or NULL: no object */
	/* without a rule of the policy for it: */
	enum hx_category cat;
	enum hx_risk risk;
	const char *rule;
	const char *layer;
	/* > 0: a count of refusals like the one recorded as ref_seq, since
	 * it was written (a storm is one record and a count) */
	uint64_t repeated, ref_seq;
};

/* A new record of r, with args (borrowed, in the record: the caller
 * adds its own fields to it) holding the path. NULL on ENOMEM. */
struct json_t *hx_refusal_record(struct hx_pipeline *pl,
				 const struct hx_refusal *r,
				 struct json_t **args);

/* Appends rec (hx_record_append_event: under the session's quota) and,
 * unless r repeats one, prints the notice on harness-exec's stderr, the
 * user's terminal (no shim in the agent printed it): once per process
 * and refusal, at most HX_REFUSAL_NOTICES a session. Returns the
 * record's seq, or 0 (coalesced, or not written). */
#define HX_REFUSAL_NOTICES 200
uint64_t hx_refusal_append(struct hx_pipeline *pl, const struct hx_refusal *r,
			   struct json_t *rec);

#endif
