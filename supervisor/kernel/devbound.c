/* See devbound.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/devbound.h"

#include "supervisor/kernel/caps.h"
#include "supervisor/kernel/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

enum { IDLE, ASKED, ANSWERED, STOP };

struct hx_devbound {
	const struct hx_landlock *ll; /* until the thread is restricted */
	pthread_t th;
	pthread_mutex_t one; /* one request at a time */
	pthread_mutex_t m;
	pthread_cond_t cv;
	int state, fd, flags, result;
	bool ready;
};

/* What of an open's flags a reopen keeps: the access mode and the
 * status flags. Creation and truncation were the first open's; O_EXCL
 * on a block device is an exclusive claim the first open holds. */
#define KEEP                                                                   \
	(O_ACCMODE | O_APPEND | O_NONBLOCK | O_SYNC | O_DSYNC | O_DIRECT |     \
	 O_NOATIME | O_LARGEFILE)

static int reopen_here(int fd, int flags)
{
	char self[64];
	int nfd;

	snprintf(self, sizeof(self), "/proc/thread-self/fd/%d", fd);
	/* Non-blocking: the device is open already (a line waiting for its
	 * carrier was waited for by the first open); this thread serves
	 * every worker and must not wait in a device's open. */
	nfd = open(self, (flags & KEEP) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (nfd < 0)
		return -errno;
	if (!(flags & O_NONBLOCK) &&
	    fcntl(nfd, F_SETFL, fcntl(nfd, F_GETFL) & ~O_NONBLOCK)) {
		int e = -errno;

		close(nfd);
		return e;
	}
	return nfd;
}

static void *serve(void *arg)
{
	struct hx_devbound *d = arg;
	int e = 0;

	/* This thread only: no capability (the agent has none), then the
	 * agent's ruleset, which needs no_new_privs without CAP_SYS_ADMIN. */
	if (hx_caps_limit(0) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		e = -EPERM;
	if (!e)
		e = hx_landlock_restrict_thread(d->ll);
	pthread_mutex_lock(&d->m);
	d->result = e;
	d->ready = true;
	pthread_cond_broadcast(&d->cv);
	while (!e) {
		while (d->state != ASKED && d->state != STOP)
			pthread_cond_wait(&d->cv, &d->m);
		if (d->state == STOP)
			break;
		pthread_mutex_unlock(&d->m);
		e = reopen_here(d->fd, d->flags);
		pthread_mutex_lock(&d->m);
		d->result = e;
		e = 0;
		d->state = ANSWERED;
		pthread_cond_broadcast(&d->cv);
	}
	pthread_mutex_unlock(&d->m);
	return NULL;
}

int hx_devbound_start(const struct hx_landlock *ll, struct hx_devbound **out)
{
	struct hx_devbound *d;
	int e;

	*out = NULL;
	if (!hx_landlock_bounds_ioctl(ll))
		return 0;
	if (!(d = calloc(1, sizeof(*d))))
		return -ENOMEM;
	d->ll = ll;
	pthread_mutex_init(&d->one, NULL);
	pthread_mutex_init(&d->m, NULL);
	pthread_cond_init(&d->cv, NULL);
	if ((e = pthread_create(&d->th, NULL, serve, d))) {
		free(d);
		return -e;
	}
	pthread_mutex_lock(&d->m);
	while (!d->ready)
		pthread_cond_wait(&d->cv, &d->m);
	e = d->result;
	d->ll = NULL;
	pthread_mutex_unlock(&d->m);
	if (e) {
		pthread_join(d->th, NULL);
		free(d);
		return e;
	}
	*out = d;
	return 0;
}

int hx_devbound_wants(int fd)
{
	struct stat st;

	if (fstat(fd, &st) || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
		return 0;
	if (!S_ISCHR(st.st_mode))
		return 1;
	/* /dev/null, /dev/zero, /dev/full: no ioctl at all, and the most
	 * frequent device opens there are. */
	if (major(st.st_rdev) == 1 &&
	    (minor(st.st_rdev) == 3 || minor(st.st_rdev) == 5 ||
	     minor(st.st_rdev) == 7))
		return 0;
	/* /dev/tty (the controlling terminal, opened as the agent's own:
	 * unotify_open.c), /dev/ptmx and the pty slaves (Unix98, majors
	 * 136-143), whose ioctls the agent's ruleset grants (the devices
	 * rule, hx_landlock_grant_own_devpts): a second open of ptmx would
	 * be another pty. Any other terminal (a console, a serial line) is
	 * reopened, its ioctls (modem lines, speed) Landlock's to bound. */
	if (major(st.st_rdev) == 5 &&
	    (minor(st.st_rdev) == 0 || minor(st.st_rdev) == 2))
		return 0;
	return major(st.st_rdev) < 136 || major(st.st_rdev) > 143;
}

int hx_devbound_reopen(struct hx_devbound *d, int fd, int flags)
{
	int r;

	if (!d)
		return -EACCES;
	pthread_mutex_lock(&d->one);
	pthread_mutex_lock(&d->m);
	d->fd = fd;
	d->flags = flags;
	d->state = ASKED;
	pthread_cond_broadcast(&d->cv);
	while (d->state != ANSWERED)
		pthread_cond_wait(&d->cv, &d->m);
	r = d->result;
	d->state = IDLE;
	pthread_mutex_unlock(&d->m);
	pthread_mutex_unlock(&d->one);
	return r;
}

void hx_devbound_stop(struct hx_devbound *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->m);
	d->state = STOP;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->m);
	pthread_join(d->th, NULL);
	pthread_mutex_destroy(&d->one);
	pthread_mutex_destroy(&d->m);
	pthread_cond_destroy(&d->cv);
	free(d);
}
