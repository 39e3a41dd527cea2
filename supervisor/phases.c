/* Start-up phases; see phases.h. */
#include "supervisor/phases.h"

#include <time.h>

#define MAX_PHASES 16

static struct {
	const char *name;
	double ms;
} marks[MAX_PHASES];
static size_t nmarks;
static struct timespec t0;

void hx_phase(const char *name)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if (!t0.tv_sec && !t0.tv_nsec) {
		t0 = t;
		return;
	}
	if (nmarks == MAX_PHASES)
		return;
	marks[nmarks].name = name;
	marks[nmarks++].ms = (double)(t.tv_sec - t0.tv_sec) * 1e3 +
			     (double)(t.tv_nsec - t0.tv_nsec) / 1e6;
}

json_t *hx_phases_json(void)
{
	json_t *o;

	if (!nmarks || !(o = json_object()))
		return NULL;
	for (size_t i = 0; i < nmarks; i++)
		json_object_set_new(
		    o, marks[i].name,
		    json_real((double)(long)(marks[i].ms * 100) / 100));
	return o;
}
