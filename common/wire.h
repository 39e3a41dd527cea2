/* The shim <-> supervisor wire protocol (DESIGN.md section 8). Internal to
 * harness, shared by both sides; never a public API.
 *
 * One message per SOCK_SEQPACKET datagram: a fixed header, then fields as
 * (u16 tag, u16 length, bytes). Integers are in host byte order (both
 * ends are on one machine). Strings carry no NUL on the wire.
 *
 * The encoder writes into a caller buffer and never allocates: it runs in
 * vfork children and signal handlers. The decoder treats its input as
 * hostile: it checks every length, rejects unknown tags, duplicated
 * singletons, NUL bytes in strings and trailing bytes, and copies strings
 * into the decoded message NUL-terminated. */
#ifndef HX_COMMON_WIRE_H
#define HX_COMMON_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/types.h"

#define HX_WIRE_VERSION	     1
#define HX_WIRE_MAX	     65536 /* largest datagram either side sends */
#define HX_WIRE_MAX_ARGS     512
#define HX_WIRE_MAX_FRAMES   32
#define HX_WIRE_MAX_ADDRS    32
#define HX_WIRE_MAX_RULES    1024 /* read rules a HELLO_REPLY carries */
#define HX_WIRE_MAX_SOCKADDR 128

/* Environment that carries the connection into every process. */
#define HX_ENV_SOCKET  "HARNESS_SOCKET"
#define HX_ENV_PRELOAD "LD_PRELOAD"
/* "<fd>.<inode>": the connection an exec was decided on, left open for
 * the new image, which takes it instead of connecting again. Set by the
 * shim for that one exec only (never inherited further). */
#define HX_ENV_CONN "HARNESS_CONN"

enum hx_msg_type {
	HX_MSG_HELLO = 1, /* shim -> sup: a process with the shim started */
	HX_MSG_HELLO_REPLY = 2, /* sup -> shim: session settings, read rules */
	HX_MSG_REQUEST = 3,	/* shim -> sup: decide this event */
	HX_MSG_VERDICT = 4,	/* sup -> shim: the decision */
	HX_MSG_REPORT = 5,	/* shim -> sup: log this, no reply */
};

/* The libc entry point that saw the event; its name goes in the audit
 * record's "event" field. */
enum hx_call {
	HX_CALL_EXECVE = 0,
	HX_CALL_EXECV,
	HX_CALL_EXECVP,
	HX_CALL_EXECVPE,
	HX_CALL_EXECL,
	HX_CALL_EXECLP,
	HX_CALL_EXECLE,
	HX_CALL_FEXECVE,
	HX_CALL_EXECVEAT,
	HX_CALL_POSIX_SPAWN,
	HX_CALL_POSIX_SPAWNP,
	HX_CALL_SYSTEM,
	HX_CALL_POPEN,
	HX_CALL_OPEN,
	HX_CALL_OPENAT,
	HX_CALL_CREAT,
	HX_CALL_FOPEN,
	HX_CALL_FREOPEN,
	HX_CALL_RENAME,
	HX_CALL_RENAMEAT,
	HX_CALL_RENAMEAT2,
	HX_CALL_UNLINK,
	HX_CALL_UNLINKAT,
	HX_CALL_RMDIR,
	HX_CALL_MKDIR,
	HX_CALL_MKDIRAT,
	HX_CALL_LINK,
	HX_CALL_LINKAT,
	HX_CALL_SYMLINK,
	HX_CALL_SYMLINKAT,
	HX_CALL_TRUNCATE,
	HX_CALL_CONNECT,
	HX_CALL_SENDTO,
	HX_CALL_SENDMSG,
	HX_CALL_GETADDRINFO,
	HX_CALL_GETHOSTBYNAME,
	HX_CALL_GETHOSTBYNAME2,
	HX_CALL_SYSCALL, /* syscall(2) with one of the numbers above */
	/* Seen by the kernel layer only: the shim does not interpose them. */
	HX_CALL_CHMOD,
	HX_CALL_CHOWN,
	HX_CALL_FCHMOD,
	HX_CALL_FCHOWN,
	HX_CALL_SETXATTR,
	HX_CALL_REMOVEXATTR,
	HX_CALL_UTIMES,
	HX_CALL_MKNOD,
	HX_CALL_BIND,
	HX_CALL_IOCTL,	   /* a file's attribute flags (chattr) */
	HX_CALL_DNS_QUERY, /* a question to port 53, answered by us */
	HX_CALL_LISTEN,	   /* listen(2) of a socket no bind named */
	HX_CALL_INOTIFY_ADD_WATCH,
	HX_CALL_SOCKET, /* a netlink socket: decided as its sends */
	HX_CALL_COUNT,
};

