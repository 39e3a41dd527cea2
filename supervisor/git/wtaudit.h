/* harness-audit checkpoints / diff: review a --worktree session. */
#ifndef HX_WTAUDIT_H
#define HX_WTAUDIT_H

#include <stdio.h>

/* `harness-audit checkpoints SESSION`: n, time, files changed, trigger
 * and the process (pid, exe, argv, audit seq) that caused each. */
int hx_wtaudit_checkpoints(int argc, char *const *argv, FILE *out, FILE *err);

/* `harness-audit diff SESSION [N [M]]`: a unified diff. No N: the base
 * against the last checkpoint; N: checkpoint N-1 (the base for 0)
 * against N; N M: checkpoint N against M. */
int hx_wtaudit_diff(int argc, char *const *argv, FILE *out, FILE *err);

#endif
