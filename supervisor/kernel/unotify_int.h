/* The user-notify handler's parts (unotify.h), shared by its files:
 * unotify_target.c (the target's memory, identity and fds) and
 * unotify_queue.c (the hand-over to the loop, the judgement) below the
 * handlers unotify_open.c, unotify_net.c, unotify_bind.c, unotify_mut.c and
 * unotify_exec.c (one family of system calls each), and unotify.c (the
 * workers that dispatch to them, the lifecycle) above. Internal. */
#ifndef HX_UNOTIFY_INT_H
#define HX_UNOTIFY_INT_H

#include <limits.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <linux/limits.h>

#include "common/kerrno.h"
#include "common/wire.h"
#include "supervisor/pipeline.h"
#include "supervisor/procstrv.h"
#include "supervisor/server.h"
#include "supervisor/kernel/unotify.h"

struct hx_connector;

#define MAX_THREADS                                                            \
	16 /* 4 serve; the rest stand in for those that wait                   \
	    * for a person (hx_un_spare) */
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* 6.6; Debian 12's headers lack it */
#endif

/* A request to decide (hx_un_submit), or a connection for the loop's
 * thread to adopt (hx_un_adopt_later; heap-allocated, nobody waits: the
 * loop frees it). */
struct job {
	struct hx_peer peer;
	struct hx_request rq;
	struct hx_outcome out;
	char decided[PATH_MAX];
	int adopt_fd;	 /* serve it as peer's connection */
	int adopt_pidfd; /* peer's pidfd, or -1 (hx_server_adopt) */
	struct job *next;
};

/* A worker's wait on what the agent controls (hx_un_wait_begin): the
 * watchdog (unotify.c) reads it under lock. */
struct un_slot {
	pthread_mutex_t lock;
	pthread_t th;
	uint64_t since_ms; /* 0: not waiting */
	uint64_t id;	   /* the notification it serves */
	pid_t tid;	   /* its target thread */
	unsigned ticks;	   /* watchdog rounds a signal has been pending */
	bool spared;	   /* counted as waiting (hx_un_spare) */
	atomic_bool cut;   /* interrupted by the watchdog */
	atomic_bool again; /* ... for a signal the target takes */
	int kind;	   /* HX_WAIT_* */
	struct hx_connector *conn;
};

struct hx_unotify {
	int lfd, efd, stopfd;
	struct hx_pipeline *pl;
	struct hx_server *srv;
	struct hx_source src;
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_mutex_t lock; /* of the adoptions' queue */
	/* Held shared by each emulated change of a name (a rename, a
	 * removal, a new directory or link: unotify_mut.c), exclusively by
	 * a unix bind while the kernel walks the agent's own path
	 * (hx_un_bind): the session cannot move what that walk passes. */
	pthread_rwlock_t names;
	struct job *head, *tail; /* adoptions for the loop */
	atomic_bool stopping;
	int nthreads, waiting; /* waiting: for an answer (ask.h) */
	pthread_t th[MAX_THREADS];
	void *(*worker)(void *u); /* a worker's loop, for hx_un_spare */
	atomic_ullong n_notif, n_emul, n_denied, n_cont, n_err;
	struct hx_execgate *gate;    /* NULL: execs are not notified */
	pid_t root;		     /* harness-exec's child, before its exec */
	atomic_bool root_pending;    /* its first exec not yet approved */
	char self_exe[PATH_MAX];     /* harness-exec's own image */
	atomic_bool setup_err;	     /* a worker kept capabilities or has no
				      * connector: every call is refused */
	struct hx_un_dns *dns;	     /* NULL: DNS is the system's */
	struct hx_un_idents *idents; /* who the targets are (NULL: none) */
	struct un_slot slots[MAX_THREADS]; /* one a worker */
	atomic_int nslots;
	pthread_t watchdog;
	bool has_watchdog;
};

/* This worker's connector for unix connects and sends (connector.h):
 * one per worker, so that a blocking one holds no other worker. */
extern __thread struct hx_connector *hx_un_conn;
/* The notification this worker serves, and its listener's fd. */
extern __thread uint64_t hx_un_notif_id;
extern __thread int hx_un_notif_lfd;
struct target;

