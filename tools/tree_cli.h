/* harness-audit tree: the session's processes as a tree, from its log:
 * what each ran, how long it lived and how it ended, its decided calls
 * and refusals under it; --denials keeps the chains that led to one. */
#ifndef HX_TREE_CLI_H
#define HX_TREE_CLI_H

#include <stdio.h>

int hx_tree_cli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
