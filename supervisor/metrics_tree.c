/* The agent's resource use from /proc; see metrics_tree.h. */
#define _GNU_SOURCE
#include "supervisor/metrics_tree.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "supervisor/proc.h"

#define TREE_MAX 8192

static size_t count_fds(pid_t pid)
{
	char path[64];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

double hx_metrics_cpu_seconds(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void add_to_group(struct hx_tree_usage *u, const struct hx_procstat *st,
			 double cpu, uint64_t rss)
{
	struct hx_group_usage *g = NULL;

	for (size_t i = 0; i < u->ngroups && !g; i++)
		if (u->groups[i].pgid == st->pgrp)
			g = &u->groups[i];
	if (!g && u->ngroups < HX_USAGE_GROUPS) {
		g = &u->groups[u->ngroups++];
		g->pgid = st->pgrp;
	}
	if (!g) {
		u->groups_left_out++;
		return;
	}
	g->processes++;
	g->cpu_seconds += cpu;
	g->rss_bytes += rss;
}

void hx_metrics_tree_usage(pid_t root, struct hx_tree_usage *u)
{
	double tick = (double)sysconf(_SC_CLK_TCK);
	double page = (double)sysconf(_SC_PAGESIZE);
	struct hx_proc *all;
	size_t n;

	memset(u, 0, sizeof(*u));
	if (root <= 0)
		return;
	/* Ended processes were waited for by us (the subreaper) or by a
	 * living one of the tree, whose cutime holds them. */
	u->cpu_seconds = hx_metrics_cpu_seconds(RUSAGE_CHILDREN);
	if (!(all = malloc(TREE_MAX * sizeof(*all))))
		return;
	/* From harness-exec, not from root: an orphan of the agent comes
	 * back to us, and is still the agent's. Not our helpers and hooks:
	 * by the filters the agent cannot shed, not by the image (an
	 * agent's process that runs harness-exec's binary, LD_PRELOADed,
	 * hid its CPU). */
	n = hx_proc_agent_descendants(all, TREE_MAX);
	for (size_t i = 0; i < n; i++) {
		struct hx_procstat st;
		double cpu;
		uint64_t rss;

		if (hx_proc_stat(all[i].pid, &st))
			continue;
		cpu = (double)(st.utime + st.stime + st.cutime + st.cstime) /
		      tick;
		rss = (uint64_t)((double)st.rss * page);
		u->processes++;
		u->cpu_seconds += cpu;
		u->rss_bytes += rss;
		u->open_fds += count_fds(all[i].pid);
		add_to_group(u, &st, cpu, rss);
	}
	free(all);
}
