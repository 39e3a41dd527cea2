/* The bytes of an emulated send and how the send waits for room, as
 * the kernel's own send would (unotify_int.h, hx_un_send_all). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>

#include "common/clock.h"
#include "supervisor/kernel/connector.h"
#include "supervisor/kernel/netsend.h"

#define SEND_MAX     (64u << 10) /* bytes copied per send made here */
#define IOV_MAX_N    1024	 /* UIO_MAXIOV */
#define MAX_RW_COUNT 0x7ffff000u /* what one call moves at most */
#define POLL_MS	     50		 /* between looks at the watchdog's cut */

int hx_un_payload_read(const struct target *t, const struct msghdr *mh,
		       uint64_t buf, uint64_t count, unsigned char *ctrl,
		       size_t ctrl_max, struct hx_un_payload *p)
{
	int e;

	memset(p, 0, sizeof(*p));
	p->tid = t->tid;
	p->iov = &p->one;
	p->n = 1;
	p->one = (struct iovec){(void *)(uintptr_t)buf, count};
	if (mh) {
		if (mh->msg_iovlen > IOV_MAX_N)
			return -EMSGSIZE;
		if (mh->msg_controllen > ctrl_max)
			return -ENOBUFS;
		p->n = mh->msg_iovlen;
		if (!(p->iov = calloc(p->n ? p->n : 1, sizeof(*p->iov))))
			return -ENOMEM;
		if ((e = hx_un_read_mem(t->tid,
					(uint64_t)(uintptr_t)mh->msg_iov,
					p->iov, p->n * sizeof(*p->iov))))
			return e;
		if (mh->msg_controllen &&
		    (e = hx_un_read_mem(t->tid,
					(uint64_t)(uintptr_t)mh->msg_control,
					ctrl, mh->msg_controllen)))
			return e;
	}
	/* As import_iovec: a negative length is EINVAL, the sum is cut at
	 * MAX_RW_COUNT. */
	for (size_t i = 0; i < p->n; i++) {
		if ((ssize_t)p->iov[i].iov_len < 0)
			return -EINVAL;
		p->total += p->iov[i].iov_len;
		if (p->total > MAX_RW_COUNT)
			p->total = MAX_RW_COUNT;
	}
	return 0;
}

void hx_un_payload_free(struct hx_un_payload *p)
{
	if (p->iov != &p->one)
		free(p->iov);
	p->iov = NULL;
}

/* Bytes [off, off + len) of p's, read from the target now, into dst. */
static int payload_copy(const struct hx_un_payload *p, uint64_t off, size_t len,
			unsigned char *dst)
{
	size_t done = 0;
	int e;

	for (size_t i = 0; i < p->n && done < len; i++) {
		size_t l = p->iov[i].iov_len, k;

		if (off >= l) {
			off -= l;
			continue;
		}
		k = l - off < len - done ? l - off : len - done;
		if ((e = hx_un_read_mem(
			 p->tid, (uint64_t)(uintptr_t)p->iov[i].iov_base + off,
			 dst + done, k)))
			return e;
		done += k;
		off = 0;
	}
	return 0;
}

/* How a send waits for room: a blocking one (the file description the
 * agent shares has no O_NONBLOCK, the call no MSG_DONTWAIT) until the
 * socket's SO_SNDTIMEO, read at its first wait only. */
struct send_wait {
	bool block;
	bool timed;	      /* deadline_ms read */
	uint64_t deadline_ms; /* 0: none */
	int backoff_ms;	      /* 0: poll the socket */
};

static void wait_init(int sfd, int flags, struct send_wait *w)
{
	int fl = fcntl(sfd, F_GETFL);

	w->block = !(flags & MSG_DONTWAIT) && fl >= 0 && !(fl & O_NONBLOCK);
	w->timed = false;
	w->deadline_ms = 0;
	w->backoff_ms = 0;
}

/* 0 when the socket may have room, -EAGAIN at its SO_SNDTIMEO (what the
 * kernel's send says then), -EINTR when the watchdog cut the wait or
 * the target is gone. */
static int wait_room(struct hx_unotify *u, uint64_t id, int sfd,
		     struct send_wait *w)
{
	struct pollfd p = {.fd = sfd, .events = POLLOUT};
	uint64_t now = hx_mono_ms();
	int ms = POLL_MS;

