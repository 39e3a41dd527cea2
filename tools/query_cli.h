/* harness-audit query: the records of a log that match filters, as JSON
 * lines or, on a terminal, a table. A filter on a value the record
 * stores as text is looked for in the line's bytes first, so a line
 * that cannot match is never parsed: a big log reads at disk speed. */
#ifndef HX_QUERY_CLI_H
#define HX_QUERY_CLI_H

#include <stdio.h>

int hx_query_cli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
