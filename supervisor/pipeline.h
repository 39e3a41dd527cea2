/* The decision pipeline (DESIGN.md section 4): the one function every
 * layer calls (the shim's server, the user-notify workers, the exec
 * gate) to turn a request into a decision and an audit record, in named
 * stages (pipeline.c): validate (normalize paths, resolve symlinks as
 * the agent would) -> judge (policy, resolved forms, the harness's own
 * files by inode) -> classify -> outcome (mode, errno) -> correlate
 * (the shim's and the kernel's views, correlate.h) -> record (record.h). The
 * pipeline borrows the policy, the audit log and the dnsmap; it owns nothing.
 * One pipeline may be shared by several threads only if the caller serializes
 * calls (its counters are plain). */
#ifndef HX_PIPELINE_H
#define HX_PIPELINE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "supervisor/corrkey.h"

#include "common/sockaddr.h"
#include "common/types.h"

/* The .gitignore files a session's end looks at, at most. */
#define HX_PL_GITIGNORES 16

struct hx_policy;
struct hx_audit;
struct hx_dnsmap;
struct json_t;
struct stat;

/* Who made the request, as the kernel says (never as the message says). */
struct hx_peer {
	pid_t pid; /* SO_PEERCRED / SCM_CREDENTIALS */
	uid_t uid;
	pid_t ppid;	   /* 0: unknown */
	pid_t tid;	   /* verified in /proc/<pid>/task, or 0 */
	pid_t claimed_pid; /* what the message said; 0: nothing */
	const char *exe;   /* readlink /proc/<pid>/exe, or NULL */
	/* true: its root is ours, read when its process was first seen
	 * (the kernel layer's who-is-who, the shim's connection: the
	 * agent's tree cannot chroot, seccomp_deny.c), so its paths do not
	 * read /proc/<pid>/root again; false: read at each path */
	bool root_ours;
	/* true: reaped before its message was read (the shim's, pinned by
	 * SCM_PIDFD), so its number may be another process's: nothing is
	 * read of it by that number (cwd, root, fds), paths are ours */
	bool gone;
	/* true: it had exited (a zombie, or gone) before its message was
	 * read: a claim it makes stands for no call (correlate.h) */
	bool exited;
};

/* A request from any layer; pointers are borrowed for the call. */
struct hx_request {
	uint32_t call; /* enum hx_call */
	enum hx_op op;
	const char *path, *path2;
	bool has_flags, has_mode, has_result;
	uint32_t flags, mode, result;
	/* a metadata change's effect, for its record: the extended
	 * attribute set or removed (an ACL, a capability...), the owner
	 * given (-1: kept), as the agent named them */
	const char *xattr;
	bool has_owner;
	long long uid, gid;
	const char *const *argv;
	size_t argc;
	bool truncated;
	/* exec: the dynamic loader that runs path (path and argv are then
	 * the program's, loader.h); NULL: none, or not looked at yet */
	const char *loader;
	/* exec: the loader's own words before the program (--preload LIB,
	 * --audit LIB, --library-path DIR...): they put code of the
	 * caller's choosing into the program, as LD_PRELOAD does, so they
	 * are part of its call as its environment is (validate_env) */
	const char *const *loader_opts;
	size_t loader_nopts;
	/* exec of a #! script: the program the kernel runs (its
	 * interpreter, through each #! of a chain) and the argv it gets,
	 * for the record: the script's path and argv do not say it */
	const char *interp;
	const char *const *interp_argv;
	size_t interp_argc;
	/* exec: the file the kernel layer lets run, as it opened it (the
	 * exec gate holds the exec to it); NULL: the pipeline stats path */
	const struct stat *image;
	/* exec: the calling thread's cwd as the kernel layer read it, which
	 * the exec gate holds the new image to; NULL: the pipeline reads it */
	const char *cwd;
	/* exec: the environment it runs with (envc strings), as the kernel
	 * layer read it or the shim's caller passes it; env_unread: the
	 * shim's could not be read (then none is known: no answer "once"
	 * stands for the kernel layer's sight of it) */
	const char *const *envp;
	size_t envc;
	bool env_unread;
	/* a metadata change through an fd: what the fd's file is (enum
	 * hx_device_kind of the file the kernel layer will act on; 0: no
	 * device) */
	unsigned char device;
	const void *addr; /* sockaddr for connect/send */
	size_t addrlen;
	bool has_proto; /* proto: the socket's SO_PROTOCOL (netlink's) */
	int proto;
	const char *host;
	/* a DNS question the supervisor answered (unotify_dns.c): its
	 * type ("A"), the upstream's response code ("NOERROR"), the
	 * addresses it gave */
	const char *dns_type, *dns_rcode;
	const char *const *answers;
	size_t nanswers;
	uint32_t dns_ttl; /* the answers' least TTL, seconds */
	/* a connect or send to port 53 that reaches the supervisor's own
	 * resolver, not its address (unotify_dns.c) */
	bool sealed;
	const char *const *frames;
	size_t nframes;
	/* the shim reports a call it made: nobody waits for a verdict, so
	 * an ask is recorded, never put to a person */
	bool report;
	/* rename: whether it moves a directory (what is beneath moves
	 * too), when the caller has looked; else the pipeline looks */
	bool tree_known, moves_tree;
};