	if (!w->timed) {
		struct timeval tv = {0};
		socklen_t l = sizeof(tv);

		w->timed = true;
		if (!getsockopt(sfd, SOL_SOCKET, SO_SNDTIMEO, &tv, &l) &&
		    (tv.tv_sec || tv.tv_usec))
			w->deadline_ms = now + (uint64_t)tv.tv_sec * 1000 +
					 ((uint64_t)tv.tv_usec + 999) / 1000;
	}
	if (w->deadline_ms) {
		if (now >= w->deadline_ms)
			return -EAGAIN;
		if (w->deadline_ms - now < (uint64_t)ms)
			ms = (int)(w->deadline_ms - now);
	}
	/* A unix datagram to a named socket whose queue is full: the
	 * sender's own socket polls writable, and a poll alone spun this
	 * worker and the connector. Readiness that a send then finds
	 * false is waited out by a sleep, doubled up to POLL_MS. */
	if (w->backoff_ms) {
		poll(NULL, 0, w->backoff_ms < ms ? w->backoff_ms : ms);
		w->backoff_ms =
		    w->backoff_ms * 2 < POLL_MS ? w->backoff_ms * 2 : POLL_MS;
	} else if (poll(&p, 1, ms) > 0) {
		w->backoff_ms = 1;
	}
	if (!hx_un_id_valid(u, id) || hx_un_wait_cut())
		return -EINTR;
	return 0;
}

/* sendmsg of our copy on sfd (by the connector for a unix socket), never
 * blocking this worker in the kernel: a blocking socket that is full is
 * waited for here while the target still waits for the answer. */
static ssize_t send_waiting(struct hx_unotify *u, uint64_t id, int sfd,
			    int target, struct msghdr *out, int flags,
			    struct send_wait *w, bool un)
{
	for (;;) {
		ssize_t r;
		int e;

		if (un)
			r = hx_connector_send(hx_un_conn, sfd, target, out,
					      flags | MSG_DONTWAIT);
		else if ((r = sendmsg(sfd, out,
				      flags | MSG_DONTWAIT | MSG_NOSIGNAL)) < 0)
			r = -errno;
		if (r >= 0)
			w->backoff_ms = 0; /* the readiness held */
		if ((r != -EAGAIN && r != -EWOULDBLOCK) || !w->block)
			return r;
		if ((e = wait_room(u, id, sfd, w)))
			return e;
	}
}

ssize_t hx_un_send_all(struct hx_unotify *u, uint64_t id, int sfd, int target,
		       struct msghdr *out, int flags,
		       const struct hx_un_payload *p, bool stream, bool un)
{
	bool zc = flags & MSG_ZEROCOPY;
	struct send_wait w;
	struct iovec one;
	uint64_t sent = 0;
	ssize_t r = 0;

	if (!stream && p->total > SEND_MAX)
		return -EMSGSIZE;
	wait_init(sfd, flags, &w);
	/* A blocking stream send returns when every byte is taken, or at
	 * a signal, an error or SO_SNDTIMEO with the count taken by then
	 * (0: the error): as tcp_sendmsg and unix_stream_sendmsg do. A
	 * datagram, or a send that may not block, is one try. */
	do {
		size_t k =
		    p->total - sent < SEND_MAX ? p->total - sent : SEND_MAX;
		/* Zerocopy: the kernel reads each chunk after we return. */
		unsigned char *buf = hx_send_buf_alloc(k ? k : 1, zc);

		if (!buf) {
			r = -ENOMEM;
			break;
		}
		r = payload_copy(p, sent, k, buf);
		if (!r && !hx_un_id_valid(u, id))
			r = -ESRCH;
		if (!r) {
			one = (struct iovec){buf, k};
			out->msg_iov = &one;
			out->msg_iovlen = 1;
			/* MSG_EOR and MSG_OOB mark the call's last byte. */
			r = send_waiting(u, id, sfd, target, out,
					 sent + k < p->total
					     ? flags & ~(MSG_EOR | MSG_OOB)
					     : flags,
					 &w, un);
		}
		hx_send_buf_free(buf, k ? k : 1, zc);
		if (r <= 0)
			break;
		sent += (uint64_t)r;
		/* The control messages (the fds) go with the first bytes,
		 * as the kernel attaches them to its first buffer. */
		out->msg_control = NULL;
		out->msg_controllen = 0;
	} while (stream && w.block && sent < p->total);
	return sent ? (ssize_t)sent : r;
}
