/* A script asked because of what it runs (policy.h hx_policy_exec_parts)
 * is allowed when each command that made it asked is granted as itself:
 * a grant of git push for /usr/bin/git allows sh -c 'cd x && git push'
 * too, since it is read and judged as that git push. The command is
 * found on harness-exec's PATH; a copy of git the script names by path
 * is no /usr/bin/git. The parse adds no permission: each exec the
 * script makes is judged again, on the file the kernel runs. */
#ifndef HX_ASKPARTS_H
#define HX_ASKPARTS_H

#include <stddef.h>

#include "common/types.h"

struct hx_ask;
struct hx_ask_subject;
struct hx_event;
struct hx_policy;

/* HX_VERDICT_ALLOW (how: "parts " and the first grant's) when every
 * asked part of exec ev is granted and the argv itself is not asked;
 * otherwise HX_VERDICT_ASK. s is the exec's own subject. */
enum hx_verdict hx_askparts_granted(struct hx_ask *a, const struct hx_policy *p,
				    const struct hx_event *ev,
				    const struct hx_ask_subject *s, char *how,
				    size_t hlen);

#endif
