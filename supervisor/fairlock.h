/* A mutex taken first come first served (tickets): a thread that waits
 * for it gets it before one that takes it back at once, whatever the
 * scheduler prefers. The server's loop lock (server.h), so that a flood
 * of shim requests on the loop's thread cannot starve a worker. */
#ifndef HX_FAIRLOCK_H
#define HX_FAIRLOCK_H

#include <pthread.h>
#include <stdint.h>

struct hx_fair_lock {
	pthread_mutex_t m;
	pthread_cond_t turn;
	uint64_t next, serving; /* tickets */
};

void hx_fair_init(struct hx_fair_lock *l);
void hx_fair_destroy(struct hx_fair_lock *l);
void hx_fair_lock(struct hx_fair_lock *l);
void hx_fair_unlock(struct hx_fair_lock *l);

#endif
