/* hx_policy_check_examples: the match / not_match examples of each rule
 * run against that rule's own patterns. */
#include "policy/policy_int.h"
#include "common/glob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits s (modified) on whitespace into at most max words. */
static size_t split_words(char *s, char **words, size_t max)
{
	size_t n = 0;

	for (char *p = s; *p && n < max;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			*p++ = '\0';
		if (!*p)
			break;
		words[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' &&
		       *p != '\r')
			p++;
	}
	return n;
}

static bool exec_example(const struct hx_rule *r, const char *text)
{
	size_t len = strlen(text), n;
	char *copy = malloc(len + 1);
	char **words = malloc((len / 2 + 1) * sizeof(*words));
	bool hit = false;

	if (!copy || !words)
		goto out;
	memcpy(copy, text, len + 1);
	n = split_words(copy, words, len / 2 + 1);
	/* A bare word is the executable's basename: no $PATH lookup. */
	for (size_t k = 0; n && !hit && k < r->npats; k++)
		hit = hx_execpat_match(&r->pats[k].u.exec, words[0],
				       (const char *const *)words, n);
out:
	free(copy);
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
					hit = exec_example(r, ex->text);
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
				    hit < 0 ? "is not HOST:PORT or unix:PATH"
				    : ex->should_match ? "should match"
						       : "should not match");
				if (fn)
					fn(msg, arg);
			}
		}
	}
	return failed;
}
