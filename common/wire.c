/* Wire codec; see wire.h. Used inside agent processes (encoder, reader)
 * and by the supervisor (full decoder): no allocation, no libc state. */
#include "common/wire.h"

#include <string.h>

#include "common/sockaddr.h"

#define HDR_SIZE  sizeof(struct hx_wire_hdr)
#define FIELD_HDR 4u

void hx_wire_begin(struct hx_wbuf *w, void *buf, size_t cap,
		   enum hx_msg_type type, uint32_t id)
{
	struct hx_wire_hdr h = {
	    .version = HX_WIRE_VERSION,
	    .type = (uint16_t)type,
	    .id = id,
	};

	w->buf = buf;
	w->cap = cap;
	w->len = 0;
	w->overflow = cap < HDR_SIZE;
	if (!w->overflow) {
		memcpy(w->buf, &h, HDR_SIZE);
		w->len = HDR_SIZE;
	}
}

int hx_wire_put_bytes(struct hx_wbuf *w, enum hx_tag tag, const void *p,
		      size_t n)
{
	uint16_t t = (uint16_t)tag, l = (uint16_t)n;

	if (w->overflow || n > UINT16_MAX || w->cap - w->len < FIELD_HDR + n)
		return -1;
	memcpy(w->buf + w->len, &t, 2);
	memcpy(w->buf + w->len + 2, &l, 2);
	if (n)
		memcpy(w->buf + w->len + FIELD_HDR, p, n);
	w->len += FIELD_HDR + n;
	return 0;
}

int hx_wire_put_u32(struct hx_wbuf *w, enum hx_tag tag, uint32_t v)
{
	return hx_wire_put_bytes(w, tag, &v, sizeof(v));
}

int hx_wire_put_u64(struct hx_wbuf *w, enum hx_tag tag, uint64_t v)
{
	return hx_wire_put_bytes(w, tag, &v, sizeof(v));
}

int hx_wire_put_str(struct hx_wbuf *w, enum hx_tag tag, const char *s)
{
	return hx_wire_put_bytes(w, tag, s, strlen(s));
}

size_t hx_wire_finish(struct hx_wbuf *w)
{
	uint32_t len = (uint32_t)w->len;

	if (w->overflow)
		return 0;
	memcpy(w->buf + offsetof(struct hx_wire_hdr, length), &len, 4);
	return w->len;
}

enum hx_wire_error hx_wire_open(struct hx_wreader *r, const void *buf, size_t n,
				struct hx_wire_hdr *hdr)
{
	if (n < HDR_SIZE)
		return HX_WIRE_SHORT;
	memcpy(hdr, buf, HDR_SIZE);
	if (hdr->version != HX_WIRE_VERSION)
		return HX_WIRE_VERSION_MISMATCH;
	if (hdr->length != n || n > HX_WIRE_MAX)
		return HX_WIRE_LENGTH;
	if (hdr->reserved != 0)
		return HX_WIRE_RESERVED;
	r->p = (const uint8_t *)buf + HDR_SIZE;
	r->end = (const uint8_t *)buf + n;
	return HX_WIRE_OK;
}

int hx_wire_next(struct hx_wreader *r, uint16_t *tag, const uint8_t **val,
		 uint16_t *len)
{
	if (r->p == r->end)
		return 0;
	if ((size_t)(r->end - r->p) < FIELD_HDR)
		return -1;
	memcpy(tag, r->p, 2);
	memcpy(len, r->p + 2, 2);
	if ((size_t)(r->end - r->p) - FIELD_HDR < *len)
		return -1;
	*val = r->p + FIELD_HDR;
	r->p += FIELD_HDR + *len;
	return 1;
}

#define T(x) (1u << HX_TAG_##x)

/* Which tags each message type may carry, and which it must. */
static const struct {
	uint32_t allowed, required;
} type_tags[] = {
    [HX_MSG_HELLO] = {T(PID) | T(TID) | T(PPID) | T(PATH) | T(ARG) | T(FLAGS) |
			  T(TRUNCATED),
		      T(PID)},
    [HX_MSG_HELLO_REPLY] = {T(FLAGS) | T(DEFAULT_READ) | T(READ_RULE) |
				T(READ_NEED) | T(SESSION),
			    T(FLAGS)},
    [HX_MSG_REQUEST] = {T(PID) | T(TID) | T(CALL) | T(OP) | T(PATH) | T(PATH2) |
			    T(FLAGS) | T(MODE) | T(ARG) | T(ADDR) | T(HOST) |
			    T(FRAME) | T(TRUNCATED) | T(PROTO) | T(ENVP),
			T(CALL) | T(OP)},
    [HX_MSG_VERDICT] = {T(VERDICT) | T(ERRNO) | T(RULE) | T(SEQ) | T(FLAGS),
			T(VERDICT)},
    [HX_MSG_REPORT] = {T(PID) | T(TID) | T(CALL) | T(OP) | T(PATH) | T(PATH2) |
			   T(FLAGS) | T(MODE) | T(ARG) | T(ADDR) | T(HOST) |
			   T(FRAME) | T(TRUNCATED) | T(RESULT),
		       T(CALL) | T(OP)},
};

