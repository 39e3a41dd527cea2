/* Supervisor connection and request/reply; see client.h. */
#define _GNU_SOURCE
#include "shim/client.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>

#include "shim/exec.h"
#include "common/path.h"
#include "shim/stack.h"
#include "shim/tls.h"
#include "common/sys.h"

#define HX_TIMEOUT_SEC	   30
#define HX_FD_FLOOR	   1000
#define HX_SPIN_NS	   100000
#define HX_MAX_FRAME_BYTES (HX_WIRE_MAX_FRAMES * 260)

static _Atomic int g_state;
static char g_sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
static char g_shim[PATH_MAX];
static const void *g_self_base;
static int g_argc;
static char **g_argv;
static _Atomic long g_pid;

/* The process connection, owned by whoever holds g_busy. */
static atomic_int g_busy;
static int g_fd = -1;
static dev_t g_dev;
static ino_t g_ino;
static uint32_t g_next_id = 1;
static uint32_t g_hello_id;  /* a HELLO whose reply is still unread */
static int g_inherited = -1; /* handed over by the exec (HX_ENV_CONN) */
static uint8_t g_buf[HX_WIRE_MAX] __attribute__((aligned(8)));

/* Read rules: written once under g_busy, then read lock-free. */
static struct hx_read_rules g_rules;
static atomic_bool g_rules_ready;

/* ---------------------------------------------------------------- */
/* Encoding */

size_t hx_req_encode(const struct hx_req *r, long result, uint32_t id,
		     uint32_t pid, uint32_t tid, void *buf, size_t cap,
		     const void *self_base)
{
	struct hx_wbuf w;
	int bad = 0;
	size_t full;

	hx_wire_begin(&w, buf, cap, result < 0 ? HX_MSG_REQUEST : HX_MSG_REPORT,
		      id);
	bad |= hx_wire_put_u32(&w, HX_TAG_PID, pid);
	bad |= hx_wire_put_u32(&w, HX_TAG_TID, tid);
	bad |= hx_wire_put_u32(&w, HX_TAG_CALL, (uint32_t)r->call);
	bad |= hx_wire_put_u32(&w, HX_TAG_OP, (uint32_t)r->op);
	if (r->path)
		bad |= hx_wire_put_str(&w, HX_TAG_PATH, r->path);
	if (r->path2)
		bad |= hx_wire_put_str(&w, HX_TAG_PATH2, r->path2);
	if (r->host)
		bad |= hx_wire_put_str(&w, HX_TAG_HOST, r->host);
	if (r->has_flags)
		bad |= hx_wire_put_u32(&w, HX_TAG_FLAGS, r->flags);
	if (r->has_mode)
		bad |= hx_wire_put_u32(&w, HX_TAG_MODE, r->mode);
	if (r->proto > 0)
		bad |= hx_wire_put_u32(&w, HX_TAG_PROTO, (uint32_t)r->proto);
	if (r->addr && r->addrlen >= 2)
		bad |= hx_wire_put_bytes(&w, HX_TAG_ADDR, r->addr,
					 r->addrlen > HX_WIRE_MAX_SOCKADDR
					     ? HX_WIRE_MAX_SOCKADDR
					     : r->addrlen);
	for (size_t i = 0; i < r->naddrs && i < HX_WIRE_MAX_ADDRS; i++) {
		size_t l = r->addrlens[i];

		if (l >= 2 && l <= HX_WIRE_MAX_SOCKADDR)
			hx_wire_put_bytes(&w, HX_TAG_ADDR, r->addrs[i], l);
	}
	if (result >= 0)
		bad |= hx_wire_put_u32(&w, HX_TAG_RESULT, (uint32_t)result);
	if (r->op == HX_OP_EXEC && r->has_envp && result < 0)
		bad |= hx_wire_put_u64(&w, HX_TAG_ENVP,
				       (uint64_t)(uintptr_t)r->envp);
	if (bad)
		return 0;
	/* Frames get a bounded share; argv the rest, minus room for the
	 * TRUNCATED flag. */
	if (self_base && r->frames && w.cap - w.len > HX_MAX_FRAME_BYTES + 64) {
		full = w.cap;
		w.cap = w.len + HX_MAX_FRAME_BYTES;
		hx_stack_put(&w, self_base);
		w.cap = full;
	}
	if (r->argv) {
		size_t i;
		bool trunc = false;

		full = w.cap;
		w.cap -= 8;
		for (i = 0; r->argv[i]; i++) {
			if (i == HX_WIRE_MAX_ARGS ||
			    hx_wire_put_str(&w, HX_TAG_ARG, r->argv[i])) {
				trunc = true;
				break;
			}
		}
		w.cap = full;
		if (trunc)
			hx_wire_put_u32(&w, HX_TAG_TRUNCATED, 1);
	}
	return hx_wire_finish(&w);
}

