/* Landlock's refusals read from the kernel's audit multicast group and
 * written as records; see kaudit.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/kaudit.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <poll.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "supervisor/kernel/features.h"
#include "policy/policy.h"
#include "supervisor/kernel/landlock.h"
#include "supervisor/pipeline.h"
#include "supervisor/record.h"
#include "supervisor/refusal.h"
#include "supervisor/server.h"

/* include/uapi/linux/audit.h */
#define AUDIT_GET	     1000
#define AUDIT_SET	     1001
#define AUDIT_USER	     1005
#define AUDIT_NLGRP_READLOG  1
#define AUDIT_STATUS_ENABLED 0x0001
#define AUDIT_FAIL_PANIC     2

/* Who turned kernel audit on, and the sessions that rely on it: each
 * holds a shared lock; the last one out (an exclusive lock granted)
 * turns it off again if the file says harness turned it on. */
#define LOCK_PATH "/run/harness-kernel-audit.lock"

#define PEND_MAX    64
#define PEND_AGE_MS 300 /* a refusal without its EOE (no audit context) */
#define REPEAT_MS   1000

struct ka_status {
	uint32_t mask, enabled, failure, pid, rate_limit, backlog_limit, lost,
	    backlog;
};

/* A refusal being put together from its records (one serial). */
struct pend {
	bool used;
	uint64_t serial, born_ms;
	struct timespec when;
	uint64_t domain;
	char blockers[128];
	char path[PATH_MAX];
	char dev[64], ino[24];
	char detail[256]; /* the fields of a refusal without a path */
	bool have_sys;
	long pid, ppid, uid, syscall, exit;
	char exe[PATH_MAX];
};

struct hx_kaudit {
	int fd, lock_fd, timer_fd;
	bool enabled_by_us, started, timer_armed;
	int enabled; /* kernel audit at open: 1, 0, -1 unknown */
	pid_t child;
	char self_exe[PATH_MAX];
	bool have_domain;
	uint64_t domain, probe_serial;
	struct hx_pipeline *pl;
	struct hx_server *srv;
	struct hx_source src, tsrc;
	struct pend pend[PEND_MAX];
	struct pend last; /* the last refusal written, for repeats */
	bool have_last;
	uint64_t last_ms, last_seq, repeats;
	uint64_t records, repeated, overflows, foreign;
	char sync[64]; /* the marker hx_kaudit_finish waits for */
	bool synced;
};

/* One request to the kernel's audit socket (unicast); *st gets an
 * AUDIT_GET reply. Returns 0 or -errno (EPERM: no CAP_AUDIT_CONTROL;
 * ECONNREFUSED: not the initial user namespace). */
static int ctl(uint16_t type, const void *body, size_t blen,
	       struct ka_status *st)
{
	struct {
		struct nlmsghdr h;
		char body[256];
	} req;
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct timeval tv = {.tv_sec = 1};
	char buf[1024] __attribute__((aligned(4)));
	int fd, r = -ETIMEDOUT;
	/* The kernel acks an AUDIT_GET before its reply. */
	bool got = type != AUDIT_GET, acked = false;

	if (blen > sizeof(req.body))
		return -EINVAL;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = (uint32_t)NLMSG_LENGTH(blen);
	req.h.nlmsg_type = type;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.h.nlmsg_seq = 1;
	if (blen)
		memcpy(req.body, body, blen);
	if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0) {
		r = -errno;
		goto out;
	}
	for (int rounds = 0; rounds < 8; rounds++) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		size_t left;

		if (n < 0) {
			r = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out;
		}
		for (left = (size_t)n; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e))) {
					r = -EIO;
					goto out;
				}
				if (e->error) {
					r = e->error;
					goto out;
				}
				acked = true;
			} else if (h->nlmsg_type == AUDIT_GET && st) {
				size_t k = h->nlmsg_len - NLMSG_HDRLEN;

				memset(st, 0, sizeof(*st));
				memcpy(st, NLMSG_DATA(h),
				       k < sizeof(*st) ? k : sizeof(*st));
				got = true;
			}
			if (got && acked) {
				r = 0;
				goto out;
			}
		}
	}
