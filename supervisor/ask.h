/* Approvals (issue 12): a call whose verdict is ask waits until a person
 * answers it, on harness-exec's terminal (askterm.h) or with
 * `harness-exec approve|deny ID` over the session's ask socket
 * (askcli.h); with nobody answering, it is refused after the policy's
 * ask_timeout. The waiting is the layer's own: a user-notify worker
 * keeps the agent's thread in its system call (hx_ask_wait), the shim's
 * server keeps its reply (hx_ask_defer); the rest of the tree runs on.
 *
 * Answers: once, for the session, or always (a grant in the user's
 * grants file, $XDG_STATE_HOME/harness/grants.jsonl, which the policy's
 * harness:protect keeps out of the agent's reach); deny, deny always.
 * Grants are keyed on what the agent cannot spoof: an exec's real
 * executable (its resolved path, device and inode) and argv, a file's
 * resolved path and access, a connect's host:port. Questions about
 * files under one directory that arrive while one waits are one
 * question (a batch) about that directory.
 *
 * Each question is the event's record (verdict ask, "ask": ID); each
 * answer an ask_answer record (who, how, scope, latency, ref_seq).
 *
 * The agent may also ask a question of its own (askuser.h: harness-mcp's
 * ask_user when its client cannot show one): free text with optional
 * choices, answered with text (hx_ask_reply) or declined (deny), never
 * granted; it waits, times out and ends as the others do, its record is
 * a "question" record and its answer's an ask_answer record with the
 * answer's text, both redacted as agent text is.
 *
 * All of it runs under the loop's lock (server.h), except hx_ask_wait's
 * sleep. */
#ifndef HX_ASK_H
#define HX_ASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/types.h"
#include "supervisor/corrkey.h"

struct hx_pipeline;
struct hx_ask;
struct hx_ask_question;
struct json_t;
struct stat;

enum hx_ask_scope {
	HX_ASK_ONCE,
	HX_ASK_SESSION,
	HX_ASK_ALWAYS,
};

/* What is asked, as the pipeline judged it (borrowed for the call). */
struct hx_ask_subject {
	enum hx_op op;
	/* a file: the path judged (symlinks resolved); an exec: the
	 * executable, resolved */
	const char *path;
	const char *path2;	 /* a rename's or link's other path */
	const char *const *argv; /* an exec's, argv[0] included */
	size_t argc;
	/* an exec's file as the kernel layer opened it, or NULL (then
	 * path is stat'ed) */
	const struct stat *image;
	const char *addr; /* a connect or send: "address:port" */
	unsigned port;
	const char *const *names; /* the names addr was resolved from */
	size_t nnames;
	const char *rule;
	/* an exec's part that decided, read from its argv ("git push"
	 * of sh -c 'cd x && git push'), or NULL */
	const char *judged_as;
	const char *cwd; /* an exec's caller's, for hx_ask_granted only */
	/* an exec's environment as it differs from the session's
	 * (envdiff.h: env_len bytes of sorted entries); env_unread: none is
	 * known, and no answer stands for it */
	const char *env;
	size_t env_len;
	bool env_unread;
	pid_t pid, tid, ppid;
	bool spawn;		/* an exec its caller's child makes */
	struct hx_corr_key key; /* the call's (correlate.h) */
	bool kernel;		/* asked by the kernel layer */
};

/* A session's approvals: questions wait at most timeout_s; "always"
 * grants are read from and written to grants_path (NULL: none). */
int hx_ask_new(struct hx_pipeline *pl, const char *grants_path,
	       unsigned timeout_s, struct hx_ask **out);
/* The session ends: every question still waiting is refused (recorded;
 * its waiter told). */
void hx_ask_end(struct hx_ask *a);
/* The session is told to end (a signal to harness-exec): each waiting
 * question's asker is noted as living, before the signal goes on to end
 * it, so that hx_ask_end says "end" for it, not "gone" (the asker dead
 * by then on a loaded machine). */
void hx_ask_ending(struct hx_ask *a);
/* hx_ask_end, then frees a; no worker may be waiting (hx_unotify_stop
 * first). */
void hx_ask_free(struct hx_ask *a);

/* What a grant says of s: HX_VERDICT_ALLOW or HX_VERDICT_DENY, and
 * which grant into how ("session g3", "always g-1a2b", "once #4"); else
 * HX_VERDICT_ASK. An answer "once" to the shim's question is used up by
 * the kernel layer's view of that same call. */
enum hx_verdict hx_ask_granted(struct hx_ask *a, const struct hx_ask_subject *s,
			       char *how, size_t hlen);

/* A new question about s; returns its id, or 0 when it cannot wait
 * (too many are waiting, no memory): then the call is refused. */
unsigned hx_ask_open(struct hx_ask *a, const struct hx_ask_subject *s);
/* The question's event record is seq (0: none was written). */
void hx_ask_recorded(struct hx_ask *a, unsigned id, uint64_t seq);
/* The question's record could not be written: it never waits. */
void hx_ask_drop(struct hx_ask *a, unsigned id);

/* The result of a question, for the layer that waits. */
struct hx_ask_result {
	enum hx_verdict verdict; /* ALLOW or DENY */
	uint64_t seq;		 /* the ask_answer record */
	/* static: "answer", "timeout", "gone", "end" (the session's), or
	 * the withdrawer's word (hx_ask_withdraw) */
	const char *why;
	/* the agent's question: the answer given (verdict ALLOW), borrowed
	 * for the call; else NULL */
	const char *answer;
};

