/* perf_event_open on ourselves (allowed unprivileged at paranoid <= 2,
 * so EPERM here is the filter). */
#include "escape.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>

int main(void)
{
	struct perf_event_attr a;
	long r;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	r = syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
	if (r >= 0)
		ESCAPED("perf_event_open = %ld", r);
	if (errno != EPERM)
		ESCAPED("unexpected errno %d", errno);
	BLOCKED("perf_event_open: EPERM");
}
