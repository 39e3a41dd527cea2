/* The check that the seccomp lists never overlap (seccomp_deny.h):
 * apart from the lists themselves, which fill seccomp_deny.c. */
#include "supervisor/kernel/seccomp_deny.h"

#include <string.h>

static bool same_action(const struct hx_sc_rule *x, const struct hx_sc_rule *y)
{
	return x->action == y->action &&
	       (x->action != HX_SC_ERRNO || x->err == y->err);
}

size_t hx_seccomp_overlap(const struct hx_sc_rule *a, size_t na,
			  const struct hx_sc_rule *b, size_t nb,
			  const char **first)
{
	size_t n = 0;

	*first = NULL;
	for (size_t i = 0; i < na; i++) {
		for (size_t j = a == b ? i + 1 : 0; j < nb; j++) {
			if (strcmp(a[i].name, b[j].name))
				continue;
			/* ERRNO outranks USER_NOTIF across filters: a
			 * conditional deny row still wins where it applies. */
			if (a != b && a[i].action == HX_SC_NOTIFY &&
			    b[j].action == HX_SC_ERRNO &&
			    b[j].a[0].cond != HX_SC_ALWAYS)
				continue;
			/* Within one list, rows of one syscall must agree; an
			 * argument split into different errnos is a bug. */
			if (a == b && same_action(&a[i], &b[j]))
				continue;
			if (!*first)
				*first = a[i].name;
			n++;
			break;
		}
	}
	return n;
}
