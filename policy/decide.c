/* hx_policy_decide: the hot path. No locks: the compiled policy is
 * read-only. No allocation, but for an exec whose argv holds a script or
 * a wrapper's command (its reading, cmdview.c, freed before return). */
#include "policy/cmdview.h"
#include "common/glob.h"
#include "common/sockaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/un.h>

static const char malformed[] = "harness:malformed";

/* The winner so far: highest verdict, then highest specificity, then
 * the first in file order. */
struct best {
	const struct hx_rule *rule;
	const struct hx_pattern *pat;
};

/* Where r is written ("file:line"), or NULL for the harness's own. */
static const char *rule_origin(const struct hx_rule *r)
{
	return r->origin && strcmp(r->origin, "harness") ? r->origin : NULL;
}

static void consider(struct best *b, const struct hx_rule *r,
		     const struct hx_pattern *pt)
{
	if (!b->rule || r->verdict > b->rule->verdict ||
	    (r->verdict == b->rule->verdict && pt->spec > b->pat->spec)) {
		b->rule = r;
		b->pat = pt;
	}
}

static void finish(const struct hx_policy *p, const struct best *b,
		   enum hx_category defcat, struct hx_decision *out)
{
	if (b->rule) {
		out->verdict = b->rule->verdict;
		out->rule = b->rule->name;
		out->origin = rule_origin(b->rule);
		out->pattern = b->pat->text;
		out->neighbours = b->rule->neighbours;
		out->keep_existing = b->rule->keep_existing;
		out->own_files = b->rule->own_files;
	} else {
		out->verdict = p->defaults[defcat];
		out->rule = hx_default_rule_name(defcat);
		out->origin = NULL;
		out->pattern = NULL;
		out->neighbours = false;
		out->keep_existing = false;
		out->own_files = false;
	}
}

/* Whether a pattern of the protect rule r matches path (out set). */
static bool protected_by(const struct hx_rule *r, const char *path,
			 struct hx_decision *out)
{
	size_t plen = strlen(path);

	for (size_t i = 0; i < r->npats; i++) {
		const struct hx_glob_need *n =
		    i < r->nneeds ? &r->needs[i] : NULL;
		const char *g = r->pats[i].text;

		/* a match starts with the glob's key (globindex.h) */
		if ((!n || (plen >= n->key && !memcmp(path, g, n->key) &&
			    hx_glob_need_holds(g, n, path, plen))) &&
		    hx_glob_match(g, path)) {
			out->verdict = HX_VERDICT_DENY;
			out->rule = r->name;
			out->origin = rule_origin(r);
			out->pattern = r->pats[i].text;
			return true;
		}
	}
	return false;
}

bool hx_policy_protects(const struct hx_policy *p, const char *path,
			struct hx_decision *out)
{
	return protected_by(&p->protect, path, out);
}

static void check_file(const struct hx_policy *p, const char *path,
		       unsigned access, struct hx_decision *out)
{
	enum hx_category cat =
	    access == HX_ACCESS_READ ? HX_CAT_FILE_READ : HX_CAT_FILE_WRITE;
	struct best b = {0};

	/* The harness's own files beat every rule of the policy. */
	if (protected_by(&p->protect, path, out) ||
	    ((access & HX_ACCESS_WRITE) &&
	     protected_by(&p->protect_write, path, out)))
		return;
	if (p->files && path[0] == '/') {
		uint64_t bits[HX_FILE_INDEX_WORDS];
		size_t words = hx_file_index_mark(p->files, path, bits);
		size_t plen = strlen(path);

		for (size_t w = 0; w < words; w++)
			for (uint64_t m = bits[w]; m; m &= m - 1) {
				const struct hx_fref *f = hx_file_index_ref(
				    p->files,
				    w * 64 + (size_t)__builtin_ctzll(m));

				if ((f->rule->access & access) &&
				    hx_glob_need_holds(f->pat->text, &f->need,
						       path, plen) &&
				    hx_glob_match(f->pat->text, path))
					consider(&b, f->rule, f->pat);
			}
		finish(p, &b, cat, out);
		return;
	}
	for (size_t i = 0; i < p->nrules[HX_SEC_FILES]; i++) {
		const struct hx_rule *r = &p->rules[HX_SEC_FILES][i];

		if (!(r->access & access))
			continue;
		for (size_t k = 0; k < r->npats; k++)
			if (hx_glob_match(r->pats[k].text, path))
				consider(&b, r, &r->pats[k]);
	}
	finish(p, &b, cat, out);
}

