/* The HELLO_REPLY; see hello_reply.h. */
#include "supervisor/hello_reply.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/globindex.h"
#include "common/wire.h"
#include "policy/policy.h"
#include "supervisor/pipeline.h"

/* The read rules for the shim, sorted by their keys so that it indexes
 * them as they come (shim/readrules.h); order means nothing else to it:
 * the strongest verdict wins. */
struct read_rule {
	enum hx_verdict v;
	const char *pattern;
	struct hx_glob_need need;
	size_t n;
};

struct rules_acc {
	struct read_rule r[HX_WIRE_MAX_RULES];
	size_t n;
	bool overflow;
};

static void take_rule(enum hx_verdict v, const char *pattern, void *arg)
{
	struct rules_acc *a = arg;

	if (a->n == HX_WIRE_MAX_RULES || strlen(pattern) + 1 > UINT16_MAX) {
		a->overflow = true;
		return;
	}
	hx_glob_need_of(pattern, &a->r[a->n].need);
	a->r[a->n].v = v;
	a->r[a->n].pattern = pattern;
	a->r[a->n].n = a->n;
	a->n++;
}

static int cmp_rule(const void *x, const void *y)
{
	const struct read_rule *p = x, *q = y;
	int c =
	    hx_glob_key_cmp(p->pattern, p->need.key, q->pattern, q->need.key);

	return c ? c : (p->n > q->n) - (p->n < q->n);
}

static bool put_rules(struct hx_wbuf *w, struct rules_acc *a)
{
	uint8_t buf[1 + UINT16_MAX];

	qsort(a->r, a->n, sizeof(a->r[0]), cmp_rule);
	for (size_t i = 0; i < a->n; i++) {
		size_t len = strlen(a->r[i].pattern);

		const struct hx_glob_need *n = &a->r[i].need;
		uint16_t need[4] = {(uint16_t)n->key, (uint16_t)n->tail,
				    (uint16_t)n->inner_off,
				    (uint16_t)n->inner_len};

		buf[0] = (uint8_t)a->r[i].v;
		memcpy(buf + 1, a->r[i].pattern, len);
		/* its need after it, worked out here once for every
		 * process that reads (shim/readrules.c) */
		if (hx_wire_put_bytes(w, HX_TAG_READ_RULE, buf, len + 1) ||
		    hx_wire_put_bytes(w, HX_TAG_READ_NEED, need, sizeof(need)))
			return false;
	}
	return true;
}

size_t hx_hello_reply_build(const struct hx_pipeline *pl, uint8_t *buf,
			    size_t cap, int *err)
{
	const struct hx_policy *p = pl->policy;
	struct hx_wbuf w;
	struct rules_acc *acc = malloc(sizeof(*acc));
	uint32_t flags = 0, pass;
	size_t len = 0;

	*err = -ENOMEM;
	if (!acc)
		return 0;
	if (hx_policy_log_reads(p))
		flags |= HX_HELLO_LOG_READS;
	if (pl->mode == HX_MODE_AUDIT)
		flags |= HX_HELLO_AUDIT;
	if (pl->dns_sealed)
		flags |= HX_HELLO_DNS_SEALED;
	for (pass = 0; pass < 2 && !len; pass++) {
		bool with_rules = pass == 0;

		hx_wire_begin(&w, buf, cap, HX_MSG_HELLO_REPLY, 0);
		hx_wire_put_u32(&w, HX_TAG_FLAGS,
				flags |
				    (with_rules ? HX_HELLO_LOCAL_READS : 0));
		hx_wire_put_u32(&w, HX_TAG_DEFAULT_READ,
				hx_policy_default_verdict(p, HX_CAT_FILE_READ));
		if (pl->session)
			hx_wire_put_str(&w, HX_TAG_SESSION, pl->session);
		if (with_rules) {
			acc->n = 0;
			acc->overflow = false;
			hx_policy_foreach_read_rule(p, take_rule, acc);
			if (acc->overflow || !put_rules(&w, acc))
				continue;
		}
		len = hx_wire_finish(&w);
	}
	free(acc);
	*err = len ? 0 : -E2BIG;
	return len;
}
