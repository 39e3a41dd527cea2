/* The re-entry state (tls.h). */
#include "shim/tls.h"

__thread int hx_tls_state;