struct hx_pl_coalesce;
struct hx_owned;
struct hx_ipool;
struct hx_devbound;
struct hx_endpoints;
struct hx_ask;
struct hx_metrics;
struct hx_alerts;
struct hx_pidset;

/* A file of the harness known by inode (the audit log): a hard link or
 * another mount reaches it by a path no glob names. */
struct hx_protect_ino {
	dev_t dev;
	ino_t ino;
};
#define HX_PROTECT_INO_MAX 4
#define HX_PROTECT_WAY_MAX 64
#define HX_PROTECT_EP_MAX  2

struct hx_redact;
struct hx_envbase;

struct hx_pipeline {
	const struct hx_policy *policy;
	struct hx_audit *audit;
	struct hx_dnsmap *dns; /* may be NULL */
	/* The supervisor answers the agent's DNS (unotify_dns.c): the shim
	 * judges no lookup (HX_HELLO_DNS_SEALED). */
	bool dns_sealed;
	const char *session;
	/* When the session began (wall clock): what is older is not the
	 * agent's (gitobj.h). */
	struct timespec started;
	/* A git index (a file "index" beneath a .git: the project's, a
	 * submodule's, an embedded repository's) was written, renamed in
	 * or linked, allowed: the end's check of hidden changes is made. */
	bool git_index_written;
	/* The .gitignore files written, renamed in or linked (allowed), for
	 * the same check: one that ignores itself hides the new files
	 * beneath it from git status. Past HX_PL_GITIGNORES, not kept. */
	char gitignores[HX_PL_GITIGNORES][PATH_MAX];
	size_t ngitignores;
	enum hx_mode mode;
	/* counters, by the policy's verdict */
	uint64_t events, verdicts[3], audit_errors;
	/* Called with each record once appended (and its seq), e.g. by the
	 * worktree layer for provenance; NULL: none. rec is borrowed. */
	void (*observe)(void *arg, struct json_t *rec, uint64_t seq);
	void *observe_arg;
	/* What each record counts in (metrics.h); NULL: no metrics. */
	struct hx_metrics *metrics;
	/* The policy's alerts (alerts.h), and what feeds them each record,
	 * appended or coalesced (hx_alerts_record); NULL: none. */
	struct hx_alerts *alerts;
	void (*watch)(struct hx_pipeline *pl, struct json_t *rec);
	/* harness-mcp (mcp/front.h): the tool call whose work process pid
	 * is, written into each of its records as "call_id"; NULL: no
	 * tool calls. Called holding the loop's lock. */
	const char *(*call_of)(void *arg, pid_t pid);
	void *call_arg;
	/* The processes with a record, whose exit the exec gate records
	 * (pidset.h); NULL: none. */
	struct hx_pidset *recorded;
	/* The kernel layer's state (recent shim decisions per thread, the
	 * processes that said HELLO); NULL until hx_correlate_enable. */
	struct hx_pl_kernel *kern;
	/* The session's own sockets and /dev/shm files (owned.h); NULL
	 * without the kernel layer, which sees them made. */
	struct hx_owned *owned;
	/* Loopback by owner (loopback.h, rules harness:own-listener and
	 * harness:model-endpoint): whether the agent's tree holds socket
	 * inodes (the kernel layer's, set while it serves; NULL: no port
	 * is the session's own), and the model endpoints the agent's
	 * environment names (NULL: none). */
	bool (*tree_holds)(void *arg, pid_t self, const unsigned long *inos,
			   size_t n);
	void *tree_arg;
	const struct hx_endpoints *endpoints;
	/* The session's environment (envdiff.h), which an exec's is told
	 * from; NULL: none known (no difference is seen). */
	const struct hx_envbase *envbase;
	/* The log's quota for this session (hx_policy_audit_quota; zeros:
	 * unlimited) and the records coalesced under it (NULL until one
	 * is). */
	uint64_t quota_rate, quota_burst, quota_max_size;
	/* The session's redactor (hx_record_redact owns it), for text
	 * written elsewhere than through record.c: the worktree's result
	 * commit, in libharness-git.so. NULL: none. */
	const struct hx_redact *redact;
	struct hx_pl_coalesce *co;
	struct hx_protect_ino protect_ino[HX_PROTECT_INO_MAX];
	size_t nprotect_ino;
	/* The directories and symlinks a protected name is reached
	 * through (hx_pipeline_protect_way) */
	struct hx_protect_ino protect_way[HX_PROTECT_WAY_MAX];
	size_t nprotect_way;
	/* The harness's loopback endpoints (--metrics): harness:protect */
	struct hx_ipaddr protect_ep[HX_PROTECT_EP_MAX];
	size_t nprotect_ep;
	/* The project and its worktree (gitconf.h's in_project); NULL or
	 * "": none. */
	const char *git_roots[2];
	/* The worktree's root (--worktree; NULL: none). It lives beneath
	 * the project's .git, but it is a working tree: git's names are
	 * looked for in the part of a path beneath it (hx_pl_in_git). */
	const char *worktree;
	/* Symlinks may be made in it: its checkpoints' walks are confined
	 * (supervisor/kernel/confine.h). Else none, as beneath any .git. */
	bool worktree_links;
	/* Claude Code's ~/.claude.json, absolute and resolved (agentconf.h,
	 * rule harness:agent-config); NULL: none. */
	const char *agent_conf;
	/* The session's TMPDIR, removed at its end: a hooks directory there
	 * is the agent's (moved out, it is walked); NULL: none. */
	const char *git_tmp;
	/* The objects directory of the repository the session was started
	 * in (the worktree's common dir's): the agent adds loose objects
	 * there only (gitobj.h, hx_gitobj_defines); NULL: none. */
	const char *git_objects;
	/* The agent made or moved a file in git_objects (a loose object):
	 * they are read with their hashes checked at the end (objfix.h). */
	bool git_objects_written;
	/* The objects directories of other git dirs (a nested repository's,
	 * a submodule's) where the agent made or moved in a loose object:
	 * swept at the end as git_objects is. An object planted there under
	 * the id of a file the user would add (the empty blob) gave the
	 * user's later commit of it the agent's bytes (pipeline_git.c). */
/* A test suite's repositories count too (pytest's tmp_path, Go's
 * t.TempDir: one a test, in the session's TMPDIR), and a write past
 * them is refused: room for many, an O_PATH fd each. */
#define HX_PL_NESTED_OBJS 1024
	char *nested_objs[HX_PL_NESTED_OBJS];
	/* An O_PATH fd of each: the store is swept where it is at the end,
	 * moved or not (a repository made by the agent and moved in place
	 * of the user's). */
	int nested_fds[HX_PL_NESTED_OBJS];
	size_t n_nested_objs;
	/* The state dir, whose live/ names the files of every running
	 * session (session.h); NULL: none. The cache of them, made on
	 * the first write judged (pipeline_sessions.c). */
	const char *state_dir;
	struct hx_pl_others *others;
	/* The second mounts' pairs (mountalias.h: from, literal; to, a
	 * glob's escape): another session's file is its other name too. */
	const char *const *alias_from, *const *alias_to;
	size_t nalias;
	/* The git objects the agent made (pipeline_git.c), NULL until one. */
	struct hx_pl_objset *objs;
	/* Files granted for reading that the kernel layer's creations in
	 * the directories Landlock carves link in (ipool.h); NULL: none. */
	struct hx_ipool *pool;
	/* Reopens the devices the kernel layer opens for the agent within
	 * its Landlock rules (devbound.h); NULL: Landlock bounds no device
	 * ioctl. */
	struct hx_devbound *devbound;
	/* The session's questions and grants (ask.h); NULL: an ask is
	 * refused at once. */
	struct hx_ask *ask;
	/* While a question holds harness-exec's terminal (askterm.h): its
	 * device, which no process of the agent may open for writing then
	 * (rule harness:question-up); 0: none. */
	dev_t held_tty;
	/* The agent's root in its own mount namespace, opened once its
	 * first process is in it (none may unshare, setns or chroot: every
	 * process of the session has it), so that a judge sees a path as
	 * the agent does without a /proc lookup a call (pipeline_device.c) */
	bool has_view_root;
	int view_root;
	/* -errno once the log could not take a record (a full disk, its
	 * size quota): every later request is denied, in audit mode too,
	 * and the session ends (run.c); failed_why says why, for people. */
	int failed;
	const char *failed_why;
};

