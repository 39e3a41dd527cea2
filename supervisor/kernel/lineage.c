/* The exec gate's birth lineage; see lineage.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/lineage.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "supervisor/proc.h"

#define LINE_BUCKETS 1024
#define DOOMED_MAX   64

struct line {
	pid_t pid, branch;
	unsigned long long start; /* its start time: a recycled pid is not it */
	bool held; /* its first stop came before its parent's fork event */
	struct line *next;
};

struct hx_lineage {
	pthread_mutex_t lock;
	pid_t root;
	struct line *lines[LINE_BUCKETS]; /* by pid */
	pid_t doomed[DOOMED_MAX]; /* branches killed: what they fork dies */
	size_t doomed_at;
};

int hx_lineage_new(pid_t root, struct hx_lineage **out)
{
	struct hx_lineage *l = calloc(1, sizeof(*l));

	*out = l;
	if (!l)
		return -ENOMEM;
	pthread_mutex_init(&l->lock, NULL);
	l->root = root;
	return 0;
}

void hx_lineage_free(struct hx_lineage *l)
{
	struct line *x;

	if (!l)
		return;
	for (size_t b = 0; b < LINE_BUCKETS; b++)
		while ((x = l->lines[b])) {
			l->lines[b] = x->next;
			free(x);
		}
	pthread_mutex_destroy(&l->lock);
	free(l);
}

/* pid's entry, or where it goes; the caller holds l->lock. */
static struct line **slot(struct hx_lineage *l, pid_t pid)
{
	struct line **pp = &l->lines[(unsigned)pid % LINE_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

/* The slot of branch b among the doomed, or NULL; l->lock held. */
static pid_t *doomed_slot(struct hx_lineage *l, pid_t b)
{
	for (size_t i = 0; b > 0 && i < DOOMED_MAX; i++)
		if (l->doomed[i] == b)
			return &l->doomed[i];
	return NULL;
}

/* The child's branch is its own pid when the root forked it, else its
 * parent's (not /proc's parent link: CLONE_PARENT and an orphan's
 * reparenting change that). */
void hx_lineage_born(struct hx_lineage *l, pid_t parent, pid_t child,
		     bool *cont, bool *doom)
{
	struct hx_procstat st;
	struct line **pp, *c;
	pid_t *d;

	*cont = *doom = false;
	if (!l)
		return;
	if (hx_proc_stat(child, &st))
		st.starttime = 0;
	pthread_mutex_lock(&l->lock);
	pp = slot(l, child);
	if (!*pp && (*pp = calloc(1, sizeof(**pp))))
		(*pp)->pid = child;
	if ((c = *pp)) {
		struct line *p = *slot(l, parent);

		c->branch = parent == l->root ? child : p ? p->branch : 0;
		c->start = st.starttime;
		*cont = c->held;
		c->held = false;
		d = doomed_slot(l, c->branch);
		if (d && parent == l->root)
			*d = 0; /* a recycled pid: a new branch */
		else
			*doom = d != NULL;
	}
	pthread_mutex_unlock(&l->lock);
}

bool hx_lineage_first_stop(struct hx_lineage *l, pid_t pid)
{
	struct line **pp;
	bool hold = false;

	if (!l)
		return false;
	pthread_mutex_lock(&l->lock);
	pp = slot(l, pid);
	if (!*pp && (*pp = calloc(1, sizeof(**pp)))) {
		(*pp)->pid = pid;
		(*pp)->held = hold = true;
	}
	pthread_mutex_unlock(&l->lock);
	return hold;
}

void hx_lineage_gone(struct hx_lineage *l, pid_t pid)
{
	struct line **pp, *x;

	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	pp = slot(l, pid);
	if ((x = *pp))
		*pp = x->next;
	pthread_mutex_unlock(&l->lock);
	free(x);
}

pid_t hx_lineage_branch(struct hx_lineage *l, pid_t pid)
{
	struct line *x;
	pid_t b;

	if (!l)
		return 0;
	pthread_mutex_lock(&l->lock);
	x = *slot(l, pid);
	b = x && !x->held ? x->branch : 0;
	pthread_mutex_unlock(&l->lock);
	return b;
}

size_t hx_lineage_kill_branch(struct hx_lineage *l, pid_t branch, int sig)
{
	struct hx_proc *v = NULL, *nv;
	size_t n = 0, cap = 0, sent = 0;
	struct line *x;

	if (!l || branch <= 0)
		return 0;
	pthread_mutex_lock(&l->lock);
	if (!doomed_slot(l, branch)) {
		l->doomed[l->doomed_at] = branch;
		l->doomed_at = (l->doomed_at + 1) % DOOMED_MAX;
	}
	for (size_t b = 0; b < LINE_BUCKETS; b++)
		for (x = l->lines[b]; x; x = x->next) {
			if (x->branch != branch || !x->start)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				if (!(nv = realloc(v, cap * sizeof(*v))))
					break;
				v = nv;
			}
			v[n++] = (struct hx_proc){x->pid, x->start};
		}
	pthread_mutex_unlock(&l->lock);
	for (size_t i = 0; i < n; i++)
		sent += hx_proc_signal(&v[i], sig);
	free(v);
	return sent;
}
