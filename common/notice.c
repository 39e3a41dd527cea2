/* Denial notice; see notice.h. */
#include "common/notice.h"

#include <string.h>

#include "common/names.h"
#include "common/path.h"
#include "common/sbuf.h"
#include "common/sys.h"

static void put_text(struct hx_sbuf *b, const char *s)
{
	hx_sbuf_put_escaped(b, s, strlen(s));
}

size_t hx_text_escape(char *buf, size_t cap, const char *s)
{
	struct hx_sbuf b = {buf, cap, 0};

	if (cap == 0)
		return 0;
	buf[0] = '\0';
	put_text(&b, s);
	return b.len;
}

const char *hx_text_safe(char *buf, size_t cap, const char *s)
{
	hx_text_escape(buf, cap, s ? s : "");
	return buf;
}

/* The end of the line: the rule and what to do, or why nobody was
 * asked. */
static void put_why(struct hx_sbuf *b, const struct hx_notice *n)
{
	if (!n->rule) {
		hx_sbuf_put(b, " (supervisor unreachable)");
		return;
	}
	hx_sbuf_put(b, " (rule ");
	put_text(b, *n->rule ? n->rule : "?");
	if (n->origin) {
		hx_sbuf_put(b, " at ");
		put_text(b, n->origin);
	}
	/* What to do: a retry of the same call gets the same. */
	hx_sbuf_put(b, n->verdict == HX_VERDICT_ASK
			   ? "; it needs a person's approval: ask the user, "
			     "do not retry)"
			   : "; the policy refuses it: do not retry)");
}

/* What was refused: the op, its path(s) or address, an exec's argv. */
static void put_what(struct hx_sbuf *b, const struct hx_notice *n)
{
	/* An ask nobody allowed (or none could: ask_timeout 0). */
	hx_sbuf_put(b, n->rule && n->verdict == HX_VERDICT_ASK
			   ? "harness: not approved: "
			   : "harness: denied ");
	/* An op of no hx_op (a kernel layer's ptrace or signal refusal):
	 * the target names it ("denied ptrace", not "denied ? ptrace"). */
	if ((unsigned)n->op < HX_OP_COUNT) {
		hx_sbuf_put(b, hx_op_name(n->op));
		hx_sbuf_put(b, " ");
	}
	if (n->spelled && n->target)
		hx_sbuf_put(b, n->target);
	else
		put_text(b, n->target && *n->target ? n->target : "?");
	if (n->target2 && (n->op == HX_OP_RENAME || n->op == HX_OP_LINK ||
			   n->op == HX_OP_SYMLINK)) {
		/* Both names: the refused side may be either. */
		hx_sbuf_put(b, n->op == HX_OP_RENAME ? " -> " : " to ");
		put_text(b, *n->target2 ? n->target2 : "?");
	}
	if (n->argv && n->argv[0]) {
		/* The command as run: "exec /usr/bin/git: git push". */
		hx_sbuf_put(b, ":");
		for (size_t i = 0; n->argv[i] && b->len + 1 < b->cap; i++) {
			hx_sbuf_put(b, " ");
			put_text(b, n->argv[i]);
		}
	}
}

size_t hx_notice_format(char *buf, size_t cap, const struct hx_notice *n)
{
	char why[HX_NOTICE_WHY];
	struct hx_sbuf w = {why, sizeof(why), 0}, b = {buf, cap, 0};
	static const char cut[] = "...";

	if (cap == 0)
		return 0;
	buf[0] = '\0';
	put_why(&w, n);
	/* The rule and the advice always fit: what was refused gives way
	 * (a long word of a command), its cut marked. */
	if (cap > w.len + sizeof(cut) + 1) {
		b.cap = cap - w.len - 1;
		put_what(&b, n);
		if (b.len + 1 == b.cap && b.len >= sizeof(cut) - 1)
			memcpy(buf + b.len - (sizeof(cut) - 1), cut,
			       sizeof(cut) - 1);
		b.cap = cap;
	}
	hx_sbuf_put_n(&b, why, w.len);
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
	static char last[HX_NOTICE_LINE];
	static long last_pid;
	struct hx_notice key = *n;
	char line[HX_NOTICE_LINE];

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
	char line[HX_NOTICE_LINE];
	size_t len;

	if (hx_notice_repeat(n, hx_getpid()))
		return;
	len = hx_notice_format(line, sizeof(line), n);
	hx_write_all(2, line, len);
}
