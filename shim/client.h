/* The shim's side of the supervisor connection: lazy idempotent init,
 * one shared connection per process taken with an atomic flag (never a
 * blocking lock), a stateless one-shot connection when that is busy or
 * when we run in a CLONE_VM child (vfork, posix_spawn, raw clone) whose
 * memory is the parent's, request encoding and verdict decoding.
 *
 * Fail closed: any error talking to the supervisor is a deny with
 * "supervisor unreachable". */
#ifndef HX_SHIM_CLIENT_H
#define HX_SHIM_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/readrules.h"
#include "common/wire.h"

/* One event to decide or report. Pointers are borrowed. */
struct hx_req {
	enum hx_call call;
	enum hx_op op;
	const char *path, *path2, *host;
	bool has_flags, has_mode;
	uint32_t flags, mode;
	char *const *argv; /* NULL-terminated, or NULL */
	/* an exec's environment as its caller passes it (NULL-terminated),
	 * told by address: the supervisor reads it (HX_TAG_ENVP) */
	char *const *envp;
	bool has_envp;
	const void *addr; /* raw sockaddr, or NULL */
	size_t addrlen;
	int proto; /* addr's socket's SO_PROTOCOL (IPPROTO_TCP...); 0: none */
	const void *const *addrs; /* resolve reports: sockaddrs */
	const size_t *addrlens;
	size_t naddrs;
	bool frames; /* capture the call stack (exec, connect/send, writes) */
};

struct hx_reply {
	uint32_t verdict; /* enum hx_verdict, audit mode already applied */
	uint32_t err;	  /* errno to set on deny */
	uint32_t flags;	  /* HX_VERDICT_* */
	uint64_t seq;
	bool unreachable; /* no verdict: protocol error, timeout, no peer */
	char rule[256];
	char origin[128]; /* "file:line" of the rule, or "" */
};

/* ---- pure encoding/decoding (unit-tested) ---- */

/* Encodes r as a REQUEST (result < 0) or a REPORT carrying RESULT into
 * buf. Frames are captured when self_base != NULL and r->frames. argv
 * that does not fit (or exceeds HX_WIRE_MAX_ARGS) sets TRUNCATED.
 * Returns the datagram size, or 0 when even the fixed fields overflow. */
size_t hx_req_encode(const struct hx_req *r, long result, uint32_t id,
		     uint32_t pid, uint32_t tid, void *buf, size_t cap,
		     const void *self_base);
/* Parses a VERDICT datagram for request id into *out. 0, or -1 on any
 * protocol error (out->unreachable is set then). */
int hx_reply_parse(const void *buf, size_t n, uint32_t id,
		   struct hx_reply *out);

/* ---- process state ---- */

/* Init state. HX_ST_ACTIVE: HARNESS_SOCKET was set, decide calls. */
enum hx_state {
	HX_ST_NONE = 0,
	HX_ST_BUSY,
	HX_ST_INERT,
	HX_ST_ACTIVE,
};

/* Idempotent; argv may be NULL (a hook ran before the constructor).
 * Returns the resulting state: ACTIVE, INERT, or BUSY when another
 * thread (or this one, re-entered) is still configuring. */
enum hx_state hx_init(int argc, char **argv, bool connect_now);

/* Configuration saved at init; valid once hx_init returned ACTIVE. */
const char *hx_shim_path(void);
const char *hx_socket_path(void);
const struct hx_read_rules *hx_rules(void); /* NULL until HELLO_REPLY */

/* True in a CLONE_VM child or a raw-clone child (pid differs from the
 * cached one): touch no shared state, use the stateless path. */
bool hx_in_foreign_process(void);

/* Sends r and waits for the verdict (fills *out; never fails: errors
 * are out->unreachable). */
void hx_ask(const struct hx_req *r, struct hx_reply *out);
/* Sends r as a REPORT with result; best effort, no reply. */
void hx_report(const struct hx_req *r, long result);

/* The connection an allowed exec hands to its new image (HX_ENV_CONN):
 * its shim takes it instead of connecting, which is a user-notify round
 * trip in the supervisor (about a quarter of an exec's cost). */
struct hx_handover {
	int fd;	  /* -1: nothing handed over */
	bool own; /* a one-shot connection of this exec */
	unsigned long long ino;
	char env[48]; /* the HX_ENV_CONN value, "<fd>.<inode>" */
};

/* hx_ask for an exec of r->path. When the verdict allows it and the new
 * image loads the shim (hx_exec_loads_shim, looked at only then), the
 * connection it came on is also readied for it (close-on-exec cleared,
 * ho->env set); ho->fd is -1 otherwise. No allocation: runs in vfork
 * children. */
void hx_ask_exec(const struct hx_req *r, struct hx_reply *out,
		 struct hx_handover *ho);

/* After an exec that failed: closes the one-shot connection, or sets the
 * shared one close-on-exec again. Keeps errno. */
void hx_handover_undo(const struct hx_handover *ho);

#endif
