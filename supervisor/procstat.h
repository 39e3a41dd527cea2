/* Reading /proc/<pid>/stat, the one place that parses it. */
#ifndef HX_PROCSTAT_H
#define HX_PROCSTAT_H

#include <sys/types.h>

struct hx_procstat {
	char state;		      /* R, S, Z... */
	pid_t ppid;
	unsigned long long starttime; /* clock ticks after boot */
};

/* Fills *st for pid. Returns 0, or -errno (-ESRCH when it is gone,
 * -EBADMSG when the line does not parse). */
int hx_procstat_read(pid_t pid, struct hx_procstat *st);

#endif
