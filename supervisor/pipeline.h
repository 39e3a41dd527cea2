/* The decision pipeline (DESIGN.md section 4): the one function every
 * layer calls (the shim server now, the seccomp notifier next) to turn a
 * request into a decision and an audit record.
 *
 * validate (normalize paths, resolve symlinks) -> classify -> policy ->
 * mode -> audit. The pipeline borrows the policy, the audit log and the
 * dnsmap; it owns nothing. One pipeline may be shared by several threads
 * only if the caller serializes calls (its counters are plain). */
#ifndef HX_PIPELINE_H
#define HX_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "../policy/types.h"
#include "../shim/wire.h"

struct hx_policy;
struct hx_audit;
struct hx_dnsmap;
struct hx_msg;
struct json_t;

/* Who made the request, as the kernel says (never as the message says). */
struct hx_peer {
	pid_t pid; /* SO_PEERCRED / SCM_CREDENTIALS */
	uid_t uid;
	pid_t ppid;	   /* 0: unknown */
	pid_t tid;	   /* verified in /proc/<pid>/task, or 0 */
	pid_t claimed_pid; /* what the message said; 0: nothing */
	const char *exe;   /* readlink /proc/<pid>/exe, or NULL */
};

/* A request from any layer; pointers are borrowed for the call. */
struct hx_request {
	uint32_t call; /* enum hx_call */
	enum hx_op op;
	const char *path, *path2;
	bool has_flags, has_mode, has_result;
	uint32_t flags, mode, result;
	const char *const *argv;
	size_t argc;
	bool truncated;
	/* exec: the dynamic loader that runs path (path and argv are then
	 * the program's, loader.h); NULL: none, or not looked at yet */
	const char *loader;
	const void *addr; /* sockaddr for connect/send */
	size_t addrlen;
	bool has_proto; /* proto: the socket's SO_PROTOCOL (netlink's) */
	int proto;
	const char *host;
	const char *const *frames;
	size_t nframes;
	/* rename: whether it moves a directory (what is beneath moves
	 * too), when the caller has looked; else the pipeline looks */
	bool tree_known, moves_tree;
};

/* Pointer arrays a decoded message's strings are lent through. */
struct hx_request_storage {
	const char *argv[HX_WIRE_MAX_ARGS];
	const char *frames[HX_WIRE_MAX_FRAMES];
};

/* Fills rq from a decoded REQUEST or REPORT (pointers into m and st). */
void hx_request_from_msg(const struct hx_msg *m, struct hx_request *rq,
			 struct hx_request_storage *st);

struct hx_pl_coalesce;

/* A file of the harness known by inode (the audit log): a hard link or
 * another mount reaches it by a path no glob names. */
struct hx_protect_ino {
	dev_t dev;
	ino_t ino;
};
#define HX_PROTECT_INO_MAX 4

struct hx_pipeline {
	const struct hx_policy *policy;
	struct hx_audit *audit;
	struct hx_dnsmap *dns; /* may be NULL */
	const char *session;
	enum hx_mode mode;
	/* counters, by the policy's verdict */
	uint64_t events, verdicts[3], audit_errors;
	/* Called with each record once appended (and its seq), e.g. by the
	 * worktree layer for provenance; NULL: none. rec is borrowed. */
	void (*observe)(void *arg, struct json_t *rec, uint64_t seq);
	void *observe_arg;
	/* The kernel layer's state (recent shim decisions per thread, the
	 * processes that said HELLO); NULL until hx_pipeline_kernel_enable. */
	struct hx_pl_kernel *kern;
	/* The log's quota for this session (hx_policy_audit_quota; zeros:
	 * unlimited) and the records coalesced under it (NULL until one
	 * is). */
	uint64_t quota_rate, quota_burst, quota_max_size;
	struct hx_pl_coalesce *co;
	struct hx_protect_ino protect_ino[HX_PROTECT_INO_MAX];
	size_t nprotect_ino;
	/* -errno once the log could not take a record (a full disk, its
	 * size quota): every later request is denied, in audit mode too,
	 * and the session ends (run.c); failed_why says why, for people. */
	int failed;
	const char *failed_why;
};

struct hx_outcome {
	enum hx_verdict verdict; /* what the policy said */
	enum hx_verdict reply;	 /* what to apply (ALLOW in audit mode) */
	int err;		 /* errno for a denied call, else 0 */
	/* Denied, and every path it names may be read by the policy: the
	 * layer that acts answers what the kernel would (hx_kerrno, e.g.
	 * EEXIST for mkdir of an existing directory) instead of err. */
	bool tell;
	const char *rule; /* static or owned by the policy */
	uint64_t seq;	  /* audit record, 0 when it was not written */
	/* A unix socket's path: the socket file judged (sock_ino 0: none
	 * was there). What the kernel layer connects must be that one. */
	dev_t sock_dev;
	ino_t sock_ino;
	/* A write of a /dev/shm path where no file was: what the call
	 * makes is the session's (hx_pipeline_own). */
	bool fresh;
	/* A kernel-layer refusal's notice, when tell left it unprinted:
	 * hx_pipeline_notice prints it if the answer stays EACCES/EPERM. */
	char notice[512];
};

