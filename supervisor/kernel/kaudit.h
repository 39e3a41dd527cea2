/* Landlock's refusals as audit records (issue 10, class 10).
 *
 * A program that skips the shim (a static binary, raw syscalls: the
 * reads of Claude Code's runtime, of Codex, of Go programs) is refused
 * by Landlock alone, which says nothing to user space but through the
 * kernel's audit subsystem (Landlock ABI 7, Linux 6.15): with
 * LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON, each refusal of the session's
 * domain is an AUDIT_LANDLOCK_ACCESS record (domain id, blockers, path),
 * followed by the task's AUDIT_SYSCALL record (pid, exe, syscall), and
 * the domain's first one by AUDIT_LANDLOCK_DOMAIN (its id and the pid
 * of the process that made it: the agent's first one). Landlock emits
 * them only while kernel audit is enabled (audit_enabled), and they are
 * read from the NETLINK_AUDIT multicast group AUDIT_NLGRP_READLOG, which
 * needs CAP_AUDIT_READ: root. docs/landlock.md says what this costs the
 * rest of the machine and what an ordinary user loses.
 *
 * Lifecycle: hx_kaudit_open (before the fork: joins the group, may turn
 * kernel audit on) -> hx_sandbox_set_landlock_log (the child asks for
 * the records and makes the probe refusal that names its domain) ->
 * hx_kaudit_start (after the fork, on the loop) -> hx_kaudit_finish (at
 * the end: what is queued) -> hx_kaudit_free (puts kernel audit back).
 * hx_kaudit_free(NULL) is a no-op. */
#ifndef HX_KAUDIT_H
#define HX_KAUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct hx_kaudit;
struct hx_pipeline;
struct hx_server;
struct json_t;

/* Record types (include/uapi/linux/audit.h). */
#define HX_AUDIT_SYSCALL	 1300
#define HX_AUDIT_EOE		 1320
#define HX_AUDIT_LANDLOCK_ACCESS 1423
#define HX_AUDIT_LANDLOCK_DOMAIN 1424

/* What --doctor and session_start say. */
struct hx_kaudit_probe {
	bool abi;	 /* Landlock ABI >= 7 */
	bool can_read;	 /* the multicast group could be joined */
	int enabled;	 /* kernel audit: 1 on, 0 off, -1 unknown */
	bool can_enable; /* CAP_AUDIT_CONTROL, and not a panic on loss */
	char why[160];	 /* why can_read is false */
};

/* Probes without changing anything (--doctor). */
void hx_kaudit_probe(struct hx_kaudit_probe *p);

/* Joins the audit multicast group. When kernel audit is off and
 * may_enable (root, CAP_AUDIT_CONTROL), turns it on, counted in a lock
 * file so that the last harness session to end turns it off again.
 * Returns 0 and *out, or -errno with a message in why (the session runs
 * without these records, said at start). */
int hx_kaudit_open(bool may_enable, struct hx_kaudit **out, char *why,
		   size_t len);

/* Serves the socket on srv's loop and writes a record into pl for
 * each Landlock refusal of child's domain. Returns 0 or -errno. */
int hx_kaudit_start(struct hx_kaudit *ka, pid_t child, struct hx_pipeline *pl,
		    struct hx_server *srv);

/* Reads what is queued (waiting up to wait_ms for the kernel's audit
 * thread) and writes what is pending. */
void hx_kaudit_finish(struct hx_kaudit *ka, int wait_ms);

/* {"records": N, ...} for session_end; a new reference. */
struct json_t *hx_kaudit_json(const struct hx_kaudit *ka);

/* Whether the session's domain was named (the child's probe record
 * came back): false at the end means no refusal could be recorded
 * (the records do not reach harness-exec: another network or pid
 * namespace, audit turned off meanwhile). */
bool hx_kaudit_domain_known(const struct hx_kaudit *ka);

/* Whether harness-exec turned kernel audit on for this session. */
bool hx_kaudit_enabled_by_us(const struct hx_kaudit *ka);

void hx_kaudit_free(struct hx_kaudit *ka);

/* Pure helpers (kaudit_parse.c), for the tests too. */

/* "audit(1796147876.956:441): ..." -> time and serial; returns the
 * offset of the text after ": ", or -1. */
int hx_kaudit_header(const char *text, size_t len, struct timespec *when,
		     uint64_t *serial);

/* The value of key ("pid", "path", ...) in an audit record's fields:
 * space-separated key=value, the value a bare word, a "quoted" string
 * or, for an untrusted string with a space, a quote or a byte outside
 * printable ASCII, its bytes in hex (audit_log_untrustedstring). key
 * matches whole keys only ("pid" is not "ppid"). Decoded into out
 * (NUL-terminated); returns its length, or -1 when key is absent or
 * out too small. */
int hx_kaudit_field(const char *text, size_t len, const char *key, char *out,
		    size_t outlen);

/* The operation, category and risk of a Landlock blocker name
 * ("fs.read_file"); false for one unknown here. */
bool hx_kaudit_blocker(const char *blocker, int *op, int *category, int *risk);

#endif
