/* A recorded decision as an event to judge again: what `harness-policy
 * test` replays through a candidate, and `learn` through the default's
 * protections. */
#ifndef HX_REPLAY_EVENT_H
#define HX_REPLAY_EVENT_H

#include <jansson.h>

#include "policy/policy.h"

#define HX_REPLAY_ARGV	256 /* argv words judged */
#define HX_REPLAY_NAMES 8   /* names an address was resolved from */

/* The event of the record rec as the pipeline judged it, pointing into
 * rec, argv[HX_REPLAY_ARGV], names[HX_REPLAY_NAMES] and st; NULL paths
 * when the record has none. -1 when it cannot be judged again. */
int hx_replay_event(json_t *rec, struct hx_event *ev, const char **argv,
		    const char **names, struct hx_event_storage *st);

/* The stronger of p's verdicts on ev's paths as named and as resolved
 * (rec's path_resolved, path2_resolved), as the pipeline decides. */
void hx_replay_decide(const struct hx_policy *p, json_t *rec,
		      const struct hx_event *ev, struct hx_decision *d);

#endif
