/* chroot and pivot_root. */
#include "escape.h"

#include <sys/syscall.h>

int main(void)
{
	int r = chroot("."), e = errno;
	long p = syscall(__NR_pivot_root, ".", ".");
	int e2 = errno;

	if (r == 0 || p == 0)
		ESCAPED("chroot %d, pivot_root %ld", r, p);
	if (e != EPERM || e2 != EPERM)
		ESCAPED("unexpected errno %d/%d", e, e2);
	BLOCKED("chroot/pivot_root: EPERM");
}
