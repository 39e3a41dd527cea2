/* The decision pipeline; see pipeline.h. */
#define _GNU_SOURCE
#include "pipeline.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../policy/policy.h"
#include "../shim/notice.h"
#include "audit.h"
#include "classify.h"
#include "dnsmap.h"
#include "fmt.h"
#include "loader.h"
#include "netfamily.h"
#include "path.h"
#include "resolve.h"

#define MAX_NAMES 8

/* Kernel-layer correlation (see hx_pipeline_decide_kernel). */
/* Recent shim decisions, by thread: 4-way sets indexed by tid, so that
 * one thread the scheduler holds back keeps its claim while others
 * make thousands (a ring of the last 256 dropped it under load, and the
 * kernel's view of the call became a second record). */
#define CORR_WAYS 4
#define CORR_SETS 1024
#define CORR_N	 (CORR_WAYS * CORR_SETS)
#define CORR_MS	 2000 /* a shim request older than this is not "just before" */
#define HELLO_N	 4096 /* processes that said HELLO, direct-mapped by pid */

struct corr {
	pid_t tid, pid;
	int op;
	uint64_t ms, seq, key;
	enum hx_verdict verdict;
	bool used;
	/* Logged as "shim+kernel" before the kernel saw it (the record is
	 * written before the call may happen); cleared when it does, else
	 * a kernel_unconfirmed record says so. */
	bool pending;
};

/* The unix sockets the session's processes bound (hx_un_bind) and the
 * files they made in /dev/shm (hx_un_open), on the workers' threads: a
 * ring; one forgotten is refused as a neighbour's, which fails safe. */
#define OWN_SOCKS 1024

struct hx_pl_kernel {
	struct corr c[CORR_N];
	pthread_mutex_t socks_lock;
	struct hx_protect_ino socks[OWN_SOCKS];
	size_t nsocks;
	bool sees_exec, sees_reads; /* notified beyond the fixed list */
	struct {
		pid_t pid;
		uint64_t exe;
		bool shim; /* said HELLO, or has the shim mapped */
	} hello[HELLO_N];
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; s && *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int hx_pipeline_kernel_enable(struct hx_pipeline *pl)
{
	if (!pl->kern) {
		pl->kern = calloc(1, sizeof(*pl->kern));
		if (pl->kern)
			pthread_mutex_init(&pl->kern->socks_lock, NULL);
	}
	return pl->kern ? 0 : -ENOMEM;
}

void hx_pipeline_kernel_free(struct hx_pipeline *pl)
{
	if (pl->kern)
		pthread_mutex_destroy(&pl->kern->socks_lock);
	free(pl->kern);
	pl->kern = NULL;
}

static void note_hello(struct hx_pipeline *pl, json_t *rec)
{
	const char *ev = json_string_value(json_object_get(rec, "event"));
	const char *rule = json_string_value(json_object_get(rec, "rule"));
	json_int_t pid = json_integer_value(json_object_get(rec, "pid"));
	size_t i;

	if (!ev || !rule || strcmp(ev, "process_start") ||
	    strcmp(rule, "harness:hello") || pid <= 0)
		return;
	i = (size_t)pid % HELLO_N;
	pl->kern->hello[i].pid = (pid_t)pid;
	pl->kern->hello[i].exe =
	    fnv(json_string_value(json_object_get(rec, "exe")));
	pl->kern->hello[i].shim = true;
}

/* Whether the shim is mapped into pid: the HELLO travels on another
 * channel than the kernel's notification and may not have been read
 * yet when the process's first raw syscall arrives. */
static bool maps_have_shim(pid_t pid)
{
	char path[64], buf[8192];
	bool found = false;
	size_t keep = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (!found && (n = read(fd, buf + keep, sizeof(buf) - 1 - keep)) > 0) {
		buf[keep + (size_t)n] = '\0';
		found = strstr(buf, "/libharness-shim.so") != NULL;
		/* Carry a tail over, in case the name straddles two reads. */
		keep = keep + (size_t)n > 32 ? 32 : keep + (size_t)n;
		memmove(buf, buf + strlen(buf) - keep, keep);
	}
	close(fd);
	return found;
}

/* The process runs an image with the shim loaded: known from its HELLO,
 * else looked up once per image and remembered. */
static bool has_shim(const struct hx_pipeline *pl, const struct hx_peer *p)
{
	size_t i = (size_t)p->pid % HELLO_N;
	uint64_t exe = fnv(p->exe);

	if (pl->kern->hello[i].pid != p->pid || pl->kern->hello[i].exe != exe) {
		pl->kern->hello[i].pid = p->pid;
		pl->kern->hello[i].exe = exe;
		pl->kern->hello[i].shim = maps_have_shim(p->pid);
	}
	return pl->kern->hello[i].shim;
}

static void set_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

static void unconfirmed(struct hx_pipeline *pl, struct corr *c)
{
	struct hx_peer peer = {.pid = c->pid, .tid = c->tid};
	json_t *rec = hx_pipeline_record(pl, &peer, "kernel_unconfirmed", NULL);

	c->pending = false;
	if (!rec)
		return;
	set_str(rec, "op", hx_op_name((enum hx_op)c->op));
	/* 0: the shim's record was coalesced (audit_overflow counts it). */
	if (c->seq)
		json_object_set_new(rec, "ref_seq",
				    json_integer((json_int_t)c->seq));
	set_str(rec, "layer", "shim");
	hx_pipeline_append_event(pl, rec, NULL, NULL);
	json_decref(rec);
}

static void flush_overflow(struct hx_pipeline *pl, bool all);

void hx_pipeline_tick(struct hx_pipeline *pl, bool all)
{
	uint64_t now = mono_ms();

	flush_overflow(pl, all);
	if (!pl->kern)
		return;
	for (size_t i = 0; i < CORR_N; i++) {
		struct corr *c = &pl->kern->c[i];

		if (c->pending && (all || now - c->ms > CORR_MS))
			unconfirmed(pl, c);
	}
}

void hx_pipeline_kernel_sees(struct hx_pipeline *pl, bool exec, bool reads)
{
	if (pl->kern) {
		pl->kern->sees_exec = exec;
		pl->kern->sees_reads = reads;
	}
}

/* Whether an allowed call of this kind reaches the user-notify layer
 * next (seccomp_deny.c's notify tables). */
static bool kernel_sees(const struct hx_pl_kernel *k,
			const struct hx_request *rq)
{
	switch (hx_op_category(rq->op)) {
	case HX_CAT_FILE_WRITE:
	case HX_CAT_NET_CONNECT:
	case HX_CAT_NET_SEND:
		return true;
	case HX_CAT_EXEC:
		return k->sees_exec;
	case HX_CAT_FILE_READ:
		return k->sees_reads;
	default:
		return false;
	}
}

/* The slot for tid's new claim: its own, else a free one, else the
 * oldest of its set. */
static struct corr *corr_slot(struct hx_pl_kernel *k, pid_t tid)
{
	struct corr *set = &k->c[((unsigned)tid % CORR_SETS) * CORR_WAYS];
	struct corr *best = &set[0];

