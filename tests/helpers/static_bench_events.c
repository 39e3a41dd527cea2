/* bench_events linked statically: the shim never loads, so what it
 * measures under harness-exec is the kernel layer alone (user-notify). */
#include "tests/helpers/bench_events.c"
