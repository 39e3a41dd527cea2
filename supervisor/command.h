/* The wrapped command before it runs: where execvp would find it, and
 * which built-in profile it is (harness-exec --profile). */
#ifndef HX_COMMAND_H
#define HX_COMMAND_H

#include <stdbool.h>
#include <stddef.h>

/* PATH lookup as execvp does it (cmd with a '/' is taken relative to
 * cwd): the candidate into cand, its real path into real (both
 * PATH_MAX). False when nothing executable is found. */
bool hx_command_find(const char *cmd, const char *cwd, char *cand, char *real);

/* The built-in profile for argv (argc words) run from cwd: detected on
 * the real path of its executable and, when that is an interpreter
 * (node, python, bun, deno), of the script it is given. NULL when none
 * fits. */
const char *hx_command_profile(char *const *argv, int argc, const char *cwd);

#endif