/* Tags that may repeat. ADDR repeats only in reports (resolve results). */
#define REPEATED (T(ARG) | T(FRAME) | T(READ_RULE) | T(READ_NEED) | T(ADDR))

struct store {
	uint8_t *p;
	size_t used, cap;
};

static int copy_str(struct store *st, const uint8_t *v, uint16_t n,
		    struct hx_str *out)
{
	if (memchr(v, '\0', n) || st->cap - st->used < (size_t)n + 1)
		return -1;
	out->s = (const char *)st->p + st->used;
	out->len = n;
	memcpy(st->p + st->used, v, n);
	st->p[st->used + n] = '\0';
	st->used += (size_t)n + 1;
	return 0;
}

static int copy_bytes(struct store *st, const uint8_t *v, uint16_t n,
		      struct hx_bytes *out)
{
	size_t at = (st->used + 7) & ~(size_t)7;

	if (at > st->cap || st->cap - at < n)
		return -1;
	memcpy(st->p + at, v, n);
	out->p = st->p + at;
	out->len = n;
	st->used = at + n;
	return 0;
}

static int get_u32(const uint8_t *v, uint16_t n, uint32_t *out)
{
	if (n != 4)
		return -1;
	memcpy(out, v, 4);
	return 0;
}

static enum hx_wire_error decode_field(struct hx_msg *m, struct store *st,
				       uint16_t tag, const uint8_t *v,
				       uint16_t n)
{
	uint32_t *u = NULL;
	struct hx_str *s = NULL;

	switch (tag) {
	case HX_TAG_PID:
		u = &m->pid;
		break;
	case HX_TAG_TID:
		u = &m->tid;
		break;
	case HX_TAG_PPID:
		u = &m->ppid;
		break;
	case HX_TAG_CALL:
		u = &m->call;
		break;
	case HX_TAG_OP:
		u = &m->op;
		break;
	case HX_TAG_FLAGS:
		u = &m->flags;
		break;
	case HX_TAG_MODE:
		u = &m->mode;
		break;
	case HX_TAG_VERDICT:
		u = &m->verdict;
		break;
	case HX_TAG_ERRNO:
		u = &m->err;
		break;
	case HX_TAG_DEFAULT_READ:
		u = &m->default_read;
		break;
	case HX_TAG_TRUNCATED:
		u = &m->truncated;
		break;
	case HX_TAG_RESULT:
		u = &m->result;
		break;
	case HX_TAG_PROTO:
		u = &m->proto;
		break;
	case HX_TAG_PATH:
		s = &m->path;
		break;
	case HX_TAG_PATH2:
		s = &m->path2;
		break;
	case HX_TAG_HOST:
		s = &m->host;
		break;
	case HX_TAG_RULE:
		s = &m->rule;
		break;
	case HX_TAG_SESSION:
		s = &m->session;
		break;
	case HX_TAG_SEQ:
	case HX_TAG_ENVP:
		if (n != 8)
			return HX_WIRE_FIELD;
		memcpy(tag == HX_TAG_SEQ ? &m->seq : &m->envp, v, 8);
		return HX_WIRE_OK;
	case HX_TAG_ARG:
		if (m->nargs == HX_WIRE_MAX_ARGS)
			return HX_WIRE_TOO_MANY;
		return copy_str(st, v, n, &m->args[m->nargs++]) ? HX_WIRE_FIELD
								: HX_WIRE_OK;
	case HX_TAG_FRAME:
		if (m->nframes == HX_WIRE_MAX_FRAMES)
			return HX_WIRE_TOO_MANY;
		return copy_str(st, v, n, &m->frames[m->nframes++])
			   ? HX_WIRE_FIELD
			   : HX_WIRE_OK;
	case HX_TAG_ADDR:
		if (m->naddrs == HX_WIRE_MAX_ADDRS)
			return HX_WIRE_TOO_MANY;
		/* A sockaddr has at least its family, and no more than
		 * the kernel takes of it (a unix one: 110 bytes). */
		if (n > HX_WIRE_MAX_SOCKADDR || !hx_sockaddr_len_ok(v, n))
			return HX_WIRE_FIELD;
		return copy_bytes(st, v, n, &m->addrs[m->naddrs++])
			   ? HX_WIRE_FIELD
			   : HX_WIRE_OK;
	case HX_TAG_READ_NEED: /* the shim's alone (readrules.c) */
		return n == 8 ? HX_WIRE_OK : HX_WIRE_FIELD;
	case HX_TAG_READ_RULE:
		if (m->nrules == HX_WIRE_MAX_RULES)
			return HX_WIRE_TOO_MANY;
		if (n < 2 || v[0] > HX_VERDICT_DENY)
			return HX_WIRE_FIELD;
		m->rules[m->nrules].verdict = v[0];
		return copy_str(st, v + 1, (uint16_t)(n - 1),
				&m->rules[m->nrules++].pattern)
			   ? HX_WIRE_FIELD
			   : HX_WIRE_OK;
	default:
		return HX_WIRE_TAG;
	}
	if (u)
		return get_u32(v, n, u) ? HX_WIRE_FIELD : HX_WIRE_OK;
	return copy_str(st, v, n, s) ? HX_WIRE_FIELD : HX_WIRE_OK;
}