enum hx_tag {
	HX_TAG_PID = 1,	   /* u32, claimed; the supervisor uses SO_PEERCRED */
	HX_TAG_TID = 2,	   /* u32 */
	HX_TAG_PPID = 3,   /* u32 */
	HX_TAG_CALL = 4,   /* u32 enum hx_call */
	HX_TAG_OP = 5,	   /* u32 enum hx_op */
	HX_TAG_PATH = 6,   /* string, absolute */
	HX_TAG_PATH2 = 7,  /* string */
	HX_TAG_FLAGS = 8,  /* u32: open(2) flags, or HX_HELLO_* flags */
	HX_TAG_MODE = 9,   /* u32 */
	HX_TAG_ARG = 10,   /* string, repeated: argv in order */
	HX_TAG_ADDR = 11,  /* bytes: a sockaddr; repeated in resolve reports */
	HX_TAG_HOST = 12,  /* string */
	HX_TAG_FRAME = 13, /* string, repeated: "module+0xoff [symbol]" */
	HX_TAG_VERDICT = 14,	  /* u32 enum hx_verdict */
	HX_TAG_ERRNO = 15,	  /* u32 */
	HX_TAG_RULE = 16,	  /* string: the rule that decided */
	HX_TAG_SEQ = 17,	  /* u64: audit record sequence */
	HX_TAG_SESSION = 18,	  /* string */
	HX_TAG_READ_RULE = 19,	  /* u8 verdict + pattern, repeated */
	HX_TAG_DEFAULT_READ = 20, /* u32 enum hx_verdict */
	HX_TAG_TRUNCATED = 21,	  /* u32: the argv did not fit */
	HX_TAG_RESULT = 22, /* u32: 0, or errno/EAI code of the real call */
	HX_TAG_PROTO = 23,  /* u32: a connect's or send's socket SO_PROTOCOL */
	HX_TAG_ORIGIN = 24, /* string: where the rule is written, file:line */
	/* u64: an exec's envp (the array its caller passes, before the
	 * shim adds its own names), an address in the requester's memory,
	 * which the supervisor reads there (envdiff.h) */
	HX_TAG_ENVP = 25,
	/* 4 x u16 after a READ_RULE: what its matches must hold (its key,
	 * literal end, inner run: common/globindex.h), as the supervisor
	 * worked it out, so that no process works it out again */
	HX_TAG_READ_NEED = 26,
};

/* HX_TAG_FLAGS in VERDICT. */
#define HX_VERDICT_TELL                                                        \
	0x1 /* denied: answer what the kernel would                            \
	     * (kerrno.h), the path may be read */

/* HX_TAG_FLAGS in HELLO_REPLY. */
#define HX_HELLO_LOG_READS 0x1 /* report allowed reads one by one */
#define HX_HELLO_AUDIT	   0x2 /* audit mode: never deny locally */
#define HX_HELLO_LOCAL_READS                                                   \
	0x4 /* the read rules are complete: the shim                           \
	       may allow reads without asking */
#define HX_HELLO_DNS_SEALED                                                    \
	0x8 /* the supervisor answers every DNS question                       \
	       (unotify_dns.c): a lookup is judged there,                      \
	       by what leaves, not by the shim */

struct hx_wire_hdr {
	uint16_t version;
	uint16_t type;
	uint32_t length;   /* whole datagram, header included */
	uint32_t id;	   /* request id, echoed in the reply */
	uint32_t reserved; /* zero */
};

/* ---- encoder (shim side and supervisor replies) ---- */