struct hx_outcome {
	enum hx_verdict verdict; /* what the policy said */
	enum hx_verdict reply;	 /* what to apply (ALLOW in audit mode) */
	/* reply ASK: question ask waits for a person (ask.h); the layer
	 * waits for it (hx_ask_wait, hx_ask_defer) and applies its answer.
	 * Every layer that does not refuses (reply is not ALLOW). */
	unsigned ask;
	int err; /* errno for a denied call, else 0 */
	/* Denied, and every path it names may be read by the policy: the
	 * layer that acts answers what the kernel would (hx_kerrno, e.g.
	 * EEXIST for mkdir of an existing directory) instead of err. */
	bool tell;
	const char *rule;	/* static or owned by the policy */
	const char *origin;	/* a refusal's rule's file:line, or NULL */
	uint64_t seq;		/* audit record, 0 when it was not written */
	struct hx_corr_key key; /* the call's (correlate.h), kernel layer */
	/* A unix socket's path: the socket file judged (sock_ino 0: none
	 * was there). What the kernel layer connects must be that one. */
	dev_t sock_dev;
	ino_t sock_ino;
	/* A write of a /dev/shm path where no file was: what the call
	 * makes is the session's (hx_pipeline_own). */
	bool fresh;
	/* A rename onto a git configuration whose bytes name no code
	 * (gitconf.h): the layer that acts installs a copy of the bytes it
	 * checks again, never the source's inode, which an fd or another
	 * name of the agent's could still write. */
	bool git_copy;
	/* The same for an agent's configuration (agentconf.h): the copy
	 * holds the servers the file held. */
	bool agent_copy;
	/* A kernel-layer refusal's notice, when tell left it unprinted:
	 * hx_pipeline_notice prints it if the answer stays EACCES/EPERM. */
	char notice[512];
};

