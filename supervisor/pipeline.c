/* The decision pipeline; see pipeline.h. */
#define _GNU_SOURCE
#include "supervisor/pipeline_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy/policy.h"
#include "common/notice.h"
#include "supervisor/audit.h"
#include "supervisor/dnsmap.h"
#include "common/sockaddr.h"
#include "supervisor/fmt.h"
#include "supervisor/loader.h"
#include "supervisor/loopback.h"
#include "supervisor/netfamily.h"
#include "supervisor/owned.h"
#include "common/path.h"
#include "common/wire.h"
#include "supervisor/path_resolve.h"
#include "supervisor/pathway.h"
#include "supervisor/proc.h"
#include "supervisor/alerts.h"
#include "supervisor/ask.h"
#include "supervisor/askparts.h"
#include "supervisor/record.h"
#include "supervisor/correlate.h"

void hx_pipeline_tick(struct hx_pipeline *pl, bool all)
{
	hx_record_flush(pl, all);
	hx_correlate_expire(pl, all);
	if (!all) {
		hx_ask_tick(pl->ask);
		hx_alerts_tick(pl);
	}
}

/* Whether the op acts on the final component itself (unlink, rename,
 * mkdir...) rather than on what a symlink there points to. */
static bool follows_last(enum hx_op op, const struct hx_request *rq)
{
	switch (op) {
	case HX_OP_READ:
		/* An O_NOFOLLOW open is of the name itself (ELOOP on a
		 * symlink, or an O_PATH fd of it): decided as its target,
		 * the kernel layer opened that target instead. */
		return !(rq->has_flags && (rq->flags & O_NOFOLLOW));
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

static void validate_path(const char *in, const struct hx_peer *peer,
			  bool follow, struct vpath *v)
{
	v->ok = v->has_resolved = v->via_fd = false;
	/* The policy sees the path as the agent wrote it (normalized) and,
	 * when it differs, as the kernel walks it: its symlinks resolved,
	 * and a ".." after one going up from where it led (a/link/../x
	 * is not a/x). */
	if (!in || hx_path_normalize(NULL, in, v->norm, sizeof(v->norm)) < 0)
		return;
	v->ok = true;
	if (!hx_path_resolve_root(
		peer->pid, peer->tid,
		peer->root_ours || peer->gone || hx_path_root_ours(peer->pid),
		in, follow, v->resolved, sizeof(v->resolved)) &&
	    strcmp(v->resolved, v->norm))
		v->has_resolved = true;
	/* Through an fd that does not resolve to a directory (a pipe, a
	 * closed fd): decided as written, which no write rule allows. */
	v->via_fd =
	    v->has_resolved && through_fd(v->norm) && !through_fd(v->resolved);
}

/* A unix socket's path is a path (connect follows its symlinks): made
 * absolute from the thread's cwd, then validated like a file's. False
 * for any other address; v->ok false when it cannot be judged. */
static bool unix_path(const struct sockaddr *sa, size_t len,
		      const struct hx_peer *peer, struct vpath *v)
{
	const struct sockaddr_un *un = (const void *)sa;
	size_t off = offsetof(struct sockaddr_un, sun_path), n;
	char raw[sizeof(un->sun_path) + 1], full[PATH_MAX];

	v->ok = v->has_resolved = false;
	if (sa->sa_family != AF_UNIX || len <= off || !un->sun_path[0])
		return false;
	if (!hx_sockaddr_len_ok(sa, len))
		return true; /* no path: judged malformed */
	n = strnlen(un->sun_path, len - off);
	memcpy(raw, un->sun_path, n);
	raw[n] = '\0';
	if (!peer->gone && !hx_path_absolute(peer->pid, peer->tid, AT_FDCWD,
					     raw, full, sizeof(full)))
		validate_path(full, peer, true, v);
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

int hx_pipeline_protect_ino(struct hx_pipeline *pl, dev_t dev, ino_t ino)
{
	if (pl->nprotect_ino == HX_PROTECT_INO_MAX)
		return -ENOSPC;
	pl->protect_ino[pl->nprotect_ino++] = (struct hx_protect_ino){dev, ino};
	return 0;
}

int hx_pipeline_protect_fd(struct hx_pipeline *pl, int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	return hx_pipeline_protect_ino(pl, st.st_dev, st.st_ino);
}

static int add_way(dev_t dev, ino_t ino, void *arg)
{
	struct hx_pipeline *pl = arg;

	for (size_t i = 0; i < pl->nprotect_way; i++)
		if (pl->protect_way[i].dev == dev &&
		    pl->protect_way[i].ino == ino)
			return 0;
	if (pl->nprotect_way == HX_PROTECT_WAY_MAX)
		return -ENOSPC;
	pl->protect_way[pl->nprotect_way++] = (struct hx_protect_ino){dev, ino};
	return 0;
}

int hx_pipeline_protect_way(struct hx_pipeline *pl, const char *path)
{
	return hx_path_way(path, add_way, pl);
}

int hx_pipeline_protect_endpoint(struct hx_pipeline *pl, int fd)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	if (pl->nprotect_ep == HX_PROTECT_EP_MAX)
		return -ENOSPC;
	if (getsockname(fd, (struct sockaddr *)&sa, &len))
		return -errno;
	if (!hx_sockaddr_ip(&sa, len, &pl->protect_ep[pl->nprotect_ep]))
		return -EAFNOSUPPORT;
	pl->nprotect_ep++;
	return 0;
}

static bool protected_endpoint(const struct hx_pipeline *pl,
			       const struct hx_ipaddr *d)
{
	for (size_t i = 0; i < pl->nprotect_ep; i++)
		if (hx_ipaddr_equal(&pl->protect_ep[i], d))
			return true;
	return false;
}

/* Whether v names a protected inode (a hard link to the log, the log
 * through a second mount); lstat for what acts on the link itself. */
static bool protected_inode(const struct hx_pipeline *pl, const struct vpath *v,
			    bool follow)
{
	const char *path = v->has_resolved ? v->resolved : v->norm;
	struct stat st;

	if (!pl->nprotect_ino || !v->ok ||
	    (follow ? stat(path, &st) : lstat(path, &st)))
		return false;
	for (size_t i = 0; i < pl->nprotect_ino; i++)
		if (pl->protect_ino[i].dev == st.st_dev &&
		    pl->protect_ino[i].ino == st.st_ino)
			return true;
	return false;
}

/* Whether a rename, unlink or rmdir acts on the way to a protected
 * name (hx_pipeline_protect_way): moved or replaced, it would re-point
 * that name. */
static bool on_protected_way(const struct hx_pipeline *pl,
			     const struct hx_request *rq,
			     const struct vpath *p1, const struct vpath *p2)
{
	const struct vpath *v[2] = {p1, rq->op == HX_OP_RENAME ? p2 : NULL};
	struct stat st;

	if (!pl->nprotect_way ||
	    (rq->op != HX_OP_RENAME && rq->op != HX_OP_UNLINK &&
	     rq->op != HX_OP_RMDIR))
		return false;
	for (int k = 0; k < 2; k++) {
		if (!v[k] || !v[k]->ok ||
		    lstat(v[k]->has_resolved ? v[k]->resolved : v[k]->norm,
			  &st))
			continue;
		for (size_t i = 0; i < pl->nprotect_way; i++)
			if (pl->protect_way[i].dev == st.st_dev &&
			    pl->protect_way[i].ino == st.st_ino)
				return true;
	}
	return false;
}

void hx_pipeline_own(struct hx_pipeline *pl, int dirfd, const char *name)
{
	hx_owned_add(pl->owned, dirfd, name);
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
				  (int)(slash - link->norm), link->norm,
				  text) >= sizeof(abs))
		return;
	validate_path(abs, peer, true, v);
}

