/* The agent's DNS (issue 13): its sockets to port 53 sealed into the
 * supervisor's namespace (dnsns.h), and the resolver answering there,
 * which judges each question by its name, asks the system's resolvers
 * (libresolv: res_nsend, with what /etc/resolv.conf says) only for a
 * name the policy lets the agent look up, records the question and the
 * answer, and maps the answer's addresses to the name (dnsmap.h) that
 * connects are then judged by. */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <resolv.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/sockaddr.h"
#include "policy/policy.h"
#include "supervisor/dnsmap.h"
#include "supervisor/dnsmsg.h"
#include "supervisor/kernel/dnsns.h"

#define DNS_UDP_THREADS 3 /* a slow upstream holds one question each */
#define DNS_TCP_THREADS 2 /* a connection each */
#define DNS_THREADS	(DNS_UDP_THREADS + DNS_TCP_THREADS)
#define OWNERS		4096
#define MAX_ANSWERS	16
#define TCP_QUESTION_MS 2000 /* a question's bytes, all of them */
#define ANSWER_MAX	65535

/* Which process a sealed socket is: the namespace's resolver sees only
 * its port. */
struct owner {
	pid_t pid;
	uint16_t port;
	uint8_t type;
};

struct hx_un_dns {
	struct hx_unotify *u; /* not used once stopped */
	struct hx_dnsns *ns;
	struct hx_dnsns_listeners l;
	struct sockaddr_in upstream; /* sin_family 0: the system's */
	int stopfd;
	int denied; /* the rcode of a denied question */
	pthread_mutex_t lock;
	pthread_cond_t idle;
	bool stopped;
	int busy, running; /* threads in a decision; threads alive */
	pthread_t th[DNS_THREADS];
	int nth;
	struct owner owners[OWNERS];
	size_t next;
};

/* One question being answered. */
struct ask {
	const uint8_t *msg;
	size_t len;
	int type; /* SOCK_DGRAM, SOCK_STREAM */
	const struct sockaddr_storage *src, *dst;
	uint8_t *ans, *out;
};

bool hx_un_dns_port(const struct sockaddr_storage *ss, socklen_t len)
{
	return hx_sockaddr_port(ss, len) == 53;
}

static void own(struct hx_un_dns *d, int sfd, int type, pid_t pid)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(sfd, (void *)&ss, &sl) || hx_sockaddr_port(&ss, sl) < 0)
		return;
	pthread_mutex_lock(&d->lock);
	d->owners[d->next++ % OWNERS] = (struct owner){
	    pid, (uint16_t)hx_sockaddr_port(&ss, sl), (uint8_t)type};
	pthread_mutex_unlock(&d->lock);
}

static pid_t owner_of(struct hx_un_dns *d, int type,
		      const struct sockaddr_storage *src)
{
	int port = hx_sockaddr_port(src, sizeof(*src));
	pid_t pid = 0;

	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < OWNERS && i < d->next; i++) {
		const struct owner *o = &d->owners[(d->next - 1 - i) % OWNERS];

		if (o->port == port && o->type == type) {
			pid = o->pid;
			break;
		}
	}
	pthread_mutex_unlock(&d->lock);
	return pid;
}

static int serve_once(struct hx_un_dns *d);

/* What the agent may have set on a socket it sends DNS on, carried to
 * the sealed one that replaces it: without its SO_RCVTIMEO, a question
 * the resolver leaves unanswered (malformed) held the agent's recv for
 * good where the kernel times out. Options that route past a decision
 * are refused when set (seccomp_net_rows.h), and nothing leaves the
 * namespace anyway. */