/* sig to t's thread, as the kernel sends it at the call's end (SIGPIPE,
 * SIGXFSZ), only while the notification lives (unotify_target.c). */
void hx_un_signal_caller(const struct target *t, int sig);

/* A worker starts (+1) or stops (-1) waiting for a person: while it
 * waits, another one is started if fewer than two would serve. */
void hx_un_spare(struct hx_unotify *u, int delta);

/* An emulation that may wait on what the agent controls (a FIFO's
 * open, a blocking connect, a send to a full socket): between begin
 * and end, once it has waited WAIT_MS, another worker serves the tree
 * (hx_un_spare), and the
 * watchdog interrupts the wait (by its kind: WAKE_SIG to the worker,
 * or to its connector, whose call fails EINTR) when its target no
 * longer waits
 * (killed), when a signal the target acts on is pending for it (it
 * waits killably: WAIT_KILLABLE_RECV), when the session stops, or
 * after 1 s when every spare worker is taken. end returns e, or, for
 * an EINTR of a signal the target takes, -HX_ERESTARTSYS: the kernel
 * runs the signal's handler and restarts the call, or fails it EINTR,
 * as it would have for the target's own wait; the call is then seen
 * again, as the same one (its decision is claimed again). */
enum {
	HX_WAIT_CALL,	   /* in a system call of its own (open, connect) */
	HX_WAIT_CONNECTOR, /* for its connector's (connector.h) */
	HX_WAIT_POLL,	   /* in a loop that asks hx_un_wait_cut */
	HX_WAIT_RELEASE,   /* in the close of an fd taken from the agent */
};
void hx_un_wait_begin(int kind);
int hx_un_wait_end(struct hx_unotify *u, int e);
/* Closes fd, taken from the agent (pidfd_getfd): the agent may have
 * closed its own since, and a file's last release can wait on it (a
 * TCP socket with SO_LINGER waits for its peer to read, as long as the
 * agent chose: eight such sends held every worker). A wait that the
 * watchdog cuts after its first round (the release goes on unwaited),
 * a spare worker serving meanwhile. A mutex and a clock read more than
 * close(2). */
void hx_un_put_fd(int fd);
/* Whether the watchdog interrupted this worker's wait. */
bool hx_un_wait_cut(void);
/* This worker thread's slot (once, at its start), and the thread it
 * serves now (each notification). */
void hx_un_wait_attach(struct hx_unotify *u, struct un_slot *s);
void hx_un_wait_serving(pid_t tid);
/* The kernel's own "restart the call after the signal" (not in the
 * UAPI): a reply's error the signal code turns into a restart or
 * EINTR, by the handler's SA_RESTART. */
#define HX_ERESTARTSYS 512
/* The last decision of this worker (hx_un_submit), for a call seen
 * again after a restart. */
void hx_un_remember(const struct job *j);
/* The call this worker answers with errno err: when its last decision
 * allowed it, a "failed" record (hx_pipeline_failed) says what the
 * kernel did instead. hx_un_forget frees what was remembered (at the
 * worker's end). */
void hx_un_failed(struct hx_unotify *u, int err);
void hx_un_forget(void);

/* What a handler decided to send back. */
struct answer {
	enum { ANS_ERROR, ANS_VALUE, ANS_CONTINUE, ANS_SENT } kind;
	int err;     /* ANS_ERROR: positive errno */
	int64_t val; /* ANS_VALUE */
	/* ANS_ERROR after the call did what it was allowed to (a
	 * sendmmsg's datagram sent, its count not written back; a TCP
	 * connect broken off, its handshake going on): no "failed"
	 * record (hx_un_failed), the allow stands. */
	bool took_effect;
	/* ANS_CONTINUE of an exec: its gate approval's seq + 1 (0: none),
	 * taken back if the answer finds the call gone. */
	uint64_t gate_ref;
};

struct target {
	pid_t tid;
	bool status_read; /* umask and tracer below are read; else use
			   * hx_un_umask, hx_un_tracer */
	pid_t tracer;	  /* TracerPid of tid: the exec gate's tracer */
	mode_t umask;
	char exe[PATH_MAX];
	struct hx_peer peer;
};

