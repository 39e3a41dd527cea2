/* Exec classification by argv (DESIGN.md section 4): a class name and a
 * risk. Pure and table driven. */
#ifndef HX_CLASSIFY_H
#define HX_CLASSIFY_H

#include <stddef.h>

#include "common/types.h"

struct hx_exec_class {
	const char *name; /* read_only, mutating, destructive, network,
			     privilege, package_install, code, other */
	enum hx_risk risk;
};

/* Classifies a command. path is the executable (may be NULL: argv[0] is
 * used); wrappers (env with assignments, nice, nohup, time, timeout,
 * command, exec) are skipped to reach the real command. */
struct hx_exec_class hx_classify_exec(const char *path, const char *const *argv,
				      size_t argc);

#endif