int hx_reply_parse(const void *buf, size_t n, uint32_t id, struct hx_reply *out)
{
	struct hx_wreader r;
	struct hx_wire_hdr h;
	const uint8_t *v;
	uint16_t tag, len;
	int more;
	bool have_verdict = false;

	memset(out, 0, sizeof(*out));
	out->verdict = HX_VERDICT_DENY;
	if (hx_wire_open(&r, buf, n, &h) != HX_WIRE_OK ||
	    h.type != HX_MSG_VERDICT || h.id != id)
		goto bad;
	while ((more = hx_wire_next(&r, &tag, &v, &len)) == 1) {
		switch (tag) {
		case HX_TAG_VERDICT:
			if (len != 4 || have_verdict)
				goto bad;
			memcpy(&out->verdict, v, 4);
			if (out->verdict > HX_VERDICT_DENY)
				goto bad;
			have_verdict = true;
			break;
		case HX_TAG_ERRNO:
			if (len != 4)
				goto bad;
			memcpy(&out->err, v, 4);
			break;
		case HX_TAG_SEQ:
			if (len != 8)
				goto bad;
			memcpy(&out->seq, v, 8);
			break;
		case HX_TAG_FLAGS:
			if (len != 4)
				goto bad;
			memcpy(&out->flags, v, 4);
			break;
		case HX_TAG_RULE:
		case HX_TAG_ORIGIN: {
			char *dst =
			    tag == HX_TAG_RULE ? out->rule : out->origin;
			size_t cap = tag == HX_TAG_RULE ? sizeof(out->rule)
							: sizeof(out->origin);

			if (memchr(v, 0, len))
				goto bad;
			if (len >= cap)
				len = (uint16_t)(cap - 1);
			memcpy(dst, v, len);
			dst[len] = '\0';
			break;
		}
		default:
			goto bad;
		}
	}
	if (more < 0 || !have_verdict)
		goto bad;
	if (out->err == 0 || out->err > 4095)
		out->err = EACCES;
	return 0;
bad:
	memset(out, 0, sizeof(*out));
	out->verdict = HX_VERDICT_DENY;
	out->err = EACCES;
	out->unreachable = true;
	return -1;
}

/* ---------------------------------------------------------------- */
/* Sockets (raw syscalls only) */

/* Whether an open of the socket's path gave no connection once (no
 * kernel layer): later connects of this process, its forks too, skip
 * it. */
static atomic_bool g_no_open_dial;

/* The supervisor's timeouts on a socket; false on what is no socket. */
static bool sock_timeouts(long fd)
{
	struct timeval tv = {.tv_sec = HX_TIMEOUT_SEC};

	return !hx_sys5(SYS_setsockopt, fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
			sizeof(tv)) &&
	       !hx_sys5(SYS_setsockopt, fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
			sizeof(tv));
}

