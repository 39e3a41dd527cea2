/* harness-exec pending | approve | deny: the questions of running
 * sessions (ask.h), answered from another terminal or a program, over
 * each session's ask socket. */
#ifndef HX_ASKCLI_H
#define HX_ASKCLI_H

#include <stdbool.h>
#include <stdio.h>

/* Whether name is one of these subcommands. */
bool hx_askcli_is_command(const char *name);

/* Runs one; returns the exit status (0, 1: refused or nothing there,
 * 2: usage). */
int hx_askcli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