/* Shared by connect and bind (unotify_net.c, unotify_bind.c): the
 * address of the agent's call (len bytes) into ss, 0 or the positive
 * errno; an IP address in a form the kernel takes rewritten to its full
 * one (AF_UNSPEC for 0.0.0.0, a short sockaddr_in6); a socket's
 * SO_PROTOCOL, or -1. */
int hx_un_read_addr(struct hx_unotify *u, const struct seccomp_notif *n,
		    const struct target *t, uint64_t addr, socklen_t len,
		    struct sockaddr_storage *ss);
void hx_un_canon_inet(int sfd, struct sockaddr_storage *ss, socklen_t *len);
int hx_un_sock_proto(int sfd);

/* A connection of t's process to the session socket (unotify_net.c):
 * our end of it to hand to t, or -1 with a->err set. */
int hx_un_own_connection(struct hx_unotify *u, const struct target *t,
			 bool nonblock, struct answer *a);

/* Exactly len bytes at addr in tid, or -errno. */
int hx_un_read_mem(pid_t tid, uint64_t addr, void *buf, size_t len);
/* A NUL-terminated string of at most size-1 bytes at addr, or -errno. */
int hx_un_read_str(pid_t tid, uint64_t addr, char *buf, size_t size);
/* SECCOMP_IOCTL_NOTIF_ID_VALID: the target still waits for this answer. */
bool hx_un_id_valid(struct hx_unotify *u, uint64_t id);
/* Whether pid (a process or a thread) belongs to the agent's tree:
 * traced by the exec gate (the whole tree is), or, without the gate, a
 * descendant of its root. */
bool hx_un_in_tree(const struct hx_unotify *u, pid_t pid);
/* The target's fd, in the supervisor (close it), or -errno. */
int hx_un_take_fd(pid_t pid, int fd);
/* A call's fd argument as the kernel reads it: from the calling
 * thread's own table (a thread may have one: unshare(CLONE_FILES)), by
 * a pidfd of the thread (PIDFD_THREAD, Linux 6.9; before, the
 * process's). In the supervisor (close it), or -errno. */
int hx_un_call_fd(const struct target *t, int fd);
/* Who tid is (its process, parent, uid, executable), remembered in
 * u->idents (unotify_ident.c; u NULL: read afresh), or -errno. */
int hx_un_target_info(struct hx_unotify *u, pid_t tid, struct target *t);
/* t's umask and TracerPid, read now unless t->status_read (a gone
 * target: 0777, 0). */
mode_t hx_un_umask(const struct target *t);
/* The umask a creation in directory dir (a path here, or "" for the
 * O_PATH fd dirfd) takes: none when dir has a default ACL, which the
 * kernel applies instead of the umask (posix_acl_create), else the
 * target's. */
mode_t hx_un_umask_in(const struct target *t, const char *dir, int dirfd);
pid_t hx_un_tracer(const struct target *t);
/* A chown's ids (-1: unchanged; either pointer NULL) as the target's
 * user namespace names them, made ours: the worker acts in its own
 * namespace, where an id the agent's does not map (any but its own, for
 * an ordinary user's agent) names a group of the user the agent cannot
 * name. 0, or -EINVAL as the kernel's chown says of such an id. */
int hx_un_map_ids(const struct target *t, uid_t *uid, gid_t *gid);
/* The same for the ids of a POSIX ACL's xattr value (name
 * system.posix_acl_access or _default; others are left), in place. */
int hx_un_map_acl(const struct target *t, const char *name, void *val,
		  size_t size);
struct hx_un_idents;
struct hx_un_idents *hx_un_idents_new(void); /* NULL: out of memory */
void hx_un_idents_free(struct hx_un_idents *c);
/* Whether the fd of thread tid's table is close-on-exec
 * (/proc/<tid>/fdinfo). */
bool hx_un_fd_cloexec(pid_t tid, int fd);

/* Whether name (absolute: an fd's /proc link, read) leads, in the
 * target's view and not followed, to the file open as fd. */
bool hx_un_fd_at_name(const struct target *t, int fd, const char *name);
/* The lookup limits openat2's caller puts on its own walk. */
#define HX_UN_WALK_LIMITS                                                      \
	(RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)
