/* harness-exec --doctor: what this kernel lets the harness guarantee,
 * mechanism by mechanism, with what is lost where one is missing
 * (DESIGN.md section 3: never claim a guarantee silently). */
#ifndef HX_DOCTOR_H
#define HX_DOCTOR_H

#include <stdio.h>

struct hx_features;

/* Writes the report for k to out, one mechanism per line. */
void hx_doctor_print(const struct hx_features *k, FILE *out);

/* Probes the kernel (deeply) and prints the report. Returns 0: a missing
 * mechanism is information, not an error. */
int hx_doctor(FILE *out);

#endif
