/* harness-exec's worktree subcommands: checkpoint, restore, gc. Apart
 * from main so tests can call them. */
#ifndef HX_WTCLI_H
#define HX_WTCLI_H

#include <stdbool.h>
#include <stdio.h>

/* Whether argv[1] names one of the subcommands (in harness-exec:
 * gitplugin.c, which needs no plugin for it). */
bool hx_wtcli_is_command(const char *arg);

/* Runs `harness-exec SUBCOMMAND ARGS...`. Returns the exit status: 0 ok,
 * 1 failure, 2 usage error. */
int hx_wtcli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
