/* The session variables the policy unit suites expand their policies
 * with ($HOME, $CWD, $TMPDIR, the protected state). */
#ifndef HX_TESTS_POLICY_VARS_H
#define HX_TESTS_POLICY_VARS_H

#include "policy/policy.h"

static const char *const protect[] = {"/work/proj/.harness/**"};

static const struct hx_policy_vars vars = {
    .home = "/home/u",
    .cwd = "/work/proj",
    .tmpdir = "/tmp/hx-s1",
    .session = "s1",
    .protect = protect,
    .nprotect = 1,
};

#endif