/* Prints o's pending notice on harness-exec's stderr (a program without
 * the shim gets no line of its own), unless err is an answer that is
 * no refusal (EEXIST for mkdir -p). */
void hx_pipeline_notice(const struct hx_outcome *o, int err);

struct stat;
/* What st, seen by pid's process, is (pipeline_device.c): no device, a
 * pty of the session's own devpts (the agent's), a terminal of the
 * host's devpts, or another device node of the host's. pid 0: ours. */
enum hx_device_kind {
	HX_DEV_NONE,
	HX_DEV_OWN_PTY,
	HX_DEV_TERMINAL,
	HX_DEV_HOST,
};
enum hx_device_kind hx_pipeline_device_kind(pid_t pid, const struct stat *st);
/* pl's view_root, from the session's first process once it is in its
 * sandbox. */
void hx_pipeline_view_root(struct hx_pipeline *pl, pid_t child);

/* Decides rq for peer and writes its audit record (layer: "shim",
 * "kernel", "shim+kernel"). Never fails: an unwritable audit log makes
 * the reply a denial in enforce mode (fail closed). */
void hx_pipeline_decide(struct hx_pipeline *pl, const struct hx_peer *peer,
			const struct hx_request *rq, const char *layer,
			struct hx_outcome *out);

/* The pipeline's timers, once a second, and all at the session's end:
 * the audit_overflow record of what was coalesced (hx_record_flush),
 * kernel_unconfirmed records (hx_correlate_expire). */
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

