/* One harness-exec session's state, shared by run.c (the flow) and
 * run_log.c (its session_start and session_end records). Internal. */
#ifndef HX_RUN_INT_H
#define HX_RUN_INT_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "supervisor/gitconf.h"
#include "supervisor/mountalias.h"
#include "supervisor/loopback.h"
#include "supervisor/neighbours.h"
#include "supervisor/options.h"
#include "supervisor/pipeline.h"
#include "supervisor/reaper.h"
#include "supervisor/ttystate.h"
#include "supervisor/kernel/dnsns.h"
#include "supervisor/resolvconf.h"
#include "supervisor/server.h"
#include "supervisor/session.h"

struct hx_policy;
struct hx_audit;
struct hx_dnsmap;
struct hx_worktree;
struct hx_sandbox;
struct hx_unotify;
struct hx_execgate;
struct hx_kaudit;
struct hx_control;
struct hx_askterm;
struct hx_metrics_serve;
struct hx_exporter;
struct hx_run_alerts;
struct hx_run_early;

struct run {
	const struct hx_options *o;
	struct hx_ttystate tty; /* the user's terminal, put back at the end */
	struct hx_session sess;
	struct hx_policy *policy;
	struct hx_audit *audit;
	struct hx_dnsmap *dns;
	struct hx_server *srv;
	struct hx_pipeline pl;
	struct hx_source sigsrc;
	struct hx_worktree *wt; /* --worktree, else NULL */
	/* its checkpoints' walks confined, so the agent may make symlinks
	 * in it (pipeline.h worktree_links) */
	bool wt_links;
	struct hx_control *askctl;  /* the ask socket (ask.h), or NULL */
	struct hx_askterm *askterm; /* questions on the terminal, or NULL */
	struct hx_sandbox *sb;
	struct hx_unotify *un; /* the user-notify handler, or NULL */
	/* the sealed namespace the agent's DNS goes to (dnsns.h), or NULL
	 * and why not (DNS is then the system's) */
	struct hx_dnsns *dnsns;
	struct hx_dnsns_listeners dns_l;
	int dns_err;
	struct hx_execgate *gate; /* --exec-gate's tracer, or NULL */
	/* Landlock's refusals read as kernel audit records, or NULL and
	 * why not (kaudit.h) */
	struct hx_kaudit *ka;
	struct hx_run_early *early; /* run_kernel.c's thread, not joined yet */
	bool ka_asked;		    /* ka and ka_err are hx_kaudit_open's */
	int ka_err;
	char ka_why[160];
	/* whose key tags redacted secrets: "user" (redact.h), "session"
	 * (the user's could not be had); NULL: no redaction */
	const char *redact_key;
	int hand[2]; /* listener hand-off socketpair, or -1 */
	struct hx_reaper reaper;
	bool exec_gate;	      /* in use: asked for and possible here */
	bool trace_reads;     /* every open decided in the kernel layer */
	void (*sigpipe)(int); /* SIGPIPE's disposition at start: the agent's */
	int reaper_err;	      /* 0, or why the tree is not killed with us */
	char *policy_text;
	size_t policy_len;
	const char *profiles[HX_MAX_PROFILES]; /* added to the policy */
	size_t nprofiles;
	char *profile_paths[HX_MAX_PROFILES];	/* realpath()s, freed */
	bool profile_detected[HX_MAX_PROFILES]; /* came from the command */
	struct hx_resolver resolver;		/* harness:resolver */
	struct hx_neighbours neighbours;	/* harness:ssh-agent, ... */
	struct hx_gitconf gitconf;		/* harness:git-config */
	struct hx_mountalias aliases;		/* second mounts */
	struct hx_endpoints endpoints;		/* harness:model-endpoint */
	/* the session's network rules: the resolver's, the neighbours' */
	struct hx_session_rule net_rules[1 + HX_NEIGHBOUR_RULES];
	char policy_sha[65];
	char shim[PATH_MAX];
	char cwd[PATH_MAX];
	char project[PATH_MAX]; /* the start dir, when cwd is a worktree */
	/* the branch HEAD named at the start and its commit (run_hidden.c) */
	char head_ref[256], head_oid[72], head_now[72];
	/* what git read in place of an object at the start: replace refs
	 * and grafts, name -> value (run_hidden.c); NULL: no repository */
	json_t *subst;
	char cmd_path[PATH_MAX];    /* the command as found on PATH, or "" */
	char *own_env[3];	    /* the strings child_env made */
	struct hx_envbase *envbase; /* the agent's first environment */
	bool listening;
	pid_t child;
	int child_fd; /* its pidfd: it may be reaped by the gate's tracer */
	bool child_done;
	/* The agent's /dev/pts, seen while it waits at the listener
	 * hand-off: "own devpts" (terminals.h), "host", or NULL: not seen */
	const char *terminals;
	const char *sysv_ipc; /* "own namespace", "refused", or NULL */
	size_t shm_removed;   /* the session's /dev/shm files, at its end */
	bool shm_left;	      /* more were made than were known */
	int child_status;
	/* --metrics: the socket bound (until served), its address as said
	 * ("127.0.0.1:PORT", "unix:PATH"), and its server */
	int metrics_fd;
	char metrics_addr[128];
	struct hx_metrics_serve *metrics_srv;
	struct hx_exporter *exporter;	 /* --otlp-endpoint, or NULL */
	struct hx_run_alerts *alerts_rt; /* run_alerts.c's, or NULL */
	/* harness-mcp: the worker's socket (ours, its), --http's listener
	 * and its bearer token, the front */
	int mcp_fd[2], mcp_http_fd;
	char mcp_token[128];
	char
	    mcp_sock[108]; /* --http unix:PATH, removed at the end ("": none) */
	struct stat mcp_sock_file; /* its device and inode */
	struct hx_mcp *mcp;
};