/* ---- the stages of a decision ---- */

/* The calling thread's working directory, into f->cwd; NULL when it
 * cannot be read (a process gone). */
static const char *cwd_of(struct flow *f)
{
	pid_t who = f->peer->tid ? f->peer->tid : f->peer->pid;

	if (who <= 0 || f->peer->gone ||
	    hx_proc_cwd(who, f->cwd, sizeof(f->cwd)) <= 0 || f->cwd[0] != '/')
		return NULL;
	return f->cwd;
}

/* hx_event.resolve: a path as the exec's caller walks it. */
static int resolve_as_caller(const void *arg, const char *path,
			     bool follow_last, char *out, size_t size)
{
	const struct hx_peer *peer = arg;

	return hx_path_resolve_root(peer->pid, peer->tid,
				    peer->root_ours || peer->gone ||
					hx_path_root_ours(peer->pid),
				    path, follow_last, out, size);
}

/* Validate: the paths made absolute, normalized and resolved as the
 * agent would see them (validate_path); what the policy judges. */
static void validate_paths(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	const struct hx_peer *peer = f->peer;
	struct hx_event *ev = &f->ev;

	ev->op = rq->op;
	validate_path(rq->path, peer, follows_last(rq->op, rq), &f->p1);
	if (rq->op == HX_OP_SYMLINK) {
		/* path2 is the link's text; where it leads is decided too
		 * (policy.h: link_target), from the link's directory. */
		link_target(rq->path2, &f->p1, peer, &f->p2);
		ev->link_target = f->p2.ok ? f->p2.norm : NULL;
		ev->link_target_resolved =
		    f->p2.has_resolved ? f->p2.resolved : NULL;
		f->p2.ok = false;
		f->p2.has_resolved = f->p2.via_fd = false;
		ev->path2 = rq->path2;
	} else {
		validate_path(rq->path2, peer, false, &f->p2);
		ev->path2 = !f->p2.ok	   ? NULL
			    : f->p2.via_fd ? f->p2.resolved
					   : f->p2.norm;
	}
	ev->path = !f->p1.ok	  ? NULL
		   : f->p1.via_fd ? f->p1.resolved
				  : f->p1.norm;
	if (rq->op == HX_OP_RENAME)
		ev->moves_tree = rq->tree_known ? rq->moves_tree
						: may_be_dir(ev->path) ||
						      may_be_dir(ev->path2);
	ev->reads = rq->op == HX_OP_WRITE && hx_pl_is_open(rq->call) &&
		    rq->has_flags && (rq->flags & O_ACCMODE) != O_WRONLY;
	ev->argv = rq->argv;
	ev->argc = rq->argc;
	ev->host = rq->host;
	/* An exec's relative paths (rm -rf build) are the caller's. */
	ev->cwd = rq->op != HX_OP_EXEC ? NULL : rq->cwd ? rq->cwd : cwd_of(f);
	ev->resolve = rq->op == HX_OP_EXEC ? resolve_as_caller : NULL;
	ev->resolve_arg = f->peer;
	/* the command line the user gave harness-exec (run.c, layer
	 * "harness"): judged by its argv alone */
	ev->argv_only = !strcmp(f->layer, "harness");
}

