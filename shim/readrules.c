/* Local read rules; see readrules.h. */
#define _GNU_SOURCE
#include "shim/readrules.h"

#include <fcntl.h>
#include <string.h>

#include "common/glob.h"

void hx_read_rules_reset(struct hx_read_rules *t)
{
	t->flags = 0;
	t->default_read = HX_VERDICT_DENY;
	t->nrules = 0;
	t->used = 0;
	t->ngroups = 0;
	t->sorted = true;
}

/* Rule i, its need known, into its key's group while they come in
 * order. */
static void index_rule(struct hx_read_rules *t, size_t i)
{
	const char *g = t->store + t->rule[i].off;
	struct hx_glob_group *last =
	    t->ngroups ? &t->group[t->ngroups - 1] : NULL;
	int c;

	if (!t->sorted)
		return;
	c = last ? hx_glob_key_cmp(last->key, last->klen, g, t->need[i].key)
		 : -1;
	if (c > 0)
		t->sorted = false;
	else if (c == 0)
		last->count++;
	else
		t->group[t->ngroups++] =
		    (struct hx_glob_group){g, t->need[i].key, (uint32_t)i, 1};
}

/* Copies one rule, its need not worked out yet (need.len 0). */
static int add_raw(struct hx_read_rules *t, uint8_t verdict,
		   const char *pattern, size_t len)
{
	if (verdict > HX_VERDICT_DENY || t->nrules == HX_WIRE_MAX_RULES ||
	    sizeof(t->store) - t->used < len + 1 || memchr(pattern, 0, len))
		return -1;
	t->rule[t->nrules].verdict = verdict;
	t->rule[t->nrules].off = (uint32_t)t->used;
	memcpy(t->store + t->used, pattern, len);
	t->store[t->used + len] = '\0';
	t->used += len + 1;
	t->need[t->nrules++] = (struct hx_glob_need){0};
	return 0;
}

int hx_read_rules_add(struct hx_read_rules *t, uint8_t verdict,
		      const char *pattern, size_t len)
{
	if (add_raw(t, verdict, pattern, len))
		return -1;
	hx_glob_need_of(t->store + t->rule[t->nrules - 1].off,
			&t->need[t->nrules - 1]);
	index_rule(t, t->nrules - 1);
	return 0;
}

/* The last rule's need as the supervisor sent it (4 x u16), bounded by
 * its pattern. */
static int take_need(struct hx_read_rules *t, const uint8_t *v)
{
	uint16_t f[4];
	size_t len;

	if (!t->nrules)
		return -1;
	memcpy(f, v, sizeof(f));
	len = strlen(t->store + t->rule[t->nrules - 1].off);
	if (!len || f[0] > len || f[1] > len || f[2] > len || f[3] > len - f[2])
		return -1;
	t->need[t->nrules - 1] =
	    (struct hx_glob_need){f[0], (uint32_t)len, f[1], f[2], f[3]};
	return 0;
}

int hx_read_rules_from_hello(struct hx_read_rules *t, const void *buf, size_t n,
			     uint32_t id)
{
	struct hx_wreader r;
	struct hx_wire_hdr h;
	const uint8_t *v;
	uint16_t tag, len;
	int more, have_flags = 0;

	hx_read_rules_reset(t);
	if (hx_wire_open(&r, buf, n, &h) != HX_WIRE_OK ||
	    h.type != HX_MSG_HELLO_REPLY || h.id != id)
		goto bad;
	while ((more = hx_wire_next(&r, &tag, &v, &len)) == 1) {
		switch (tag) {
		case HX_TAG_FLAGS:
			if (len != 4)
				goto bad;
			memcpy(&t->flags, v, 4);
			have_flags = 1;
			break;
		case HX_TAG_DEFAULT_READ:
			if (len != 4)
				goto bad;
			memcpy(&t->default_read, v, 4);
			if (t->default_read > HX_VERDICT_DENY)
				goto bad;
			break;
		case HX_TAG_READ_RULE:
			if (len < 2 ||
			    add_raw(t, v[0], (const char *)v + 1, len - 1u))
				goto bad;
			break;
		case HX_TAG_READ_NEED:
			if (len != 8 || take_need(t, v))
				goto bad;
			break;
		case HX_TAG_SESSION:
			break;
		default:
			goto bad;
		}
	}
	if (more < 0 || !have_flags)
		goto bad;
	/* a rule sent without its need (none of ours) has it worked out */
	for (size_t i = 0; i < t->nrules; i++) {
		if (!t->need[i].len)
			hx_glob_need_of(t->store + t->rule[i].off, &t->need[i]);
		index_rule(t, i);
	}
	return 0;
bad:
	hx_read_rules_reset(t);
	return -1;
}

struct judging {
	const struct hx_read_rules *t;
	const char *path;
	size_t plen;
	int best;
};

static void judge(const struct hx_glob_group *g, void *arg)
{
	struct judging *j = arg;
	const struct hx_read_rules *t = j->t;

	for (uint32_t i = g->first; i < g->first + g->count; i++) {
		const char *pat = t->store + t->rule[i].off;

		if ((int)t->rule[i].verdict > j->best &&
		    hx_glob_need_holds(pat, &t->need[i], j->path, j->plen) &&
		    hx_glob_match(pat, j->path))
			j->best = t->rule[i].verdict;
	}
}

enum hx_verdict hx_read_verdict(const struct hx_read_rules *t, const char *path)
{
	struct judging j = {t, path, 0, -1};

	if (t->sorted && path[0] == '/') {
		j.plen = strlen(path);
		hx_glob_groups_visit(t->group, t->ngroups, path, j.plen, judge,
				     &j);
	} else {
		for (size_t i = 0; i < t->nrules; i++) {
			if ((int)t->rule[i].verdict <= j.best)
				continue;
			if (hx_glob_match(t->store + t->rule[i].off, path))
				j.best = t->rule[i].verdict;
		}
	}
	return j.best < 0 ? (enum hx_verdict)t->default_read
			  : (enum hx_verdict)j.best;
}

bool hx_read_local_allow(const struct hx_read_rules *t, const char *path)
{
	return (t->flags & HX_HELLO_LOCAL_READS) &&
	       hx_read_verdict(t, path) == HX_VERDICT_ALLOW;
}

bool hx_open_is_read(int flags)
{
	return (flags & O_ACCMODE) == O_RDONLY &&
	       !(flags & (O_CREAT | O_TRUNC)) &&
	       (flags & O_TMPFILE) != O_TMPFILE;
}

enum hx_op hx_open_op(int flags)
{
	return hx_open_is_read(flags) ? HX_OP_READ : HX_OP_WRITE;
}

int hx_fopen_flags(const char *mode)
{
	int flags;

	switch (mode ? mode[0] : 0) {
	case 'r':
		flags = O_RDONLY;
		break;
	case 'w':
		flags = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	case 'a':
		flags = O_WRONLY | O_CREAT | O_APPEND;
		break;
	default:
		return -1;
	}
	/* glibc reads at most 6 more characters, up to ",ccs=". */
	for (int i = 1; i < 7 && mode[i] && mode[i] != ','; i++) {
		switch (mode[i]) {
		case '+':
			flags = (flags & ~O_ACCMODE) | O_RDWR;
			break;
		case 'x':
			flags |= O_EXCL;
			break;
		case 'e':
			flags |= O_CLOEXEC;
			break;
		default:
			break;
		}
	}
	return flags;
}
