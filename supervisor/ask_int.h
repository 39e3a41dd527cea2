/* What the approvals' files share (ask.h): ask.c (the questions, their
 * answers, the waiting and the grants) and askshow.c (the questions for
 * people and programs: pending, one line, the ask socket's requests),
 * which only reads them and answers through ask.c. Internal. */
#ifndef HX_ASK_INT_H
#define HX_ASK_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "supervisor/ask.h"
#include "supervisor/askscript.h"
#include "supervisor/askuser.h"

struct json_t;

#define MAX_WAITING  64 /* questions; more are refused at once */
#define MAX_TOKENS   16
#define TOKEN_TTL_MS 5000 /* an answer "once" waits this for the kernel */
#define CHAIN_MAX    8	  /* processes named in a question */
#define POLL_MS	     100  /* how often a waiter looks whether it is gone */
#define BATCH_MS     150  /* a batch takes questions that come this soon */

struct question {
	unsigned id, batch; /* batch: a label the batch's questions share */
	struct question *next;
	struct hx_ask_subject s; /* strings owned, image too: */
	struct stat image;
	char *cwd;	   /* an exec's */
	struct stat shown; /* an exec's file as it was asked about */
	bool has_shown;
	struct json_t *chain;	  /* [{pid, exe}], the asker first */
	struct timespec asked;	  /* monotonic */
	unsigned long long start; /* the asker's start time, or 0 */
	uint64_t seq;		  /* the event's record */
	bool recorded;		  /* seq set: it waits */
	struct hx_ask_wait *kw;	  /* a kernel layer's waiter, or NULL */
	void (*fn)(void *arg, const struct hx_ask_result *r); /* a shim's */
	void *arg, *owner;
	/* The agent's own question (askuser.h), owned, and its answer;
	 * its subject s is empty. */
	bool agent;
	struct hx_ask_question uq;
	char *answer;
	bool ending; /* its asker lived as the session was told to end */
};

/* An answer "once" to the shim's question, for the kernel layer's view
 * of the same call (the shim asks before it makes it). */
struct token {
	struct hx_ask_subject s; /* owned: the very call answered */
	char *cwd;		 /* owned: an exec's, as shown */
	struct stat shown;	 /* an exec's file, as shown */
	bool has_shown;
	enum hx_verdict v;
	int64_t until_ms;
	/* The asker's start time (its number may be another process's
	 * before the kernel layer's sight comes: it stands for none). */
	unsigned long long start;
	unsigned id; /* 0: free */
};

struct hx_ask {
	struct hx_pipeline *pl;
	char grants_path[PATH_MAX]; /* "": no "always" grants */
	unsigned timeout_s;
	struct json_t *session, *always; /* grants */
	struct question *qs;		 /* oldest first */
	size_t nq;
	unsigned next_id;
	pthread_mutex_t m; /* of the kernel waiters' kwait */
	pthread_cond_t cv;
	struct token tokens[MAX_TOKENS];
	struct hx_askscripts scripts; /* what an allowed script runs */
	void (*on_change)(void *arg);
	void *change_arg;
	struct hx_ask_stats stats;
};

/* The first (oldest) question of batch b that waits, or NULL. */
struct question *hx_ask_head(const struct hx_ask *a, unsigned b);
/* How many of batch b's questions, up to id upto, wait. */
size_t hx_ask_batch_size(const struct hx_ask *a, unsigned b, unsigned upto);

#endif