/* The kernel's walk of a path as the target named it (raw, from dirfd;
 * full: made absolute, unresolved), where it differs from the walk of
 * the decided path the kernel layer acts on: when that walk followed a
 * symlink (decided is not full's lexical form), went up a ".." (through
 * what must be a directory: "file/../x" is ENOTDIR, where the lexical
 * form made x), or limits (openat2's HX_UN_WALK_LIMITS) are asked. Made
 * here, with the target's uid and no capability, as an O_PATH lookup
 * (following the last name when follow) anchored where the kernel
 * anchors it; the kernel then applies what it applies to the target's
 * own walk: the limits, a non-directory walked through, and
 * protected_symlinks (a symlink in a sticky world-writable directory
 * that neither the follower nor the directory's owner owns). 0, or its
 * -ELOOP, -EXDEV, -EACCES or -ENOTDIR, which the call answers; any other
 * outcome is left to the call. */
int hx_un_walk_named(const struct target *t, int dirfd, const char *raw,
		     const char *full, const char *decided, bool follow,
		     uint64_t limits);
/* A truncation of the regular file fd to len, as the kernel judges it
 * for the target (inode_newsize_ok): a growth past the target's
 * RLIMIT_FSIZE is EFBIG and SIGXFSZ to its thread. 0 or -errno. */
int hx_un_fsize_ok(const struct target *t, int fd, uint64_t len);
/* Puts the supervisor's newfd in place of the target's fd (ADDFD with
 * SETFD, its close-on-exec kept) while call id waits. 0 or -errno. */
int hx_un_replace_fd(struct hx_unotify *u, uint64_t id, const struct target *t,
		     int fd, int newfd);

/* The answer of an emulated call: 0 (counted as emulated) when e is 0,
 * else the error -e. */
void hx_un_done(struct hx_unotify *u, struct answer *a, int e);
/* A request of t's in j: the rest of the job zeroed, the peer the
 * kernel named (never what the call says). */
void hx_un_job(struct job *j, const struct target *t, uint32_t call,
	       enum hx_op op);
/* Hands j's adopt_fd to the loop's thread (hx_server_adopt); false
 * when stopping. */
bool hx_un_adopt_later(struct hx_unotify *u, struct job *j);
/* The loop's side of the queue: adopts every connection handed over. */
void hx_un_on_jobs(struct hx_server *s, struct hx_source *src, uint32_t ev);
/* Decides j with the pipeline, on the calling thread under the loop's
 * lock; false when stopping (the caller denies). */
bool hx_un_submit(struct hx_unotify *u, struct job *j);
/* j, recorded as allowed, is refused after all (hx_pipeline_revoke). */
void hx_un_revoke(struct hx_unotify *u, const struct job *j, const char *rule,
		  const char *why);
/* in as the supervisor reaches what the target names by it: /proc/self
 * and /proc/thread-self made the target's. 0 or -ENAMETOOLONG. */
/* openat2(AT_FDCWD, path, how) of a decided path, except that /dev/pts
 * and /dev/ptmx paths are opened in the agent's view (its root), where
 * they name its own devpts instance (terminals.h). Returns the fd or
 * -errno. */
struct open_how;
int hx_un_openat2(const struct target *t, const char *path,
		  const struct open_how *how);

/* The N of a path "/proc/<N>" or "/proc/<N>/...", else 0 (/proc/self
 * too: hx_un_proc_path writes it out first). */
pid_t hx_un_proc_num(const char *path);
/* in as the supervisor reaches what the target names by it: its
 * /proc/self, /proc/thread-self, /dev/fd and standard streams are the
 * target's. 0 or -ENAMETOOLONG. */
int hx_un_proc_path(const struct target *t, const char *in, char *out,
		    size_t size);
/* Whether path names what the kernel checks against its opener's right
 * to trace a process (ptrace_may_access when opened or walked: its
 * environ, mem, auxv, maps, fd/N, cwd, root, exe...) of a process N
 * outside the agent's tree ("/proc/<N>/..."; /proc/self written out
 * first). Landlock refuses the agent those (its ptrace scope), and the
 * kernel layer opens and walks as harness-exec, outside any domain: as
 * an ordinary user (no Yama), the agent read the environment and
 * memory of the user's other processes through openat2. */