static const struct kept_opt {
	int domain; /* 0: every one */
	int level, name;
} kept_opts[] = {
    {0, SOL_SOCKET, SO_RCVTIMEO},
    {0, SOL_SOCKET, SO_SNDTIMEO},
    {0, SOL_SOCKET, SO_RCVBUF},
    {0, SOL_SOCKET, SO_SNDBUF},
    {0, SOL_SOCKET, SO_RCVLOWAT},
    {0, SOL_SOCKET, SO_BROADCAST},
    {0, SOL_SOCKET, SO_KEEPALIVE},
    {0, SOL_SOCKET, SO_LINGER},
    {0, SOL_SOCKET, SO_PRIORITY},
    {0, SOL_SOCKET, SO_TIMESTAMP},
    {0, SOL_SOCKET, SO_TIMESTAMPNS},
    {0, SOL_SOCKET, SO_OOBINLINE},
    {AF_INET, IPPROTO_IP, IP_TOS},
    {AF_INET, IPPROTO_IP, IP_TTL},
    {AF_INET, IPPROTO_IP, IP_RECVERR},
    {AF_INET, IPPROTO_IP, IP_PKTINFO},
    {AF_INET, IPPROTO_IP, IP_RECVTTL},
    {AF_INET, IPPROTO_IP, IP_RECVTOS},
    {AF_INET, IPPROTO_IP, IP_MTU_DISCOVER},
    {AF_INET6, IPPROTO_IPV6, IPV6_UNICAST_HOPS},
    {AF_INET6, IPPROTO_IPV6, IPV6_RECVERR},
    {AF_INET6, IPPROTO_IPV6, IPV6_RECVPKTINFO},
    {AF_INET6, IPPROTO_IPV6, IPV6_RECVHOPLIMIT},
    {AF_INET6, IPPROTO_IPV6, IPV6_TCLASS},
    {AF_INET6, IPPROTO_IPV6, IPV6_MTU_DISCOVER},
};

static void keep_opts(int from, int to, int domain)
{
	for (size_t i = 0; i < sizeof(kept_opts) / sizeof(*kept_opts); i++) {
		const struct kept_opt *o = &kept_opts[i];
		unsigned char v[32];
		socklen_t l = sizeof(v);
		int half;

		if ((o->domain && o->domain != domain) ||
		    getsockopt(from, o->level, o->name, v, &l))
			continue;
		/* The kernel doubles a buffer size it is given. */
		if (o->level == SOL_SOCKET &&
		    (o->name == SO_RCVBUF || o->name == SO_SNDBUF) &&
		    l == sizeof(int)) {
			memcpy(&half, v, sizeof(half));
			half /= 2;
			memcpy(v, &half, sizeof(half));
		}
		(void)setsockopt(to, o->level, o->name, v, l);
	}
}

int hx_un_dns_seal(struct hx_unotify *u, uint64_t id, const struct target *t,
		   int fd, int *sfd)
{
	struct hx_un_dns *d = u->dns;
	struct sockaddr_storage any = {0};
	int domain = 0, type = 0, proto = 0, v6only = 0, fl, nfd, e;
	socklen_t l1 = sizeof(int), l2 = sizeof(int), l3 = sizeof(int);
	socklen_t l4 = sizeof(int);

	if (hx_dnsns_holds(d->ns, *sfd))
		return 0; /* sealed already */
	if ((e = serve_once(d)))
		return e;
	if (getsockopt(*sfd, SOL_SOCKET, SO_DOMAIN, &domain, &l1) ||
	    getsockopt(*sfd, SOL_SOCKET, SO_TYPE, &type, &l2) ||
	    getsockopt(*sfd, SOL_SOCKET, SO_PROTOCOL, &proto, &l3) ||
	    (fl = fcntl(*sfd, F_GETFL)) < 0)
		return -errno;
	if (domain == AF_INET6 &&
	    getsockopt(*sfd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &l4))
		return -errno;
	if ((nfd = hx_dnsns_socket(d->ns, domain, type, proto)) < 0)
		return nfd;
	keep_opts(*sfd, nfd, domain);
	/* Bound before a byte flows, so that its port names the process
	 * when its first question arrives. */
	any.ss_family = (sa_family_t)domain;
	if ((domain == AF_INET6 && setsockopt(nfd, IPPROTO_IPV6, IPV6_V6ONLY,
					      &v6only, sizeof(v6only))) ||
	    ((fl & O_NONBLOCK) && fcntl(nfd, F_SETFL, O_NONBLOCK)) ||
	    bind(nfd, (void *)&any,
		 domain == AF_INET ? sizeof(struct sockaddr_in)
				   : sizeof(struct sockaddr_in6))) {
		e = -errno;
		close(nfd);
		return e;
	}
	own(d, nfd, type, t->peer.pid);
	if ((e = hx_un_replace_fd(u, id, t, fd, nfd))) {
		close(nfd);
		return e;
	}
	hx_un_put_fd(*sfd); /* the agent's no longer: ours may be last */
	*sfd = nfd;
	return 0;
}