/* Validate: the address, with a unix socket's path treated as a path,
 * and the names this session's lookups gave it. */
static void validate_addr(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	struct hx_event *ev = &f->ev;

	if (!rq->addr || rq->addrlen < sizeof(sa_family_t))
		return;
	ev->addr = rq->addr;
	ev->addrlen = (socklen_t)rq->addrlen;
	f->is_unix = unix_path(rq->addr, rq->addrlen, f->peer, &f->pu);
	if (f->is_unix) {
		/* Unjudgeable (a path too long for sun_path once absolute):
		 * no address, so harness:malformed. */
		if (!f->pu.ok || !to_sun(f->pu.norm, &f->un_norm, &f->un_len) ||
		    (f->pu.has_resolved &&
		     !to_sun(f->pu.resolved, &f->un_res, &f->res_len)))
			f->un_len = 0;
		ev->addr = f->un_len ? (struct sockaddr *)&f->un_norm : NULL;
		ev->addrlen = f->un_len;
		f->unix_resolved = f->un_len && f->pu.has_resolved;
	}
	hx_sockaddr_format(ev->addr ? ev->addr : rq->addr,
			   ev->addr ? ev->addrlen : rq->addrlen, f->addr,
			   sizeof(f->addr));
	f->has_addr = true;
	if (!f->is_unix && rq->has_proto)
		ev->proto = rq->proto; /* tcp: and udp: rules */
	if (rq->op == HX_OP_LISTEN)
		return; /* its own address: no destination, no names */
	/* 0.0.0.0 and :: reach this machine's loopback: judged as that, not
	 * as an address no rule names that a name could allow (a hosts
	 * file's "0.0.0.0 blocked.example", an answer). */
	if (hx_sockaddr_unspecified(ev->addr, ev->addrlen, &f->judged))
		ev->addr = (const struct sockaddr *)&f->judged;
	if (f->pl->dns)
		f->nnames = hx_dnsmap_lookup(f->pl->dns, ev->addr, ev->addrlen,
					     f->names, f->name_src, MAX_NAMES);
	for (size_t i = 0; i < f->nnames; i++)
		f->namep[i] = f->names[i];
	ev->names = f->namep;
	ev->nnames = f->nnames;
}