static int sock_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(path);
	long fd, r;

	if (n == 0 || n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, n);
	/* Under the kernel layer this open of the socket's path is
	 * answered with a connection made for this process, in one
	 * wake-up where a connect takes two (unotify_open.c). Without it
	 * the kernel gives an O_PATH fd (it ignores O_RDWR then, and
	 * Landlock does not judge O_PATH: no refusal to record), which is
	 * no socket, and the connect below is made. */
	if (!atomic_load_explicit(&g_no_open_dial, memory_order_relaxed)) {
		fd = hx_sys4(SYS_openat, AT_FDCWD, path,
			     O_PATH | O_RDWR | O_CLOEXEC, 0);
		if (fd >= 0 && sock_timeouts(fd))
			return (int)fd;
		if (fd >= 0) {
			hx_close((int)fd);
			atomic_store_explicit(&g_no_open_dial, true,
					      memory_order_relaxed);
		}
	}
	fd = hx_sys3(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return (int)fd;
	sock_timeouts(fd);
	do
		r = hx_sys3(SYS_connect, fd, &sa, sizeof(sa));
	while (r == -EINTR);
	if (r < 0) {
		hx_close((int)fd);
		return (int)r;
	}
	return (int)fd;
}

static long sock_send(int fd, const void *buf, size_t n)
{
	long r;

	do
		r = hx_sys6(SYS_sendto, fd, (long)buf, (long)n, MSG_NOSIGNAL, 0,
			    0);
	while (r == -EINTR);
	return r < 0 ? r : (size_t)r == n ? 0 : -EMSGSIZE;
}

/* vDSO clock: no syscall, no lock; safe in a vfork child. */
static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long sock_recv(int fd, void *buf, size_t cap)
{
	long r = -EAGAIN;

	/* Poll briefly before sleeping: a verdict takes a few microseconds,
	 * but waking a sleeping thread on another CPU costs far more (about
	 * 90 us per round trip on a 2-vCPU VM, against 20 with the poll). */
	long long until = now_ns() + HX_SPIN_NS;

	do {
		r = hx_sys6(SYS_recvfrom, fd, (long)buf, (long)cap,
			    MSG_TRUNC | MSG_DONTWAIT, 0, 0);
		if (r == -EINTR)
			r = -EAGAIN;
	} while (r == -EAGAIN && now_ns() < until);
	while (r == -EAGAIN || r == -EINTR)
		r = hx_sys6(SYS_recvfrom, fd, (long)buf, (long)cap, MSG_TRUNC,
			    0, 0);
	if (r == 0)
		return -ECONNRESET;
	if (r > (long)cap)
		return -EMSGSIZE;
	return r;
}

/* Reads the reply to id into buf; out says unreachable on failure. */
static int reply_recv(int fd, void *buf, size_t cap, uint32_t id,
		      struct hx_reply *out)
{
	long r = sock_recv(fd, buf, cap);

	if (r < 0) {
		hx_reply_parse(NULL, 0, id, out);
		return -1;
	}
	return hx_reply_parse(buf, (size_t)r, id, out);
}

static int roundtrip(int fd, void *buf, size_t n, size_t cap, uint32_t id,
		     struct hx_reply *out)
{
	if (sock_send(fd, buf, n) < 0) {
		hx_reply_parse(NULL, 0, id, out);
		return -1;
	}
	return reply_recv(fd, buf, cap, id, out);
}

/* ---------------------------------------------------------------- */
/* The shared connection */

static bool conn_is_ours(void)
{
	struct stat st;

	if (g_fd < 0)
		return false;
	if (hx_sys2(SYS_fstat, g_fd, &st) < 0)
		return false;
	return st.st_dev == g_dev && st.st_ino == g_ino && S_ISSOCK(st.st_mode);
}

static void conn_drop(void)
{
	/* Close only what is still ours: the program may have closed our
	 * fd and reused the number, or dup2'ed over it. */
	if (conn_is_ours())
		hx_close(g_fd);
	g_fd = -1;
	g_hello_id = 0;
}