/* ---- the resolver ---- */

static __thread struct __res_state res;
static __thread bool res_ok;

/* The upstream's answer to q's question, asked anew (the agent's bytes
 * never leave: no EDNS option or record of its rides along), into ans;
 * its length or -1. */
static int upstream(struct hx_un_dns *d, const struct hx_dnsq *q, uint8_t *ans)
{
	uint8_t qb[NS_PACKETSZ];
	int n;

	if (!res_ok) {
		if (res_ninit(&res))
			return -1;
		if (d->upstream.sin_family) {
			res.nsaddr_list[0] = d->upstream;
			res.nscount = 1;
		}
		/* One socket per thread and server, not one per question. */
		res.options |= RES_STAYOPEN;
		res_ok = true;
	}
	n = res_nmkquery(&res, ns_o_query, q->name, q->cls, q->type, NULL, 0,
			 NULL, qb, sizeof(qb));
	return n < 0 ? -1 : res_nsend(&res, qb, n, ans, ANSWER_MAX);
}

/* Whether d->u may be used (until hx_un_dns_stop); then leave after. A
 * thread that outlives the stop (a slow upstream) touches nothing. */
static bool enter(struct hx_un_dns *d)
{
	bool ok;

	pthread_mutex_lock(&d->lock);
	ok = !d->stopped;
	d->busy += ok;
	pthread_mutex_unlock(&d->lock);
	return ok;
}

static void leave(struct hx_un_dns *d)
{
	pthread_mutex_lock(&d->lock);
	if (!--d->busy)
		pthread_cond_broadcast(&d->idle);
	pthread_mutex_unlock(&d->lock);
}

/* Decides the question on the loop's thread (its record, with what was
 * answered); false when it is not to be answered. */
static bool record(struct hx_un_dns *d, const struct ask *k,
		   const struct hx_dnsq *q, const uint8_t *ans, int alen)
{
	struct hx_dnsaddr a[MAX_ANSWERS];
	char text[MAX_ANSWERS][HX_SOCKADDR_LEN];
	const char *answers[MAX_ANSWERS];
	size_t n = alen > 0
		       ? hx_dnsmsg_addresses(ans, (size_t)alen, a, MAX_ANSWERS)
		       : 0;
	struct target t = {0};
	struct job j;
	char tbuf[16];
	pid_t pid = owner_of(d, k->type, k->src);
	bool ok;

	if (pid > 0 && hx_un_target_info(d->u, pid, &t))
		memset(&t, 0, sizeof(t));
	t.peer.tid = 0;
	hx_un_job(&j, &t, HX_CALL_DNS_QUERY, HX_OP_RESOLVE);
	for (size_t i = 0; i < n; i++) {
		inet_ntop(
		    a[i].sa.ss_family,
		    a[i].sa.ss_family == AF_INET
			? (void *)&((struct sockaddr_in *)&a[i].sa)->sin_addr
			: (void *)&((struct sockaddr_in6 *)&a[i].sa)->sin6_addr,
		    text[i], sizeof(text[i]));
		answers[i] = text[i];
		if (!i || a[i].ttl < j.rq.dns_ttl)
			j.rq.dns_ttl = a[i].ttl;
	}
	j.rq.host = q->name[0] ? q->name : NULL;
	j.rq.addr = k->dst;
	j.rq.addrlen = k->dst->ss_family == AF_INET
			   ? sizeof(struct sockaddr_in)
			   : sizeof(struct sockaddr_in6);
	j.rq.dns_type = q->name[0]
			    ? hx_dnsmsg_type_name(q->type, tbuf, sizeof(tbuf))
			    : NULL;
	j.rq.dns_rcode =
	    alen > 0 ? hx_dnsmsg_rcode_name(hx_dnsmsg_rcode(ans, (size_t)alen))
	    : alen < 0 ? "no answer"
		       : NULL;
	j.rq.answers = answers;
	j.rq.nanswers = n;
	if (!enter(d))
		return false;
	ok = hx_un_submit(d->u, &j) && j.out.reply == HX_VERDICT_ALLOW;
	/* What the session was told is what its connects are judged by. */
	if (ok && d->u->pl->dns)
		for (size_t i = 0; i < n; i++)
			hx_dnsmap_add(d->u->pl->dns, (void *)&a[i].sa, a[i].len,
				      q->name, a[i].ttl, HX_DNS_ANSWER);
	leave(d);
	return ok;
}

