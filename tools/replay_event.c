/* Recorded decisions as events again; see replay_event.h. */
#include "tools/replay_event.h"

#include <string.h>

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static int op_of(const char *name, enum hx_op *op)
{
	for (int i = 0; name && i < HX_OP_COUNT; i++)
		if (!strcmp(name, hx_op_name((enum hx_op)i))) {
			*op = (enum hx_op)i;
			return 0;
		}
	return -1;
}

int hx_replay_event(json_t *rec, struct hx_event *ev, const char **argv,
		    const char **names, struct hx_event_storage *st)
{
	json_t *a = json_object_get(rec, "args"), *w;
	const char *addr = str(a, "addr"), *flags = str(a, "flags");
	char *words[2];
	char msg[256];
	size_t i;
	enum hx_op op;

	if (op_of(str(rec, "op"), &op) || !a)
		return -1;
	if (addr) {
		words[0] = (char *)hx_op_name(op);
		words[1] = (char *)addr;
		if (hx_event_parse(2, words, ev, st, msg, sizeof(msg)))
			return -1;
		ev->nnames = 0;
		json_array_foreach(json_object_get(a, "names"), i, w)
		{
			if (ev->nnames < HX_REPLAY_NAMES && json_is_string(w))
				names[ev->nnames++] = json_string_value(w);
		}
		ev->names = names;
		if (str(a, "protocol") && !strcmp(str(a, "protocol"), "udp"))
			ev->proto = 17;
		else if (str(a, "protocol") &&
			 !strcmp(str(a, "protocol"), "tcp"))
			ev->proto = 6;
		return 0;
	}
	memset(ev, 0, sizeof(*ev));
	ev->op = op;
	ev->host = str(a, "host");
	ev->path = str(a, "path");
	ev->path2 = str(a, "path2");
	ev->moves_tree = op == HX_OP_RENAME;
	ev->reads = op == HX_OP_WRITE && flags && strncmp(flags, "O_WRONLY", 8);
	json_array_foreach(json_object_get(a, "argv"), i, w)
	{
		if (i < HX_REPLAY_ARGV && json_is_string(w))
			argv[ev->argc++] = json_string_value(w);
	}
	ev->argv = argv;
	ev->cwd = op == HX_OP_EXEC ? str(rec, "cwd") : NULL;
	if (op == HX_OP_RESOLVE ? !ev->host : !ev->path)
		return -1;
	return 0;
}

void hx_replay_decide(const struct hx_policy *p, json_t *rec,
		      const struct hx_event *ev, struct hx_decision *d)
{
	json_t *a = json_object_get(rec, "args");
	struct hx_event ev2 = *ev;
	struct hx_decision d2;

	hx_policy_decide(p, ev, d);
	if (!str(a, "path_resolved") && !str(a, "path2_resolved"))
		return;
	if (str(a, "path_resolved"))
		ev2.path = str(a, "path_resolved");
	if (str(a, "path2_resolved"))
		ev2.path2 = str(a, "path2_resolved");
	hx_policy_decide(p, &ev2, &d2);
	/* as the pipeline judges (judge): the stronger verdict, and of
	 * two alike a rule's over a category's default */
	if (d2.verdict > d->verdict ||
	    (d2.verdict == d->verdict && !strncmp(d->rule, "default:", 8) &&
	     strncmp(d2.rule, "default:", 8)))
		*d = d2;
}