out:
	close(fd);
	return r;
}

static int set_enabled(uint32_t on)
{
	struct ka_status s = {.mask = AUDIT_STATUS_ENABLED, .enabled = on};

	return ctl(AUDIT_SET, &s, sizeof(s), NULL);
}

static int join_group(int *out, char *why, size_t len)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK,
				 .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1)};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
			NETLINK_AUDIT),
	    e;

	if (fd < 0) {
		e = -errno;
		snprintf(why, len, "no audit netlink socket (%s)",
			 strerror(-e));
		return e;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		e = -errno;
		snprintf(why, len,
			 e == -EPERM ? "no CAP_AUDIT_READ (not root): the "
				       "kernel's audit records cannot be read"
				     : "cannot join the audit log group (%s)",
			 strerror(-e));
		close(fd);
		return e;
	}
	*out = fd;
	return 0;
}

void hx_kaudit_probe(struct hx_kaudit_probe *p)
{
	struct ka_status st;
	int fd;

	memset(p, 0, sizeof(*p));
	p->enabled = -1;
	p->abi = hx_landlock_abi() >= 7;
	if (!join_group(&fd, p->why, sizeof(p->why))) {
		p->can_read = true;
		close(fd);
	}
	if (!ctl(AUDIT_GET, NULL, 0, &st)) {
		p->enabled = st.enabled ? 1 : 0;
		p->can_enable = hx_features_has_cap(CAP_AUDIT_CONTROL) &&
				st.failure != AUDIT_FAIL_PANIC &&
				st.enabled != 2;
	}
}

static bool marked(int fd)
{
	char mark[16] = "";
	ssize_t n = pread(fd, mark, sizeof(mark) - 1, 0);

	mark[n > 0 ? n : 0] = '\0';
	return !strcmp(mark, "harness\n");
}

static int lock(int fd, int how)
{
	int r;

	while ((r = flock(fd, how)) && errno == EINTR)
		;
	return r;
}

/* Kernel audit on, under the lock file (see LOCK_PATH): a session that
 * relies on it holds a shared lock; turning it on or off takes the
 * exclusive one. Returns 1 when it is on (the lock is then held), 0
 * when it is not, -1 when the kernel does not say (AUDIT_GET fails: the
 * records may come or not, as without CAP_AUDIT_CONTROL). */