/* Whether v names a neighbour's socket file the agent may not remove
 * or rename over (owned.h). */
static bool neighbour_socket_file(struct flow *f, const struct vpath *v)
{
	return v->ok && hx_owned_neighbour_name(f->pl->owned, f->pl->policy,
						f->peer->uid, v->norm);
}

/* A harness session's own socket (the shim's, the questions', a
 * control socket: protected paths, this session's or any other's):
 * harness:protect, which audit mode enforces too. As a neighbour's
 * socket it was refused in enforce mode only, and an audit session's
 * agent approved another session's pending question through it (its
 * ask_answer record said "control pid N") and could speak the shim's
 * protocol into that session's log. */
static bool own_socket(struct flow *f)
{
	struct hx_decision d;
	const char *path = f->unix_resolved ? f->pu.resolved : f->pu.norm;

	if (!f->pu.ok || path[0] != '/' ||
	    !hx_policy_protects(f->pl->policy, path, &d))
		return false;
	f->d.verdict = HX_VERDICT_DENY;
	f->d.rule = d.rule;
	f->d.origin = d.origin;
	f->d.pattern = d.pattern;
	return true;
}

/* Judge: a neighbour's socket or /dev/shm file is never the agent's,
 * whatever rule allowed its place (owned.h), unless the rule that
 * allowed a socket says neighbours: true. */
static void judge_neighbours(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	struct hx_decision *d = &f->d;
	struct stat st;
	bool hit = false, fresh2, connects;

	f->sock_dev = 0;
	f->sock_ino = 0;
	f->fresh = false;
	connects = f->is_unix && f->un_len &&
		   (rq->op == HX_OP_CONNECT || rq->op == HX_OP_SEND);
	if (connects && own_socket(f))
		return;
	if (connects) {
		hit =
		    hx_owned_neighbour_socket(
			f->pl->owned, f->peer->uid,
			f->unix_resolved ? f->pu.resolved : f->pu.norm, &st) &&
		    !d->neighbours;
		f->sock_dev = st.st_dev;
		f->sock_ino = st.st_ino;
	}
	/* path2: a rename's destination, a link's existing file. A
	 * neighbour's socket is not the agent's to remove or rename over
	 * either: with it gone, a socket the agent binds there is the one
	 * the service's clients outside the session reach (the user's git
	 * handed its password to an agent that had replaced git's
	 * credential cache's socket). */
	if (hx_pl_writes_file(rq->op))
		hit = hx_owned_neighbour_shm(
			  f->pl->owned, hx_pl_judged_path(&f->p1), &f->fresh) ||
		      hx_owned_neighbour_shm(
			  f->pl->owned, hx_pl_judged_path(&f->p2), &fresh2) ||
		      neighbour_socket_file(f, &f->p1) ||
		      neighbour_socket_file(f, &f->p2);
	/* A question about a connect names the socket: the person who
	 * answers it decides for that service (a database of the user's).
	 * A write's names one path, not whose socket is there. */
	if (hit && (d->verdict == HX_VERDICT_ALLOW ||
		    (!connects && hx_pl_may_proceed(f)))) {
		d->verdict = HX_VERDICT_DENY;
		d->rule = "harness:neighbour";
		d->pattern = NULL;
	}
}