/* A rename moves every path beneath its source (and puts whatever is
 * beneath it under the destination): refused, with the rule's verdict,
 * when a deny or ask pattern may match something beneath either and the
 * move can change which paths it matches. */
static void check_moved(const struct hx_policy *p, const char *from,
			const char *to, struct hx_decision *out)
{
	const struct hx_rule *prot[2] = {&p->protect, &p->protect_write};
	struct best b = {0};

	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < prot[k]->npats; i++) {
			const char *g = prot[k]->pats[i].text;

			if ((hx_glob_match_beneath(g, from) ||
			     hx_glob_match_beneath(g, to)) &&
			    !hx_glob_rename_keeps(g, from, to)) {
				out->verdict = HX_VERDICT_DENY;
				out->rule = prot[k]->name;
				out->origin = rule_origin(prot[k]);
				out->pattern = g;
				return;
			}
		}
	for (size_t i = 0; i < p->nrules[HX_SEC_FILES]; i++) {
		const struct hx_rule *r = &p->rules[HX_SEC_FILES][i];

		if (r->verdict == HX_VERDICT_ALLOW)
			continue;
		for (size_t k = 0; k < r->npats; k++) {
			const char *g = r->pats[k].text;

			if ((hx_glob_match_beneath(g, from) ||
			     hx_glob_match_beneath(g, to)) &&
			    !hx_glob_rename_keeps(g, from, to))
				consider(&b, r, &r->pats[k]);
		}
	}
	if (b.rule) {
		out->verdict = b.rule->verdict;
		out->rule = b.rule->name;
		out->origin = rule_origin(b.rule);
		out->pattern = b.pat->text;
	} else {
		out->verdict = HX_VERDICT_ALLOW;
		out->pattern = NULL;
	}
}

/* A move takes away every path beneath dir, or puts one there, as a
 * write of it would: where no write rule allows all of them, a
 * directory moved to a place the policy allows by its own name only
 * (~/go, which the toolchains profile lets a first run make) would put
 * beneath it what the policy refuses to write (~/go/bin/gopls), and
 * one moved away would take the user's files from beneath it. The deny
 * and ask patterns beneath are check_moved's; this is the default's
 * verdict, unless an allow rule takes the whole of dir's subtree. */
static void check_subtree(const struct hx_policy *p, const char *dir,
			  struct hx_decision *out)
{
	out->verdict = HX_VERDICT_ALLOW;
	out->pattern = NULL;
	if (p->defaults[HX_CAT_FILE_WRITE] == HX_VERDICT_ALLOW)
		return;
	for (size_t i = 0; i < p->nrules[HX_SEC_FILES]; i++) {
		const struct hx_rule *r = &p->rules[HX_SEC_FILES][i];

		if (r->verdict != HX_VERDICT_ALLOW ||
		    !(r->access & HX_ACCESS_WRITE))
			continue;
		for (size_t k = 0; k < r->npats; k++)
			if (hx_glob_covers_beneath(r->pats[k].text, dir))
				return;
	}
	out->verdict = p->defaults[HX_CAT_FILE_WRITE];
	out->rule = hx_default_rule_name(HX_CAT_FILE_WRITE);
	out->origin = NULL;
}

static void stronger(struct hx_decision *a, const struct hx_decision *b);

/* A symlink puts what is beneath its target beneath its own name, as a
 * rename would: where the agent may write the target, what it planted
 * there (a .claude/settings.json, a .husky/ hook) must not appear under
 * a name a deny or ask rule holds. A target it cannot write (npm link,
 * /usr/include) brings nothing of the agent's. */
static void check_link(const struct hx_policy *p, const struct hx_event *ev,
		       struct hx_decision *out)
{
	const char *targets[2] = {ev->link_target, ev->link_target_resolved};
	struct hx_decision w, moved;
	bool writable = false;

	for (int i = 0; i < 2; i++) {
		if (!targets[i])
			continue;
		check_file(p, targets[i], HX_ACCESS_WRITE, &w);
		if (w.verdict != HX_VERDICT_ALLOW)
			continue;
		writable = true;
		check_moved(p, targets[i], ev->path, &moved);
		if (moved.verdict != HX_VERDICT_ALLOW)
			stronger(out, &moved);
	}
	if (!writable)
		return;
	check_subtree(p, ev->path, &moved); /* the link's side: once */
	if (moved.verdict != HX_VERDICT_ALLOW)
		stronger(out, &moved);
}

/* a or b, whichever is stronger: the verdict, then a rule over a
 * default, then a. */