bool hx_un_proc_foreign(const struct hx_unotify *u, const struct target *t,
			const char *path);
/* A path raw (full: made absolute) that ends in "/", "/." or "/..":
 * 0 when the kernel's walk of it as the target's reaches a directory,
 * else its error (ENOTDIR through a file; a missing name before a final
 * "/" is left to the call). The decided path has lost that tail, so the
 * emulation asks here what the kernel would have said. 0 for any other
 * path. */
int hx_un_dir_tail(const struct target *t, const char *raw, const char *full);
/* The errno for a call the pipeline denied (o): what the kernel would
 * say of k (kerrno.h; k's paths absolute, as the target wrote them)
 * when o->tell and this worker acts with the target's uid, else
 * o->err; prints o's pending notice when that is a refusal. */
int hx_un_denied(const struct target *t, const struct hx_outcome *o,
		 struct hx_kargs *k);
/* After the last read of the target's memory for this call: the call
 * must still wait (else what was read may be another process's), and
 * raw is made absolute from dirfd as the target sees it, into full.
 * 0, or the errno to answer with. */
int hx_un_path_arg(struct hx_unotify *u, uint64_t id, const struct target *t,
		   int dirfd, const char *raw, char *full, size_t size);
/* Decides j (hx_un_submit) and says how the call ends: 0 when it is
 * allowed, else the errno to answer with, the denial counted and k (may
 * be NULL) used as hx_un_denied does. Invariant 2 in one place: a
 * handler acts for the agent only on a 0 from here. */
int hx_un_judge(struct hx_unotify *u, const struct target *t, struct job *j,
		struct hx_kargs *k);
/* Whether a path of j (its path and path2, absolute as the target names
 * them), or the directory a new name is made in, lies on or beneath a
 * mask of the target's view: the kernel layer acts in harness-exec's,
 * where there is none, and a static program's O_RDWR open, link or
 * rename of .env/key beneath a masked .env/ (the policy names the
 * directory, not its files) opened, linked or moved out the file the
 * mask hides (thirty-second attack review, part c). Only once a
 * directory is masked whose content the policy lets be read
 * (hx_masks_dir_noted): then an open of its root a call, and two
 * opens and two fstat a path (4 to 20 us measured, on an emulated
 * open of 45 to 70). */
bool hx_un_masked_way(const struct target *t, const struct job *j);
/* One handler per family; each fills a (never CONTINUE without saying
 * what holds the call, next to the site). */
void hx_un_open(struct hx_unotify *u, const struct seccomp_notif *n,
		const struct target *t, struct answer *a);
void hx_un_connect(struct hx_unotify *u, const struct seccomp_notif *n,
		   const struct target *t, struct answer *a);
void hx_un_bind(struct hx_unotify *u, const struct seccomp_notif *n,
		const struct target *t, struct answer *a);
void hx_un_listen(struct hx_unotify *u, const struct seccomp_notif *n,
		  const struct target *t, struct answer *a);
void hx_un_send(struct hx_unotify *u, const struct seccomp_notif *n,
		const struct target *t, struct answer *a);
/* The bytes a send names (unotify_sendloop.c): the agent's iovecs, or
 * the buffer of send and sendto, read anew for each chunk sent. */
struct hx_un_payload {
	pid_t tid;
	struct iovec *iov; /* addresses in the target's memory */
	size_t n;
	struct iovec one;
	uint64_t total;
};
/* Reads mh's iovecs and its control messages (into ctrl, at most
 * ctrl_max bytes: else ENOBUFS), or takes buf and count: 0 or -errno.
 * Free with hx_un_payload_free, whatever it returned. */
int hx_un_payload_read(const struct target *t, const struct msghdr *mh,
		       uint64_t buf, uint64_t count, unsigned char *ctrl,
		       size_t ctrl_max, struct hx_un_payload *p);
void hx_un_payload_free(struct hx_un_payload *p);
/* Sends p's bytes on sfd from copies, out giving the name, the control
 * messages and target (as hx_connector_send's, un: a unix socket),
 * waiting for room as the agent's own send would: the bytes sent, or
 * -errno. Between hx_un_wait_begin(HX_WAIT_POLL) and _end. */
