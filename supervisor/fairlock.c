/* See fairlock.h. */
#include "supervisor/fairlock.h"

#include <stdbool.h>

void hx_fair_init(struct hx_fair_lock *l)
{
	pthread_mutex_init(&l->m, NULL);
	pthread_cond_init(&l->turn, NULL);
	l->next = l->serving = 0;
}

void hx_fair_destroy(struct hx_fair_lock *l)
{
	pthread_cond_destroy(&l->turn);
	pthread_mutex_destroy(&l->m);
}

void hx_fair_lock(struct hx_fair_lock *l)
{
	uint64_t me;

	pthread_mutex_lock(&l->m);
	me = l->next++;
	while (me != l->serving)
		pthread_cond_wait(&l->turn, &l->m);
	pthread_mutex_unlock(&l->m);
}

void hx_fair_unlock(struct hx_fair_lock *l)
{
	bool waiting;

	pthread_mutex_lock(&l->m);
	l->serving++;
	waiting = l->next != l->serving;
	pthread_mutex_unlock(&l->m);
	if (waiting)
		pthread_cond_broadcast(&l->turn);
}
