/* See fdrelease.h. */
#define _GNU_SOURCE
#include "supervisor/fdrelease.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

struct rel {
	sem_t copied, closed;
	int err;
};

/* Takes a copy of the table, waits until the caller has closed its
 * fds (so that this copy holds their last references), and exits: its
 * table goes with it, under PF_EXITING. */
static void *releaser(void *arg)
{
	struct rel *r = arg;

	r->err = unshare(CLONE_FILES) ? errno : 0;
	sem_post(&r->copied);
	while (sem_wait(&r->closed) && errno == EINTR) {
	}
	sem_destroy(&r->copied);
	sem_destroy(&r->closed);
	free(r);
	return NULL;
}

/* Without a thread: no lingering for those we can see (best effort). */
static void close_unlingered(const int *fds, size_t n)
{
	struct linger off = {0, 0};

	for (size_t i = 0; i < n; i++) {
		setsockopt(fds[i], SOL_SOCKET, SO_LINGER, &off, sizeof(off));
		close(fds[i]);
	}
}

void hx_fd_release(const int *fds, size_t n)
{
	struct rel *r;
	pthread_attr_t a;
	pthread_t t;
	sigset_t all, old;
	int e;

	if (!n)
		return;
	if (!(r = malloc(sizeof(*r)))) {
		close_unlingered(fds, n);
		return;
	}
	sem_init(&r->copied, 0, 0);
	sem_init(&r->closed, 0, 0);
	r->err = 0;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 64 << 10);
	/* No signal of the loop's (signalfd) may land on it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&t, &a, releaser, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	if (e) {
		sem_destroy(&r->copied);
		sem_destroy(&r->closed);
		free(r);
		close_unlingered(fds, n);
		return;
	}
	while (sem_wait(&r->copied) && errno == EINTR) {
	}
	if (r->err)
		close_unlingered(fds, n);
	else
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
	sem_post(&r->closed); /* r is the thread's from here */
}

void hx_fd_release_sock(int fd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(struct ucred))];
	} cb;
	char byte;
	struct iovec iov = {&byte, 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cb.b,
			    .msg_controllen = sizeof(cb.b)};
	ssize_t n;

	/* The peer sends no more (EPIPE); what is queued stays queued. A
	 * peek shows a message by its bytes, its credentials or the fds
	 * that did not fit (MSG_CTRUNC; their copies are let go by the
	 * kernel, never the last references): EOF shows none. */
	shutdown(fd, SHUT_RDWR);
	n = recvmsg(fd, &mh, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);
	if (n <= 0 && !mh.msg_controllen && !(mh.msg_flags & MSG_CTRUNC) &&
	    (n == 0 || errno == EAGAIN || errno == ENOTCONN ||
	     errno == EINVAL)) {
		close(fd);
		return;
	}
	hx_fd_release(&fd, 1);
}
