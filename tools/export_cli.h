/* harness-audit export: a session's log in a format other tools read;
 * --otlp: OpenTelemetry traces (otlp.h) to a file or a collector. */
#ifndef HX_EXPORT_CLI_H
#define HX_EXPORT_CLI_H

#include <stdio.h>

int hx_export_cli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