ssize_t hx_un_send_all(struct hx_unotify *u, uint64_t id, int sfd, int target,
		       struct msghdr *out, int flags,
		       const struct hx_un_payload *p, bool stream, bool un);
/* socket(AF_NETLINK) of a protocol but route's and uevent's: decided as
 * the send to the kernel its sends without an address make. */
void hx_un_socket(struct hx_unotify *u, const struct seccomp_notif *n,
		  const struct target *t, struct answer *a);
void hx_un_mut(struct hx_unotify *u, const struct seccomp_notif *n,
	       const struct target *t, struct answer *a);
void hx_un_exec(struct hx_unotify *u, const struct seccomp_notif *n,
		const struct target *t, struct answer *a);
void hx_un_watch(struct hx_unotify *u, const struct seccomp_notif *n,
		 const struct target *t, struct answer *a);
void hx_un_sched(struct hx_unotify *u, const struct seccomp_notif *n,
		 const struct target *t, struct answer *a);
/* What a worker's mutations made for themselves goes (at its end). */
void hx_un_mut_thread_end(void);

/* What a metadata call carries beside its path (unotify_meta.c). */
struct mut_extra {
	dev_t dev;	       /* mknod */
	struct timespec ts[2]; /* utime family; has_ts false: now */
	bool has_ts;
	char xname[XATTR_NAME_MAX + 1]; /* xattr */
	unsigned char *xval;
	size_t xsize;
	int xflags;
	/* the session's, for harness:shared-file's look at the file the
	 * call acts on (set by the mutation, not the metadata reader) */
	const struct hx_pipeline *pl;
};
/* A setxattr's size and flags into x, checked as the kernel does:
 * 0, or the positive errno. */
int hx_un_xattr_args(struct mut_extra *x, uint64_t size, uint64_t flags);
/* What a metadata call points at, read into x: the xattr name, its
 * value (x->xsize bytes, into the calling worker's buffer), the times
 * (kind 1: struct utimbuf, 2: struct timeval[2], 3: struct
 * timespec[2]). Returns 0 or the positive errno. */
int hx_un_read_meta(const struct target *t, uint64_t xname, uint64_t xval,
		    uint64_t tsaddr, int tskind, struct mut_extra *x);
/* fchmod, fchown, fsetxattr, fremovexattr, futimens, chattr's ioctls
 * and the *at forms on an fd with AT_EMPTY_PATH (unotify_fdmeta.c). */
void hx_un_fdmeta(struct hx_unotify *u, const struct seccomp_notif *n,
		  const struct target *t, struct answer *a);

/* A rename of pfd/name onto pfd2/name2, a git configuration
 * (hx_outcome.git_copy) or with agent an agent's (agent_copy), done as
 * a copy of the bytes checked again here, so neither an fd the agent
 * keeps on the source nor another name of its inode writes it later;
 * the source goes as a rename's would (unotify_gitcopy.c); the copy is
 * one of pool's files where its directory has them. 0 or -errno
 * (-EACCES: changed since decided). */
struct hx_ipool;
int hx_un_git_copy(struct hx_ipool *pool, int pfd, const char *name, int pfd2,
		   const char *name2, unsigned flags, bool agent);

/* The agent's DNS (unotify_dns.c): whether ss is port 53 of an IP
 * address; the socket sfd (the supervisor's copy of the target's fd)
 * replaced by one of the sealed namespace of the same kind, *sfd then
 * being that one (0, or -errno; 0 with nothing done when it is one
 * already); the resolver stopped (before u goes). */
bool hx_un_dns_port(const struct sockaddr_storage *ss, socklen_t len);
/* The resolver's state, before any notification is served (conf's
 * listeners are u's, also on a failure; its threads are made at the
 * first seal): 0 or -errno; on a failure the caller stops what started
 * (hx_un_dns_stop, without the loop's lock: a started thread may wait
 * for it). */
int hx_un_dns_start(struct hx_unotify *u, const struct hx_unotify_dns *conf);
int hx_un_dns_seal(struct hx_unotify *u, uint64_t id, const struct target *t,
		   int fd, int *sfd);
void hx_un_dns_stop(struct hx_unotify *u);
#endif
