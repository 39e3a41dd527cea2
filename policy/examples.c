/* hx_policy_check_examples: the match / not_match examples of each rule
 * run against that rule's own patterns. */
#include "policy/cmdview.h"
#include "common/glob.h"
#include "policy/shparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An example is a command line, split as the shell would; it matches
 * as an exec of it would (check_exec): its argv, and for deny and ask
 * what it runs in turn. A bare word is the executable's basename: no
 * $PATH lookup. -1: not one static command. */
static int exec_example(const struct hx_policy *p, const struct hx_rule *r,
			const char *text)
{
	size_t len = strlen(text) + 1;
	char *buf = malloc(len);
	const char **words = malloc((len / 2 + 1) * sizeof(*words));
	struct hx_cmd_view v;
	long n = -1;
	int hit = -1;

	if (!buf || !words ||
	    (n = hx_sh_words(text, buf, len, words, len / 2 + 1)) <= 0)
		goto out;
	hx_cmdview_build(&v, NULL, words, (size_t)n, p->ws.roots[0], &p->ws);
	hit = 0;
	for (size_t k = 0; !hit && k < r->npats; k++) {
		const struct hx_execpat *ep = &r->pats[k].u.exec;

		hit = !ep->cls &&
		      hx_execpat_match(ep, words[0], words, (size_t)n);
		for (size_t j = ep->cls ? 0 : 1;
		     !hit && j < v.nparts && r->verdict != HX_VERDICT_ALLOW;
		     j++)
			hit = hx_execpat_match_part(ep, &v.parts[j]);
	}
	hx_cmdview_free(&v);
out:
	free(buf);
	free(words);
	return hit;
}

/* 1 matched, 0 not, -1 the example is not an address. */
static int net_example(const struct hx_rule *r, const char *text)
{
	char *namebuf = malloc(strlen(text) + 1);
	const char *namev[1];
	struct hx_netsubj s;
	int hit = -1;

	if (namebuf && !hx_netsubj_parse_example(text, &s, namebuf, namev)) {
		hit = 0;
		for (size_t k = 0; !hit && k < r->npats; k++)
			hit = hx_netpat_match(&r->pats[k].u.net, &s);
	}
	free(namebuf);
	return hit;
}

size_t hx_policy_check_examples(const struct hx_policy *p,
				void (*fn)(const char *msg, void *arg),
				void *arg)
{
	size_t failed = 0;
	char msg[1024];

	for (int sec = 0; sec < HX_SEC_COUNT; sec++) {
		for (size_t i = 0; i < p->nrules[sec]; i++) {
			const struct hx_rule *r = &p->rules[sec][i];

			for (size_t e = 0; e < r->nex; e++) {
				const struct hx_example *ex = &r->ex[e];
				int hit = 0;

				if (sec == HX_SEC_FILES) {
					for (size_t k = 0; !hit && k < r->npats;
					     k++)
						hit = hx_glob_match(
						    r->pats[k].text, ex->text);
				} else if (sec == HX_SEC_EXEC) {
					hit = exec_example(p, r, ex->text);
				} else {
					hit = net_example(r, ex->text);
				}
				if (hit >= 0 && (hit == 1) == ex->should_match)
					continue;
				failed++;
				snprintf(
				    msg, sizeof(msg),
				    "%s:%u:%u: rule \"%s\": example \"%s\" %s",
				    p->source, ex->pos.line, ex->pos.column,
				    r->name, ex->text,
				    hit < 0 && sec == HX_SEC_EXEC
					? "is not one command line"
				    : hit < 0 ? "is not HOST:PORT or unix:PATH"
				    : ex->should_match ? "should match"
						       : "should not match");
				if (fn)
					fn(msg, arg);
			}
		}
	}
	return failed;
}
