/* Denial notice; see notice.h. */
#include "common/notice.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/un.h>

#include "common/names.h"
#include "common/path.h"
#include "common/sys.h"

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
	put(&b, hx_op_name(n->op));
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
