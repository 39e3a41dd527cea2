/* libFuzzer target over an exec's environment, which is the agent's to
 * write whole (supervisor/envdiff.c): the input's NUL-separated
 * strings, as the first exec's (the session's) after a cut its first
 * byte says and as a later exec's, differenced, searched and summed.
 * Nothing may crash or read past them; a difference's entries are its
 * length. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/envdiff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The NUL-separated strings of p (n bytes, NUL-terminated) as a
 * NULL-terminated vector; *count of them. */
static const char **strings(const char *p, size_t n, size_t *count)
{
	const char **v;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += !p[i];
	if (!(v = calloc(k + 1, sizeof(*v))))
		return NULL;
	*count = 0;
	for (size_t i = 0; i < n; i += strlen(p + i) + 1)
		v[(*count)++] = p + i;
	return v;
}

static void check(const struct hx_envdiff *d)
{
	static const char *const pre[] = {"LD_", "GIT_", "-PATH", NULL};
	char hex[65];
	size_t len = 0, n = 0;

	for (; len < d->len; len += strlen(d->p + len) + 1)
		n++;
	if (n != d->n || len != d->len)
		abort();
	(void)hx_envdiff_sets(d, pre);
	hx_envdiff_shown_sum(d->p, d->len, hex);
	for (size_t i = 0; i < d->len; i += strlen(d->p + i) + 1)
		(void)hx_envdiff_bookkeeping(d->p + i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cut = size ? data[0] % (size + 1) : 0, nb = 0, ne = 0;
	char *p = malloc(size + 2);
	const char **base = NULL, **env = NULL;
	struct hx_envbase *b;
	struct hx_envdiff d = {0};

	if (!p)
		return 0;
	/* two NUL-terminated halves: the session's, the exec's */
	memcpy(p, data, cut);
	p[cut] = '\0';
	memcpy(p + cut + 1, data + cut, size - cut);
	p[size + 1] = '\0';
	if (!(base = strings(p, cut + 1, &nb)) ||
	    !(env = strings(p + cut + 1, size - cut + 1, &ne)))
		goto out;
	if ((b = hx_envbase_new(base, "/usr/lib/harness/libhxshim.so"))) {
		if (!hx_envdiff_make(b, env, ne, &d)) {
			check(&d);
			if (!hx_envdiff_append(&d, "X=1"))
				check(&d);
			hx_envdiff_free(&d);
		}
		hx_envbase_free(b);
	}
out:
	free(base);
	free(env);
	free(p);
	return 0;
}
