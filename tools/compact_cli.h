/* harness-audit compact: retention. Sessions that ended long enough ago
 * have their log replaced by one compacted record that continues its
 * chain (what it stood for, counted and summarized, with the removed
 * chain's first and last hash), and older ones are removed; a running,
 * cut or broken session is never touched. */
#ifndef HX_COMPACT_CLI_H
#define HX_COMPACT_CLI_H

#include <stdio.h>

int hx_compact_cli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
