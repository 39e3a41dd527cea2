/* harness-audit summary: a log in a page: counts by category and
 * verdict, the refusals, the processes, the hosts, path prefixes and
 * rules met most, and the decision latency percentiles. */
#ifndef HX_SUMMARY_CLI_H
#define HX_SUMMARY_CLI_H

#include <stdio.h>

int hx_summary_cli(int argc, char *const *argv, FILE *out, FILE *err);

struct json_t;
/* What a compacted session keeps of its log: counts by category and
 * verdict, records, refused, and the top hosts, path prefixes and rules
 * as [name, seen, refused]. NULL: unreadable. */
struct json_t *hx_summary_json(const char *log, size_t top);

#endif