/* The reply to k's question into k->out: its length, or 0 for none. */
static size_t answer(struct hx_un_dns *d, const struct ask *k)
{
	struct hx_event ev = {.op = HX_OP_RESOLVE};
	struct hx_decision dec;
	struct hx_dnsq q;
	int alen = 0;
	bool asks;
	size_t n;

	if (hx_dnsmsg_question(k->msg, k->len, &q)) {
		/* Recorded (harness:malformed), never answered. */
		memset(&q, 0, sizeof(q));
		record(d, k, &q, NULL, 0);
		return 0;
	}
	/* Asked upstream only when the policy lets the agent look the
	 * name up (or audit mode lets everything go); the loop's decision
	 * after it stays the one that answers. */
	ev.host = q.name;
	if (!enter(d))
		return 0;
	hx_policy_decide(d->u->pl->policy, &ev, &dec);
	asks = q.cls == ns_c_in && (dec.verdict == HX_VERDICT_ALLOW ||
				    d->u->pl->mode == HX_MODE_AUDIT);
	leave(d);
	if (asks)
		alen = upstream(d, &q, k->ans);
	if (!record(d, k, &q, k->ans, alen))
		return hx_dnsmsg_refusal(k->msg, &q, d->denied, k->out,
					 ANSWER_MAX);
	/* Over UDP, what the asker takes (EDNS, or 512); else TC. */
	n = alen > 0 ? hx_dnsmsg_relay(k->msg, &q, k->ans, (size_t)alen,
				       k->type == SOCK_DGRAM ? q.udp_max
							     : ANSWER_MAX,
				       k->out, ANSWER_MAX)
		     : 0;
	return n ? n
		 : hx_dnsmsg_refusal(k->msg, &q, ns_r_servfail, k->out,
				     ANSWER_MAX);
}

/* A datagram's destination (the server the agent asked), which the
 * reply must come from. */
static bool pktinfo(struct msghdr *m, struct sockaddr_storage *dst)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			struct sockaddr_in *in = (void *)dst;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			in->sin_family = AF_INET;
			in->sin_addr = pi.ipi_addr;
			in->sin_port = htons(53);
			return true;
		}
		if (c->cmsg_level == IPPROTO_IPV6 &&
		    c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			struct sockaddr_in6 *in6 = (void *)dst;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			in6->sin6_family = AF_INET6;
			in6->sin6_addr = pi.ipi6_addr;
			in6->sin6_port = htons(53);
			return true;
		}
	}
	return false;
}

