/* SCM_RIGHTS in one place; see fdpass.h. */
#include "common/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

union ctl {
	struct cmsghdr h;
	unsigned char b[CMSG_SPACE(HX_FDPASS_MAX * sizeof(int))];
};

int hx_fd_send(int sock, const void *msg, size_t len, const int *fds, size_t n)
{
	union ctl cb;
	struct iovec iov = {(void *)msg, len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;

	if (n > HX_FDPASS_MAX)
		return -EINVAL;
	if (n) {
		memset(&cb, 0, sizeof(cb));
		m.msg_control = cb.b;
		m.msg_controllen = CMSG_SPACE(n * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	}
	return sendmsg(sock, &m, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

ssize_t hx_fd_recv(int sock, void *msg, size_t len, int *fds, size_t max,
		   size_t *nfds, int flags)
{
	union ctl cb;
	struct iovec iov = {msg, len};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cb.b,
			   .msg_controllen = sizeof(cb.b)};
	ssize_t n;

	*nfds = 0;
	do
		n = recvmsg(sock, &m, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (*nfds < max)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

void hx_fd_keep_only(int *keep, size_t n)
{
	int prev = -1;

	/* Insertion sort: no allocation, a handful of fds. */
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && keep[k - 1] > keep[k]; k--) {
			int t = keep[k];

			keep[k] = keep[k - 1];
			keep[k - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 0 || keep[i] == prev)
			continue;
		if (keep[i] > prev + 1)
			syscall(SYS_close_range, (unsigned)prev + 1,
				(unsigned)keep[i] - 1, 0u);
		prev = keep[i];
	}
	syscall(SYS_close_range, (unsigned)prev + 1, ~0u, 0u);
}