/* Whether m carries only the fields its op names its object by
 * (types.h): a host for a lookup, an address for the network, a path
 * and argv for the rest. A request for a write that also named a host
 * (or an exec an address) was recorded with both, and the tree and the
 * summary showed the host (the eleventh attack review: "deny write
 * harmless.example" for a write to ~/.ssh; a connect to 127.0.0.1
 * among the top hosts as api.github.com). */
static bool op_fields_fit(const struct hx_msg *m)
{
	const uint32_t named =
	    1u << HX_TAG_PATH | 1u << HX_TAG_PATH2 | 1u << HX_TAG_ARG;
	bool net = m->op == HX_OP_CONNECT || m->op == HX_OP_SEND ||
		   m->op == HX_OP_LISTEN || m->op == HX_OP_RESOLVE;

	if (!hx_msg_has(m, HX_TAG_OP))
		return true;
	if (hx_msg_has(m, HX_TAG_HOST) && m->op != HX_OP_RESOLVE)
		return false;
	return net ? !(m->present & named) : !m->naddrs;
}

enum hx_wire_error hx_wire_decode(const void *buf, size_t n, struct hx_msg *m)
{
	struct hx_wreader r;
	struct store st = {m->store, 0, sizeof(m->store)};
	enum hx_wire_error e;
	uint16_t tag, len;
	const uint8_t *v;
	int more;

	memset(m, 0, offsetof(struct hx_msg, args));
	m->nargs = m->nframes = m->naddrs = m->nrules = 0;
	e = hx_wire_open(&r, buf, n, &m->hdr);
	if (e)
		return e;
	if (m->hdr.type < HX_MSG_HELLO || m->hdr.type > HX_MSG_REPORT)
		return HX_WIRE_TYPE;
	while ((more = hx_wire_next(&r, &tag, &v, &len)) == 1) {
		if (tag >= 32 ||
		    !(type_tags[m->hdr.type].allowed & (1u << tag)))
			return HX_WIRE_TAG;
		if (!(REPEATED & (1u << tag)) ||
		    (tag == HX_TAG_ADDR && m->hdr.type != HX_MSG_REPORT)) {
			if (m->present & (1u << tag))
				return HX_WIRE_DUPLICATE;
		}
		m->present |= 1u << tag;
		e = decode_field(m, &st, tag, v, len);
		if (e)
			return e;
	}
	if (more < 0)
		return HX_WIRE_SHORT;
	if ((m->present & type_tags[m->hdr.type].required) !=
	    type_tags[m->hdr.type].required)
		return HX_WIRE_MISSING;
	if (hx_msg_has(m, HX_TAG_CALL) && m->call >= HX_CALL_COUNT)
		return HX_WIRE_FIELD;
	if (hx_msg_has(m, HX_TAG_OP) && m->op >= HX_OP_COUNT)
		return HX_WIRE_FIELD;
	if (!op_fields_fit(m))
		return HX_WIRE_TAG;
	if (hx_msg_has(m, HX_TAG_VERDICT) && m->verdict > HX_VERDICT_DENY)
		return HX_WIRE_FIELD;
	return HX_WIRE_OK;
}

