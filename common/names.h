/* Names of the shared enumerations; "?" for a value out of range. */
#ifndef HX_COMMON_NAMES_H
#define HX_COMMON_NAMES_H

#include "common/types.h"

const char *hx_verdict_name(enum hx_verdict v);
const char *hx_category_name(enum hx_category c);
const char *hx_risk_name(enum hx_risk r);
const char *hx_op_name(enum hx_op op);

#endif