	for (int w = 0; w < CORR_WAYS; w++) {
		if (set[w].used && set[w].tid == tid)
			return &set[w];
		if (!set[w].used)
			best = best->used ? &set[w] : best;
		else if (best->used && set[w].ms < best->ms)
			best = &set[w];
	}
	return best;
}

static void corr_put(struct hx_pipeline *pl, const struct hx_peer *peer,
		     int op, uint64_t key, enum hx_verdict v, uint64_t seq,
		     bool pending)
{
	pid_t tid = peer->tid ? peer->tid : peer->pid;
	struct corr *c = corr_slot(pl->kern, tid);

	if (c->pending)
		unconfirmed(pl, c);
	*c = (struct corr){.tid = tid,
			   .pid = peer->pid,
			   .op = op,
			   .ms = mono_ms(),
			   .seq = seq,
			   .key = key,
			   .verdict = v,
			   .used = true,
			   .pending = pending};
}

static bool corr_match(const struct corr *c, uint64_t now, int op,
		       uint64_t key)
{
	return c->used && now - c->ms <= CORR_MS && c->op == op &&
	       c->key == key;
}

static struct corr *corr_find(struct hx_pipeline *pl, pid_t tid, pid_t ppid,
			      int op, uint64_t key)
{
	struct corr *set = &pl->kern->c[((unsigned)tid % CORR_SETS) * CORR_WAYS];
	uint64_t now = mono_ms();

	for (int w = 0; w < CORR_WAYS; w++)
		if (set[w].tid == tid && corr_match(&set[w], now, op, key))
			return &set[w];
	/* posix_spawn: the shim asked in the parent, the exec comes from
	 * the (vfork-like) child. Only the record is shared; the verdict
	 * is always decided afresh. Execs are few: a scan. */
	if (op == HX_OP_EXEC && ppid)
		for (size_t i = 0; i < CORR_N; i++)
			if (pl->kern->c[i].pid == ppid &&
			    corr_match(&pl->kern->c[i], now, op, key))
				return &pl->kern->c[i];
	return NULL;
}

void hx_request_from_msg(const struct hx_msg *m, struct hx_request *rq,
			 struct hx_request_storage *st)
{
	size_t i;

	memset(rq, 0, sizeof(*rq));
	rq->call = m->call;
	rq->op = (enum hx_op)m->op;
	rq->path = m->path.s;
	rq->path2 = m->path2.s;
	rq->host = m->host.s;
	rq->has_flags = hx_msg_has(m, HX_TAG_FLAGS);
	rq->flags = m->flags;
	rq->has_mode = hx_msg_has(m, HX_TAG_MODE);
	rq->mode = m->mode;
	rq->has_result = hx_msg_has(m, HX_TAG_RESULT);
	rq->result = m->result;
	rq->truncated = hx_msg_has(m, HX_TAG_TRUNCATED) && m->truncated;
	for (i = 0; i < m->nargs; i++)
		st->argv[i] = m->args[i].s;
	rq->argv = st->argv;
	rq->argc = m->nargs;
	for (i = 0; i < m->nframes; i++)
		st->frames[i] = m->frames[i].s;
	rq->frames = st->frames;
	rq->nframes = m->nframes;
	if (m->naddrs) {
		rq->addr = m->addrs[0].p;
		rq->addrlen = m->addrs[0].len;
	}
}

static uint64_t ns_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (uint64_t)(t1.tv_sec - t0->tv_sec) * 1000000000u +
	       (uint64_t)(t1.tv_nsec - t0->tv_nsec);
}

/* Whether the op acts on the final component itself (unlink, rename,
 * mkdir...) rather than on what a symlink there points to. */
static bool follows_last(enum hx_op op, const struct hx_request *rq)
{
	switch (op) {
	case HX_OP_READ:
	case HX_OP_TRUNCATE:
	case HX_OP_EXEC:
		return true;
	case HX_OP_WRITE:
		/* O_CREAT|O_EXCL never follows a final symlink either: it
		 * fails EEXIST on a dangling one instead of creating its
		 * target. */
		return !(rq->has_flags && ((rq->flags & O_NOFOLLOW) ||
					   (rq->flags & (O_CREAT | O_EXCL)) ==
					       (O_CREAT | O_EXCL)));
	default:
		return false;
	}
}

/* A path argument after validation: lexical form, and resolved form when
 * it differs. ok false: unusable (relative, too long), decided as
 * missing, which the policy denies. */
struct vpath {
	bool ok, has_resolved, via_fd;
	char norm[PATH_MAX], resolved[PATH_MAX];
};

/* Skips "DIGITS/" at *p: false when they are not there. */
static bool skip_number(const char **p)
{
	const char *q = *p;

	if (!isdigit((unsigned char)*q))
		return false;
	while (isdigit((unsigned char)*q))
		q++;
	if (*q != '/')
		return false;
	*p = q + 1;
	return true;
}

/* "/proc/self/fd/N/name" (also thread-self, <pid>, <pid>/task/<tid>):
 * a path through an open directory's magic link. Its text names no
 * place a policy can speak of (Claude Code writes its files this way,
 * through an O_PATH fd of the parent); only its resolved form does. */
static bool through_fd(const char *norm)
{
	const char *p = norm;

	if (strncmp(p, "/proc/", 6))
		return false;
	p += 6;
	if (!strncmp(p, "self/", 5))
		p += 5;
	else if (!strncmp(p, "thread-self/", 12))
		p += 12;
	else if (!skip_number(&p))
		return false;
	if (!strncmp(p, "task/", 5)) {
		p += 5;
		if (!skip_number(&p))
			return false;
	}
	if (strncmp(p, "fd/", 3) || !isdigit((unsigned char)p[3]))
		return false;
	p += 3;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == '/' && p[1];
}

