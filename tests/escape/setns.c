/* setns into init's namespaces. */
#include "escape.h"

#include <fcntl.h>
#include <sched.h>

int main(void)
{
	int fd = open("/proc/1/ns/mnt", O_RDONLY), r, e;

	if (fd < 0)
		fd = open("/proc/self/ns/mnt", O_RDONLY);
	if (fd < 0)
		SKIPPED("no ns file: %s", strerror(errno));
	r = setns(fd, 0);
	e = errno;
	if (r == 0)
		ESCAPED("setns worked");
	if (e != EPERM)
		ESCAPED("unexpected errno %d", e);
	BLOCKED("setns: EPERM");
}