/* The kernel layer refused a call it had recorded as allowed (record
 * seq), because what it acts on changed since the decision (a git
 * config's bytes, a directory swapped in): a "revoked" record says so,
 * so that no record says allowed of what did not happen. Under the
 * loop's lock. */
void hx_pipeline_revoke(struct hx_pipeline *pl, const struct hx_peer *peer,
			const struct hx_request *rq, uint64_t seq,
			const char *rule, const char *why);

/* The kernel layer's emulation of a call allowed by record seq (0:
 * coalesced) failed with errno err (the kernel's own checks on the
 * object: a permission, a limit, a missing name): a "failed" record
 * says so, so that no record says allowed of what did not happen.
 * err 0: an exec continued to the kernel that did not run (the exec
 * gate saw no exec event), errno unknown. Under the loop's lock. */
void hx_pipeline_failed(struct hx_pipeline *pl, const struct hx_peer *peer,
			enum hx_op op, const char *path, const char *path2,
			uint64_t seq, int err);

/* Whether path is beneath a .git, as git sees it: in the worktree
 * (pl->worktree), by its part beneath the worktree's root, and with no
 * symlink allowed there (links: the question is where a link may be
 * made) unless pl->worktree_links. pipeline_git.c. */
bool hx_pl_in_git(const struct hx_pipeline *pl, const char *path, bool links);

/* Whether a file of mode at path is one git must not meet there: beneath
 * a .git (hx_pl_in_git), a symbolic link (git writes its files in place
 * through one), a FIFO, a socket or a device node (git, and
 * harness-exec's next start with --worktree, open its packed-refs,
 * refs, index... blocking: a FIFO there held each in that open for
 * good); anywhere, such a node named .gitignore, .gitattributes,
 * .gitmodules or .mailmap, which git opens so too (the user's git
 * status waited for good). pipeline_git.c. */
bool hx_pl_foreign(const struct hx_pipeline *pl, const char *path, mode_t mode);

/* hx_pl_foreign of what is at name (relative to dirfd, not followed)
 * for path, where it is or lands; false for a NULL path. */
bool hx_pl_foreign_at(const struct hx_pipeline *pl, int dirfd, const char *name,
		      const char *path);

/* Whether the file open as fd has other names and was made before the
 * session (harness:shared-file, pipeline_links.c): the kernel layer's
 * look after its open of a name decided as no such file. False in
 * audit mode. */
bool hx_pipeline_shared_fd(const struct hx_pipeline *pl, int fd);

/* Whether the file open as fd has a name still and was made before the
 * session: one whose every name may be the user's. False in audit
 * mode. */
bool hx_pipeline_named_fd(const struct hx_pipeline *pl, int fd);

/* Remembers a unix socket a process of the session bound or a file it
 * made in /dev/shm (the kernel layer's bind and open): name in the
 * directory dirfd, or dirfd itself when name is "". Its connects and
 * writes are no neighbour's (harness:neighbour, owned.h). From any
 * thread; nothing without the kernel layer. */
void hx_pipeline_own(struct hx_pipeline *pl, int dirfd, const char *name);

/* Protects the file open as fd by inode too (harness:protect). Returns
 * 0, -ENOSPC or -errno of fstat. */
int hx_pipeline_protect_fd(struct hx_pipeline *pl, int fd);
/* Protects the file of device dev and inode ino as protect_fd does. */
int hx_pipeline_protect_ino(struct hx_pipeline *pl, dev_t dev, ino_t ino);
/* Protects the way to path (pathway.h: every directory and symlink its
 * lookup passes): a rename of any of them (either side), or an unlink
 * or rmdir of one, is harness:protect, so that path cannot be made to
 * name another file while the file it names is protected by inode.
 * Returns 0, -ENOSPC or -errno of the walk. */
int hx_pipeline_protect_way(struct hx_pipeline *pl, const char *path);
/* Protects the loopback address the socket fd is bound to: a connect or
 * send to it is harness:protect. 0 or -errno. */
int hx_pipeline_protect_endpoint(struct hx_pipeline *pl, int fd);

#endif