static void validate_path(const char *in, pid_t pid, pid_t tid, bool follow,
			  struct vpath *v)
{
	v->ok = v->has_resolved = v->via_fd = false;
	/* The policy sees the path as the agent wrote it (normalized) and,
	 * when it differs, as the agent's symlinks resolve it. */
	if (!in || hx_path_normalize(in, v->norm, sizeof(v->norm)))
		return;
	v->ok = true;
	if (!hx_path_resolve(pid, tid, v->norm, follow, v->resolved,
			     sizeof(v->resolved)) &&
	    strcmp(v->resolved, v->norm))
		v->has_resolved = true;
	/* Through an fd that does not resolve to a directory (a pipe, a
	 * closed fd): decided as written, which no write rule allows. */
	v->via_fd = v->has_resolved && through_fd(v->norm) &&
		    !through_fd(v->resolved);
}

/* A unix socket's path is a path (connect follows its symlinks): made
 * absolute from the thread's cwd, then validated like a file's. False
 * for any other address; v->ok false when it cannot be judged. */
static bool unix_path(const struct sockaddr *sa, size_t len, pid_t pid,
		      pid_t tid, struct vpath *v)
{
	const struct sockaddr_un *un = (const void *)sa;
	size_t off = offsetof(struct sockaddr_un, sun_path), n;
	char raw[sizeof(un->sun_path) + 1], full[PATH_MAX];

	v->ok = v->has_resolved = false;
	if (sa->sa_family != AF_UNIX || len <= off || !un->sun_path[0])
		return false;
	n = strnlen(un->sun_path, len - off);
	memcpy(raw, un->sun_path, n);
	raw[n] = '\0';
	if (!hx_path_absolute(pid, tid, AT_FDCWD, raw, full, sizeof(full)))
		validate_path(full, pid, tid, true, v);
	return true;
}

/* path as a sockaddr_un; false when it does not fit. */
static bool to_sun(const char *path, struct sockaddr_un *out, socklen_t *len)
{
	size_t n = strlen(path);

	if (n >= sizeof(out->sun_path))
		return false;
	memset(out, 0, sizeof(*out));
	out->sun_family = AF_UNIX;
	memcpy(out->sun_path, path, n + 1);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return true;
}

json_t *hx_json_text(json_t *rec, const char *field, const char *s)
{
	json_t *list, *e, *v;
	size_t n, i;
	char *buf;

	if (!s)
		s = "";
	if (hx_utf8_valid(s))
		return json_string(s);
	/* jansson takes UTF-8 only and returns NULL otherwise: one byte
	 * of Latin-1 in a `sh -c` would have dropped the whole argv. */
	n = hx_fmt_escape_bytes(s, NULL, 0);
	buf = malloc(n + 1);
	if (!buf)
		return NULL;
	hx_fmt_escape_bytes(s, buf, n + 1);
	v = json_string(buf);
	free(buf);
	if (!rec || !field)
		return v;
	list = json_object_get(rec, "escaped");
	if (!list) {
		list = json_array();
		json_object_set_new(rec, "escaped", list);
	}
	json_array_foreach(list, i, e)
	{
		if (!strcmp(json_string_value(e), field))
			return v;
	}
	json_array_append_new(list, json_string(field));
	return v;
}

/* An agent-controlled string into o[k]; field names it in rec's
 * "escaped" list when it had to be escaped. */
static void set_text(json_t *rec, json_t *o, const char *k,
		     const char *field, const char *v)
{
	if (v)
		json_object_set_new(o, k, hx_json_text(rec, field, v));
}

static json_t *str_array(json_t *rec, const char *field,
			 const char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, hx_json_text(rec, field, v[i]));
	return a;
}

json_t *hx_pipeline_record(const struct hx_pipeline *pl,
			   const struct hx_peer *peer, const char *event,
			   const struct timespec *when)
{
	json_t *o = json_object();
	char t[HX_FMT_TIME_LEN];
	struct timespec now;

	if (!o)
		return NULL;
	if (!when) {
		clock_gettime(CLOCK_REALTIME, &now);
		when = &now;
	}
	json_object_set_new(o, "time",
			    json_string(hx_fmt_time(when, t, sizeof(t))));
	set_str(o, "session", pl->session);
	if (peer) {
		json_object_set_new(o, "pid", json_integer(peer->pid));
		if (peer->ppid)
			json_object_set_new(o, "ppid",
					    json_integer(peer->ppid));
		if (peer->tid)
			json_object_set_new(o, "tid", json_integer(peer->tid));
		set_text(o, o, "exe", "exe", peer->exe);
		if (peer->claimed_pid && peer->claimed_pid != peer->pid)
			json_object_set_new(o, "claimed_pid",
					    json_integer(peer->claimed_pid));
	} else {
		json_object_set_new(o, "pid", json_integer(getpid()));
		json_object_set_new(o, "ppid", json_integer(getppid()));
	}
	set_str(o, "event", event);
	return o;
}

static int append_raw(struct hx_pipeline *pl, json_t *rec, uint64_t *seq)
{
	uint64_t n = 0;
	int r = rec ? hx_audit_append(pl->audit, rec, &n) : -ENOMEM;

	if (r)
		pl->audit_errors++;
	else if (pl->observe)
		pl->observe(pl->observe_arg, rec, n);
	if (!r && pl->kern)
		note_hello(pl, rec);
	if (seq)
		*seq = n;
	return r;
}

int hx_pipeline_append(struct hx_pipeline *pl, json_t *rec, uint64_t *seq)
{
	int r = append_raw(pl, rec, seq);

	/* A record the log refused (not one never built): the log can
	 * take no more. */
	if (r && rec)
		hx_pipeline_fail(pl, r, "the audit log cannot be written");
	return r;
}

/* Records coalesced beyond the rate, counted by who, what and how it
 * was decided, each group with the arguments of its first record. */
#define CO_GROUPS 16
struct co_group {
	json_int_t pid;
	char event[32], op[16], verdict[8], rule[96];
	uint64_t n;
	json_t *args;
};

