/* harness-audit summary: a log in a page: counts by category and
 * verdict, the refusals, the processes, the hosts, path prefixes and
 * rules met most, and the decision latency percentiles. */
#ifndef HX_SUMMARY_CLI_H
#define HX_SUMMARY_CLI_H

#include <stdio.h>

int hx_summary_cli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
