/* The key by which the shim's and the kernel layer's views of one call
 * are matched (correlate.h), and a person's answer "once" is held to the
 * call shown (ask.h); see pipeline_int.h. */
#define _GNU_SOURCE
#include "supervisor/pipeline_int.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/wire.h"
#include "supervisor/correlate.h"
#include "supervisor/sha256.h"

/* A call whose flags are open(2)'s (the others' are AT_ ones). */
bool hx_pl_is_open(unsigned call)
{
	return call == HX_CALL_OPEN || call == HX_CALL_OPENAT ||
	       call == HX_CALL_CREAT || call == HX_CALL_FOPEN ||
	       call == HX_CALL_FREOPEN || call == HX_CALL_SYSCALL;
}

bool hx_pl_is_spawn(const struct hx_request *rq)
{
	return rq->op == HX_OP_EXEC &&
	       (rq->call == HX_CALL_POSIX_SPAWN ||
		rq->call == HX_CALL_POSIX_SPAWNP ||
		rq->call == HX_CALL_SYSTEM || rq->call == HX_CALL_POPEN);
}

/* Whether an exec's argv is more than a shim request carries (it cuts
 * at HX_WIRE_MAX_ARGS strings or a full message): the shim's record
 * then holds part of it, and the kernel layer's its whole. */
bool hx_pl_argv_past_request(const struct hx_request *rq)
{
	size_t bytes = 0;

	if (rq->op != HX_OP_EXEC || rq->argc > HX_WIRE_MAX_ARGS)
		return rq->op == HX_OP_EXEC;
	for (size_t i = 0; i < rq->argc; i++)
		bytes += strlen(rq->argv[i]) + 1;
	return bytes > HX_WIRE_MAX / 2;
}

/* The open(2) flags that change what an open does (not O_CLOEXEC,
 * O_NONBLOCK...: a libc may add those). */
#define OPEN_EFFECT                                                            \
	(O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_APPEND | O_NOFOLLOW |      \
	 O_DIRECTORY | __O_TMPFILE)

/* The form of a path a layer decided on and acts on: as resolved when
 * that differs from the name (the kernel layer hands a rename's or
 * link's second path over resolved, the shim as named: keyed as named,
 * each such call through a linked directory was two records, the
 * kernel layer's marked a bypass), else as named; NULL for none. */
static const char *decided_form(const struct vpath *v)
{
	return !v->ok ? NULL : v->has_resolved ? v->resolved : v->norm;
}

/* What f's record shows of its call besides its object and argv, as
 * both layers read it: which call (one the shim never makes, a chmod or
 * a chown, is its own kind), the second path (a symlink's text as
 * given), the flags that change what is done, the mode of what is
 * made, a socket's protocol. A claim that matched the kernel layer's
 * view by its path alone stood for whatever call was made on that
 * path with that op: a symlink to ~/.ssh/id_rsa recorded as one to
 * README, a rename to c as one to b, a chmod 0777 or an O_TRUNC as an
 * open for append (the fifteenth attack review). */
static void call_detail(const struct flow *f, char *buf, size_t len)
{
	const struct hx_request *rq = f->rq;
	bool own = rq->call >= HX_CALL_CHMOD,
	     open = !own && hx_pl_is_open(rq->call);
	uint32_t flags = rq->has_flags ? rq->flags : 0, mode = 0;
	/* An exec's cwd, which its record shows and its relative names
	 * mean what they name from: a thread moved it between the shim's
	 * request and the kernel layer's sight of the exec, and the one
	 * record of both said the shim's. */
	const char *p2 = rq->op == HX_OP_SYMLINK ? rq->path2
			 : rq->op == HX_OP_EXEC	 ? f->ev.cwd
						 : decided_form(&f->p2);
	char env[65] = "";

	if (own)
		; /* all of it: no shim request is of these */
	else if (open)
		flags &= OPEN_EFFECT;
	else if (rq->op == HX_OP_RENAME)
		flags &= RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT;
	else if (rq->op == HX_OP_LINK)
		flags &= AT_SYMLINK_FOLLOW | AT_EMPTY_PATH;
	else
		flags = 0;
	if (rq->has_mode && (own || rq->op == HX_OP_MKDIR ||
			     (open && ((flags & O_CREAT) ||
				       (flags & __O_TMPFILE) == __O_TMPFILE))))
		mode = own ? rq->mode : rq->mode & 07777;

	/* An exec's environment where it is not the session's: the shim's
	 * claim of one stands for no exec in another. */
	if (rq->op == HX_OP_EXEC && f->env_unread)
		snprintf(env, sizeof(env), "?");
	else if (rq->op == HX_OP_EXEC && f->env.len)
		hx_sha256_hex(f->env.p, f->env.len, env);
	snprintf(buf, len, "%u %x %o %d %s %s", own ? rq->call : 0, flags, mode,
		 f->has_addr && rq->has_proto && rq->proto > 0 ? rq->proto : 0,
		 env, p2 ? p2 : "");
}

/* The key both layers know f's call by (correlate.h): its address or
 * its path as named; an exec's argv too when a request carries all of
 * it, and whether it does: the shim's record stands for the kernel
 * layer's only when it names the argv the kernel runs (a claim of one
 * argv and the exec of another, or a swap by another thread after the
 * shim asked, leaves the kernel layer's record of what ran). */
struct hx_corr_key hx_pl_call_key(const struct flow *f)
{
	const struct hx_request *rq = f->rq;
	bool argv = rq->op == HX_OP_EXEC && !rq->truncated &&
		    !hx_pl_argv_past_request(rq);
	/* Its own, the second path and two resolved forms. */
	char detail[3 * PATH_MAX + 64];
	size_t n;

	call_detail(f, detail, sizeof(detail));
	/* What each layer decided on and acts on: the names as resolved
	 * when each looked. A symlink on the way re-pointed by a thread
	 * between the shim's request and the kernel layer's sight left
	 * one record naming the shim's file for the one the kernel layer
	 * opened (a file made in dB recorded as made in dA: twenty-eighth
	 * attack review, part c). */
	n = strlen(detail);
	snprintf(detail + n, sizeof(detail) - n, "\n%s\n%s",
		 f->p1.ok && f->p1.has_resolved ? f->p1.resolved : "",
		 f->unix_resolved ? f->pu.resolved : "");
	/* Whether the argv is in the key: an argv a request says it cut
	 * (or could not carry) is no argv of none, which the kernel layer
	 * reads of an execve with an empty one ("sh -c innocent" claimed
	 * cut, then "sh" with no argv, reading its commands from stdin:
	 * the fifteenth attack review). */
	n = strlen(detail);
	if (rq->op == HX_OP_EXEC && n + 8 < sizeof(detail))
		memcpy(detail + n, argv ? " argv" : " cut", argv ? 6 : 5);
	return hx_correlate_key(f->has_addr ? f->addr
				: f->p1.ok  ? f->p1.norm
					    : "",
				detail, argv ? rq->argv : NULL,
				argv ? rq->argc : 0);
}
