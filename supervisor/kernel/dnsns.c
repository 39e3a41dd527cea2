/* The sealed DNS namespace and its keeper; see dnsns.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/dnsns.h"
#include "common/fdpass.h"
#include "supervisor/kernel/caps.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71 /* 5.14 */
#endif

#define KEEPER_FD 3
#define NLISTEN	  4

struct hx_dnsns {
	pthread_mutex_t lock;
	int sock; /* to the keeper */
	pid_t pid;
	uint64_t cookie; /* the namespace's (SO_NETNS_COOKIE); 0: none */
	bool waited;
};

struct sock_rq {
	int32_t domain, type, protocol;
};

/* ---- the keeper: system calls only (forked from a multithreaded
 * process) ---- */

static int send_fds(int sock, int32_t status, const int *fds, size_t n)
{
	return hx_fd_send(sock, &status, sizeof(status), fds, n);
}

static int lo_up(void)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), e = 0;

	if (fd < 0)
		return -errno;
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		e = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!e && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		e = -errno;
	close(fd);
	return e;
}

/* "ip route add local 0.0.0.0/0 dev lo table local" (or ::/0): every
 * address of the family is this namespace's own. */
static int anyip_route(int family)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
		struct rtattr oif_h;
		uint32_t oif;
	} rq = {
	    .nh = {.nlmsg_len = sizeof(rq),
		   .nlmsg_type = RTM_NEWROUTE,
		   .nlmsg_flags =
		       NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
		   .nlmsg_seq = 1},
	    .rt = {.rtm_family = (unsigned char)family,
		   .rtm_table = RT_TABLE_LOCAL,
		   .rtm_protocol = RTPROT_BOOT,
		   .rtm_scope = RT_SCOPE_HOST,
		   .rtm_type = RTN_LOCAL},
	    .oif_h = {.rta_len = RTA_LENGTH(sizeof(uint32_t)),
		      .rta_type = RTA_OIF},
	};
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr err;
	} ack;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	ssize_t n;

	if (fd < 0)
		return -errno;
	rq.oif = 1; /* lo, the first interface of every namespace */
	n = sendto(fd, &rq, sizeof(rq), 0, (void *)&kernel, sizeof(kernel));
	if (n == (ssize_t)sizeof(rq))
		n = recv(fd, &ack, sizeof(ack), 0);
	close(fd);
	if (n < (ssize_t)sizeof(ack.nh) || ack.nh.nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	return ack.err.error;
}

/* A socket of the resolver's bound to port 53 of every address. */
static int listener(int family, int type)
{
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(53)};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6,
				   .sin6_port = htons(53)};
	int fd = socket(family, type | SOCK_CLOEXEC, 0), one = 1, ok;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (type == SOCK_DGRAM)
		ok = family == AF_INET
			 ? setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one,
				      sizeof(one))
			 : setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one,
				      sizeof(one));
	else
		ok = 0;
	if (!ok)
		ok = family == AF_INET ? bind(fd, (void *)&in, sizeof(in))
				       : bind(fd, (void *)&in6, sizeof(in6));
	if (!ok && type == SOCK_STREAM)
		ok = listen(fd, 64);
	if (ok) {
		close(fd);
		return -1;
	}
	return fd;
}

static int make_namespace(void)
{
	/* root needs no user namespace, and a user has none without one */
	if (unshare(CLONE_NEWNET) && unshare(CLONE_NEWUSER | CLONE_NEWNET))
		return -errno;
	return lo_up();
}

static __attribute__((noreturn)) void serve(int sock)
{
	for (;;) {
		struct sock_rq rq;
		ssize_t n = recv(sock, &rq, sizeof(rq), 0);
		int fd;

		if (n == 0)
			_exit(0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(rq))
			_exit(1);
		/* Only what a resolver uses: no raw or packet sockets. */
		if ((rq.domain != AF_INET && rq.domain != AF_INET6) ||
		    ((rq.type & 0xf) != SOCK_DGRAM &&
		     (rq.type & 0xf) != SOCK_STREAM)) {
			if (send_fds(sock, -EPERM, NULL, 0))
				_exit(1);
			continue;
		}
		fd = socket(rq.domain, rq.type | SOCK_CLOEXEC, rq.protocol);
		if (send_fds(sock, fd < 0 ? -errno : 0, &fd, fd < 0 ? 0 : 1))
			_exit(1);
		if (fd >= 0)
			close(fd);
	}
}

