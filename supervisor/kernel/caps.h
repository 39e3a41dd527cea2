/* Capabilities of the calling thread (they are per thread), limited the
 * one way every user here needs: the agent's first process and the
 * connector keep none, a user-notify worker keeps CAP_SYS_PTRACE. System
 * calls only: safe in a child forked from a multithreaded process. */
#ifndef HX_CAPS_H
#define HX_CAPS_H

#include <stdint.h>

/* Effective and permitted become keep (a CAP_TO_MASK set of capabilities
 * 0-31) within what is permitted now; inheritable and ambient empty.
 * Verified afterwards: an LSM or an old kernel may ignore a step.
 * Returns 0, or -errno (-EPERM when something outside keep is held). */
int hx_caps_limit(uint32_t keep);

/* Turns the capabilities of mask (0-31) off in the effective set, or
 * back on within what is permitted: for a call made with less than a
 * worker keeps. Returns 0, or -errno. */
int hx_caps_effective(uint32_t mask, int on);

#endif