/* Prints o's pending notice on harness-exec's stderr (a program without
 * the shim gets no line of its own), unless err is an answer that is
 * no refusal (EEXIST for mkdir -p). */
void hx_pipeline_notice(const struct hx_outcome *o, int err);

/* Decides rq for peer and writes its audit record (layer: "shim",
 * "kernel", "shim+kernel"). Never fails: an unwritable audit log makes
 * the reply a denial in enforce mode (fail closed). */
void hx_pipeline_decide(struct hx_pipeline *pl, const struct hx_peer *peer,
			const struct hx_request *rq, const char *layer,
			struct hx_outcome *out);

/* Starts remembering shim decisions and HELLOs for the kernel layer.
 * Returns 0 or -ENOMEM. hx_pipeline_kernel_free undoes it. */
int hx_pipeline_kernel_enable(struct hx_pipeline *pl);
void hx_pipeline_kernel_free(struct hx_pipeline *pl);

/* Which calls beyond the fixed notify list the kernel layer sees:
 * execs (the exec gate is on), read-only opens (--trace-reads). A shim
 * request of a kind the kernel sees next is logged "shim+kernel". */
void hx_pipeline_kernel_sees(struct hx_pipeline *pl, bool exec, bool reads);

/* Writes a kernel_unconfirmed record (ref_seq: the shim's record) for
 * each "shim+kernel" event the kernel layer has not seen within the
 * window, or for all of them when all is true (the session's end). */
void hx_pipeline_tick(struct hx_pipeline *pl, bool all);

/* The kernel layer's entry (supervisor/unotify*.c), on the same thread
 * as every other call. Always decides afresh (the file system may have
 * changed since the shim asked). When the shim announced the same
 * event for the same thread within a short window and the verdict
 * agrees, no second record is written (out->seq is the shim's record);
 * otherwise the record has layer "kernel", plus "shim_bypass": true
 * when the process said HELLO with its current image. decided (dlen
 * bytes, may be NULL) gets the path the verdict was made on: the
 * symlink-resolved form, /proc/<pid> written /proc/self. */
void hx_pipeline_decide_kernel(struct hx_pipeline *pl,
			       const struct hx_peer *peer,
			       const struct hx_request *rq,
			       struct hx_outcome *out, char *decided,
			       size_t dlen);

/* A new record with the common leading fields (time, session, pid, ppid,
 * tid, exe, event). peer NULL means harness itself. The caller owns it. */
struct json_t *hx_pipeline_record(const struct hx_pipeline *pl,
				  const struct hx_peer *peer, const char *event,
				  const struct timespec *when);

/* Appends a record (see hx_audit_append) and counts failures. */
int hx_pipeline_append(struct hx_pipeline *pl, struct json_t *rec,
		       uint64_t *seq);

/* hx_pipeline_append for a record an agent can cause (a decision, a
 * process_start, a protocol error): beyond the quota's rate it is not
 * written but counted (*coalesced true, *seq 0) into the next
 * audit_overflow record, which hx_pipeline_tick writes; past the
 * quota's size the session fails (hx_pipeline_fail). coalesced may be
 * NULL. */
int hx_pipeline_append_event(struct hx_pipeline *pl, struct json_t *rec,
			     uint64_t *seq, bool *coalesced);

/* The log can take no more (err -errno, why for people): records
 * audit_failed with what is coalesced, using the space the log keeps
 * for its last records, and marks the pipeline failed. Idempotent. */
void hx_pipeline_fail(struct hx_pipeline *pl, int err, const char *why);

/* Remembers a unix socket a process of the session bound or a file it
 * made in /dev/shm (the kernel layer's bind and open): name in the
 * directory dirfd, or dirfd itself when name is "". Its connects and
 * writes are no neighbour's (harness:neighbour). From any thread;
 * nothing without the kernel layer. */
void hx_pipeline_own(struct hx_pipeline *pl, int dirfd, const char *name);

/* Protects the file open as fd by inode too (harness:protect). Returns
 * 0, -ENOSPC or -errno of fstat. */
int hx_pipeline_protect_fd(struct hx_pipeline *pl, int fd);

/* s as a JSON string; s not UTF-8 is escaped (hx_fmt_escape_bytes) and
 * field, the dotted name of where it goes ("args.argv"), is added once
 * to rec's "escaped" list (rec may be NULL). Never drops s. */
struct json_t *hx_json_text(struct json_t *rec, const char *field,
			    const char *s);

#endif