/* The policy's audit settings in the pipeline, before any record: the
 * quota, and the redactor of every record's text (hx_record_redact)
 * unless audit.redact is false. 0, or -1 said (no redaction, no
 * session). */
int hx_run_log_open(struct run *r);

/* The session's first record: the command, the policy and its sources,
 * the kernel layers in force, the redaction. */
void hx_run_log_start(struct run *r);

/* --verbose: the session's places, mode and policy on stderr. */
void hx_run_say_verbose(const struct run *r);

/* Approvals (run_ask.c): the questions, grants and ask socket, after
 * the pipeline (-1: cannot); the terminal's questions, once the agent
 * is forked; what still waits refused at the end; all of it freed once
 * no worker waits. */
int hx_run_open_ask(struct run *r);
/* SIG_IGN in harness-exec, SIG_DFL in the agent's first process: the
 * agent's SIGTTIN and SIGTTOU while a question holds the terminal go to
 * our process group too, and must stop it, not us. */
void hx_run_ask_signals(void (*disposition)(int));
/* What would end harness-exec, and its session with no record (SIGXFSZ,
 * SIGPIPE, and the above), ignored; and put back in the agent's first
 * process as harness-exec was given them. */
void hx_run_own_signals(struct run *r);
void hx_run_agent_signals(const struct run *r);
void hx_run_ask_terminal(struct run *r);
/* run_hidden.c: what the project's git index hides, at the end, and
 * whether the branch of the start was rewritten (its commit then, read
 * at the start). */
void hx_run_hidden_start(struct run *r);
void hx_run_hidden_changes(struct run *r);
void hx_run_end_asks(struct run *r);
void hx_run_close_ask(struct run *r);

/* What a missing layer costs, said once at the start. */
void hx_run_warn_missing(struct run *r);

/* Metrics (run_metrics.c): the paths they go to protected (with the
 * session's, before the policy is loaded: -errno); the set and its
 * endpoint, after the pipeline (-1: cannot); served once the agent is
 * forked; stopped (the last file written) before what they read is. */
int hx_run_protect_metrics(struct run *r);
/* The session's own files, all known at the end of its set-up, made
 * every other session's to refuse (hx_session_register); 0 or -1. */
int hx_run_register(struct run *r);
int hx_run_open_metrics(struct run *r);
void hx_run_serve_metrics(struct run *r);
void hx_run_stop_metrics(struct run *r);

/* Traces (run_trace.c): sent as the session runs, once the agent is
 * forked; the last of them after session_end. */
void hx_run_start_trace(struct run *r);
void hx_run_finish_trace(struct run *r);

/* Alerts (run_alerts.c): the set and its actions, after the pipeline
 * (-1: cannot); `harness-exec resume` (the ask socket's "resume"), a
 * signal to harness-exec (a paused tree would not see it), the end of
 * the loop (the tree thawed, the hooks given HOOK_WAIT_MS) each thaw
 * it; closed once nothing records. */
int hx_run_open_alerts(struct run *r);
void hx_run_resume(struct run *r, pid_t pid, char *reply, size_t size);
void hx_run_alerts_signal(struct run *r);
void hx_run_settle_alerts(struct run *r);
void hx_run_close_alerts(struct run *r);

/* harness-mcp (run_mcp.c): the worker's socket, before the fork (-1:
 * cannot, said); in the worker, before the sandbox (the socket as its
 * stdin, /dev/null as its stdout) and after it (the socket moved to
 * fd 3, /dev/null to stdin: fds from 4 are then closed); the front,
 * once the worker is forked (-1: cannot, said); its end, while the
 * worker's tree still lives (its calls' records before session_end). */
int hx_run_mcp_pair(struct run *r);
void hx_run_mcp_child(struct run *r);
void hx_run_mcp_child_sandboxed(struct run *r);
int hx_run_mcp_start(struct run *r);
void hx_run_mcp_stop(struct run *r);

/* Its last: how the command ended (code: harness-exec's exit status)
 * and what the session counted. */
void hx_run_log_end(struct run *r, int code);

/* run_kernel.c: what is asked of the kernel before the fork. _begin
 * starts a thread (no fork until _join, which teardown calls too) that
 * opens kernel audit and probes for a user namespace while the policy
 * is parsed; landlock_audit joins it and uses kernel audit in enforce
 * mode; limit_processes sets the process count. */
void hx_run_kernel_begin(struct run *r);
void hx_run_kernel_join(struct run *r);
void hx_run_landlock_audit(struct run *r);
void hx_run_limit_processes(struct run *r);
/* Leaves the session's anchor (anchor.h): the log's last seq and hash,
 * in the session dir. After the last append, before the log closes. */
void hx_run_anchor(struct run *r);

#endif
