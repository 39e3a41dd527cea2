/* The static seccomp deny list (DESIGN.md invariant 4): syscalls that
 * let a process leave the sandbox, refused in BPF before any dynamic
 * decision. It is a table so that tests can read it and so that the
 * user-notify list (later) can be checked against it with
 * hx_seccomp_overlap.
 *
 * Lifecycle: hx_seccomp_build (in harness-exec, before fork) returns a
 * BPF program in memory; the child installs it with hx_seccomp_install
 * (one syscall, no allocation); hx_seccomp_prog_free in the parent. */
#ifndef HX_SECCOMP_DENY_H
#define HX_SECCOMP_DENY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a matching syscall gets. */
enum hx_sc_action {
	HX_SC_ERRNO,  /* fail with .err */
	HX_SC_KILL,   /* kill the whole process */
	HX_SC_NOTIFY, /* ask the supervisor (user-notify, unotify*.c) */
};

/* When a row applies. Conditions on one row are ANDed; two rows for the
 * same syscall and action are ORed. Arguments the kernel reads as int
 * are compared on their low 32 bits (cmp32), so high garbage bits do not
 * slip past. */
enum hx_sc_cond {
	HX_SC_ALWAYS,
	HX_SC_BITS,    /* (arg & mask) != 0, i.e. (arg & mask) == mask for a
			* single bit */
	HX_SC_EQ,      /* arg == value */
	HX_SC_NOTIN2,  /* arg != value && arg != value2 */
	HX_SC_NONZERO, /* arg != 0 (a pointer that is given) */
	HX_SC_MASKED   /* (arg & value2) == value: some bits set, some not */
};

struct hx_sc_arg {
	enum hx_sc_cond cond;
	unsigned idx;	 /* argument 0..5 */
	bool cmp32;	 /* the kernel reads this argument as 32 bits */
	uint64_t value;	 /* HX_SC_BITS: the mask (one bit); else the value */
	uint64_t value2; /* HX_SC_NOTIN2: the other value; HX_SC_MASKED: the
			  * mask */
};

struct hx_sc_rule {
	const char *name; /* syscall name as libseccomp knows it */
	enum hx_sc_action action;
	int err;	       /* errno for HX_SC_ERRNO */
	struct hx_sc_arg a[2]; /* cond HX_SC_ALWAYS: unused */
	const char *reason;
};

/* The deny list, and its length. */
extern const struct hx_sc_rule hx_seccomp_deny[];
extern const size_t hx_seccomp_ndeny;

/* The user-notify list (DESIGN.md section 2): syscalls the supervisor
 * decides and emulates (supervisor/unotify*.c); every row HX_SC_NOTIFY. */
extern const struct hx_sc_rule hx_seccomp_notify[];
extern const size_t hx_seccomp_nnotify;

/* Added to the notify filter only with the exec gate (execgate.h):
 * execve and execveat are answered with CONTINUE, which DESIGN.md
 * invariant 2 allows only because the gate checks the exec's result. */
extern const struct hx_sc_rule hx_seccomp_notify_exec[];
extern const size_t hx_seccomp_nnotify_exec;
extern const struct hx_sc_rule hx_seccomp_notify_reads[];
extern const size_t hx_seccomp_nnotify_reads;

/* SysV IPC and POSIX message queues: refused (hx_seccomp_install_ipc)
 * where the agent cannot have an IPC namespace of its own. */
extern const struct hx_sc_rule hx_seccomp_ipc[];
extern const size_t hx_seccomp_nipc;

/* Returns the number of syscall names that appear in both a and b (or,
 * when b == a, twice in a with different actions or errnos); sets
 * *first to the first such name (NULL when none). The notify list and
 * the deny list must never overlap (DESIGN.md invariant 4). One
 * exception, when a is a notify list and b is not: a deny row that
 * applies only on an argument condition (execveat with AT_EMPTY_PATH)
 * may share its name with a notify row, because the kernel runs both
 * filters and SECCOMP_RET_ERRNO outranks SECCOMP_RET_USER_NOTIF. */
size_t hx_seccomp_overlap(const struct hx_sc_rule *a, size_t na,
			  const struct hx_sc_rule *b, size_t nb,
			  const char **first);

/* A BPF program ready to install (struct sock_fprog layout hidden). */
struct hx_seccomp_prog;

/* Builds the filter: every row of the deny list for the native arch
 * (x86_64), any other arch or an x32 syscall number kills the process,
 * everything else is allowed. Returns 0 or -errno with a message in
 * err (a syscall name libseccomp does not know is an error: the list
 * must hold as written). */
int hx_seccomp_build(struct hx_seccomp_prog **out, char *err, size_t errlen);

/* Adds the user-notify filter (hx_seccomp_notify, plus
 * hx_seccomp_notify_exec when exec is true, and every open instead of
 * the write-intent ones when reads is true) to p, installed by
 * hx_seccomp_install_notify. Returns 0 or -errno with a message. */
int hx_seccomp_build_notify(struct hx_seccomp_prog *p, bool exec, bool reads,
			    char *err, size_t errlen);

/* Installs p's deny filters on the calling thread (needs no_new_privs).
 * Returns 0 or -errno. Async-signal-safe: for a forked child. */
int hx_seccomp_install(const struct hx_seccomp_prog *p);

/* Installs p's notify filter with SECCOMP_FILTER_FLAG_NEW_LISTENER and
 * returns the listener fd, or -errno (-ENOENT: none was built). With
 * WAIT_KILLABLE_RECV where the kernel has it (5.19): a call a worker
 * has taken is not broken off by a signal (only a fatal one), so it is
 * never seen, decided and emulated twice. Must run
 * before hx_seccomp_install: the deny list refuses a new listener.
 * Async-signal-safe. */
int hx_seccomp_install_notify(const struct hx_seccomp_prog *p);

/* Installs p's IPC filter (hx_seccomp_ipc). Returns 0 or -errno.
 * Async-signal-safe. */
int hx_seccomp_install_ipc(const struct hx_seccomp_prog *p);

/* Instructions in p (for --verbose and tests). */
size_t hx_seccomp_prog_len(const struct hx_seccomp_prog *p);

void hx_seccomp_prog_free(struct hx_seccomp_prog *p);

#endif