bool hx_msg_has(const struct hx_msg *m, enum hx_tag tag)
{
	return (m->present >> tag) & 1u;
}

const char *hx_wire_error_name(enum hx_wire_error e)
{
	static const char *const names[] = {
	    [HX_WIRE_OK] = "ok",
	    [HX_WIRE_SHORT] = "truncated message",
	    [HX_WIRE_LENGTH] = "length mismatch",
	    [HX_WIRE_VERSION_MISMATCH] = "protocol version mismatch",
	    [HX_WIRE_TYPE] = "unknown message type",
	    [HX_WIRE_TAG] = "unexpected field",
	    [HX_WIRE_DUPLICATE] = "duplicated field",
	    [HX_WIRE_FIELD] = "malformed field",
	    [HX_WIRE_TOO_MANY] = "too many fields",
	    [HX_WIRE_MISSING] = "required field missing",
	    [HX_WIRE_RESERVED] = "reserved bits set",
	};

	return (unsigned)e < sizeof(names) / sizeof(names[0]) ? names[e]
							      : "unknown error";
}

const char *hx_call_name(uint32_t call)
{
	static const char *const names[HX_CALL_COUNT] = {
	    [HX_CALL_EXECVE] = "execve",
	    [HX_CALL_EXECV] = "execv",
	    [HX_CALL_EXECVP] = "execvp",
	    [HX_CALL_EXECVPE] = "execvpe",
	    [HX_CALL_EXECL] = "execl",
	    [HX_CALL_EXECLP] = "execlp",
	    [HX_CALL_EXECLE] = "execle",
	    [HX_CALL_FEXECVE] = "fexecve",
	    [HX_CALL_EXECVEAT] = "execveat",
	    [HX_CALL_POSIX_SPAWN] = "posix_spawn",
	    [HX_CALL_POSIX_SPAWNP] = "posix_spawnp",
	    [HX_CALL_SYSTEM] = "system",
	    [HX_CALL_POPEN] = "popen",
	    [HX_CALL_OPEN] = "open",
	    [HX_CALL_OPENAT] = "openat",
	    [HX_CALL_CREAT] = "creat",
	    [HX_CALL_FOPEN] = "fopen",
	    [HX_CALL_FREOPEN] = "freopen",
	    [HX_CALL_RENAME] = "rename",
	    [HX_CALL_RENAMEAT] = "renameat",
	    [HX_CALL_RENAMEAT2] = "renameat2",
	    [HX_CALL_UNLINK] = "unlink",
	    [HX_CALL_UNLINKAT] = "unlinkat",
	    [HX_CALL_RMDIR] = "rmdir",
	    [HX_CALL_MKDIR] = "mkdir",
	    [HX_CALL_MKDIRAT] = "mkdirat",
	    [HX_CALL_LINK] = "link",
	    [HX_CALL_LINKAT] = "linkat",
	    [HX_CALL_SYMLINK] = "symlink",
	    [HX_CALL_SYMLINKAT] = "symlinkat",
	    [HX_CALL_TRUNCATE] = "truncate",
	    [HX_CALL_CONNECT] = "connect",
	    [HX_CALL_SENDTO] = "sendto",
	    [HX_CALL_SENDMSG] = "sendmsg",
	    [HX_CALL_GETADDRINFO] = "getaddrinfo",
	    [HX_CALL_GETHOSTBYNAME] = "gethostbyname",
	    [HX_CALL_GETHOSTBYNAME2] = "gethostbyname2",
	    [HX_CALL_SYSCALL] = "syscall",
	    [HX_CALL_CHMOD] = "chmod",
	    [HX_CALL_CHOWN] = "chown",
	    [HX_CALL_FCHMOD] = "fchmod",
	    [HX_CALL_FCHOWN] = "fchown",
	    [HX_CALL_SETXATTR] = "setxattr",
	    [HX_CALL_REMOVEXATTR] = "removexattr",
	    [HX_CALL_UTIMES] = "utimensat",
	    [HX_CALL_MKNOD] = "mknod",
	    [HX_CALL_BIND] = "bind",
	    [HX_CALL_IOCTL] = "ioctl",
	    [HX_CALL_DNS_QUERY] = "dns_query",
	    [HX_CALL_LISTEN] = "listen",
	    [HX_CALL_INOTIFY_ADD_WATCH] = "inotify_add_watch",
	    [HX_CALL_SOCKET] = "socket",
	};

	return call < HX_CALL_COUNT && names[call] ? names[call] : "unknown";
}
