/* Denial notice; see notice.h. */
#include "common/notice.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/un.h>

#include "common/path.h"
#include "shim/sys.h"

const char *hx_notice_op_name(unsigned op)
{
	static const char *const names[HX_OP_COUNT] = {
	    [HX_OP_EXEC] = "exec",	 [HX_OP_READ] = "read",
	    [HX_OP_WRITE] = "write",	 [HX_OP_RENAME] = "rename",
	    [HX_OP_UNLINK] = "unlink",	 [HX_OP_RMDIR] = "rmdir",
	    [HX_OP_MKDIR] = "mkdir",	 [HX_OP_LINK] = "link",
	    [HX_OP_SYMLINK] = "symlink", [HX_OP_TRUNCATE] = "truncate",
	    [HX_OP_CONNECT] = "connect", [HX_OP_SEND] = "send",
	    [HX_OP_RESOLVE] = "resolve",
	};

	return op < HX_OP_COUNT ? names[op] : "event";
}

struct sbuf {
	char *p;
	size_t cap, len;
};

static void put(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);

	if (b->cap == 0)
		return;
	if (n > b->cap - 1 - b->len)
		n = b->cap - 1 - b->len;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* s as text, each byte that is not printable ASCII as \xNN and a
 * backslash doubled: a path or argv is the agent's choice, and the
 * supervisor prints kernel-layer refusals on the user's terminal, where
 * an escape sequence would move the cursor, retitle the window or
 * write "harness: session ok" over what happened. */
static void put_esc(struct sbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	char e[5];

	for (; *s && b->len + 1 < b->cap; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\') {
			put(b, "\\\\");
		} else if (c < 0x20 || c >= 0x7f) {
			e[0] = '\\';
			e[1] = 'x';
			e[2] = hex[c >> 4];
			e[3] = hex[c & 15];
			e[4] = '\0';
			put(b, e);
		} else {
			b->p[b->len++] = (char)c;
			b->p[b->len] = '\0';
		}
	}
}

size_t hx_text_escape(char *buf, size_t cap, const char *s)
{
	struct sbuf b = {buf, cap, 0};

	if (cap == 0)
		return 0;
	buf[0] = '\0';
	put_esc(&b, s);
	return b.len;
}

size_t hx_notice_format(char *buf, size_t cap, const struct hx_notice *n)
{
	struct sbuf b = {buf, cap, 0};

	if (cap == 0)
		return 0;
	buf[0] = '\0';
	/* ask is refused until approvals exist: say it needs one. */
	put(&b, n->rule && n->verdict == HX_VERDICT_ASK
		    ? "harness: needs approval, refused: "
		    : "harness: denied ");
	put(&b, hx_notice_op_name(n->op));
	put(&b, " ");
	put_esc(&b, n->target && *n->target ? n->target : "?");
	if (n->argv && n->argv[0]) {
		/* The command as run: "exec /usr/bin/git: git push". */
		put(&b, ":");
		for (size_t i = 0; n->argv[i] && b.len < cap / 2; i++) {
			put(&b, " ");
			put_esc(&b, n->argv[i]);
		}
	}
	if (n->rule) {
		put(&b, " (rule ");
		put_esc(&b, *n->rule ? n->rule : "?");
		put(&b, ")");
	} else {
		put(&b, " (supervisor unreachable)");
	}
	/* The newline survives truncation. */
	if (b.len == cap - 1 && cap > 1)
		b.len--;
	b.p[b.len++] = '\n';
	b.p[b.len] = '\0';
	return b.len;
}

bool hx_notice_repeat(const struct hx_notice *n, long pid)
{
	/* One per process and denial: a shell's PATH search asks for
	 * /usr/bin/git, then /bin/git (the same file on merged /usr) with
	 * the same argv. Unlocked: a race prints one line twice, no more. */
	static char last[512];
	static long last_pid;
	struct hx_notice key = *n;
	char line[512];

	if (n->argv && n->argv[0])
		key.target = NULL; /* an exec is its argv and rule */
	hx_notice_format(line, sizeof(line), &key);
	if (last_pid == pid && !strcmp(last, line))
		return true;
	memcpy(last, line, sizeof(last));
	last_pid = pid;
	return false;
}

void hx_notice_write(const struct hx_notice *n)
{
	char line[1024];
	size_t len;

	if (hx_notice_repeat(n, hx_getpid()))
		return;
	len = hx_notice_format(line, sizeof(line), n);
	hx_write_all(2, line, len);
}

static void put_uint(struct sbuf *b, unsigned v)
{
	char d[21];

	d[hx_utoa(v, d)] = '\0';
	put(b, d);
}

void hx_addr_format(const struct sockaddr *sa, size_t len, char *buf,
		    size_t cap)
{
	struct sbuf b = {buf, cap, 0};
	char ip[INET6_ADDRSTRLEN];

	if (cap == 0)
		return;
	buf[0] = '\0';
	if (!sa || len < sizeof(sa_family_t)) {
		put(&b, "?");
		return;
	}
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		put(&b, ip);
		put(&b, ":");
		put_uint(&b, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6 &&
		   len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		put(&b, "[");
		put(&b, ip);
		put(&b, "]:");
		put_uint(&b, ntohs(in6->sin6_port));
	} else if (sa->sa_family == AF_UNIX) {
		const struct sockaddr_un *un = (const void *)sa;
		size_t n = len - offsetof(struct sockaddr_un, sun_path);
		char path[sizeof(un->sun_path) + 2];

		if (n > sizeof(un->sun_path))
			n = sizeof(un->sun_path);
		if (n && un->sun_path[0] == '\0') {
			path[0] = '@';
			memcpy(path + 1, un->sun_path + 1, n - 1);
			path[n] = '\0';
		} else {
			memcpy(path, un->sun_path, n);
			path[n] = '\0';
		}
		put(&b, path);
	} else {
		put(&b, "family ");
		put_uint(&b, sa->sa_family);
	}
}
