/* userfaultfd, by syscall and by /dev/userfaultfd (root owns the node:
 * a uid-0 agent opens it without any capability). */
#include "escape.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

int main(void)
{
	long fd = syscall(__NR_userfaultfd, O_CLOEXEC), e = errno, dfd,
	     ufd = -1;
	int e2 = 0;

	if (fd >= 0)
		ESCAPED("userfaultfd() = %ld", fd);
	dfd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dfd >= 0) {
		ufd = ioctl((int)dfd, USERFAULTFD_IOC_NEW, O_CLOEXEC);
		e2 = errno;
		if (ufd >= 0)
			ESCAPED("USERFAULTFD_IOC_NEW on /dev/userfaultfd = %ld",
				ufd);
	}
	if (e != EPERM || (dfd >= 0 && e2 != EPERM))
		ESCAPED("unexpected errno %ld/%d", e, e2);
	BLOCKED("userfaultfd: EPERM%s",
		dfd >= 0 ? ", /dev/userfaultfd ioctl: EPERM" : "");
}
