/* Decisions counted by process group; see metrics_groups.h. */
#define _GNU_SOURCE
#include "supervisor/metrics_groups.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/proc.h"

#define PIDS   4096 /* pid -> group, direct-mapped */
#define KINDS  48   /* categories times verdicts: a few dozen */
#define LABELS 96

struct slot {
	pid_t pid, pgid;
};

struct group {
	pid_t pgid;    /* 0: other */
	uint64_t used; /* when it was last counted */
	uint64_t n[KINDS];
};

struct hx_pgroups {
	struct slot pids[PIDS];
	char kinds[KINDS][LABELS];
	size_t nkinds, n;
	struct group g[HX_PGROUPS];
	struct group other;
	uint64_t clock;
};

int hx_pgroups_new(struct hx_pgroups **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void hx_pgroups_free(struct hx_pgroups *g)
{
	free(g);
}

static struct slot *slot_of(struct hx_pgroups *g, pid_t pid)
{
	return &g->pids[(unsigned)pid % PIDS];
}

void hx_pgroups_seen(struct hx_pgroups *g, pid_t pid)
{
	struct hx_procstat st;

	if (g && pid > 0 && !hx_proc_stat(pid, &st))
		*slot_of(g, pid) = (struct slot){pid, st.pgrp};
}

/* pid's group: as last read, else from /proc; 0 when unknown. */
static pid_t pgid_of(struct hx_pgroups *g, pid_t pid)
{
	struct slot *s = slot_of(g, pid);

	if (pid <= 0)
		return 0;
	if (s->pid != pid)
		hx_pgroups_seen(g, pid);
	return s->pid == pid ? s->pgid : 0;
}

static struct group *group_of(struct hx_pgroups *g, pid_t pgid)
{
	struct group *lru = NULL;

	if (pgid <= 0)
		return &g->other;
	for (size_t i = 0; i < g->n; i++)
		if (g->g[i].pgid == pgid)
			return &g->g[i];
	if (g->n < HX_PGROUPS) {
		g->g[g->n].pgid = pgid;
		return &g->g[g->n++];
	}
	for (size_t i = 0; i < g->n; i++)
		if (!lru || g->g[i].used < lru->used)
			lru = &g->g[i];
	for (size_t k = 0; k < KINDS; k++)
		g->other.n[k] += lru->n[k];
	*lru = (struct group){.pgid = pgid};
	return lru;
}

static int kind_of(struct hx_pgroups *g, const char *labels)
{
	for (size_t k = 0; k < g->nkinds; k++)
		if (!strcmp(g->kinds[k], labels))
			return (int)k;
	if (g->nkinds == KINDS || strlen(labels) >= LABELS)
		return -1;
	strcpy(g->kinds[g->nkinds], labels);
	return (int)g->nkinds++;
}

bool hx_pgroups_count(struct hx_pgroups *g, pid_t pid, const char *labels)
{
	int k;
	struct group *grp;

	if (!g)
		return true;
	if ((k = kind_of(g, labels)) < 0)
		return false;
	grp = group_of(g, pgid_of(g, pid));
	grp->used = ++g->clock;
	grp->n[k]++;
	return true;
}

static void each_of(const struct hx_pgroups *g, const struct group *grp,
		    hx_pgroups_fn *fn, void *arg)
{
	for (size_t k = 0; k < g->nkinds; k++)
		if (grp->n[k])
			fn(arg, grp->pgid, g->kinds[k], grp->n[k]);
}

void hx_pgroups_each(const struct hx_pgroups *g, hx_pgroups_fn *fn, void *arg)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		each_of(g, &g->g[i], fn, arg);
	each_of(g, &g->other, fn, arg);
}