static int move_high(int fd)
{
	struct rlimit rl;
	long floor = HX_FD_FLOOR, nfd;

	if (hx_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur <= floor + 16)
		floor = (long)rl.rlim_cur / 2;
	if (floor <= fd)
		return fd;
	nfd = hx_sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor);
	if (nfd < 0)
		return fd;
	hx_close(fd);
	return (int)nfd;
}

/* Reads the program's argv from /proc when init ran before the
 * constructor gave it to us. */
static size_t read_cmdline(char *buf, size_t cap)
{
	long fd = hx_sys4(SYS_openat, AT_FDCWD, "/proc/self/cmdline",
			  O_RDONLY | O_CLOEXEC, 0);
	size_t len = 0;

	if (fd < 0)
		return 0;
	while (len < cap) {
		long r = hx_sys3(SYS_read, fd, buf + len, cap - len);

		if (r == -EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	hx_close((int)fd);
	return len;
}

static size_t hello_encode(uint32_t id)
{
	static char cmdline[8192];
	char exe[PATH_MAX];
	struct hx_wbuf w;
	long n;
	bool trunc = false;

	hx_wire_begin(&w, g_buf, sizeof(g_buf), HX_MSG_HELLO, id);
	hx_wire_put_u32(&w, HX_TAG_PID, (uint32_t)hx_getpid());
	hx_wire_put_u32(&w, HX_TAG_PPID, (uint32_t)hx_sys0(SYS_getppid));
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)hx_gettid());
	hx_wire_put_u32(&w, HX_TAG_FLAGS, 0);
	n = hx_sys3(SYS_readlink, "/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		hx_wire_put_str(&w, HX_TAG_PATH, exe);
	}
	w.cap -= 8;
	if (g_argv) {
		for (int i = 0; i < g_argc && g_argv[i]; i++)
			if (i == HX_WIRE_MAX_ARGS ||
			    hx_wire_put_str(&w, HX_TAG_ARG, g_argv[i])) {
				trunc = true;
				break;
			}
	} else {
		size_t len = read_cmdline(cmdline, sizeof(cmdline) - 1), i = 0;
		int k = 0;

		cmdline[len] = '\0';
		trunc = len == sizeof(cmdline) - 1;
		while (i < len && !trunc) {
			if (k++ == HX_WIRE_MAX_ARGS ||
			    hx_wire_put_str(&w, HX_TAG_ARG, cmdline + i))
				trunc = true;
			i += strlen(cmdline + i) + 1;
		}
	}
	w.cap += 8;
	if (trunc)
		hx_wire_put_u32(&w, HX_TAG_TRUNCATED, 1);
	return hx_wire_finish(&w);
}

/* Called with g_busy held. */
static int conn_ensure(void)
{
	struct stat st;
	uint32_t id;
	size_t n;
	long r;
	int fd;

	if (conn_is_ours())
		return 0;
	g_fd = -1;
	fd = g_inherited;
	g_inherited = -1;
	if (fd < 0)
		fd = sock_connect(g_sock);
	if (fd < 0)
		return fd;
	fd = move_high(fd);
	if (hx_sys2(SYS_fstat, fd, &st) < 0) {
		hx_close(fd);
		return -EBADF;
	}
	id = g_next_id++;
	n = hello_encode(id);
	r = n ? sock_send(fd, g_buf, n) : -EMSGSIZE;
	if (r < 0) {
		hx_close(fd);
		return (int)r;
	}
	/* The reply is read when first needed (hello_finish): a process
	 * that decides nothing, like most short-lived tools, never waits. */
	g_hello_id = id;
	g_fd = fd;
	g_dev = st.st_dev;
	g_ino = st.st_ino;
	return 0;
}

/* Reads the pending HELLO_REPLY, if any; called with g_busy held, before
 * anything else is received on the connection. */
