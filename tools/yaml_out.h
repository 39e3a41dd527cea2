/* YAML scalars written so that they read back byte for byte, for the
 * policies harness-policy learn writes. */
#ifndef HX_YAML_OUT_H
#define HX_YAML_OUT_H

#include <jansson.h>
#include <stdio.h>

/* s as a double-quoted scalar: everything but printable ASCII escaped. */
void hx_yaml_quoted(FILE *out, const char *s);

/* "    KEY: [S, ...]\n" of the strings of arr, each quoted. */
void hx_yaml_list(FILE *out, const char *key, json_t *arr);

#endif