/* Judge: a loopback address the policy says ask for (the default's
 * rule loopback) is allowed when it is the model endpoint the agent's
 * environment names, or when only the session's processes listen there
 * (loopback.h); a deny stays a deny. Decided on what listens now, not on
 * what did: a port the session listened on a moment ago and an outside
 * service holds now is the service's. What remains is the instant
 * between this and the kernel layer's connect, in which the session's
 * listener would have to close and an outside one bind. Nothing
 * listening: refused as the kernel would (ECONNREFUSED), so that a
 * loop waiting for a server to come up goes on waiting. */
static void judge_loopback(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	struct hx_pipeline *pl = f->pl;
	struct hx_ipaddr lb;
	const char *var;

	f->refused = false;
	if (f->is_unix || !f->ev.addr ||
	    (rq->op != HX_OP_CONNECT && rq->op != HX_OP_SEND) ||
	    !hx_loopback_addr(f->ev.addr, f->ev.addrlen, &lb))
		return;
	/* The harness's own endpoint (--metrics), whatever allows it. */
	if (protected_endpoint(pl, &lb)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:protect";
		f->d.pattern = NULL;
		return;
	}
	if (f->d.verdict != HX_VERDICT_ASK)
		return;
	switch (hx_loopback_judge(
	    &lb, rq->has_proto ? rq->proto : -1, rq->op == HX_OP_CONNECT,
	    f->peer->pid, pl->tree_holds, pl->tree_arg, pl->endpoints, &var)) {
	case HX_LB_ENDPOINT:
		f->d.verdict = HX_VERDICT_ALLOW;
		f->d.rule = "harness:model-endpoint";
		f->d.pattern = var;
		break;
	case HX_LB_OWN:
		f->d.verdict = HX_VERDICT_ALLOW;
		f->d.rule = "harness:own-listener";
		f->d.pattern = NULL;
		break;
	case HX_LB_NOTHING:
		f->refused = true;
		break;
	default:
		break;
	}
}

/* What a person is asked about f's call (ask.h). */
static void ask_subject(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	struct hx_ask_subject *s = &f->subj;

	memset(s, 0, sizeof(*s));
	s->op = rq->op;
	s->path = hx_pl_judged_path(&f->p1);
	if (rq->op != HX_OP_SYMLINK) /* a symlink's target is text */
		s->path2 = hx_pl_judged_path(&f->p2);
	if (rq->op == HX_OP_EXEC) {
		s->argv = rq->argv;
		s->argc = rq->argc;
		s->image = rq->image;
	}
	if (f->has_addr) {
		s->path = s->path2 = NULL;
		s->addr = f->addr;
		s->port = f->is_unix
			      ? 0
			      : hx_sockaddr_port(f->ev.addr, f->ev.addrlen);
		s->names = f->namep;
		s->nnames = f->nnames;
	}
	s->rule = f->d.rule;
	s->judged_as = f->d.judged_as[0] ? f->d.judged_as : NULL;
	s->cwd = f->ev.cwd;
	if (rq->op == HX_OP_EXEC) {
		s->env = f->env.p;
		s->env_len = f->env.len;
		s->env_unread = f->env_unread;
	}
	s->pid = f->peer->pid;
	s->tid = f->peer->tid ? f->peer->tid : f->peer->pid;
	s->ppid = f->peer->ppid;
	s->spawn = hx_pl_is_spawn(rq);
	s->key = hx_pl_call_key(f);
	s->kernel = f->kernel;
}

/* Judge: an ask a person answered for more than once (a grant of the
 * session or the user's, or an answer "once" to the shim's question of
 * this very call) is that answer; the rule stays the one that asks. */