static __attribute__((noreturn)) void keeper(int sock, pid_t parent)
{
	int fds[NLISTEN], have[NLISTEN], n = 0, e;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != parent)
		_exit(1);
	if (dup2(sock, KEEPER_FD) != KEEPER_FD)
		_exit(1);
	syscall(SYS_close_range, 0, KEEPER_FD - 1, 0);
	syscall(SYS_close_range, KEEPER_FD + 1, ~0U, 0);
	prctl(PR_SET_NAME, "harness-dns", 0, 0, 0);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	e = make_namespace();
	if (!e)
		e = anyip_route(AF_INET);
	if (!e) {
		/* IPv6 may be off: then the namespace is IPv4's only. */
		bool v6 = !anyip_route(AF_INET6);

		have[0] = listener(AF_INET, SOCK_DGRAM);
		have[1] = v6 ? listener(AF_INET6, SOCK_DGRAM) : -1;
		have[2] = listener(AF_INET, SOCK_STREAM);
		have[3] = v6 ? listener(AF_INET6, SOCK_STREAM) : -1;
		if (have[0] < 0 || have[2] < 0)
			e = -EADDRNOTAVAIL;
	}
	/* Nothing more needs a privilege: sockets only. */
	if (!e && (hx_caps_limit(0) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)))
		e = -EPERM;
	if (e) {
		send_fds(KEEPER_FD, e, NULL, 0);
		_exit(1);
	}
	for (int i = 0; i < NLISTEN; i++)
		if (have[i] >= 0)
			fds[n++] = have[i];
	/* Which of the four came: a bit each, in the status. */
	e = (have[1] >= 0 ? 1 : 0) | (have[3] >= 0 ? 2 : 0);
	if (send_fds(KEEPER_FD, e, fds, (size_t)n))
		_exit(1);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	serve(KEEPER_FD);
}

/* ---- the supervisor's side ---- */

int hx_dnsns_start(struct hx_dnsns **out)
{
	struct hx_dnsns *ns = calloc(1, sizeof(*ns));
	pid_t parent = getpid();
	int sv[2];

	*out = NULL;
	if (!ns)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		free(ns);
		return -errno;
	}
	ns->pid = fork();
	if (ns->pid < 0) {
		int e = -errno;

		close(sv[0]);
		close(sv[1]);
		free(ns);
		return e;
	}
	if (ns->pid == 0)
		keeper(sv[1], parent);
	close(sv[1]);
	ns->sock = sv[0];
	pthread_mutex_init(&ns->lock, NULL);
	*out = ns;
	return 0;
}

/* One reply of the keeper: its status, and the fds it passed. */
static int recv_reply(int sock, int *fds, size_t max, size_t *nfds)
{
	int32_t status;
	ssize_t n =
	    hx_fd_recv(sock, &status, sizeof(status), fds, max, nfds, 0);

	if (n < 0)
		return (int)n;
	if (n != (ssize_t)sizeof(status))
		return -EPIPE; /* the keeper is gone */
	return status;
}

int hx_dnsns_ready(struct hx_dnsns *ns, int timeout_ms,
		   struct hx_dnsns_listeners *l)
{
	struct pollfd p = {.fd = ns->sock, .events = POLLIN};
	int fds[NLISTEN], st, i = 0;
	size_t n;
	socklen_t cl = sizeof(ns->cookie);

	*l = (struct hx_dnsns_listeners){-1, -1, -1, -1};
	if (ns->waited)
		return -EALREADY;
	ns->waited = true;
	if (poll(&p, 1, timeout_ms) != 1)
		return -ETIMEDOUT;
	st = recv_reply(ns->sock, fds, NLISTEN, &n);
	if (st < 0 || n != 2u + !!(st & 1) + !!(st & 2)) {
		for (size_t k = 0; k < n; k++)
			close(fds[k]);
		return st < 0 ? st : -EPROTO;
	}
	l->udp4 = fds[i++];
	l->udp6 = st & 1 ? fds[i++] : -1;
	l->tcp4 = fds[i++];
	l->tcp6 = st & 2 ? fds[i++] : -1;
	if (getsockopt(l->udp4, SOL_SOCKET, SO_NETNS_COOKIE, &ns->cookie, &cl))
		ns->cookie = 0;
	return 0;
}

void hx_dnsns_listeners_close(const struct hx_dnsns_listeners *l)
{
	const int fds[4] = {l->udp4, l->udp6, l->tcp4, l->tcp6};

	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int hx_dnsns_socket(struct hx_dnsns *ns, int domain, int type, int protocol)
{
	struct sock_rq rq = {domain, type, protocol};
	int fd = -1, st;
	size_t n = 0;

	pthread_mutex_lock(&ns->lock);
	if (ns->sock < 0 ||
	    send(ns->sock, &rq, sizeof(rq), MSG_NOSIGNAL) != sizeof(rq))
		st = -EPIPE;
	else
		st = recv_reply(ns->sock, &fd, 1, &n);
	pthread_mutex_unlock(&ns->lock);
	if (st == 0 && n == 1)
		return fd;
	if (n)
		close(fd);
	return st < 0 ? st : -EPROTO;
}

bool hx_dnsns_holds(const struct hx_dnsns *ns, int sfd)
{
	uint64_t c = 0;
	socklen_t cl = sizeof(c);

	return ns && ns->cookie &&
	       !getsockopt(sfd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &cl) &&
	       c == ns->cookie;
}

void hx_dnsns_close(struct hx_dnsns *ns)
{
	if (!ns)
		return;
	pthread_mutex_lock(&ns->lock);
	if (ns->sock >= 0) {
		close(ns->sock); /* the keeper exits at once */
		ns->sock = -1;
		while (waitpid(ns->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	pthread_mutex_unlock(&ns->lock);
}

void hx_dnsns_free(struct hx_dnsns *ns)
{
	if (!ns)
		return;
	hx_dnsns_close(ns);
	pthread_mutex_destroy(&ns->lock);
	free(ns);
}