static void reply_from(int sock, const struct sockaddr_storage *src,
		       const struct sockaddr_storage *dst, const uint8_t *out,
		       size_t n)
{
	union {
		struct cmsghdr h;
		unsigned char b[CMSG_SPACE(sizeof(struct in6_pktinfo))];
	} cb;
	struct iovec iov = {(void *)out, n};
	struct msghdr m = {.msg_name = (void *)src,
			   .msg_namelen = src->ss_family == AF_INET
					      ? sizeof(struct sockaddr_in)
					      : sizeof(struct sockaddr_in6),
			   .msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cb.b};
	struct cmsghdr *c;

	memset(&cb, 0, sizeof(cb));
	c = (struct cmsghdr *)cb.b;
	if (dst->ss_family == AF_INET) {
		struct in_pktinfo pi = {
		    .ipi_spec_dst =
			((const struct sockaddr_in *)(const void *)dst)
			    ->sin_addr};

		m.msg_controllen = CMSG_SPACE(sizeof(pi));
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	} else {
		struct in6_pktinfo pi = {
		    .ipi6_addr =
			((const struct sockaddr_in6 *)(const void *)dst)
			    ->sin6_addr};

		m.msg_controllen = CMSG_SPACE(sizeof(pi));
		c->cmsg_level = IPPROTO_IPV6;
		c->cmsg_type = IPV6_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	}
	sendmsg(sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void serve_udp(struct hx_un_dns *d, int sock, struct ask *k, uint8_t *in)
{
	union {
		struct cmsghdr h;
		unsigned char b[256];
	} cb;
	struct sockaddr_storage src = {0}, dst = {0};
	struct iovec iov = {in, HX_DNS_UDP_MAX};
	struct msghdr m = {.msg_name = &src,
			   .msg_namelen = sizeof(src),
			   .msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cb.b,
			   .msg_controllen = sizeof(cb.b)};
	ssize_t n = recvmsg(sock, &m, MSG_DONTWAIT);
	size_t r;

	if (n <= 0 || !pktinfo(&m, &dst))
		return;
	*k = (struct ask){.msg = in,
			  .len = (size_t)n,
			  .type = SOCK_DGRAM,
			  .src = &src,
			  .dst = &dst,
			  .ans = k->ans,
			  .out = k->out};
	r = answer(d, k);
	if (r)
		reply_from(sock, &src, &dst, k->out, r);
}

/* Exactly n bytes of a TCP stream by the deadline (hx_mono_ms): a
 * connection that dribbles holds its thread no longer. */
static bool read_full(struct hx_un_dns *d, int fd, uint8_t *b, size_t n,
		      uint64_t deadline)
{
	struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
			      {.fd = d->stopfd, .events = POLLIN}};

	while (n) {
		uint64_t now = hx_mono_ms();
		ssize_t r;

		if (now >= deadline || poll(p, 2, (int)(deadline - now)) < 1 ||
		    p[1].revents)
			return false;
		r = read(fd, b, n);
		if (r <= 0)
			return false;
		b += r;
		n -= (size_t)r;
	}
	return true;
}

static void serve_tcp(struct hx_un_dns *d, int lsock, struct ask *k,
		      uint8_t *in)
{
	struct sockaddr_storage src = {0}, dst = {0};
	socklen_t sl = sizeof(src), dl = sizeof(dst);
	int fd = accept4(lsock, (void *)&src, &sl, SOCK_CLOEXEC);
	uint8_t len[2];

	if (fd < 0)
		return;
	if (getsockname(fd, (void *)&dst, &dl)) {
		close(fd);
		return;
	}
	/* The first question's deadline runs from the accept, each next
	 * one's from its first byte: an idle connection waits that long. */
	while (read_full(d, fd, len, 2, hx_mono_ms() + TCP_QUESTION_MS)) {
		size_t n = (size_t)(len[0] << 8 | len[1]), r;

		if (!n ||
		    !read_full(d, fd, in, n, hx_mono_ms() + TCP_QUESTION_MS))
			break;
		*k = (struct ask){.msg = in,
				  .len = n,
				  .type = SOCK_STREAM,
				  .src = &src,
				  .dst = &dst,
				  .ans = k->ans,
				  .out = k->out};
		if (!(r = answer(d, k)))
			continue;
		len[0] = (uint8_t)(r >> 8);
		len[1] = (uint8_t)r;
		/* Never waited for: an asker that does not read loses it. */
		if (send(fd, len, 2, MSG_NOSIGNAL | MSG_DONTWAIT | MSG_MORE) !=
			2 ||
		    send(fd, k->out, r, MSG_NOSIGNAL | MSG_DONTWAIT) !=
			(ssize_t)r)
			break;
	}
	close(fd);
}

static void *serve(void *arg, bool tcp)
{
	struct hx_un_dns *d = arg;
	struct pollfd p[3] = {
	    {.fd = tcp ? d->l.tcp4 : d->l.udp4, .events = POLLIN},
	    {.fd = tcp ? d->l.tcp6 : d->l.udp6, .events = POLLIN},
	    {.fd = d->stopfd, .events = POLLIN}};
	/* 64 KiB for the upstream's answer and as much for the reply. */
	uint8_t *in = malloc(ANSWER_MAX + 1), *ans = malloc(ANSWER_MAX),
		*out = malloc(ANSWER_MAX);
	struct ask k = {.ans = ans, .out = out};

	while (in && ans && out && poll(p, 3, -1) >= 0 && !p[2].revents) {
		for (int i = 0; i < 2; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			if (tcp)
				serve_tcp(d, p[i].fd, &k, in);
			else
				serve_udp(d, p[i].fd, &k, in);
		}
	}
	free(in);
	free(ans);
	free(out);
	if (res_ok)
		res_nclose(&res);
	pthread_mutex_lock(&d->lock);
	d->running--;
	pthread_cond_broadcast(&d->idle);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

static void *serve_udp_thread(void *arg)
{
	return serve(arg, false);
}

static void *serve_tcp_thread(void *arg)
{
	return serve(arg, true);
}

int hx_un_dns_start(struct hx_unotify *u, const struct hx_unotify_dns *conf)
{
	struct hx_un_dns *d = calloc(1, sizeof(*d));
	int e = 0;

	if (!d) {
		hx_dnsns_listeners_close(&conf->l);
		return -ENOMEM;
	}
	d->u = u;
	d->ns = conf->ns;
	d->denied = conf->denied_rcode;
	d->l = conf->l;
	if (conf->upstream)
		d->upstream = *conf->upstream;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->idle, NULL);
	if ((d->stopfd = eventfd(0, EFD_CLOEXEC)) < 0)
		e = -errno;
	/* The listeners never block a thread: two wait on each. */
	for (int i = 0, fds[2] = {d->l.tcp4, d->l.tcp6}; i < 2; i++)
		if (fds[i] >= 0 && fcntl(fds[i], F_SETFL, O_NONBLOCK))
			e = -errno;
	u->dns = d;
	return e;
}

/* The threads, made when the first socket is sealed (most sessions ask
 * no question: five threads were 0.6 ms of every start), before that
 * socket can send: its question waits in the listener meanwhile. They
 * inherit the sealing worker's rights (no capability but
 * CAP_SYS_PTRACE), which is all they use. -errno: the seal fails. */
static int serve_once(struct hx_un_dns *d)
{
	int e = 0;

	pthread_mutex_lock(&d->lock);
	for (; !e && !d->stopped && d->nth < DNS_THREADS; d->nth++) {
		e = -pthread_create(&d->th[d->nth], NULL,
				    d->nth < DNS_TCP_THREADS ? serve_tcp_thread
							     : serve_udp_thread,
				    d);
		if (e)
			break;
		d->running++;
	}
	if (d->stopped)
		e = -ESHUTDOWN;
	pthread_mutex_unlock(&d->lock);
	return e;
}

void hx_un_dns_stop(struct hx_unotify *u)
{
	struct hx_un_dns *d = u->dns;
	struct timespec until;
	uint64_t one = 1;
	bool left;

	if (!d)
		return;
	u->dns = NULL;
	if (d->stopfd >= 0 && write(d->stopfd, &one, sizeof(one)) < 0) {
		/* then the threads stop at their next question */
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 200 * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&d->lock);
	d->stopped = true; /* from here no thread touches u */
	while (d->busy)
		pthread_cond_wait(&d->idle, &d->lock);
	/* A thread waiting on a slow upstream is let go, and d with it. */
	while (d->running &&
	       pthread_cond_timedwait(&d->idle, &d->lock, &until) == 0)
		;
	left = d->running > 0;
	pthread_mutex_unlock(&d->lock);
	for (int i = 0; i < d->nth; i++)
		if (left)
			pthread_detach(d->th[i]);
		else
			pthread_join(d->th[i], NULL);
	if (left)
		return;
	hx_dnsns_listeners_close(&d->l);
	close(d->stopfd);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->idle);
	free(d);
}