static void judge_grants(struct flow *f)
{
	enum hx_verdict v;

	f->grant[0] = '\0';
	if (f->d.verdict != HX_VERDICT_ASK || !f->pl->ask)
		return;
	ask_subject(f);
	v = hx_ask_granted(f->pl->ask, &f->subj, f->grant, sizeof(f->grant));
	if (v == HX_VERDICT_ASK && f->d.judged_as[0])
		v = hx_askparts_granted(f->pl->ask, f->pl->policy, &f->ev,
					&f->subj, f->grant, sizeof(f->grant));
	if (v != HX_VERDICT_ASK)
		f->d.verdict = v;
}

/* Judge: after an alert whose action is ask, the next call that runs,
 * writes or reaches the network and would go ahead is asked instead
 * (one that only reports what it did cannot wait for a person). */
static void judge_alert(struct flow *f)
{
	const char *rule;

	if (f->d.verdict != HX_VERDICT_ALLOW || f->rq->report ||
	    !hx_alerts_sensitive(f->d.category) ||
	    !(rule = hx_alerts_escalate(f->pl->alerts)))
		return;
	f->d.verdict = HX_VERDICT_ASK;
	f->d.rule = rule;
	f->d.pattern = NULL;
	f->d.origin = NULL;
	ask_subject(f);
}

/* Whether no rule decided d, only its category's default. */
static bool by_default(const struct hx_decision *d)
{
	return d->rule && !strncmp(d->rule, "default:", 8);
}

/* Judge: the policy on the event as named and as resolved (a symlink
 * from the project into ~/.ssh must not pass: the stronger verdict
 * wins, and of two alike a rule's over a category's default: a write
 * of ~/.bashrc through /proc/self/fd/3 was recorded default:file_write,
 * which audit mode's reviewers and learn take for no rule's concern,
 * not shell-rc), the socket's family, and the harness's own files by
 * inode. An exec's class is the policy's (policy/cmdview.h). */
static void judge(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	struct hx_event ev2;
	struct hx_decision d2;

	hx_policy_decide(f->pl->policy, &f->ev, &f->d);
	if (f->has_addr)
		hx_netfamily_decide(rq->addr, rq->addrlen,
				    rq->has_proto ? rq->proto : -1, &f->d);
	if (f->p1.has_resolved || f->p2.has_resolved || f->unix_resolved) {
		ev2 = f->ev;
		if (f->p1.has_resolved)
			ev2.path = f->p1.resolved;
		if (f->p2.has_resolved)
			ev2.path2 = f->p2.resolved;
		if (f->unix_resolved) {
			ev2.addr = (struct sockaddr *)&f->un_res;
			ev2.addrlen = f->res_len;
		}
		hx_policy_decide(f->pl->policy, &ev2, &d2);
		if (d2.verdict > f->d.verdict ||
		    (d2.verdict == f->d.verdict && by_default(&f->d) &&
		     !by_default(&d2))) {
			f->d = d2;
			f->resolved_won = true;
		}
	}
	/* The log by inode: through a hard link or another mount of its
	 * file system, a path no glob names reaches it; so the harness's
	 * own sockets (harness-mcp --http unix:PATH). */
	if (rq->op != HX_OP_EXEC && !hx_pl_protects_harness(f->d.rule) &&
	    (protected_inode(f->pl, &f->p1, follows_last(rq->op, rq)) ||
	     (rq->op != HX_OP_SYMLINK &&
	      protected_inode(f->pl, &f->p2, false)) ||
	     (f->is_unix && f->un_len &&
	      protected_inode(f->pl, &f->pu, true)) ||
	     on_protected_way(f->pl, rq, &f->p1, &f->p2))) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:protect";
		f->d.pattern = NULL;
		f->by_inode = true;
	}
	if (hx_pl_may_proceed(f) && rq->op != HX_OP_EXEC && !f->has_addr &&
	    hx_pl_other_terminal(f->peer, &f->p1)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:other-terminal";
		f->d.pattern = NULL;
	}
	/* Nothing of the agent's draws over a question on the terminal:
	 * what holds it is stopped (askterm.c), nothing opens it anew. */
	if (rq->op == HX_OP_WRITE && hx_pl_held_terminal(f->pl, &f->p1)) {
		f->d.verdict = HX_VERDICT_DENY;
		f->d.rule = "harness:question-up";
		f->d.pattern = NULL;
	}
	hx_pl_judge_device_inode(f);
	hx_pl_judge_oom_score(f);
	judge_neighbours(f);
	judge_loopback(f);
	hx_pl_judge_git_objects(f);
	hx_pl_judge_shared_file(f);
	hx_pl_judge_nested_git(f);
	hx_pl_judge_agent_conf(f);
	hx_pl_judge_own_files(f);
	hx_pl_judge_other_sessions(f);
	judge_grants(f);
	judge_alert(f);
}