struct hx_wbuf {
	uint8_t *buf;
	size_t cap, len;
	bool overflow; /* a put did not fit; the message is unusable */
};

void hx_wire_begin(struct hx_wbuf *w, void *buf, size_t cap,
		   enum hx_msg_type type, uint32_t id);
/* Each put returns 0, or -1 when the field does not fit (nothing is
 * written then; the message stays usable unless overflow is set by a
 * put that was required: see hx_wire_put_opt). */
int hx_wire_put_u32(struct hx_wbuf *w, enum hx_tag tag, uint32_t v);
int hx_wire_put_u64(struct hx_wbuf *w, enum hx_tag tag, uint64_t v);
int hx_wire_put_bytes(struct hx_wbuf *w, enum hx_tag tag, const void *p,
		      size_t n);
int hx_wire_put_str(struct hx_wbuf *w, enum hx_tag tag, const char *s);
/* Sets the header's length; returns the datagram size, or 0 when a put
 * overflowed. */
size_t hx_wire_finish(struct hx_wbuf *w);

/* ---- decoder (supervisor side, and the shim for replies) ---- */

struct hx_str {
	const char *s; /* NUL-terminated copy inside the message, or NULL */
	size_t len;
};

struct hx_bytes {
	const uint8_t *p;
	size_t len;
};

struct hx_msg {
	struct hx_wire_hdr hdr;
	uint32_t present; /* bit (1u << tag) for each singleton seen */
	uint32_t pid, tid, ppid, call, op, flags, mode, verdict, err;
	uint32_t default_read, truncated, result, proto;
	uint64_t seq, envp;
	struct hx_str path, path2, host, rule, session, origin;
	size_t nargs, nframes, naddrs, nrules;
	struct hx_str args[HX_WIRE_MAX_ARGS];
	struct hx_str frames[HX_WIRE_MAX_FRAMES];
	struct hx_bytes addrs[HX_WIRE_MAX_ADDRS];
	struct {
		uint8_t verdict;
		struct hx_str pattern;
	} rules[HX_WIRE_MAX_RULES];
	/* NUL-terminated string copies and aligned sockaddr copies. */
	uint8_t store[HX_WIRE_MAX + HX_WIRE_MAX / 2]
	    __attribute__((aligned(8)));
};

enum hx_wire_error {
	HX_WIRE_OK = 0,
	HX_WIRE_SHORT,	/* shorter than a header or a field */
	HX_WIRE_LENGTH, /* header length differs from the datagram */
	HX_WIRE_VERSION_MISMATCH,
	HX_WIRE_TYPE,	   /* unknown message type */
	HX_WIRE_TAG,	   /* unknown tag, or a tag this type may not carry */
	HX_WIRE_DUPLICATE, /* a singleton field twice */
	HX_WIRE_FIELD,	   /* a field of the wrong size or content */
	HX_WIRE_TOO_MANY,  /* more repeated fields than the limit */
	HX_WIRE_MISSING,   /* a required field is absent */
	HX_WIRE_RESERVED,  /* reserved header bits set */
};

/* A cursor over the fields of one datagram, for small decoders that
 * cannot afford a struct hx_msg (the shim reading a verdict). */
struct hx_wreader {
	const uint8_t *p, *end;
};

/* Checks the header (version, length == n, reserved zero) and positions
 * r on the first field; fills *hdr. */
enum hx_wire_error hx_wire_open(struct hx_wreader *r, const void *buf, size_t n,
				struct hx_wire_hdr *hdr);
/* Returns 1 with the next field, 0 at a clean end, -1 on a truncated
 * field. */
int hx_wire_next(struct hx_wreader *r, uint16_t *tag, const uint8_t **val,
		 uint16_t *len);

/* Decodes one datagram of n bytes into *m (which is large: allocate it
 * once, not on a small stack). Returns HX_WIRE_OK or the first error. */
enum hx_wire_error hx_wire_decode(const void *buf, size_t n, struct hx_msg *m);
const char *hx_wire_error_name(enum hx_wire_error e);

/* Names for the audit log; "unknown" when out of range. */
const char *hx_call_name(uint32_t call);
bool hx_msg_has(const struct hx_msg *m, enum hx_tag tag);

#endif