static int hello_finish(void)
{
	struct hx_wreader rd;
	struct hx_wire_hdr h;
	uint32_t id = g_hello_id;
	long r;

	if (!id)
		return 0;
	g_hello_id = 0;
	r = sock_recv(g_fd, g_buf, sizeof(g_buf));
	if (r < 0)
		goto bad;
	if (!atomic_load_explicit(&g_rules_ready, memory_order_acquire)) {
		if (hx_read_rules_from_hello(&g_rules, g_buf, (size_t)r, id))
			goto bad;
		atomic_store_explicit(&g_rules_ready, true,
				      memory_order_release);
	} else if (hx_wire_open(&rd, g_buf, (size_t)r, &h) != HX_WIRE_OK ||
		   h.type != HX_MSG_HELLO_REPLY || h.id != id) {
		goto bad;
	}
	return 0;
bad:
	conn_drop();
	return r < 0 ? (int)r : -EPROTO;
}

static bool conn_take(void)
{
	int expected = 0;

	if (hx_in_foreign_process())
		return false;
	return atomic_compare_exchange_strong(&g_busy, &expected, 1);
}

static void conn_give(void)
{
	atomic_store(&g_busy, 0);
}

static void atfork_child(void)
{
	atomic_store(&g_pid, hx_getpid());
	/* The inherited socket is the parent's conversation. */
	conn_drop();
	atomic_store(&g_busy, 0);
}

/* ---------------------------------------------------------------- */
/* The stateless path: nothing shared is read-modify-written; buffers
 * are a private mapping (not the stack: signal handlers may run on a
 * small sigaltstack). */