/* Outcome: what the layer applies (audit mode allows all but the
 * harness's own protection), its errno, and the path it acts on. */
static void outcome(struct flow *f, struct hx_outcome *out, char *decided,
		    size_t dlen)
{
	const struct vpath *p1 = &f->p1;

	out->verdict = f->d.verdict;
	out->rule = f->d.rule;
	out->reply =
	    f->pl->mode == HX_MODE_AUDIT && !hx_pl_protects_harness(f->d.rule)
		? HX_VERDICT_ALLOW
		: f->d.verdict;
	out->err = out->reply == HX_VERDICT_ALLOW ? 0 : EACCES;
	/* The policy line a refusal's notice names: the rule's, unless a
	 * judge of the harness's own (harness:*) decided instead. */
	out->origin =
	    out->err && strncmp(f->d.rule, "harness:", 8) ? f->d.origin : NULL;
	out->tell =
	    out->err && may_tell(f->pl, f->rq, p1, &f->p2, &f->pu, f->is_unix);
	if (out->err && f->refused) {
		out->err = ECONNREFUSED;
		out->tell = true; /* no refusal notice: nothing is there */
	}
	out->sock_dev = f->sock_dev;
	out->sock_ino = f->sock_ino;
	out->fresh = f->fresh;
	out->git_copy = f->git_copy;
	out->agent_copy = f->agent_copy;
	out->seq = 0;
	if (decided && dlen && f->is_unix)
		snprintf(decided, dlen, "%s",
			 !f->un_len	    ? ""
			 : f->unix_resolved ? f->pu.resolved
					    : f->pu.norm);
	else if (decided && dlen)
		snprintf(decided, dlen, "%s",
			 p1->has_resolved ? p1->resolved
			 : p1->ok	  ? p1->norm
					  : "");
}

/* Correlate: true when the shim asked for this thread and call just
 * before with the same verdict; its record then stands for both layers
 * (out->seq is it). Else notes a bypass and whether the kernel layer
 * sees this request next. */
static bool correlate(struct flow *f, struct hx_outcome *out)
{
	struct hx_pipeline *pl = f->pl;
	const struct hx_request *rq = f->rq;

	if (!pl->kern)
		return false;
	f->key = out->key = hx_pl_call_key(f);
	if (f->kernel) {
		f->match = hx_correlate_claim(pl, f->peer, (int)rq->op, f->key,
					      f->d.verdict, &out->seq);
		/* An ask claimed by the shim and seen again here asks
		 * again: the shim's question was not answered for it. */
		if (f->match == HX_CORR_AGREES &&
		    f->d.verdict != HX_VERDICT_ASK &&
		    !hx_pl_argv_past_request(rq))
			return true;
		/* A call the shim does not interpose (HX_CALL_CHMOD and
		 * after) reaches only the kernel layer: no bypass. Nor is
		 * a read: the shim allows most reads by itself. */
		f->bypass = f->match == HX_CORR_NONE &&
			    rq->call < HX_CALL_CHMOD && rq->op != HX_OP_READ &&
			    !hx_pl_foreign_family(rq) && f->peer->exe &&
			    hx_correlate_has_shim(pl, f->peer);
	}
	/* A shim request the kernel layer will see next, if allowed. */
	f->both = !f->kernel && !strcmp(f->layer, "shim") &&
		  out->reply == HX_VERDICT_ALLOW &&
		  hx_correlate_kernel_sees(pl, rq);
	return false;
}

/* Append: what cannot be audited does not happen (fail closed, in
 * audit mode too); a kernel refusal's notice; the shim's claim kept
 * for the kernel layer's view of the same call. */