/* A kernel layer's wait for question id, on a worker's thread (its
 * stack holds w): begin holding the loop's lock (false: id waits no
 * more); sleep without it until the answer or until gone(arg) says the
 * asking thread waits no more (looked at every 100 ms; true: answered);
 * end holding it again: r is the answer, or a refusal recorded with why
 * ("gone"; "busy": it could not wait). */
struct hx_ask_wait {
	bool done;
	struct hx_ask_result r;
	unsigned id;
};
bool hx_ask_wait_begin(struct hx_ask *a, unsigned id, struct hx_ask_wait *w);
bool hx_ask_wait_sleep(struct hx_ask *a, struct hx_ask_wait *w,
		       bool (*gone)(void *arg), void *arg);
void hx_ask_wait_end(struct hx_ask *a, struct hx_ask_wait *w, const char *why,
		     struct hx_ask_result *r);

/* Calls fn(arg, r) on the loop's thread once question id is answered,
 * times out, or its owner (a shim connection) is gone (r->why "gone":
 * nobody reads an answer), or at once when id waits no more. */
void hx_ask_defer(struct hx_ask *a, unsigned id, void *owner,
		  void (*fn)(void *arg, const struct hx_ask_result *r),
		  void *arg);
/* owner is gone: its deferred questions are withdrawn (recorded). */
void hx_ask_forget(struct hx_ask *a, void *owner);

/* A question of the agent's own (askuser.h; copied): its "question"
 * record is written and it waits as a call's question does, for
 * hx_ask_defer. Its result: ALLOW with the answer, DENY with why
 * "answer" (declined), "timeout", "end" or "gone". Returns its id, or 0
 * when it cannot wait (ask_timeout 0: nobody is to be asked; too many
 * wait; no memory; its record was not written). */
unsigned hx_ask_question(struct hx_ask *a, const struct hx_ask_question *uq);
/* The agent's question id, or NULL when id is none (borrowed while it
 * waits). */
const struct hx_ask_question *hx_ask_question_of(const struct hx_ask *a,
						 unsigned id);
/* Answers the agent's question id with text, by whom ("terminal",
 * "control pid 123"): a choice's number stands for its text. Returns 0,
 * -ENOENT (no such question waits), -EINVAL (a call's question, or text
 * that cannot answer it: msg says why), -ENOMEM; msg says what was
 * done. */
int hx_ask_reply(struct hx_ask *a, unsigned id, const char *text,
		 const char *by, char *msg, size_t mlen);
/* Its asker wants question id answered no more (a cancelled tool call):
 * recorded answered by by, and its deferred fn is not called. */
void hx_ask_withdraw(struct hx_ask *a, unsigned id, const char *by);

/* Once a second, on the loop's thread: refuses what waited too long. */
void hx_ask_tick(struct hx_ask *a);

/* Answers question (or batch) id: v ALLOW or DENY, with scope, by whom
 * ("terminal", "control pid 123"); upto > 0: only the batch's questions
 * up to that id (those the person was shown); for an exec grant, prefix
 * > 0 keeps that many words of argv after argv[0] and lets any follow.
 * The agent's question is declined by DENY once, and wants an answer
 * (hx_ask_reply), not ALLOW. Returns 0, or -ENOENT (no such question),
 * -EINVAL (msg says why); msg says what was done. */
int hx_ask_answer(struct hx_ask *a, unsigned id, unsigned upto,
		  enum hx_verdict v, enum hx_ask_scope scope, const char *by,
		  unsigned prefix, char *msg, size_t mlen);
/* The last question of batch b now (0: none). */
unsigned hx_ask_batch_last(const struct hx_ask *a, unsigned b);

/* The batches waiting, oldest first: n ids into ids, returns how many
 * wait in all. */
size_t hx_ask_pending(const struct hx_ask *a, unsigned *ids, size_t n);
/* Batch id as a JSON object (id, what, the processes that asked, rule,
 * age, deadline; the agent's question: from, call_id, question,
 * choices), new reference, or NULL. */
struct json_t *hx_ask_describe(const struct hx_ask *a, unsigned id);
/* Batch id for a person, one terminal-safe line of at most size bytes:
 * "exec /usr/bin/git push origin main (in /home/u/p)", "the agent asks:
 * Push? [1) yes, 2) no]", "write 3 files in
 * /home/u/p/build/". A line of 4096 bytes or more shows longer words
 * and environments whole. Returns false when an exec's line leaves out
 * or cuts any of its argv or environment (it says so). */
bool hx_ask_line(const struct hx_ask *a, unsigned id, char *buf, size_t size);

/* Called (loop's thread) when a batch starts waiting or stops (answered
 * anywhere, timed out, withdrawn). */
void hx_ask_on_change(struct hx_ask *a, void (*fn)(void *arg), void *arg);

/* One request of the ask socket ("pending", "approve ID SCOPE
 * [PREFIX]", "deny ID SCOPE", "answer ID TEXT"), from the user's
 * process pid. */
void hx_ask_control(struct hx_ask *a, const char *req, pid_t pid, char *reply,
		    size_t size);

/* Whether process pid has a thread waiting in its system call for a
 * question (the kernel layer's waiter). */
bool hx_ask_waits_in_kernel(const struct hx_ask *a, pid_t pid);

/* How the session's questions ended: the calls', then the agent's own
 * (cancelled: timed out, withdrawn or ended with the session). */
struct hx_ask_stats {
	uint64_t allowed, denied, timed_out, gone; /* gone: also "end" */
	uint64_t answered, declined, cancelled;
};
void hx_ask_stats(const struct hx_ask *a, struct hx_ask_stats *st);

#endif
