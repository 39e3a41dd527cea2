/* The decision pipeline's parts (pipeline.h), shared by its files:
 * pipeline.c (the stages: validate, judge, outcome, correlate, append)
 * and pipeline_record.c (the audit record and the refusal notice of one
 * decision). Internal. */
#ifndef HX_PIPELINE_INT_H
#define HX_PIPELINE_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "common/sockaddr.h"
#include "policy/policy.h"
#include "supervisor/ask.h"
#include "supervisor/correlate.h"
#include "supervisor/dnsmap.h"
#include "supervisor/envdiff.h"
#include "supervisor/pipeline.h"

#define MAX_NAMES 8

/* A path argument after validation: lexical form, and resolved form when
 * it differs. ok false: unusable (relative, too long), decided as
 * missing, which the policy denies. */
struct vpath {
	bool ok, has_resolved, via_fd;
	char norm[PATH_MAX], resolved[PATH_MAX];
};

/* One request on its way through decide()'s stages: what each stage
 * leaves for the next. */
struct flow {
	struct hx_pipeline *pl;
	const struct hx_peer *peer;
	const struct hx_request *rq;
	const char *layer; /* "shim" or "kernel" */
	bool kernel;
	struct timespec t0, wall;
	/* validate */
	struct hx_event ev;
	struct vpath p1, p2, pu; /* path, path2, a unix socket's path */
	struct sockaddr_un un_norm, un_res;
	socklen_t un_len, res_len;
	bool is_unix, unix_resolved, has_addr;
	struct sockaddr_storage judged; /* 0.0.0.0 as the kernel takes it */
	char addr[HX_SOCKADDR_LEN];
	char names[MAX_NAMES][HX_DNSMAP_NAME_MAX];
	enum hx_dns_source name_src[MAX_NAMES];
	const char *namep[MAX_NAMES];
	size_t nnames;
	/* judge, classify */
	struct hx_decision d;
	bool resolved_won, by_inode;
	char cwd[PATH_MAX]; /* an exec's caller's (hx_event.cwd) */
	/* an exec's environment as it differs from the session's
	 * (envdiff.h): shown, recorded, keyed and held as its argv is */
	struct hx_envdiff env;
	bool env_unread; /* none known (hx_request.env_unread, no memory) */
	dev_t sock_dev;	 /* the neighbours' judge: what the kernel layer */
	ino_t sock_ino;	 /* must connect, and whether a /dev/shm file is */
	bool fresh;	 /* the session's own (hx_outcome) */
	bool git_copy;	 /* hx_outcome's */
	bool agent_copy; /* hx_outcome's */
	bool refused;	 /* loopback, nothing listens: ECONNREFUSED */
	/* ask (ask.h): what a person is asked, the grant that answered
	 * it before, the question it is now */
	struct hx_ask_subject subj;
	char grant[48];
	unsigned ask_id;
	/* correlate */
	struct hx_corr_key key;
	enum hx_corr_match match;
	bool bypass, both;
};

struct json_t;

/* Whether rule is one of the harness's own protections (enforced in
 * audit mode too). */
bool hx_pl_protects_harness(const char *rule);
/* Whether op writes a file's content or name (write, unlink, truncate,
 * rename, link). */
static inline bool hx_pl_writes_file(enum hx_op op)
{
	return op == HX_OP_WRITE || op == HX_OP_UNLINK ||
	       op == HX_OP_TRUNCATE || op == HX_OP_RENAME || op == HX_OP_LINK;
}
/* Whether f's call goes ahead, or would at a person's yes: the
 * harness's own judges hold for both, so that no one is asked about a
 * call the harness refuses, and no yes lifts the refusal (a person
 * answers for a rule of the policy, never for the harness's own). */
static inline bool hx_pl_may_proceed(const struct flow *f)
{
	return f->d.verdict == HX_VERDICT_ALLOW ||
	       f->d.verdict == HX_VERDICT_ASK;
}
/* The path a judgement looks at: the resolved one, or as written. */
static inline const char *hx_pl_judged_path(const struct vpath *v)
{
	return !v->ok ? NULL : v->has_resolved ? v->resolved : v->norm;
}
/* Judges of pipeline_git.c: git's existing objects and kept stores;
 * the repositories the agent makes (f->d revised, f->git_copy set). */
/* Validate (pipeline_env.c): f->env, an exec's environment as it
 * differs from the session's, and its loader's options after it. */
void hx_pl_validate_env(struct flow *f);
void hx_pl_judge_git_objects(struct flow *f);
void hx_pl_judge_nested_git(struct flow *f);
/* pipeline_agent.c: an agent's configuration that names the programs
 * it starts is written by a checked rename only (f->agent_copy set). */
void hx_pl_judge_agent_conf(struct flow *f);
/* ... and a file there that the session did not make is not written
 * where the rule says own_files (f->fresh set for one it makes). */
void hx_pl_judge_own_files(struct flow *f);
/* pipeline_sessions.c: no other session's worktree, admin directory,
 * branch or checkpoints is written (harness:other-session). */
void hx_pl_judge_other_sessions(struct flow *f);
/* Whether the directory d is a git dir's objects/, or a directory of
 * it (objects/xx, objects/pack), that holds another's object (made
 * since the start, not by the session): a move of it takes them. */
bool hx_pl_dir_holds_anothers(struct flow *f, const char *d);
/* pipeline_device.c: no metadata change of a device node. */
void hx_pl_judge_device_inode(struct flow *f);
/* A /dev/pts/N of v the agent's own devpts instance lacks: another
 * terminal than the session's (pipeline_device.c). */
bool hx_pl_other_terminal(const struct hx_peer *peer, const struct vpath *v);
/* Whether v names the terminal a question holds. */
bool hx_pl_held_terminal(const struct hx_pipeline *pl, const struct vpath *v);
/* path in pid's view of the file system (pid 0: ours), into out. */
void hx_pl_in_view(pid_t pid, const char *path, char *out, size_t size);
/* pipeline_oom.c: no write of an oom_score_adj (oomshield.h). */
void hx_pl_judge_oom_score(struct flow *f);

/* pipeline_links.c: a file with other names, made before the session,
 * is not changed in place (harness:shared-file). */
void hx_pl_judge_shared_file(struct flow *f);
/* Whether rq's address is of a family the policy does not name. */
bool hx_pl_foreign_family(const struct hx_request *rq);
/* A call whose flags are open(2)'s (the others' are AT_ ones). */
bool hx_pl_is_open(unsigned call);
/* An exec the caller's child makes: posix_spawn, system, popen. */
bool hx_pl_is_spawn(const struct hx_request *rq);
/* Whether an exec's argv is more than a shim request carries. */
bool hx_pl_argv_past_request(const struct hx_request *rq);
/* The key both layers know f's call by (pipeline_key.c). */
struct hx_corr_key hx_pl_call_key(const struct flow *f);
/* Record: f's audit record (NULL when it cannot be made). */
struct json_t *hx_pl_record(struct flow *f);
/* A #! script's exec the shim's record stands for (seq, 0: coalesced):
 * what the kernel layer saw run it (exec_interpreter). */
void hx_pl_record_interp(struct flow *f, uint64_t seq);
/* A refusal only the kernel layer saw: formatted into out->notice,
 * printed unless out->tell. */
void hx_pl_kernel_notice(const struct flow *f, struct hx_outcome *out);

#endif