static void append(struct flow *f, json_t *rec, struct hx_outcome *out)
{
	bool co = false;

	if (hx_record_append_event(f->pl, rec, &out->seq, &co)) {
		out->reply = HX_VERDICT_DENY;
		out->err = EACCES;
		out->tell = false;
		out->rule = "harness:audit-failed";
	}
	out->notice[0] = '\0';
	if (f->kernel && out->reply != HX_VERDICT_ALLOW)
		hx_pl_kernel_notice(f, out);
	if (!f->kernel && f->pl->kern && (out->seq || co) &&
	    !strcmp(f->layer, "shim"))
		hx_correlate_put(
		    f->pl, f->peer,
		    hx_correlate_op((int)f->rq->op, hx_pl_is_spawn(f->rq)),
		    f->key, f->d.verdict, out->seq, f->both);
}

static void decide(struct hx_pipeline *pl, const struct hx_peer *peer,
		   const struct hx_request *rq, const char *layer, bool kernel,
		   struct hx_outcome *out, char *decided, size_t dlen)
{
	/* Large (three paths): each stage fills what it uses, so it is
	 * not zeroed whole. */
	struct flow f;
	json_t *rec;

	f.pl = pl;
	f.peer = peer;
	f.rq = rq;
	f.layer = layer;
	f.kernel = kernel;
	clock_gettime(CLOCK_MONOTONIC, &f.t0);
	clock_gettime(CLOCK_REALTIME, &f.wall);
	f.ev = (struct hx_event){0};
	f.un_len = f.res_len = 0;
	f.is_unix = f.unix_resolved = f.has_addr = false;
	f.nnames = 0;
	f.resolved_won = f.by_inode = f.bypass = f.both = false;
	f.key = (struct hx_corr_key){{0, 0}};
	f.match = HX_CORR_NONE;
	f.ask_id = 0;
	f.grant[0] = '\0';

	validate_paths(&f);
	hx_pl_validate_env(&f);
	validate_addr(&f);
	judge(&f);
	outcome(&f, out, decided, dlen);
	if (correlate(&f, out)) {
		if (rq->interp) /* the shim's record could not say it */
			hx_pl_record_interp(&f, out->seq);
		hx_envdiff_free(&f.env);
		return;
	}
	pl->events++;
	if ((unsigned)f.d.verdict < 3)
		pl->verdicts[f.d.verdict]++;
	/* An ask waits for a person, in the layers that can wait. */
	out->ask = 0;
	f.ask_id = out->reply == HX_VERDICT_ASK && pl->ask && !rq->report &&
			   (kernel || !strcmp(layer, "shim"))
		       ? hx_ask_open(pl->ask, &f.subj)
		       : 0;
	rec = hx_pl_record(&f);
	append(&f, rec, out);
	json_decref(rec);
	if (f.ask_id && out->reply == HX_VERDICT_ASK) {
		hx_ask_recorded(pl->ask, f.ask_id, out->seq);
		out->ask = f.ask_id;
	} else if (f.ask_id) {
		hx_ask_drop(pl->ask, f.ask_id); /* not recorded: refused */
	}
	hx_envdiff_free(&f.env);
}

void hx_pipeline_decide(struct hx_pipeline *pl, const struct hx_peer *peer,
			const struct hx_request *rq, const char *layer,
			struct hx_outcome *out)
{
	struct hx_loader_prog lp;
	struct hx_request lrq;

	/* "ld.so PROGRAM": decided as the exec of PROGRAM (the kernel
	 * layer does this itself, on the image after #!: unotify_exec.c). */
	if (rq->op == HX_OP_EXEC && !rq->loader && !peer->gone &&
	    hx_loader_resolve(peer->pid, peer->tid, rq->path, rq->argv,
			      rq->argc, &lp) > 0) {
		lrq = *rq;
		lrq.loader = rq->path;
		lrq.path = lp.path;
		lrq.argv = lp.argv;
		lrq.argc = lp.argc;
		lrq.loader_opts = lp.opts;
		lrq.loader_nopts = lp.nopts;
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