static void stronger(struct hx_decision *a, const struct hx_decision *b)
{
	if (b->verdict > a->verdict ||
	    (b->verdict == a->verdict && !a->pattern && b->pattern)) {
		a->verdict = b->verdict;
		a->rule = b->rule;
		a->origin = b->origin;
		a->pattern = b->pattern;
	}
}

/* The policy's workspace, with the event's way to resolve a path. */
static struct hx_workspace ws_of(const struct hx_policy *p,
				 const struct hx_event *ev)
{
	struct hx_workspace ws = p->ws;

	ws.resolve = ev->resolve;
	ws.resolve_arg = ev->resolve_arg;
	ws.git_env_config = ev->git_env_config;
	return ws;
}

/* The strongest exec rule matching part j of v: part 0 is the argv as
 * the kernel runs it; the others, what it runs in turn (sh -c, env,
 * xargs, ...), count for deny and ask only, so that a part can make a
 * verdict stronger, never weaker. class: patterns match a part's
 * class. */
static void judge_part(const struct hx_policy *p, const struct hx_event *ev,
		       const struct hx_cmd_view *v, size_t j, struct best *b)
{
	for (size_t i = 0; i < p->nrules[HX_SEC_EXEC]; i++) {
		const struct hx_rule *r = &p->rules[HX_SEC_EXEC][i];

		if (j > 0 && (r->verdict == HX_VERDICT_ALLOW || ev->argv_only))
			continue;
		for (size_t k = 0; k < r->npats; k++) {
			const struct hx_execpat *ep = &r->pats[k].u.exec;

			if (j == 0 && !ep->cls
				? hx_execpat_match(ep, ev->path, ev->argv,
						   ev->argc)
				: hx_execpat_match_part(ep, &v->parts[j]))
				consider(b, r, &r->pats[k]);
		}
	}
}

/* Appends part p to judged_as ("git push; rm -rf x"), shortened with
 * "..." when it does not fit. */
static void judged_part(const struct hx_cmd_part *p, char *out, size_t size)
{
	size_t len = strlen(out);

	if (len && len + 3 < size) {
		memcpy(out + len, "; ", 3);
		len += 2;
	}
	if (len + 4 < size)
		hx_cmd_part_format(p, out + len, size - len);
	else if (size > 4)
		memcpy(out + size - 4, "...", 4);
}

static void check_exec(const struct hx_policy *p, const struct hx_event *ev,
		       struct hx_decision *out)
{
	const struct hx_workspace ws = ws_of(p, ev);
	int verdicts[HX_VIEW_MAX_PARTS]; /* each part's; -1: no rule */
	struct hx_cmd_view v;
	struct best b = {0};
	size_t by = 0;

	hx_cmdview_build(&v, ev->path, ev->argv, ev->argc, ev->cwd, &ws);
	for (size_t j = 0; j < v.nparts; j++) {
		struct best pj = {0};
		const struct best was = b;

		judge_part(p, ev, &v, j, &pj);
		verdicts[j] = pj.rule ? (int)pj.rule->verdict : -1;
		if (!pj.rule)
			continue;
		consider(&b, pj.rule, pj.pat);
		if (b.rule != was.rule || b.pat != was.pat)
			by = j;
	}
	finish(p, &b, HX_CAT_EXEC, out);
	out->cls = v.cls;
	out->risk = hx_cmd_class_risk(v.cls);
	/* every part read from the argv that has the verdict: the person
	 * asked sees all of them */
	for (size_t j = 1; b.rule && by > 0 && j < v.nparts; j++)
		if (verdicts[j] == (int)out->verdict)
			judged_part(&v.parts[j], out->judged_as,
				    sizeof(out->judged_as));
	hx_cmdview_free(&v);
}

bool hx_policy_exec_parts(const struct hx_policy *p, const struct hx_event *ev,
			  void (*fn)(const struct hx_exec_part *part,
				     void *arg),
			  void *arg)
{
	const struct hx_workspace ws = ws_of(p, ev);
	struct hx_cmd_view v;
	struct best b = {0};
	bool itself;

	hx_cmdview_build(&v, ev->path, ev->argv, ev->argc, ev->cwd, &ws);
	judge_part(p, ev, &v, 0, &b);
	itself = b.rule && b.rule->verdict != HX_VERDICT_ALLOW;
	for (size_t j = 1; j < v.nparts; j++) {
		const struct hx_cmd_part *cp = &v.parts[j];
		struct hx_exec_part part = {cp->argv, cp->argc,	      true,
					    cp->dir,  HX_VERDICT_ASK, NULL};

		b = (struct best){0};
		judge_part(p, ev, &v, j, &b);
		if (!b.rule)
			continue;
		for (size_t i = 0; cp->flags && i < cp->argc; i++)
			part.known = part.known && !cp->flags[i];
		part.known = part.known && cp->cls != HX_CLASS_UNPARSABLE;
		part.verdict = b.rule->verdict;
		part.rule = b.rule->name;
		fn(&part, arg);
	}
	hx_cmdview_free(&v);
	return itself;
}

