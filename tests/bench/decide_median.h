/* The benchmarks of one decision (bench_decide.c, bench_decide_file.c):
 * ns per decision of ev under p, the median of 15 rounds of 2,000. */
#ifndef HX_TESTS_DECIDE_MEDIAN_H
#define HX_TESTS_DECIDE_MEDIAN_H

#include <stdlib.h>

#include "policy/policy.h"
#include "tests/helpers/timing.h"

#define DECIDE_ROUNDS 15
#define DECIDE_PER    2000

static inline long long median_ns(const struct hx_policy *p,
				  struct hx_event *ev)
{
	long long t[DECIDE_ROUNDS];
	struct hx_decision d;

	for (int r = 0; r < DECIDE_ROUNDS; r++) {
		long long t0 = now_ns();

		for (int i = 0; i < DECIDE_PER; i++)
			hx_policy_decide(p, ev, &d);
		t[r] = (now_ns() - t0) / DECIDE_PER;
	}
	qsort(t, DECIDE_ROUNDS, sizeof(*t), cmp_ll);
	return t[DECIDE_ROUNDS / 2];
}

#endif
