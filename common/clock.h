/* The monotonic clock in the units the supervisor counts in. */
#ifndef HX_COMMON_CLOCK_H
#define HX_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t hx_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t hx_mono_ms(void)
{
	return hx_mono_ns() / 1000000u;
}

#endif