bool hx_policy_exec_runs(const struct hx_policy *p, const char *const *script,
			 size_t n, const char *cwd, const char *rule,
			 const struct hx_event *ev)
{
	struct hx_event sev = {.op = HX_OP_EXEC, .argv = script, .argc = n};
	const struct hx_workspace ws = ws_of(p, ev);
	struct hx_cmd_view v;
	bool hit = false;

	hx_cmdview_build(&v, NULL, script, n, cwd, &ws);
	for (size_t j = 1; j < v.nparts && !hit; j++) {
		struct best b = {0};

		if (v.parts[j].wrapper ||
		    !hx_cmd_part_covers(&v.parts[j], ev->cwd, ev->argv,
					ev->argc))
			continue;
		/* the part was asked for, by the rule that asks now */
		judge_part(p, &sev, &v, j, &b);
		hit = b.rule && b.rule->verdict == HX_VERDICT_ASK &&
		      !strcmp(b.rule->name, rule);
	}
	hx_cmdview_free(&v);
	return hit;
}

static void check_net(const struct hx_policy *p, const struct hx_netsubj *s,
		      enum hx_category cat, struct hx_decision *out)
{
	struct best b = {0};

	for (size_t i = 0; i < p->nrules[HX_SEC_NET]; i++) {
		const struct hx_rule *r = &p->rules[HX_SEC_NET][i];

		for (size_t k = 0; k < r->npats; k++) {
			const struct hx_netpat *np = &r->pats[k].u.net;

			/* A name may be looked up when some port of it may
			 * be reached or asked for: a deny of some ports
			 * ("*:853") leaves its lookup alone, a deny of all
			 * ports does not. */
			if (cat == HX_CAT_NET_RESOLVE &&
			    r->verdict != HX_VERDICT_ALLOW &&
			    (np->port_lo != 0 || np->port_hi != 65535))
				continue;
			if (!hx_netpat_match(np, s))
				continue;
			if (r->decisive && cat != HX_CAT_NET_RESOLVE) {
				b = (struct best){r, &r->pats[k]};
				goto done;
			}
			consider(&b, r, &r->pats[k]);
		}
	}
done:
	finish(p, &b, cat, out);
	/* A name whose connects are asked (loopback's) may be looked up:
	 * the connect is what is asked. */
	if (cat == HX_CAT_NET_RESOLVE && b.rule &&
	    out->verdict == HX_VERDICT_ASK)
		out->verdict = HX_VERDICT_ALLOW;
}

/* Fills s from a sockaddr; unix_buf holds the path. false when the
 * address cannot be judged. */
static bool subj_from_addr(const struct hx_event *ev, struct hx_netsubj *s,
			   char *unix_buf, size_t unix_size)
{
	const struct sockaddr *sa = ev->addr;

	memset(s, 0, sizeof(*s));
	s->names = ev->names;
	s->nnames = ev->names ? ev->nnames : 0;
	s->proto = ev->proto;
	if (!sa || ev->addrlen < sizeof(sa_family_t))
		return false;
	switch (sa->sa_family) {
	case AF_INET:
	case AF_INET6: {
		struct hx_ipaddr ip;

		/* ::ffff:a.b.c.d reaches a.b.c.d: judged as IPv4. */
		if (!hx_sockaddr_ip(sa, ev->addrlen, &ip))
			return false;
		s->family = ip.family;
		memcpy(s->addr, ip.addr, sizeof(ip.addr));
		s->port = ip.port;
		return true;
	}
	case AF_UNIX: {
		const struct sockaddr_un *un = (const void *)sa;
		size_t off = offsetof(struct sockaddr_un, sun_path);
		size_t n = ev->addrlen > off ? ev->addrlen - off : 0, i = 0;
		const char *src = un->sun_path;
		size_t o = 0;

		if (n > sizeof(un->sun_path))
			n = sizeof(un->sun_path);
		s->family = AF_UNIX;
		s->port = -1;
		if (n > 0 && src[0] == '\0') {
			unix_buf[o++] = '@'; /* abstract: "@name" */
			i = 1;
		}
		for (; i < n && src[i] && o + 1 < unix_size; i++)
			unix_buf[o++] = src[i];
		unix_buf[o] = '\0';
		s->unix_path = unix_buf;
		return true;
	}
	default:
		return false;
	}
}