struct hx_pl_coalesce {
	double tokens;
	uint64_t last_ns, since_ms;
	char first[HX_FMT_TIME_LEN], last[HX_FMT_TIME_LEN];
	struct co_group g[CO_GROUPS];
	size_t ng;
	uint64_t total, other;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A token bucket: rate records a second, burst at once. */
static bool over_rate(struct hx_pipeline *pl)
{
	struct hx_pl_coalesce *co = pl->co;
	double cap = (double)(pl->quota_burst ? pl->quota_burst
					      : pl->quota_rate);
	uint64_t now = mono_ns();

	if (!pl->quota_rate)
		return false;
	if (!co) {
		co = pl->co = calloc(1, sizeof(*co));
		if (!co)
			return false; /* written, then: never dropped */
		co->tokens = cap;
		co->last_ns = now;
	}
	co->tokens += (double)(now - co->last_ns) * (double)pl->quota_rate / 1e9;
	if (co->tokens > cap)
		co->tokens = cap;
	co->last_ns = now;
	if (co->tokens >= 1) {
		co->tokens -= 1;
		return false;
	}
	return true;
}

static void copy_field(char *dst, size_t size, json_t *rec, const char *k)
{
	const char *v = json_string_value(json_object_get(rec, k));

	snprintf(dst, size, "%s", v ? v : "");
}

static void coalesce(struct hx_pl_coalesce *co, json_t *rec)
{
	struct co_group key = {
	    .pid = json_integer_value(json_object_get(rec, "pid"))};
	const char *t = json_string_value(json_object_get(rec, "time"));
	size_t i;

	copy_field(key.event, sizeof(key.event), rec, "event");
	copy_field(key.op, sizeof(key.op), rec, "op");
	copy_field(key.verdict, sizeof(key.verdict), rec, "verdict");
	copy_field(key.rule, sizeof(key.rule), rec, "rule");
	if (!co->total) {
		co->since_ms = mono_ms();
		snprintf(co->first, sizeof(co->first), "%s", t ? t : "");
	}
	snprintf(co->last, sizeof(co->last), "%s", t ? t : "");
	co->total++;
	for (i = 0; i < co->ng; i++) {
		struct co_group *g = &co->g[i];

		if (g->pid == key.pid && !strcmp(g->event, key.event) &&
		    !strcmp(g->op, key.op) && !strcmp(g->verdict, key.verdict) &&
		    !strcmp(g->rule, key.rule)) {
			g->n++;
			return;
		}
	}
	if (co->ng == CO_GROUPS) {
		co->other++;
		return;
	}
	key.n = 1;
	key.args = json_incref(json_object_get(rec, "args"));
	co->g[co->ng++] = key;
}

static void set_nonempty(json_t *o, const char *k, const char *v)
{
	if (v[0])
		json_object_set_new(o, k, json_string(v));
}

/* The audit_overflow record for what was coalesced since the last one:
 * once a second, and at the end (all). */
static void flush_overflow(struct hx_pipeline *pl, bool all)
{
	struct hx_pl_coalesce *co = pl->co;
	json_t *rec, *groups;

	if (!co || !co->total || (!all && mono_ms() - co->since_ms < 1000))
		return;
	rec = hx_pipeline_record(pl, NULL, "audit_overflow", NULL);
	groups = json_array();
	for (size_t i = 0; i < co->ng; i++) {
		struct co_group *g = &co->g[i];
		json_t *o = json_object();

		json_object_set_new(o, "pid", json_integer(g->pid));
		set_nonempty(o, "event", g->event);
		set_nonempty(o, "op", g->op);
		set_nonempty(o, "verdict", g->verdict);
		set_nonempty(o, "rule", g->rule);
		json_object_set_new(o, "count", json_integer((json_int_t)g->n));
		if (g->args)
			json_object_set_new(o, "first_args", g->args);
		g->args = NULL;
		json_array_append_new(groups, o);
	}
	if (rec) {
		set_str(rec, "category", "process");
		set_str(rec, "reason", "rate");
		json_object_set_new(rec, "rate",
				    json_integer((json_int_t)pl->quota_rate));
		json_object_set_new(rec, "burst",
				    json_integer((json_int_t)pl->quota_burst));
		json_object_set_new(rec, "coalesced",
				    json_integer((json_int_t)co->total));
		set_str(rec, "since", co->first);
		set_str(rec, "until", co->last);
		json_object_set_new(rec, "groups", groups);
		if (co->other)
			json_object_set_new(
			    rec, "other", json_integer((json_int_t)co->other));
		hx_pipeline_append(pl, rec, NULL);
	} else {
		json_decref(groups);
	}
	json_decref(rec);
	co->total = co->other = 0;
	co->ng = 0;
}

int hx_pipeline_append_event(struct hx_pipeline *pl, json_t *rec,
			     uint64_t *seq, bool *coalesced)
{
	int r;

	if (coalesced)
		*coalesced = false;
	if (seq)
		*seq = 0;
	if (pl->failed) {
		pl->audit_errors++;
		return pl->failed;
	}
	if (rec && over_rate(pl)) {
		coalesce(pl->co, rec);
		if (pl->kern)
			note_hello(pl, rec);
		if (coalesced)
			*coalesced = true;
		return 0;
	}
	r = hx_pipeline_append(pl, rec, seq);
	if (!r && pl->quota_max_size &&
	    hx_audit_written(pl->audit) >= pl->quota_max_size)
		hx_pipeline_fail(pl, -EDQUOT,
				 "the session's audit quota (audit: "
				 "max_size) is used up");
	return r;
}

void hx_pipeline_fail(struct hx_pipeline *pl, int err, const char *why)
{
	json_t *rec;
	char e[64];

	if (pl->failed)
		return;
	pl->failed = err ? err : -EIO;
	pl->failed_why = why;
	if (pl->audit)
		hx_audit_closing(pl->audit);
	flush_overflow(pl, true);
	rec = hx_pipeline_record(pl, NULL, "audit_failed", NULL);
	if (rec) {
		set_str(rec, "category", "process");
		set_str(rec, "risk", "high");
		set_str(rec, "reason", why);
		snprintf(e, sizeof(e), "%s", strerror(-pl->failed));
		set_str(rec, "error", e);
		if (pl->quota_max_size)
			json_object_set_new(
			    rec, "max_size",
			    json_integer((json_int_t)pl->quota_max_size));
		if (pl->audit)
			json_object_set_new(
			    rec, "written",
			    json_integer(
				(json_int_t)hx_audit_written(pl->audit)));
		append_raw(pl, rec, NULL);
	}
	json_decref(rec);
	fprintf(stderr,
		"harness: %s (%s): every request is denied and the session "
		"ends\n",
		why, strerror(-pl->failed));
}

int hx_pipeline_protect_fd(struct hx_pipeline *pl, int fd)
{
	struct stat st;

	if (pl->nprotect_ino == HX_PROTECT_INO_MAX)
		return -ENOSPC;
	if (fstat(fd, &st))
		return -errno;
	pl->protect_ino[pl->nprotect_ino++] =
	    (struct hx_protect_ino){st.st_dev, st.st_ino};
	return 0;
}

/* Whether v names a protected inode (a hard link to the log, the log
 * through a second mount); lstat for what acts on the link itself. */
static bool protected_inode(const struct hx_pipeline *pl,
			    const struct vpath *v, bool follow)
{
	const char *path = v->has_resolved ? v->resolved : v->norm;
	struct stat st;

	if (!pl->nprotect_ino || !v->ok || (follow ? stat(path, &st)
						   : lstat(path, &st)))
		return false;
	for (size_t i = 0; i < pl->nprotect_ino; i++)
		if (pl->protect_ino[i].dev == st.st_dev &&
		    pl->protect_ino[i].ino == st.st_ino)
			return true;
	return false;
}

void hx_pipeline_own(struct hx_pipeline *pl, int dirfd, const char *name)
{
	struct hx_pl_kernel *k = pl->kern;
	struct stat st;

	if (!k || fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return;
	pthread_mutex_lock(&k->socks_lock);
	k->socks[k->nsocks++ % OWN_SOCKS] =
	    (struct hx_protect_ino){st.st_dev, st.st_ino};
	pthread_mutex_unlock(&k->socks_lock);
}

static bool own_socket(struct hx_pl_kernel *k, const struct stat *st)
{
	bool found = false;

	pthread_mutex_lock(&k->socks_lock);
	for (size_t i = 0; i < OWN_SOCKS && i < k->nsocks && !found; i++)
		found = k->socks[i].dev == st->st_dev &&
			k->socks[i].ino == st->st_ino;
	pthread_mutex_unlock(&k->socks_lock);
	return found;
}

/* Where a root agent's uid owns the system's daemons' sockets (nscd,
 * journald's, userdb): /run and /var/run but for the users' runtime
 * dirs, and the logger's /dev/log (a socket itself without systemd).
 * The default policy names the neighbours there. */
static bool system_place(const char *path)
{
	const char *p = !strncmp(path, "/run/", 5)	? path + 5
			: !strncmp(path, "/var/run/", 9) ? path + 9
							  : NULL;

	return (p && strncmp(p, "user/", 5)) || !strcmp(path, "/dev/log");
}

/* Whether the unix socket at path (symlinks resolved) serves a process
 * of the agent's uid that no process of the session bound: a service of
 * the user's outside the sandbox (tmux -S, ssh-agent -a, dbus-launch,
 * a compositor's IPC, an ssh control master, a user's postgres), which
 * obeys that uid, wherever it lives. Lists of places miss one; the
 * owner does not: a socket file belongs to who bound it. *st gets what
 * was judged (st_ino 0: no socket there), which the kernel layer checks
 * again on what it connects. Only with the kernel layer, which sees
 * every bind. */
static bool neighbour_socket(const struct hx_pipeline *pl,
			     const struct hx_peer *peer, const char *path,
			     struct stat *st)
{
	memset(st, 0, sizeof(*st));
	if (!pl->kern || lstat(path, st) || !S_ISSOCK(st->st_mode)) {
		st->st_ino = 0;
		return false;
	}
	if (st->st_uid != peer->uid || (peer->uid == 0 && system_place(path)))
		return false;
	return !own_socket(pl->kern, st);
}

/* /dev/shm is one tmpfs for the whole machine: POSIX shared memory and
 * semaphores of every process (shm_open, sem_open, Python's
 * multiprocessing). A file there of the agent's uid that no process of
 * the session made is an outside process's memory: like a neighbour's
 * socket, never the agent's to change. *fresh: no file at path. */
static bool shm_neighbour(const struct hx_pipeline *pl,
			  const struct hx_peer *peer, const struct vpath *v,
			  bool *fresh)
{
	const char *path = v->has_resolved ? v->resolved : v->norm;
	struct stat st;

	*fresh = false;
	if (!pl->kern || !v->ok || strncmp(path, "/dev/shm/", 9))
		return false;
	if (lstat(path, &st)) {
		*fresh = errno == ENOENT;
		return false;
	}
	return st.st_uid == peer->uid && !own_socket(pl->kern, &st);
}

/* The rule that protects the harness's own files holds in audit mode
 * too: audit mode lets the policy go unenforced, not the log. */
static bool protects_harness(const char *rule)
{
	return rule && !strcmp(rule, "harness:protect");
}

/* "family" and, for netlink, "protocol" of an address the policy does
 * not name. */
static void family_args(json_t *a, const struct hx_request *rq)
{
	sa_family_t f;
	const char *n;

	memcpy(&f, rq->addr, sizeof(f));
	n = hx_netfamily_name(f);
	if (n)
		set_str(a, "family", n);
	else
		json_object_set_new(a, "family", json_integer(f));
	if (f == AF_NETLINK && rq->has_proto) {
		n = hx_netlink_proto_name(rq->proto);
		if (n)
			set_str(a, "protocol", n);
		else
			json_object_set_new(a, "protocol",
					    json_integer(rq->proto));
	}
}

static json_t *make_args(json_t *rec, const struct hx_request *rq,
			 const struct vpath *p1, const struct vpath *p2,
			 const char *addr, char (*names)[HX_DNSMAP_NAME_MAX],
			 size_t nnames)
{
	json_t *a = json_object();
	char buf[256];

	set_str(a, "loader", rq->loader);
	if (rq->path) {
		set_text(rec, a, "path", "args.path",
			 p1->ok ? p1->norm : rq->path);
		if (p1->has_resolved)
			set_text(rec, a, "path_resolved", "args.path_resolved",
				 p1->resolved);
	}
	if (rq->path2) {
		set_text(rec, a, "path2", "args.path2",
			 p2->ok ? p2->norm : rq->path2);
		if (p2->has_resolved)
			set_text(rec, a, "path2_resolved",
				 "args.path2_resolved", p2->resolved);
	}
	if (rq->has_flags) {
		if (rq->op == HX_OP_READ || rq->op == HX_OP_WRITE ||
		    rq->op == HX_OP_TRUNCATE)
			set_str(a, "flags",
				hx_fmt_open_flags(rq->flags, buf, sizeof(buf)));
		else
			json_object_set_new(a, "flags",
					    json_integer(rq->flags));
	}
	if (rq->has_mode)
		set_str(a, "mode", hx_fmt_mode(rq->mode, buf, sizeof(buf)));
	if (rq->argc) {
		json_object_set_new(a, "argv", str_array(rec, "args.argv",
							 rq->argv, rq->argc));
		if (rq->truncated)
			json_object_set_new(a, "argv_truncated", json_true());
	}
	set_text(rec, a, "addr", "args.addr", addr);
	set_text(rec, a, "host", "args.host", rq->host);
	if (nnames) {
		json_t *n = json_array();

		for (size_t i = 0; i < nnames; i++)
			json_array_append_new(
			    n, hx_json_text(rec, "args.names", names[i]));
		json_object_set_new(a, "names", n);
	}
	if (rq->has_result)
		json_object_set_new(a, "result", json_integer(rq->result));
	return a;
}

/* A refusal only the kernel layer saw (a static program, a raw
 * syscall) explains itself too: on harness-exec's stderr, the user's
 * terminal, since no shim in the agent prints it. Once per process and
 * refusal, and at most HX_NOTICE_MAX a session: the rest is in the log.
 * Formatted into out->notice; printed now unless out->tell (then the
 * errno decides, hx_pipeline_notice). */
#define HX_NOTICE_MAX 200
static void kernel_notice(const struct hx_peer *peer,
			  const struct hx_request *rq, enum hx_verdict v,
			  const char *target, struct hx_outcome *out)
{
	static atomic_uint printed;
	const char *argv[17];
	struct hx_notice n = {
	    .op = rq->op, .verdict = v, .target = target, .rule = out->rule};
	size_t k = 0;

	if (rq->op == HX_OP_EXEC && rq->argv) {
		for (; k < rq->argc && k < 16; k++)
			argv[k] = rq->argv[k];
		argv[k] = NULL;
		n.argv = argv;
	}
	if (hx_notice_repeat(&n, peer->pid))
		return;
	k = atomic_fetch_add(&printed, 1);
	if (k < HX_NOTICE_MAX)
		hx_notice_format(out->notice, sizeof(out->notice), &n);
	else if (k == HX_NOTICE_MAX)
		snprintf(out->notice, sizeof(out->notice),
			 "harness: more refusals: see the audit log\n");
	if (!out->tell)
		hx_pipeline_notice(out, EACCES);
}

void hx_pipeline_notice(const struct hx_outcome *o, int err)
{
	if (o->notice[0] && (err == EACCES || err == EPERM))
		fputs(o->notice, stderr);
}

/* Whether a rename of path moves a tree: a directory, or what cannot be
 * looked at. (The kernel layer looks itself, on the parents it acts
 * on: unotify_mut.c.) */
static bool may_be_dir(const char *path)
{
	struct stat st;

	if (!path)
		return true;
	if (lstat(path, &st))
		return errno != ENOENT;
	return S_ISDIR(st.st_mode);
}

/* A call whose flags are open(2)'s (the others' are AT_ ones). */
static bool is_open(unsigned call)
{
	return call == HX_CALL_OPEN || call == HX_CALL_OPENAT ||
	       call == HX_CALL_CREAT || call == HX_CALL_FOPEN ||
	       call == HX_CALL_FREOPEN || call == HX_CALL_SYSCALL;
}

/* An address of a family the shim leaves to the kernel (netlink...):
 * its reaching the kernel layer alone is no bypass. */
static bool foreign_family(const struct hx_request *rq)
{
	sa_family_t f;

	if (!rq->addr || rq->addrlen < sizeof(f))
		return false;
	memcpy(&f, rq->addr, sizeof(f));
	return f != AF_INET && f != AF_INET6 && f != AF_UNIX;
}

/* Whether the policy lets the agent read v (as written and, when it
 * differs, as its symlinks resolve). */
static bool readable(const struct hx_policy *p, const struct vpath *v)
{
	struct hx_event ev = {.op = HX_OP_READ};
	struct hx_decision d;

	if (!v->ok)
		return false;
	ev.path = v->norm;
	hx_policy_decide(p, &ev, &d);
	if (d.verdict != HX_VERDICT_ALLOW || !v->has_resolved)
		return d.verdict == HX_VERDICT_ALLOW;
	ev.path = v->resolved;
	hx_policy_decide(p, &ev, &d);
	return d.verdict == HX_VERDICT_ALLOW;
}

/* hx_outcome.tell for a denied request: the errno the kernel would give
 * tells whether a path exists and what it is, which the agent may learn
 * for a path it may read (it could stat it) and not for one denied for
 * reading. An IP connect or send has no such errno: the kernel would
 * have made it. */
static bool may_tell(const struct hx_pipeline *pl, const struct hx_request *rq,
		     const struct vpath *p1, const struct vpath *p2,
		     const struct vpath *pu, bool is_unix)
{
	if (is_unix)
		return readable(pl->policy, pu);
	if (rq->addr || !rq->path || rq->op == HX_OP_EXEC ||
	    rq->op == HX_OP_RESOLVE)
		return false;
	if (!readable(pl->policy, p1))
		return false;
	return rq->op == HX_OP_SYMLINK || !rq->path2 ||
	       readable(pl->policy, p2);
}

/* A symlink's target text made absolute (relative to the link's own
 * directory) and validated into v, as a path it leads to. */
static void link_target(const char *text, const struct vpath *link,
			const struct hx_peer *peer, struct vpath *v)
{
	char abs[PATH_MAX];
	const char *slash;

	v->ok = v->has_resolved = v->via_fd = false;
	if (!text || !text[0] || !link->ok)
		return;
	slash = strrchr(link->norm, '/');
	if (!slash)
		return;
	if (text[0] == '/')
		snprintf(abs, sizeof(abs), "%s", text);
	else if ((size_t)snprintf(abs, sizeof(abs), "%.*s/%s",
					   (int)(slash - link->norm),
					   link->norm, text) >= sizeof(abs))
		return;
	validate_path(abs, peer->pid, peer->tid, true, v);
}

static void decide(struct hx_pipeline *pl, const struct hx_peer *peer,
		   const struct hx_request *rq, const char *layer, bool kernel,
		   struct hx_outcome *out, char *decided, size_t dlen)
{
	struct timespec t0, wall;
	struct vpath sp1, sp2, spu, *p1 = &sp1, *p2 = &sp2, *pu = &spu;
	struct sockaddr_un un_norm, un_res;
	socklen_t un_len = 0, res_len = 0;
	bool is_unix = false, unix_resolved = false;
	struct hx_event ev = {0}, ev2;
	struct hx_decision d, d2;
	char names[MAX_NAMES][HX_DNSMAP_NAME_MAX];
	const char *namep[MAX_NAMES];
	size_t nnames = 0, i;
	char addr[HX_FMT_ADDR_LEN], cwd[PATH_MAX], link[64];
	struct hx_exec_class cls = {NULL, HX_RISK_LOW};
	bool has_addr = false, resolved_won = false;
	json_t *rec;
	ssize_t n;
	uint64_t key = 0;
	struct corr *match = NULL;
	bool bypass = false, both = false, by_inode = false, co = false;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_REALTIME, &wall);

	ev.op = rq->op;
	validate_path(rq->path, peer->pid, peer->tid, follows_last(rq->op, rq),
		      p1);
	if (rq->op == HX_OP_SYMLINK) {
		/* path2 is the link's text; where it leads is decided too
		 * (policy.h: link_target), from the link's directory. */
		link_target(rq->path2, p1, peer, p2);
		ev.link_target = p2->ok ? p2->norm : NULL;
		ev.link_target_resolved = p2->has_resolved ? p2->resolved : NULL;
		p2->ok = false;
		p2->has_resolved = p2->via_fd = false;
		ev.path2 = rq->path2;
	} else {
		validate_path(rq->path2, peer->pid, peer->tid, false, p2);
		ev.path2 = !p2->ok ? NULL : p2->via_fd ? p2->resolved : p2->norm;
	}
	ev.path = !p1->ok ? NULL : p1->via_fd ? p1->resolved : p1->norm;
	if (rq->op == HX_OP_RENAME)
		ev.moves_tree = rq->tree_known ? rq->moves_tree
					       : may_be_dir(ev.path) ||
						     may_be_dir(ev.path2);
	ev.reads = rq->op == HX_OP_WRITE && is_open(rq->call) &&
		   rq->has_flags && (rq->flags & O_ACCMODE) != O_WRONLY;
	ev.argv = rq->argv;
	ev.argc = rq->argc;
	ev.host = rq->host;
	if (rq->addr && rq->addrlen >= sizeof(sa_family_t)) {
		ev.addr = rq->addr;
		ev.addrlen = (socklen_t)rq->addrlen;
		is_unix = unix_path(rq->addr, rq->addrlen, peer->pid, peer->tid,
				    pu);
		if (is_unix) {
			/* Unjudgeable (a path too long for sun_path once
			 * absolute): no address, so harness:malformed. */
			if (!pu->ok || !to_sun(pu->norm, &un_norm, &un_len) ||
			    (pu->has_resolved &&
			     !to_sun(pu->resolved, &un_res, &res_len)))
				un_len = 0;
			ev.addr = un_len ? (struct sockaddr *)&un_norm : NULL;
			ev.addrlen = un_len;
			unix_resolved = un_len && pu->has_resolved;
		}
		hx_fmt_sockaddr(ev.addr ? ev.addr : rq->addr,
				ev.addr ? ev.addrlen : rq->addrlen, addr,
				sizeof(addr));
		has_addr = true;
		if (pl->dns)
			nnames = hx_dnsmap_lookup(pl->dns, ev.addr, ev.addrlen,
						  names, MAX_NAMES);
		for (i = 0; i < nnames; i++)
			namep[i] = names[i];
		ev.names = namep;
		ev.nnames = nnames;
	}
	hx_policy_decide(pl->policy, &ev, &d);
	if (has_addr)
		hx_netfamily_decide(rq->addr, rq->addrlen,
				    rq->has_proto ? rq->proto : -1, &d);
	/* A symlink from the project into ~/.ssh must not pass: decide on
	 * the resolved form too and keep the stronger verdict. */
	if (p1->has_resolved || p2->has_resolved || unix_resolved) {
		ev2 = ev;
		if (p1->has_resolved)
			ev2.path = p1->resolved;
		if (p2->has_resolved)
			ev2.path2 = p2->resolved;
		if (unix_resolved) {
			ev2.addr = (struct sockaddr *)&un_res;
			ev2.addrlen = res_len;
		}
		hx_policy_decide(pl->policy, &ev2, &d2);
		if (d2.verdict > d.verdict) {
			d = d2;
			resolved_won = true;
		}
	}
	/* The log by inode: through a hard link or another mount of its
	 * file system, a path no glob names reaches it. */
	if (rq->op != HX_OP_EXEC && !protects_harness(d.rule) &&
	    (protected_inode(pl, p1, follows_last(rq->op, rq)) ||
	     (rq->op != HX_OP_SYMLINK && protected_inode(pl, p2, false)))) {
		d.verdict = HX_VERDICT_DENY;
		d.rule = "harness:protect";
		d.pattern = NULL;
		by_inode = true;
	}
	out->sock_dev = 0;
	out->sock_ino = 0;
	if (is_unix && un_len &&
	    (rq->op == HX_OP_CONNECT || rq->op == HX_OP_SEND)) {
		struct stat st;

		if (neighbour_socket(pl, peer,
				     unix_resolved ? pu->resolved : pu->norm,
				     &st) &&
		    d.verdict == HX_VERDICT_ALLOW && !d.neighbours) {
			d.verdict = HX_VERDICT_DENY;
			d.rule = "harness:neighbour";
			d.pattern = NULL;
		}
		out->sock_dev = st.st_dev;
		out->sock_ino = st.st_ino;
	}
	out->fresh = false;
	if (rq->op == HX_OP_WRITE || rq->op == HX_OP_UNLINK ||
	    rq->op == HX_OP_TRUNCATE || rq->op == HX_OP_RENAME ||
	    rq->op == HX_OP_LINK) {
		bool f2;

		/* path2: a rename's destination, a link's existing file. */
		if ((shm_neighbour(pl, peer, p1, &out->fresh) ||
		     shm_neighbour(pl, peer, p2, &f2)) &&
		    d.verdict == HX_VERDICT_ALLOW) {
			d.verdict = HX_VERDICT_DENY;
			d.rule = "harness:neighbour";
			d.pattern = NULL;
		}
	}
	if (rq->op == HX_OP_EXEC)
		cls = hx_classify_exec(ev.path, rq->argv, rq->argc);

	out->verdict = d.verdict;
	out->rule = d.rule;
	out->reply = pl->mode == HX_MODE_AUDIT && !protects_harness(d.rule)
			 ? HX_VERDICT_ALLOW
			 : d.verdict;
	out->err = out->reply == HX_VERDICT_ALLOW ? 0 : EACCES;
	out->tell = out->err && may_tell(pl, rq, p1, p2, pu, is_unix);
	out->seq = 0;
	if (decided && dlen && is_unix)
		snprintf(decided, dlen, "%s",
			 !un_len ? "" : unix_resolved ? pu->resolved : pu->norm);
	else if (decided && dlen)
		snprintf(decided, dlen, "%s",
			 p1->has_resolved ? p1->resolved
			 : p1->ok	  ? p1->norm
				 : "");
	if (pl->kern)
		key = fnv(has_addr ? addr : p1->ok ? p1->norm : "");
	if (kernel && pl->kern) {
		/* The shim asked for this thread and call just before: its
		 * record stands for both layers, unless the fresh verdict
		 * differs (then this one is logged too). */
		match = corr_find(pl, peer->tid ? peer->tid : peer->pid,
				  peer->ppid, (int)rq->op, key);
		if (match && match->verdict == d.verdict) {
			match->used = false; /* one kernel event per request */
			match->pending = false; /* its "shim+kernel" holds */
			out->seq = match->seq;
			return;
		}
		/* A call the shim does not interpose (HX_CALL_CHMOD and
		 * after) reaches only the kernel layer: that is no bypass. */
		/* Nor is a read: the shim allows most reads by itself,
		 * without asking. */
		bypass = !match && rq->call < HX_CALL_CHMOD &&
			 rq->op != HX_OP_READ &&
			 !foreign_family(rq) && peer->exe && has_shim(pl, peer);
	}
	pl->events++;
	if ((unsigned)d.verdict < 3)
		pl->verdicts[d.verdict]++;
	/* A shim request the kernel layer will see next, if allowed. */
	both = !kernel && pl->kern && !strcmp(layer, "shim") &&
	       out->reply == HX_VERDICT_ALLOW && kernel_sees(pl->kern, rq);

	rec = hx_pipeline_record(pl, peer, hx_call_name(rq->call), &wall);
	if (rec) {
		set_str(rec, "op", hx_op_name(rq->op));
		json_object_set_new(rec, "args",
				    make_args(rec, rq, p1, p2,
					      has_addr ? addr : NULL, names,
					      nnames));
		if (unix_resolved)
			set_text(rec, json_object_get(rec, "args"),
				 "addr_resolved", "args.addr_resolved",
				 pu->resolved);
		if (foreign_family(rq))
			family_args(json_object_get(rec, "args"), rq);
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)peer->pid);
		n = readlink(link, cwd, sizeof(cwd) - 1);
		if (n > 0) {
			cwd[n] = '\0';
			set_text(rec, rec, "cwd", "cwd", cwd);
		}
		set_str(rec, "category", hx_category_name(d.category));
		/* An exec's risk is its argv class (cat: low, rm: high). */
		set_str(rec, "risk",
			hx_risk_name(cls.name ? cls.risk : d.risk));
		set_str(rec, "class", cls.name);
		set_str(rec, "verdict", hx_verdict_name(d.verdict));
		json_object_set_new(rec, "enforced",
				    json_boolean(pl->mode == HX_MODE_ENFORCE ||
						 protects_harness(d.rule)));
		set_str(rec, "rule", d.rule);
		set_text(rec, rec, "pattern", "pattern", d.pattern);
		if (by_inode)
			set_str(rec, "protected_by", "inode");
		if (resolved_won || p1->via_fd || p2->via_fd)
			json_object_set_new(rec, "decided_on_resolved",
					    json_true());
		set_str(rec, "layer", both ? "shim+kernel" : layer);
		if (bypass)
			json_object_set_new(rec, "shim_bypass", json_true());
		if (match)
			json_object_set_new(rec, "shim_disagreed", json_true());
		json_object_set_new(rec, "latency_ns",
				    json_integer((json_int_t)ns_since(&t0)));
		if (rq->nframes)
			json_object_set_new(rec, "stack",
					    str_array(rec, "stack", rq->frames,
						      rq->nframes));
	}
	if (hx_pipeline_append_event(pl, rec, &out->seq, &co)) {
		/* Fail closed, in audit mode too: what cannot be audited
		 * does not happen. */
		out->reply = HX_VERDICT_DENY;
		out->err = EACCES;
		out->tell = false;
		out->rule = "harness:audit-failed";
	}
	json_decref(rec);
	out->notice[0] = '\0';
	if (kernel && out->reply != HX_VERDICT_ALLOW)
		kernel_notice(peer, rq, d.verdict,
			      has_addr ? addr : p1->ok ? p1->norm : NULL, out);
	if (!kernel && pl->kern && (out->seq || co) && !strcmp(layer, "shim"))
		corr_put(pl, peer, (int)rq->op, key, d.verdict, out->seq,
			 both);
}

void hx_pipeline_decide(struct hx_pipeline *pl, const struct hx_peer *peer,
			const struct hx_request *rq, const char *layer,
			struct hx_outcome *out)
{
	struct hx_loader_prog lp;
	struct hx_request lrq;

	/* "ld.so PROGRAM": decided as the exec of PROGRAM (the kernel
	 * layer does this itself, on the image after #!: unotify_exec.c). */
	if (rq->op == HX_OP_EXEC && !rq->loader &&
	    hx_loader_resolve(peer->pid, peer->tid, rq->path, rq->argv,
			      rq->argc, &lp) > 0) {
		lrq = *rq;
		lrq.loader = rq->path;
		lrq.path = lp.path;
		lrq.argv = lp.argv;
		lrq.argc = lp.argc;
		decide(pl, peer, &lrq, layer, false, out, NULL, 0);
		free(lp.argv);
		return;
	}
	decide(pl, peer, rq, layer, false, out, NULL, 0);
}

void hx_pipeline_decide_kernel(struct hx_pipeline *pl,
			       const struct hx_peer *peer,
			       const struct hx_request *rq,
			       struct hx_outcome *out, char *decided,
			       size_t dlen)
{
	decide(pl, peer, rq, "kernel", true, out, decided, dlen);
}
