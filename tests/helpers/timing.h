/* Timing for the benchmarks (make bench): the monotonic clock in ns,
 * and an order of long long for qsort (medians, percentiles). */
#ifndef HX_TESTS_TIMING_H
#define HX_TESTS_TIMING_H

#include <time.h>

static inline long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

#endif