void hx_policy_decide(const struct hx_policy *p, const struct hx_event *ev,
		      struct hx_decision *out)
{
	char unix_buf[sizeof(((struct sockaddr_un *)0)->sun_path) + 2];
	struct hx_decision other;
	struct hx_netsubj s;
	const char *one[1];
	uint8_t lit[16];

	out->category = hx_op_category(ev->op);
	out->risk = hx_category_risk(out->category);
	out->verdict = HX_VERDICT_DENY;
	out->rule = malformed;
	out->origin = NULL;
	out->pattern = NULL;
	out->neighbours = false;
	out->keep_existing = false;
	out->own_files = false;
	out->cls = HX_CLASS_NONE;
	out->judged_as[0] = '\0';
	switch (ev->op) {
	case HX_OP_EXEC:
		if (!ev->path && (!ev->argv || ev->argc == 0))
			return;
		if (ev->argc && !ev->argv)
			return;
		check_exec(p, ev, out);
		return;
	case HX_OP_READ:
		if (ev->path)
			check_file(p, ev->path, HX_ACCESS_READ, out);
		return;
	case HX_OP_WRITE:
		if (!ev->path)
			return;
		check_file(p, ev->path, HX_ACCESS_WRITE, out);
		/* "r+" of a file denied for reading only read it: the kernel
		 * layer opened it (unmasked, in the supervisor's view) and
		 * handed the fd over. */
		if (ev->reads) {
			check_file(p, ev->path, HX_ACCESS_READ, &other);
			stronger(out, &other);
		}
		return;
	case HX_OP_UNLINK:
	case HX_OP_RMDIR:
	case HX_OP_MKDIR:
	case HX_OP_TRUNCATE:
		if (ev->path)
			check_file(p, ev->path, HX_ACCESS_WRITE, out);
		return;
	case HX_OP_SYMLINK:
		if (!ev->path)
			return;
		check_file(p, ev->path, HX_ACCESS_WRITE, out);
		check_link(p, ev, out);
		return;
	case HX_OP_RENAME:
	case HX_OP_LINK:
		if (!ev->path || !ev->path2)
			return;
		check_file(p, ev->path, HX_ACCESS_WRITE, out);
		/* A hard link to a secret must not bypass its read deny, and
		 * one to a file the agent may not write would let it write
		 * it through the new name: the existing file must be both. */
		check_file(p, ev->path2, HX_ACCESS_WRITE, &other);
		stronger(out, &other);
		if (ev->op == HX_OP_LINK) {
			check_file(p, ev->path2, HX_ACCESS_READ, &other);
			stronger(out, &other);
			return;
		}
		if (!ev->moves_tree)
			return;
		check_moved(p, ev->path, ev->path2, &other);
		if (other.verdict != HX_VERDICT_ALLOW)
			stronger(out, &other);
		for (int i = 0; i < 2; i++) {
			check_subtree(p, i ? ev->path2 : ev->path, &other);
			if (other.verdict != HX_VERDICT_ALLOW)
				stronger(out, &other);
		}
		return;
	case HX_OP_CONNECT:
	case HX_OP_SEND:
	case HX_OP_LISTEN:
		if (!subj_from_addr(ev, &s, unix_buf, sizeof(unix_buf)) ||
		    (ev->op == HX_OP_LISTEN && s.family == AF_UNIX))
			return;
		s.listen = ev->op == HX_OP_LISTEN;
		check_net(p, &s, out->category, out);
		return;
	case HX_OP_RESOLVE:
		if (!ev->host)
			return;
		memset(&s, 0, sizeof(s));
		s.port = -1;
		/* An address is no name: no resolver asks for one (a libc
		 * answers a literal itself), and a question for one would
		 * carry its bytes out under the address rules. */
		if (hx_parse_ip(ev->host, strlen(ev->host), lit) ||
		    !hx_host_name_ok(ev->host, strlen(ev->host)))
			return; /* harness:malformed */
		one[0] = ev->host;
		s.names = one;
		s.nnames = 1;
		check_net(p, &s, out->category, out);
		return;
	case HX_OP_COUNT:
		break;
	}
}