static void *scratch_get(void)
{
	long p = hx_sys6(SYS_mmap, 0, HX_WIRE_MAX, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p < 0 && p > -4096 ? NULL : (void *)p;
}

static void scratch_put(void *p)
{
	hx_sys2(SYS_munmap, p, HX_WIRE_MAX);
}

/* keep: an exec's request, whose connection may be handed over: it is
 * returned open after a verdict (else closed, and -1 returned). */
static int stateless(const struct hx_req *r, long result, struct hx_reply *out,
		     bool keep)
{
	void *buf = scratch_get();
	int fd = -1;
	size_t n;

	hx_reply_parse(NULL, 0, 1, out);
	if (!buf)
		return -1;
	n = hx_req_encode(r, result, 1, (uint32_t)hx_getpid(),
			  (uint32_t)hx_gettid(), buf, HX_WIRE_MAX, NULL);
	if (n)
		fd = sock_connect(g_sock);
	if (fd >= 0 && result >= 0) {
		sock_send(fd, buf, n);
	} else if (fd >= 0 && roundtrip(fd, buf, n, HX_WIRE_MAX, 1, out) == 0 &&
		   keep) {
		scratch_put(buf);
		return fd;
	}
	if (fd >= 0)
		hx_close(fd);
	scratch_put(buf);
	return -1;
}

static void shared(const struct hx_req *r, long result, struct hx_reply *out)
{
	uint32_t id;
	size_t n;

	hx_reply_parse(NULL, 0, 0, out);
	if (conn_ensure() < 0)
		return;
	id = g_next_id++;
	n = hx_req_encode(r, result, id, (uint32_t)hx_getpid(),
			  (uint32_t)hx_gettid(), g_buf, sizeof(g_buf),
			  g_self_base);
	if (!n)
		return;
	/* Sent behind a HELLO whose reply is still unread: the supervisor
	 * reads both in one wake-up, and this thread sleeps once for the
	 * two replies, which come in order (the HELLO's is read first). */
	if (sock_send(g_fd, g_buf, n) < 0) {
		conn_drop();
		return;
	}
	if (result >= 0)
		return;
	/* After any failure the stream may hold a late reply: start over. */
	if (hello_finish() < 0 ||
	    reply_recv(g_fd, g_buf, sizeof(g_buf), id, out) < 0)
		conn_drop();
}

void hx_ask(const struct hx_req *r, struct hx_reply *out)
{
	if (conn_take()) {
		shared(r, -1, out);
		conn_give();
	} else {
		stateless(r, -1, out, false);
	}
}

void hx_report(const struct hx_req *r, long result)
{
	struct hx_reply dummy;

	if (result < 0)
		result = 0;
	if (conn_take()) {
		shared(r, result, &dummy);
		conn_give();
	} else {
		stateless(r, result, &dummy, false);
	}
}

/* ---------------------------------------------------------------- */
/* Hand-over of the connection to an exec's new image */

/* Parses "<fd>.<inode>"; false on anything else. */
static bool parse_conn(const char *v, int *fd, unsigned long long *ino)
{
	unsigned long long x[2] = {0, 0};
	int k = 0;

	for (const char *p = v; k < 2; p++) {
		if (*p >= '0' && *p <= '9' && x[k] < (1ull << 58))
			x[k] = x[k] * 10 + (unsigned)(*p - '0');
		else if ((*p == '.' && !k && p != v) || (!*p && k))
			k++;
		else
			return false;
		if (!*p)
			break;
	}
	if (k != 2 || x[0] > INT_MAX)
		return false;
	*fd = (int)x[0];
	*ino = x[1];
	return true;
}

static bool allowed(const struct hx_reply *rep)
{
	return !rep->unreachable && rep->verdict == HX_VERDICT_ALLOW;
}

/* A CLONE_VM child may share its parent's fd table (CLONE_FILES): a
 * connection left open there for the new image would stay open in the
 * parent too, unknown to it. An unanswered kcmp counts as shared. */
static bool files_shared(void)
{
	return hx_sys5(SYS_kcmp, hx_getpid(), hx_sys0(SYS_getppid), KCMP_FILES,
		       0, 0) <= 0;
}

/* Lets fd cross the exec, named in ho->env; a one-shot fd is moved out
 * of the program's low numbers first (and closed if that fails). The
 * shared fd is inheritable until the exec: a child another thread
 * execs meanwhile would inherit it too (a spare fd, nothing more: the
 * supervisor names each sender by its credentials). */
static void handover_set(struct hx_handover *ho, int fd, bool own)
{
	struct stat st;
	size_t n;

	if (own)
		fd = move_high(fd);
	if (hx_sys2(SYS_fstat, fd, &st) < 0 ||
	    hx_sys3(SYS_fcntl, fd, F_SETFD, 0) < 0) {
		if (own)
			hx_close(fd);
		return;
	}
	ho->fd = fd;
	ho->own = own;
	ho->ino = st.st_ino;
	n = hx_utoa((unsigned)fd, ho->env);
	ho->env[n++] = '.';
	ho->env[n + hx_utoa(st.st_ino, ho->env + n)] = '\0';
}

void hx_ask_exec(const struct hx_req *r, struct hx_reply *out,
		 struct hx_handover *ho)
{
	int fd;

	ho->fd = -1;
	if (conn_take()) {
		shared(r, -1, out);
		if (allowed(out) && conn_is_ours() &&
		    hx_exec_loads_shim(r->path))
			handover_set(ho, g_fd, false);
		conn_give();
		return;
	}
	fd = stateless(r, -1, out, true);
	if (fd >= 0 && allowed(out) &&
	    !(hx_in_foreign_process() && files_shared()) &&
	    hx_exec_loads_shim(r->path))
		handover_set(ho, fd, true);
	else if (fd >= 0)
		hx_close(fd);
}

void hx_handover_undo(const struct hx_handover *ho)
{
	struct stat st;

	if (ho->fd < 0)
		return;
	if (ho->own)
		hx_close(ho->fd);
	else if (hx_sys2(SYS_fstat, ho->fd, &st) == 0 && st.st_ino == ho->ino)
		hx_sys3(SYS_fcntl, ho->fd, F_SETFD, FD_CLOEXEC);
}

/* The connection the shim before the exec left open for this image,
 * taken out of the environment (it names nothing beyond this image).
 * The inode must match: a stale value (say, copied by a raw exec)
 * never names another socket of the program's. */
static int inherited_conn(void)
{
	const char *v = getenv(HX_ENV_CONN);
	unsigned long long ino;
	struct stat st;
	int fd;

	if (!v)
		return -1;
	if (!parse_conn(v, &fd, &ino))
		fd = -1;
	unsetenv(HX_ENV_CONN);
	if (fd < 0 || hx_sys2(SYS_fstat, fd, &st) < 0 ||
	    !S_ISSOCK(st.st_mode) || st.st_ino != ino)
		return -1;
	hx_sys3(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

/* ---------------------------------------------------------------- */
/* Init */

bool hx_in_foreign_process(void)
{
	return hx_getpid() !=
	       atomic_load_explicit(&g_pid, memory_order_relaxed);
}

const char *hx_shim_path(void)
{
	return g_shim;
}

const char *hx_socket_path(void)
{
	return g_sock;
}

const struct hx_read_rules *hx_rules(void)
{
	if (!atomic_load_explicit(&g_rules_ready, memory_order_acquire) &&
	    atomic_load(&g_state) == HX_ST_ACTIVE && conn_take()) {
		if (conn_ensure() == 0)
			hello_finish();
		conn_give();
	}
	return atomic_load_explicit(&g_rules_ready, memory_order_acquire)
		   ? &g_rules
		   : NULL;
}

static void save_shim_path(void)
{
	Dl_info info;
	char cwd[PATH_MAX];
	int prev = hx_tls_foreign_enter();

	if (dladdr((void *)hx_init, &info) && info.dli_fname) {
		g_self_base = info.dli_fbase;
		if (info.dli_fname[0] == '/' ||
		    hx_sys2(SYS_getcwd, cwd, sizeof(cwd)) < 0) {
			hx_path_normalize(
			    NULL,
			    info.dli_fname[0] == '/' ? info.dli_fname : "/",
			    g_shim, sizeof(g_shim));
		} else {
			hx_path_normalize(cwd, info.dli_fname, g_shim,
					  sizeof(g_shim));
		}
	}
	hx_tls_foreign_leave(prev);
}

enum hx_state hx_init(int argc, char **argv, bool connect_now)
{
	int s = atomic_load(&g_state);
	const char *sock;

	if (argv && !g_argv && s != HX_ST_BUSY) {
		g_argc = argc;
		g_argv = argv;
	}
	if (s == HX_ST_NONE) {
		int expected = HX_ST_NONE;

		if (!atomic_compare_exchange_strong(&g_state, &expected,
						    HX_ST_BUSY))
			goto wait;
		if (argv) {
			g_argc = argc;
			g_argv = argv;
		}
		sock = getenv(HX_ENV_SOCKET);
		g_inherited = inherited_conn();
		if (!sock || !*sock) {
			if (g_inherited >= 0)
				hx_close(g_inherited);
			g_inherited = -1;
			atomic_store(&g_state, HX_ST_INERT);
			return HX_ST_INERT;
		}
		/* Too long to connect to: stays active and fails closed. */
		strncpy(g_sock, sock, sizeof(g_sock) - 1);
		save_shim_path();
		atomic_store(&g_pid, hx_getpid());
		pthread_atfork(NULL, NULL, atfork_child);
		/* No libunwind warm-up here: its first call costs ~0.5 ms with
		 * the fd guard (stack.c); only processes that capture pay. */
		atomic_store(&g_state, HX_ST_ACTIVE);
		s = HX_ST_ACTIVE;
	}
wait:
	/* Another thread is in the few instructions above: wait briefly;
	 * a re-entry on this thread (signal) gets BUSY and decides alone. */
	for (int i = 0; s == HX_ST_BUSY && i < 1000; i++) {
		s = atomic_load(&g_state);
		if (s == HX_ST_BUSY)
			hx_sys0(SYS_sched_yield);
	}
	s = atomic_load(&g_state);
	if (s == HX_ST_ACTIVE && connect_now && conn_take()) {
		conn_ensure();
		conn_give();
	}
	return (enum hx_state)s;
}