static int take_lock(struct hx_kaudit *ka, bool may_enable, char *why,
		     size_t len)
{
	struct ka_status now;

	ka->lock_fd =
	    open(LOCK_PATH, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (ka->lock_fd < 0) {
		snprintf(why, len, "kernel audit is off and %s: %s", LOCK_PATH,
			 strerror(errno));
		return 0;
	}
	for (int round = 0; round < 50; round++) {
		if (lock(ka->lock_fd, LOCK_SH))
			break;
		if (!ctl(AUDIT_GET, NULL, 0, &now) && now.enabled) {
			ka->enabled_by_us = marked(ka->lock_fd);
			return 1;
		}
		if (!may_enable) {
			snprintf(why, len,
				 "kernel audit is off (--no-kernel-audit)");
			break;
		}
		/* Off: turn it on, alone. Others hold the shared lock only
		 * while it is on (or someone turned it off under them:
		 * then wait for them, a while). */
		if (lock(ka->lock_fd, LOCK_EX | LOCK_NB)) {
			lock(ka->lock_fd, LOCK_UN);
			usleep(20000);
			continue;
		}
		if (ctl(AUDIT_GET, NULL, 0, &now)) {
			close(ka->lock_fd);
			ka->lock_fd = -1;
			return -1;
		}
		if (!now.enabled) {
			if (now.failure == AUDIT_FAIL_PANIC) {
				snprintf(why, len,
					 "kernel audit is off and set to panic "
					 "on a lost record: left off");
				break;
			}
			if (set_enabled(1)) {
				snprintf(why, len,
					 "kernel audit is off and "
					 "could not be turned on");
				break;
			}
			if (ftruncate(ka->lock_fd, 0) ||
			    pwrite(ka->lock_fd, "harness\n", 8, 0) != 8) {
				/* Unmarked, nobody would turn it off. */
				set_enabled(0);
				snprintf(why, len, "%s: cannot be written",
					 LOCK_PATH);
				break;
			}
		}
		ka->enabled_by_us = marked(ka->lock_fd);
		lock(ka->lock_fd, LOCK_SH);
		return 1;
	}
	if (!why[0])
		snprintf(why, len, "kernel audit is off; %s is busy",
			 LOCK_PATH);
	close(ka->lock_fd);
	ka->lock_fd = -1;
	return 0;
}

int hx_kaudit_open(bool may_enable, struct hx_kaudit **out, char *why,
		   size_t len)
{
	struct hx_kaudit *ka;
	struct ka_status st;
	int abi = hx_landlock_abi(), e, sz = 4 << 20;
	ssize_t n;

	*out = NULL;
	if (len)
		why[0] = '\0';
	if (abi < 7) {
		snprintf(why, len,
			 "Landlock ABI %d: its refusals make no audit records "
			 "before ABI 7 (Linux 6.15)",
			 abi);
		return -EOPNOTSUPP;
	}
	ka = calloc(1, sizeof(*ka));
	if (!ka)
		return -ENOMEM;
	ka->fd = ka->lock_fd = ka->timer_fd = -1;
	if ((e = join_group(&ka->fd, why, len)))
		goto fail;
	/* A storm of refusals should not overflow the socket; what does is
	 * counted (ENOBUFS) and said in session_end. */
	if (setsockopt(ka->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(ka->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	ka->enabled = -1;
	/* take_lock asks the kernel itself, under the lock: no AUDIT_GET
	 * before it (each costs a kernel thread that sends the reply, 0.3
	 * to 4 ms on a small VM). */
	if (hx_features_has_cap(CAP_AUDIT_CONTROL))
		ka->enabled = take_lock(ka, may_enable, why, len);
	else if (!ctl(AUDIT_GET, NULL, 0, &st)) {
		ka->enabled = st.enabled ? 1 : 0;
		if (!st.enabled)
			snprintf(why, len,
				 "kernel audit is off and cannot be "
				 "turned on here (no "
				 "CAP_AUDIT_CONTROL)");
	}
	if (!ka->enabled) {
		e = -ENODATA;
		goto fail;
	}
	n = readlink("/proc/self/exe", ka->self_exe, sizeof(ka->self_exe) - 1);
	ka->self_exe[n > 0 ? n : 0] = '\0';
	ka->timer_fd =
	    timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (ka->timer_fd < 0) {
		e = -errno;
		snprintf(why, len, "timerfd: %s", strerror(-e));
		goto fail;
	}
	*out = ka;
	return 0;
fail:
	hx_kaudit_free(ka);
	return e;
}

bool hx_kaudit_domain_known(const struct hx_kaudit *ka)
{
	return ka && ka->have_domain;
}

bool hx_kaudit_enabled_by_us(const struct hx_kaudit *ka)
{
	return ka && ka->enabled_by_us;
}

static void arm(struct hx_kaudit *ka)
{
	struct itimerspec its = {.it_value = {.tv_nsec = 100 * 1000000L}};

	if (ka->timer_armed || ka->timer_fd < 0)
		return;
	if (!timerfd_settime(ka->timer_fd, 0, &its, NULL))
		ka->timer_armed = true;
}

static struct pend *pend_find(struct hx_kaudit *ka, uint64_t serial)
{
	for (size_t i = 0; i < PEND_MAX; i++)
		if (ka->pend[i].used && ka->pend[i].serial == serial)
			return &ka->pend[i];
	return NULL;
}

static const char *syscall_name(long nr, char *buf, size_t len)
{
	char *s = nr >= 0 ? seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE,
							     (int)nr)
			  : NULL;

	snprintf(buf, len, "%s", s ? s : "landlock");
	free(s);
	return buf;
}

/* Writes p; repeated > 0: the count of refusals like the last one
 * since it was written (ref_seq). */
static void write_rec(struct hx_kaudit *ka, const struct pend *p,
		      uint64_t repeated)
{
	char first[64], name[64], dom[24];
	int op = -1, cat = HX_CAT_PROCESS, risk = HX_RISK_HIGH;
	struct hx_peer peer = {0};
	struct hx_refusal r;
	json_t *rec, *args, *acc;
	const char *s, *c;
	uint64_t seq;

	snprintf(first, sizeof(first), "%.*s", (int)strcspn(p->blockers, ","),
		 p->blockers);
	hx_kaudit_blocker(first, &op, &cat, &risk);
	if (p->have_sys) {
		peer.pid = (pid_t)p->pid;
		peer.ppid = (pid_t)p->ppid;
		peer.uid = (uid_t)p->uid;
		peer.exe = p->exe[0] ? p->exe : NULL;
	}
	r = (struct hx_refusal){
	    .peer = p->have_sys ? &peer : NULL,
	    .event =
		syscall_name(p->have_sys ? p->syscall : -1, name, sizeof(name)),
	    .when = &p->when,
	    .op = op,
	    .op_name = first,
	    .path = p->path,
	    .cat = (enum hx_category)cat,
	    .risk = (enum hx_risk)risk,
	    .rule = "harness:landlock",
	    .layer = "landlock",
	    .repeated = repeated,
	    .ref_seq = repeated ? ka->last_seq : 0};
	if (!(rec = hx_refusal_record(ka->pl, &r, &args)))
		return;
	acc = json_array();
	for (s = p->blockers; *s; s = *c ? c + 1 : c) {
		c = s + strcspn(s, ",");
		json_array_append_new(acc, json_stringn(s, (size_t)(c - s)));
	}
	json_object_set_new(args, "access", acc);
	if (p->dev[0])
		json_object_set_new(args, "dev",
				    hx_record_text(rec, "args.dev", p->dev));
	if (p->ino[0])
		json_object_set_new(args, "ino",
				    json_integer(strtoll(p->ino, NULL, 10)));
	if (p->detail[0])
		json_object_set_new(
		    args, "detail",
		    hx_record_text(rec, "args.detail", p->detail));
	if (p->have_sys && p->exit < 0)
		json_object_set_new(args, "result", json_integer(p->exit));
	snprintf(dom, sizeof(dom), "%llx", (unsigned long long)p->domain);
	json_object_set_new(rec, "landlock_domain", json_string(dom));
	seq = hx_refusal_append(ka->pl, &r, rec);
	json_decref(rec);
	if (repeated)
		return;
	ka->last_seq = seq; /* 0: coalesced, nothing to refer to */
	ka->records++;
}

static void flush_repeats(struct hx_kaudit *ka)
{
	if (ka->have_last && ka->repeats) {
		write_rec(ka, &ka->last, ka->repeats);
		ka->repeats = 0;
	}
}

static bool same(const struct pend *a, const struct pend *b)
{
	return a->have_sys == b->have_sys && a->pid == b->pid &&
	       a->syscall == b->syscall && a->domain == b->domain &&
	       !strcmp(a->blockers, b->blockers) && !strcmp(a->path, b->path);
}

/* A refusal is complete (its EOE) or will get no more records. */
static void finalize(struct hx_kaudit *ka, struct pend *p)
{
	uint64_t t = hx_mono_ms();

	p->used = false;
	if (!ka->have_domain || p->domain != ka->domain) {
		ka->foreign++;
		return;
	}
	if (p->serial == ka->probe_serial)
		return; /* the child's own probe (sandbox.c) */
	ka->pl->events++;
	ka->pl->verdicts[HX_VERDICT_DENY]++;
	/* A storm (a loop of the same refused open) is one record and a
	 * count, written when it ends or once a second. */
	if (ka->have_last && same(p, &ka->last) &&
	    t - ka->last_ms < REPEAT_MS) {
		ka->repeats++;
		ka->repeated++;
		arm(ka);
		return;
	}
	flush_repeats(ka);
	write_rec(ka, p, 0);
	ka->last = *p;
	ka->have_last = true;
	ka->last_ms = t;
}

static long num(const char *body, size_t blen, const char *key, long dflt)
{
	char v[32];

	if (hx_kaudit_field(body, blen, key, v, sizeof(v)) <= 0)
		return dflt;
	return strtol(v, NULL, 10);
}

static void on_access(struct hx_kaudit *ka, const struct timespec *when,
		      uint64_t serial, const char *body, size_t blen)
{
	struct pend *p = NULL;
	char v[32];
	size_t i, old = 0;

	for (i = 0; i < PEND_MAX; i++) {
		if (!ka->pend[i].used) {
			p = &ka->pend[i];
			break;
		}
		if (ka->pend[i].born_ms < ka->pend[old].born_ms)
			old = i;
	}
	if (!p) {
		finalize(ka, &ka->pend[old]);
		p = &ka->pend[old];
	}
	memset(p, 0, sizeof(*p));
	p->used = true;
	p->serial = serial;
	p->born_ms = hx_mono_ms();
	p->when = *when;
	p->syscall = -1;
	if (hx_kaudit_field(body, blen, "domain", v, sizeof(v)) > 0)
		p->domain = strtoull(v, NULL, 16);
	if (hx_kaudit_field(body, blen, "blockers", p->blockers,
			    sizeof(p->blockers)) < 0)
		snprintf(p->blockers, sizeof(p->blockers), "unknown");
	if (hx_kaudit_field(body, blen, "path", p->path, sizeof(p->path)) < 0 &&
	    hx_kaudit_field(body, blen, "name", p->path, sizeof(p->path)) < 0) {
		/* The rest, as the kernel wrote it (opid=, daddr=...).
		 * Within blen: the body is the datagram's, not a string
		 * (the buffer's bytes past it an earlier record's). */
		const char *b = memmem(body, blen, "blockers=", 9);
		const char *sp =
		    b ? memchr(b, ' ', blen - (size_t)(b - body)) : NULL;

		if (sp)
			snprintf(p->detail, sizeof(p->detail), "%.*s",
				 (int)(blen - (size_t)(sp + 1 - body)), sp + 1);
		p->path[0] = '\0';
	}
	hx_kaudit_field(body, blen, "dev", p->dev, sizeof(p->dev));
	hx_kaudit_field(body, blen, "ino", p->ino, sizeof(p->ino));
	arm(ka);
}

static void on_domain(struct hx_kaudit *ka, uint64_t serial, const char *body,
		      size_t blen)
{
	char v[32], exe[PATH_MAX];
	const struct pend *probe = pend_find(ka, serial);

	/* The probe's own refusal, just before in the same event: a signal
	 * to this harness-exec. */
	if (!probe || strcmp(probe->blockers, "scope.signal") ||
	    num(probe->detail, strlen(probe->detail), "opid", -1) !=
		(long)getpid())
		return;
	if (ka->have_domain || !ka->child ||
	    hx_kaudit_field(body, blen, "status", v, sizeof(v)) < 0 ||
	    strcmp(v, "allocated") ||
	    num(body, blen, "pid", -1) != (long)ka->child ||
	    hx_kaudit_field(body, blen, "exe", exe, sizeof(exe)) < 0 ||
	    strcmp(exe, ka->self_exe) ||
	    hx_kaudit_field(body, blen, "domain", v, sizeof(v)) <= 0)
		return;
	/* The domain the child made: its pid, harness-exec's image (it had
	 * not exec'd yet), its first refusal a signal to us (the probe,
	 * made before the agent runs). Records come in the order they are
	 * made, and the probe is made while the child is alive and
	 * unreaped, so no other process has its pid; another session's
	 * probe signals its own harness-exec. */
	ka->domain = strtoull(v, NULL, 16);
	ka->have_domain = true;
	ka->probe_serial = serial;
}

static void on_syscall(struct hx_kaudit *ka, uint64_t serial, const char *body,
		       size_t blen)
{
	struct pend *p = pend_find(ka, serial);

	if (!p)
		return;
	p->have_sys = true;
	p->pid = num(body, blen, "pid", 0);
	p->ppid = num(body, blen, "ppid", 0);
	p->uid = num(body, blen, "uid", -1);
	p->syscall = num(body, blen, "syscall", -1);
	p->exit = num(body, blen, "exit", 0);
	if (hx_kaudit_field(body, blen, "exe", p->exe, sizeof(p->exe)) < 0)
		p->exe[0] = '\0';
}

static void handle(struct hx_kaudit *ka, int type, const char *text, size_t len)
{
	struct timespec when;
	uint64_t serial;
	struct pend *p;
	int off;

	while (len && text[len - 1] == '\0')
		len--;
	off = hx_kaudit_header(text, len, &when, &serial);
	if (off < 0)
		return;
	text += off;
	len -= (size_t)off;
	switch (type) {
	case HX_AUDIT_LANDLOCK_ACCESS:
		on_access(ka, &when, serial, text, len);
		break;
	case HX_AUDIT_LANDLOCK_DOMAIN:
		on_domain(ka, serial, text, len);
		break;
	case HX_AUDIT_SYSCALL:
		on_syscall(ka, serial, text, len);
		break;
	case HX_AUDIT_EOE:
		if ((p = pend_find(ka, serial)))
			finalize(ka, p);
		break;
	case AUDIT_USER: /* hx_kaudit_finish's marker */
		if (ka->sync[0] &&
		    memmem(text, len, ka->sync, strlen(ka->sync)))
			ka->synced = true;
		break;
	}
}

static void read_all(struct hx_kaudit *ka)
{
	char buf[16384] __attribute__((aligned(4)));

	for (;;) {
		ssize_t n = recv(ka->fd, buf, sizeof(buf), MSG_DONTWAIT);
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
		size_t len;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) { /* lost to an overflow */
				ka->overflows++;
				continue;
			}
			return;
		}
		/* One record a datagram; its length is not aligned, so
		 * NLMSG_NEXT would step past the end. */
		if ((size_t)n < NLMSG_HDRLEN)
			continue;
		len = h->nlmsg_len < (size_t)n ? h->nlmsg_len : (size_t)n;
		if (len < NLMSG_HDRLEN)
			continue;
		handle(ka, h->nlmsg_type, buf + NLMSG_HDRLEN,
		       len - NLMSG_HDRLEN);
	}
}

/* Refusals that will get no EOE, and a storm's count once a second. */
static void age(struct hx_kaudit *ka, bool all)
{
	uint64_t t = hx_mono_ms();
	bool left = false;

	for (size_t i = 0; i < PEND_MAX; i++) {
		if (!ka->pend[i].used)
			continue;
		if (all || t - ka->pend[i].born_ms >= PEND_AGE_MS)
			finalize(ka, &ka->pend[i]);
		else
			left = true;
	}
	if (ka->repeats && (all || t - ka->last_ms >= REPEAT_MS)) {
		flush_repeats(ka);
		ka->last_ms = t;
	} else if (ka->repeats)
		left = true;
	if (left)
		arm(ka);
}

static void on_readable(struct hx_server *s, struct hx_source *src,
			uint32_t events)
{
	(void)s;
	(void)events;
	read_all(src->arg);
}

static void on_timer(struct hx_server *s, struct hx_source *src,
		     uint32_t events)
{
	struct hx_kaudit *ka = src->arg;
	uint64_t x;

	(void)s;
	(void)events;
	while (read(ka->timer_fd, &x, sizeof(x)) > 0)
		;
	ka->timer_armed = false;
	read_all(ka);
	age(ka, false);
}

int hx_kaudit_start(struct hx_kaudit *ka, pid_t child, struct hx_pipeline *pl,
		    struct hx_server *srv)
{
	int e;

	if (!ka)
		return 0;
	ka->child = child;
	ka->pl = pl;
	ka->srv = srv;
	ka->src =
	    (struct hx_source){.fd = ka->fd, .handle = on_readable, .arg = ka};
	ka->tsrc = (struct hx_source){
	    .fd = ka->timer_fd, .handle = on_timer, .arg = ka};
	if ((e = hx_server_add(srv, &ka->src, EPOLLIN)) ||
	    (e = hx_server_add(srv, &ka->tsrc, EPOLLIN)))
		return e;
	ka->started = true;
	return 0;
}

void hx_kaudit_finish(struct hx_kaudit *ka, int wait_ms)
{
	char msg[128];
	uint64_t start = hx_mono_ms();
	int n;

	if (!ka || !ka->started)
		return;
	/* Records are queued in the order they are made: once a message of
	 * our own, sent now that the tree has ended, comes back through
	 * the group, every refusal made before it has come too. */
	snprintf(ka->sync, sizeof(ka->sync), "harness-exec sync %d-%llu",
		 (int)getpid(), (unsigned long long)start);
	n = snprintf(msg, sizeof(msg), "%s", ka->sync);
	if (ka->enabled != 1 || ctl(AUDIT_USER, msg, (size_t)n + 1, NULL))
		ka->sync[0] = '\0';
	do {
		struct pollfd pfd = {.fd = ka->fd, .events = POLLIN};

		read_all(ka);
		if (ka->synced)
			break;
		if (poll(&pfd, 1, ka->sync[0] ? 20 : 5) <= 0 && !ka->sync[0])
			break;
	} while (hx_mono_ms() - start < (uint64_t)wait_ms);
	age(ka, true);
}

json_t *hx_kaudit_json(const struct hx_kaudit *ka)
{
	json_t *o = json_object();

	json_object_set_new(o, "records",
			    json_integer((json_int_t)ka->records));
	json_object_set_new(o, "repeated",
			    json_integer((json_int_t)ka->repeated));
	if (ka->overflows)
		json_object_set_new(o, "lost_overflows",
				    json_integer((json_int_t)ka->overflows));
	json_object_set_new(o, "domain_known", json_boolean(ka->have_domain));
	if (ka->enabled_by_us)
		json_object_set_new(o, "enabled_by_harness", json_true());
	return o;
}

void hx_kaudit_free(struct hx_kaudit *ka)
{
	if (!ka)
		return;
	if (ka->started) {
		hx_server_del(ka->srv, &ka->src);
		hx_server_del(ka->srv, &ka->tsrc);
	}
	if (ka->fd >= 0)
		close(ka->fd);
	if (ka->timer_fd >= 0)
		close(ka->timer_fd);
	/* The last session out turns it off, if harness turned it on. */
	if (ka->lock_fd >= 0) {
		if (!lock(ka->lock_fd, LOCK_EX | LOCK_NB) &&
		    marked(ka->lock_fd) && !set_enabled(0))
			(void)!ftruncate(ka->lock_fd, 0);
		close(ka->lock_fd);
	}
	free(ka);
}
