/* harness-exec's session flow; see run.h. */
#define _GNU_SOURCE
#include "supervisor/run.h"
#include "supervisor/run_int.h"

#include <dirent.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/policy.h"
#include "common/wire.h"
#include "supervisor/alerts.h"
#include "supervisor/ask.h"
#include "supervisor/audit.h"
#include "supervisor/dnsmap.h"
#include "supervisor/envdiff.h"
#include "common/notice.h"
#include "common/clock.h"
#include "supervisor/command.h"
#include "supervisor/kernel/devbound.h"
#include "supervisor/kernel/execgate.h"
#include "supervisor/kernel/unotify.h"
#include "supervisor/fmt.h"
#include "supervisor/options.h"
#include "supervisor/ownfiles.h"
#include "supervisor/metrics.h"
#include "supervisor/pidset.h"
#include "supervisor/phases.h"
#include "supervisor/pipeline.h"
#include "supervisor/reaper.h"
#include "supervisor/neighbours.h"
#include "supervisor/kernel/rlimits.h"
#include "supervisor/resolvconf.h"
#include "supervisor/kernel/sandbox.h"
#include "supervisor/server.h"
#include "supervisor/session.h"
#include "supervisor/sha256.h"
#include "supervisor/kernel/unotify.h"
#include "supervisor/git/worktree.h"
#include "supervisor/kernel/confine.h"
#include "supervisor/proc.h"
#include "supervisor/say.h"
#include "supervisor/shimpath.h"
#include "supervisor/record.h"
#include "supervisor/correlate.h"
#include "supervisor/kernel/kaudit.h"
#include "supervisor/agentconf.h"
#include "supervisor/gitconf.h"
#include "supervisor/owned.h"

#define MAX_DESC 4096
/* The audit log took no more records: the session was ended. */
#define HX_EXIT_AUDIT_FAILED 125

extern char **environ;

/* Whether what child sees at its path (under /proc/CHILD/) is another
 * object than ours at ours: its own devpts, its own IPC namespace. NULL
 * when either cannot be looked at. */
static const char *own(pid_t child, const char *its, const char *ours,
		       bool by_dev, const char *yes, const char *no)
{
	char p[64];
	struct stat in, out;

	snprintf(p, sizeof(p), "/proc/%d/%s", (int)child, its);
	if (stat(p, &in) || stat(ours, &out))
		return NULL;
	return (by_dev ? in.st_dev != out.st_dev : in.st_ino != out.st_ino)
		   ? yes
		   : no;
}

/* The log is protected by its path and by its inode; a second name made
 * before the session (a hard link in the project) would be one the
 * agent could truncate between a decision and the act, so the log must
 * have exactly one. None can be added during the session: link() of
 * the log, by any path, is harness:protect. */
static int protect_log(struct run *r)
{
	struct stat st;
	int fd = hx_audit_fd(r->audit);

	if (fstat(fd, &st)) {
		hx_say("audit log %s: %s", r->sess.audit_path, strerror(errno));
		return -1;
	}
	if (st.st_nlink != 1) {
		hx_say("audit log %s has %lu hard links: another name would "
		       "reach it; use a log with one name",
		       r->sess.audit_path, (unsigned long)st.st_nlink);
		return -1;
	}
	hx_pipeline_protect_fd(&r->pl, fd);
	return 0;
}

/* The command's first exec happens in harness-exec itself, before any
 * shim exists: decide it here so `harness-exec -- sudo x` is judged. */
static bool decide_command(struct run *r)
{
	char path[PATH_MAX];
	struct hx_request rq = {.call = HX_CALL_EXECVP, .op = HX_OP_EXEC};
	struct hx_peer peer = {
	    .pid = getpid(), .uid = getuid(), .ppid = getppid()};
	struct hx_outcome out;
	char exe[PATH_MAX], line[1024];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (!hx_command_find(r->o->cmd[0], r->cwd, r->cmd_path, path)) {
		r->cmd_path[0] = '\0';
		return true; /* execvp reports it (127) */
	}
	if (n > 0) {
		exe[n] = '\0';
		peer.exe = exe;
	}
	rq.path = path;
	rq.argv = (const char *const *)r->o->cmd;
	rq.argc = (size_t)r->o->ncmd;
	hx_pipeline_decide(&r->pl, &peer, &rq, "harness", &out);
	if (out.reply == HX_VERDICT_ALLOW)
		return true;
	hx_notice_format(
	    line, sizeof(line),
	    &(struct hx_notice){.op = HX_OP_EXEC,
				.verdict = out.reply,
				.target = path,
				.argv = (const char *const *)r->o->cmd,
				.rule = out.rule ? out.rule : "?"});
	fputs(line, stderr);
	return false;
}

static char **child_env(struct run *r)
{
	const char *old_preload = getenv(HX_ENV_PRELOAD);
	size_t n = 0, i, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 4, sizeof(*env));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++) {
		if (!strncmp(environ[i], HX_ENV_SOCKET "=",
			     sizeof(HX_ENV_SOCKET)) ||
		    !strncmp(environ[i], HX_ENV_PRELOAD "=",
			     sizeof(HX_ENV_PRELOAD)) ||
		    !strncmp(environ[i], HX_ENV_CONN "=",
			     sizeof(HX_ENV_CONN)) ||
		    !strncmp(environ[i], "TMPDIR=", 7))
			continue;
		env[k++] = environ[i];
	}
	if (asprintf(&r->own_env[0], "%s=%s", HX_ENV_SOCKET,
		     r->sess.sock_path) < 0 ||
	    asprintf(&r->own_env[1], "%s=%s%s%s", HX_ENV_PRELOAD, r->shim,
		     old_preload && old_preload[0] ? ":" : "",
		     old_preload ? old_preload : "") < 0 ||
	    asprintf(&r->own_env[2], "TMPDIR=%s", r->sess.tmpdir) < 0) {
		free(env);
		return NULL;
	}
	for (i = 0; i < 3; i++)
		env[k++] = r->own_env[i];
	env[k] = NULL;
	return env;
}

static void child_exec(struct run *r, char **env, const sigset_t *oldmask,
		       pid_t parent)
{
	int e;

	/* Dies with harness-exec while it is being set up: without a
	 * reaper (an ordinary user's session) nothing else would end it,
	 * stuck in a mount that waits on the dead supervisor's FUSE mask. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(126);
	hx_reaper_child(&r->reaper);
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	hx_run_agent_signals(r); /* ours are ignored (hx_run) */
	if ((!r->reaper_err || r->reaper.pids_fd >= 0) &&
	    hx_reaper_join(&r->reaper)) {
		fprintf(stderr,
			"harness-exec: cannot join the session's "
			"cgroup: %s\n",
			strerror(errno));
		_exit(126);
	}
	hx_run_mcp_child(r);
	/* Closes fds > 2 itself (after Landlock); _exit(126) on failure. */
	hx_sandbox_enter(r->sb);
	hx_run_mcp_child_sandboxed(r);
	/* No supervisor fd reaches the agent (DESIGN.md invariant 5); the
	 * MCP worker's fd 3 is the front's, which takes it as hostile. */
	if (syscall(SYS_close_range, r->o->mcp ? 4u : 3u, ~0u, 0u))
		for (int fd = r->o->mcp ? 4 : 3; fd < 1024; fd++)
			close(fd);
	environ = env;
	prctl(PR_SET_PDEATHSIG, 0); /* the agent's own, as before */
	/* What was decided, without execvp's search again: each directory
	 * of PATH it tried first would be an exec the kernel layer hears. */
	execvp(r->cmd_path[0] ? r->cmd_path : r->o->cmd[0], r->o->cmd);
	e = errno;
	fprintf(stderr, "harness-exec: %s: %s\n", r->o->cmd[0], strerror(e));
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

static void reap(struct run *r)
{
	int st;
	pid_t p;

	/* The gate's tracer is the only waiter while it runs: a waitpid
	 * here would take ptrace stops of the root child (execgate.h). */
	if (r->gate) {
		if (!r->child_done && hx_execgate_child_status(r->gate, &st)) {
			r->child_done = true;
			r->child_status = st;
		}
		return;
	}
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == r->child) {
			r->child_done = true;
			r->child_status = st;
		}
	}
}

static void gate_exit(void *arg)
{
	reap(arg);
}

static void on_signal(struct hx_server *s, struct hx_source *src,
		      uint32_t events)
{
	struct run *r = src->arg;
	struct signalfd_siginfo si;

	(void)s;
	(void)events;
	while (read(src->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			reap(r);
		else if (!r->child_done) {
			hx_run_alerts_signal(r);  /* frozen, it would not die */
			hx_ask_ending(r->pl.ask); /* its askers, alive */
			hx_proc_kill(r->child_fd, r->child, (int)si.ssi_signo);
			/* Nor may it in a call that waits on a question (the
			 * gate holds signals but SIGKILL): refused ("end"). */
			hx_ask_end(r->pl.ask);
		}
	}
}

/* Serves what the exiting tree has already sent: every message of an
 * exited process is queued on its socket, so reading until nothing is
 * ready loses none and adds no wait at exit. */
static void drain(struct run *r, uint64_t max_ms)
{
	uint64_t start = hx_mono_ms();

	while (hx_mono_ms() - start < max_ms &&
	       hx_server_run_once(r->srv, 0) > 0)
		;
}

/* As a subreaper we are the parent of every orphan of the tree, so a
 * living descendant descends from one of our children: with none left
 * (ECHILD), the /proc scan (~10 us a process on the machine) can be
 * skipped. WNOWAIT, since the exec gate's tracer may be the waiter;
 * __WALL counts its tracees and clone children too. */
static bool has_children(void)
{
	siginfo_t si;

	return !waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) ||
	       errno != ECHILD;
}

static void kill_tree(struct run *r)
{
	static struct hx_proc d[MAX_DESC];
	size_t n, i;
	uint64_t start;

	/* harness-exec's own helpers are stopped with the rest of it: a
	 * wait for them here was a second at the end of every session
	 * with a mask bound late (a --metrics-file in the project). */
	n = has_children() ? hx_proc_agent_descendants(d, MAX_DESC) : 0;
	if (!n) {
		reap(r);
		return;
	}
	for (i = 0; i < n; i++) {
		hx_proc_signal(&d[i], SIGTERM);
		hx_proc_signal(&d[i], SIGCONT);
	}
	start = hx_mono_ms();
	while (hx_mono_ms() - start < 1000) {
		hx_server_run_once(r->srv, 50);
		reap(r);
		if (!hx_proc_agent_descendants(d, MAX_DESC))
			break;
	}
	for (int round = 0; round < 20; round++) {
		n = hx_proc_agent_descendants(d, MAX_DESC);
		if (!n)
			break;
		for (i = 0; i < n; i++)
			hx_proc_signal(&d[i], SIGKILL);
		usleep(10000);
		reap(r);
	}
	reap(r);
}

static void policy_vars(const struct run *r, struct hx_policy_vars *v)
{
	size_t nown;

	*v = (struct hx_policy_vars){
	    .home = getenv("HOME"),
	    .cwd = r->cwd,
	    .tmpdir = r->sess.tmpdir,
	    .worktree = r->cwd,
	    .session = r->sess.id,
	    .protect = r->sess.protect,
	    .nprotect = r->sess.nprotect,
	    /* the cgroup file systems, the harness's own programs */
	    .protect_write = hx_own_write_globs(&nown),
	    .nprotect_write = nown,
	    .git_deny = r->gitconf.ptrs,
	    .ngit_deny = r->gitconf.n,
	    .git_secret = r->gitconf.sptrs,
	    .ngit_secret = r->gitconf.nsecrets,
	};
	hx_worktree_policy_vars(r->wt, v); /* $WORKTREE, git-dir rules */
	hx_mountalias_vars(&r->aliases, v);
	v->real_prefixes = true;
}

/* The profiles added to the policy: --profile's ("auto": the command's),
 * or without any, the command's. */
static int choose_profiles(struct run *r)
{
	const struct hx_options *o = r->o;
	bool none = !o->nprofiles && !o->no_profile;

	for (size_t i = 0; i < o->nprofiles || none; i++) {
		const char *p = none ? "auto" : o->profiles[i];

		none = false;
		if (!strcmp(p, "auto")) {
			p = hx_command_profile(o->cmd, o->ncmd, r->cwd);
			if (!p)
				continue;
			r->profile_detected[r->nprofiles] = true;
		} else if (hx_profile_is_file(p)) {
			/* A file is included by its real path (protected). */
			if (!(p = realpath(p, NULL))) {
				hx_say("--profile %s: %s", o->profiles[i],
				       strerror(errno));
				return -1;
			}
			r->profile_paths[r->nprofiles] = (char *)p;
		}
		r->profiles[r->nprofiles++] = p;
	}
	return 0;
}

/* The policy compiled with what the start found; its resolver rule
 * says whether the DNS namespace is up (r->dnsns). */
static int compile_policy(struct run *r, const char *text)
{
	struct hx_policy_vars vars;
	struct hx_policy_error err;
	char msg[1024];
	int e;

	hx_resolver_rule(&r->resolver, r->dnsns != NULL, &r->net_rules[0]);
	policy_vars(r, &vars);
	vars.include = r->profiles;
	vars.ninclude = r->nprofiles;
	vars.net_rules = r->net_rules;
	vars.nnet_rules = 1 + HX_NEIGHBOUR_RULES;
	e = r->o->policy
		? hx_policy_load_buffer(r->o->policy, text, r->policy_len,
					&vars, &r->policy, &err)
		: hx_policy_load_default(&vars, &r->policy, &err);
	if (e)
		fprintf(stderr, "%s\n",
			hx_policy_error_format(&err, msg, sizeof(msg)));
	return e;
}

static int load_policy(struct run *r)
{
	const char *text;
	int e;

	if (choose_profiles(r))
		return -1;
	/* What the agent's environment points it at outside the sandbox. */
	hx_neighbours_from_env(&r->neighbours);
	/* What the user's git runs from where its configuration says. */
	/* A worktree's result is merged into the checkout it was made
	 * from: what that checkout's configuration names, in both. */
	hx_gitconf_find(r->wt ? r->project : r->cwd,
			r->wt ? hx_worktree_path(r->wt) : NULL, getenv("HOME"),
			&r->gitconf);
	hx_mountalias_find(NULL, &r->aliases); /* denied paths' 2nd mounts */
	hx_mountalias_home(&r->aliases, getenv("HOME"));
	memcpy(&r->net_rules[1], r->neighbours.rules,
	       sizeof(r->neighbours.rules));
	if (r->o->policy) {
		e = hx_policy_read(r->o->policy, &r->policy_text,
				   &r->policy_len);
		if (e) {
			hx_say("cannot read policy %s: %s", r->o->policy,
			       strerror(-e));
			return -1;
		}
		text = r->policy_text;
	} else {
		text = hx_policy_default_text(&r->policy_len);
	}
	/* Compiled as if the DNS namespace comes up, while it does (0.7
	 * ms); compiled again in the rare start where it does not. */
	if (compile_policy(r, text))
		return -1;
	if (r->dnsns &&
	    (r->dns_err = hx_dnsns_ready(r->dnsns, 2000, &r->dns_l))) {
		hx_dnsns_free(r->dnsns);
		r->dnsns = NULL;
		hx_policy_free(r->policy);
		r->policy = NULL;
		if (compile_policy(r, text))
			return -1;
	}
	hx_sha256_hex(text, r->policy_len, r->policy_sha);
	return 0;
}

/* The worktree exists before the policy is loaded: it needs $WORKTREE.
 * The agent's $CWD is its start dir inside the worktree. */
static int open_worktree(struct run *r)
{
	const struct hx_options *o = r->o;
	struct hx_worktree_opts wo = {
	    .session = r->sess.id,
	    .session_dir = r->sess.dir,
	    .run_dir = r->sess.run_dir,
	    .cwd = r->cwd,
	    .base = o->base,
	    .copy_untracked = o->copy_untracked,
	    .keep = o->keep_worktree,
	    .quiet = o->quiet,
	    .confine = hx_confine_available(),
	};
	char err[1024];

	r->wt_links = wo.confine;
	if (hx_worktree_open(&wo, &r->wt, err, sizeof(err))) {
		hx_say("%s", err);
		return -1;
	}
	snprintf(r->project, sizeof(r->project), "%s", r->cwd);
	snprintf(r->cwd, sizeof(r->cwd), "%s", hx_worktree_cwd(r->wt));
	return 0;
}

/* Yama's ptrace_scope 3 forbids every attach and 2 needs a capability
 * we do not keep: then run without the gate, saying so, rather than not
 * at all (the seize would fail and the agent with it). */
static bool gate_allowed(bool quiet)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;

	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	if (scope < 3 && (scope < 2 || geteuid() == 0))
		return true;
	if (!quiet)
		fprintf(stderr,
			"harness-exec: warning: ptrace is restricted "
			"(yama ptrace_scope %d): no exec gate; exec "
			"rules bind programs through the shim only\n",
			scope);
	return false;
}

/* The audit log, the name map and the pipeline over them, and the
 * session's socket. */
static int open_pipeline(struct run *r)
{
	int e = hx_audit_open(r->sess.audit_path, &r->audit);

	if (e) {
		hx_say("cannot open audit log %s: %s", r->sess.audit_path,
		       e == -EBUSY ? "another session is writing it"
				   : strerror(-e));
		return -1;
	}
	if ((e = protect_log(r)))
		return e;
	if ((e = hx_dnsmap_new(0, &r->dns)) ||
	    (e = hx_pidset_new(&r->pl.recorded))) {
		hx_say("pipeline: %s", strerror(-e));
		return -1;
	}
	if ((e = hx_run_log_open(r)))
		return e;
	r->pl.policy = r->policy;
	r->pl.audit = r->audit;
	r->pl.dns = r->dns;
	r->pl.dns_sealed = r->dnsns != NULL; /* else the child never runs */
	r->pl.session = r->sess.id;
	/* The model endpoint the agent is pointed at, as it is started. */
	hx_endpoints_from_env(&r->endpoints);
	r->pl.endpoints = &r->endpoints;
	r->pl.git_roots[0] = r->cwd; /* gitconf.h's in_project */
	r->pl.git_roots[1] = r->project;
	r->pl.git_tmp = r->sess.tmpdir;
	r->pl.git_objects = r->gitconf.objects[0] ? r->gitconf.objects : NULL;
	r->pl.state_dir = r->sess.state_dir; /* the other sessions' files */
	r->pl.worktree = r->wt ? hx_worktree_path(r->wt) : NULL;
	r->pl.worktree_links = r->wt_links;
	r->pl.agent_conf = hx_agentconf_path(getenv("HOME"));
	clock_gettime(CLOCK_REALTIME, &r->pl.started);
	hx_run_hidden_start(r);
	e = hx_server_new(&r->pl, &r->srv);
	if (!e)
		e = hx_server_listen(r->srv, r->sess.sock_path);
	if (e) {
		hx_say("cannot serve %s: %s", r->sess.sock_path, strerror(-e));
		return -1;
	}
	r->listening = true;
	if (hx_run_open_ask(r) || hx_run_open_alerts(r))
		return -1;
	return hx_run_open_metrics(r);
}

/* The user-notify layer and the exec gate: the child hands its listener
 * over r->hand[1]; without it harness says so and runs on the others. */
static int enable_notify(struct run *r)
{
	const struct hx_options *o = r->o;
	char msg[256];

	r->exec_gate = o->exec_gate && gate_allowed(o->quiet);
	hx_sandbox_set_exec_gate(r->sb, r->exec_gate);
	/* Audit mode shows what the agent did, also the opens of programs
	 * that skip the shim (Claude Code's and Codex's reads): each is
	 * decided, and logged, in the kernel layer. */
	r->trace_reads = o->trace_reads || r->pl.mode == HX_MODE_AUDIT;
	hx_sandbox_set_trace_reads(r->sb, r->trace_reads);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->hand)) {
		hx_say("socketpair: %s", strerror(errno));
		return -1;
	}
	if (hx_sandbox_enable_notify(r->sb, r->hand[1], msg, sizeof(msg))) {
		if (!o->quiet)
			fprintf(stderr,
				"harness-exec: warning: user-notify missing "
				"(%s): writes and connects of programs "
				"without the shim are bounded by Landlock "
				"only\n",
				msg);
		close(r->hand[0]);
		close(r->hand[1]);
		r->hand[0] = r->hand[1] = -1;
	}
	return 0;
}

static int setup(struct run *r)
{
	const struct hx_options *o = r->o;
	const char *roots[] = {r->cwd, r->project};
	struct hx_policy_vars vars;
	char msg[256];
	int e;

	if (!getcwd(r->cwd, sizeof(r->cwd))) {
		hx_say("getcwd: %s", strerror(errno));
		return -1;
	}
	hx_ttystate_save(&r->tty);
	e = hx_session_init(&r->sess, o->session, o->audit_log, o->policy);
	if (!e && o->no_kernel_notify)
		e = hx_session_sock_in_run_dir(&r->sess);
	if (!e)
		e = hx_run_protect_metrics(r);
	if (e) {
		hx_say("session setup: %s", strerror(-e));
		return -1;
	}
	/* Before any agent process exists, so all of them are in its
	 * cgroup; first, so that its fork overlaps the rest of the set-up
	 * (settled before PR_SET_CHILD_SUBREAPER in hx_run). */
	r->reaper_err = hx_reaper_start(r->sess.id, &r->reaper);
	/* Made while the rest is set up (load_policy waits for it). */
	r->dns_err = o->no_kernel_notify ? -ENOSYS : hx_dnsns_start(&r->dnsns);
	hx_run_kernel_begin(r); /* no fork until it is joined */
	if ((o->worktree && open_worktree(r)) || load_policy(r))
		return -1;
	hx_phase("policy");
	if ((e = hx_shim_path(r->shim))) {
		hx_say("cannot use the shim (%s next to harness-exec, or "
		       "$HARNESS_SHIM): %s",
		       HX_SHIM_NAME, strerror(-e));
		return -1;
	}
	if ((e = hx_session_create(&r->sess))) {
		hx_say("cannot create session %s (%s, %s): %s", r->sess.id,
		       r->sess.dir, r->sess.tmpdir, strerror(-e));
		return -1;
	}
	/* As soon as the write roots exist: the Landlock ruleset is derived
	 * meanwhile (hx_sandbox_ready below). */
	r->pl.mode =
	    o->mode >= 0 ? (enum hx_mode)o->mode : hx_policy_mode(r->policy);
	hx_run_kernel_join(r); /* the probe's answer, before the walk */
	policy_vars(r, &vars);
	/* A second mount's tree is walked for masks as the project is; the
	 * account's own home (hx_mountalias_home) is no second project. */
	vars.nalias = r->aliases.nmounts;
	if (hx_sandbox_prepare(r->policy, &vars, r->pl.mode, o->quiet,
			       o->verbose, &r->sb, msg, sizeof(msg))) {
		hx_say("sandbox: %s", msg);
		return -1;
	}
	hx_run_landlock_audit(r);
	hx_run_limit_processes(r);
	if ((e = open_pipeline(r)))
		return e;
	if (!o->no_kernel_notify && enable_notify(r))
		return -1;
	/* The project's denied files, which Landlock's grant of the write
	 * root lets through, and a worktree's checkout's (as readable; its
	 * .git, holding the worktree, is never walked): looked for while
	 * the rest is set up. */
	if (hx_sandbox_find_masks(r->sb, roots, r->project[0] ? 2 : 1,
				  r->sess.dir, r->sess.run_dir) &&
	    !o->quiet)
		fprintf(stderr, "harness-exec: warning: cannot look for the "
				"files to mask\n");
	hx_run_warn_missing(r);
	hx_phase("setup"); /* what follows waits for the Landlock thread */
	if (hx_sandbox_ready(r->sb, msg, sizeof(msg))) {
		hx_say("sandbox: %s", msg);
		return -1;
	}
	r->pl.pool = hx_sandbox_pool(r->sb);
	r->trace_reads = hx_sandbox_trace_reads(r->sb); /* masks: or not */
	hx_phase("sandbox");
	if (o->verbose)
		hx_run_say_verbose(r);
	hx_run_log_start(r);
	/* Checkpoint 0 and the hooks; the agent starts in the worktree. */
	if (r->wt &&
	    (hx_worktree_start(r->wt, &r->pl, r->srv) || chdir(r->cwd))) {
		hx_say("worktree %s: cannot start", hx_worktree_path(r->wt));
		return -1;
	}
	return hx_run_mcp_pair(r) ? -1 : hx_run_register(r);
}

static void teardown(struct run *r)
{
	hx_ttystate_restore(&r->tty); /* before harness-exec's last line */
	for (int i = 0; i < 2; i++)
		if (r->hand[i] >= 0)
			close(r->hand[i]);
	/* After the kernel layer's workers, which ask it. */
	hx_devbound_stop(r->pl.devbound);
	r->pl.devbound = NULL;
	/* It joins the Landlock thread, which borrows the worktree's
	 * policy variables (a set-up that failed half way). */
	hx_sandbox_free(r->sb);
	hx_run_kernel_join(r); /* a set-up that failed half way */
	hx_kaudit_free(r->ka); /* puts kernel audit back; before the loop */
	r->ka = NULL;
	hx_server_free(r->srv);
	hx_correlate_free(&r->pl);
	hx_owned_free(r->pl.owned);
	r->pl.owned = NULL;
	hx_worktree_free(r->wt);
	hx_reaper_stop(&r->reaper);
	hx_dnsns_listeners_close(&r->dns_l); /* never handed over */
	hx_dnsns_free(r->dnsns);
	r->dnsns = NULL;
	/* Never unlink a socket this run did not create (a reused name). */
	if (!r->listening)
		r->sess.sock_path[0] = '\0';
	hx_session_cleanup(&r->sess);
	for (int i = 0; i < 3; i++)
		free(r->own_env[i]);
	hx_dnsmap_free(r->dns);
	hx_metrics_free(r->pl.metrics); /* no worker counts any more */
	hx_run_close_alerts(r);
	hx_pidset_free(r->pl.recorded);
	hx_record_redact(NULL); /* nothing records any more */
	r->pl.envbase = NULL;
	hx_envbase_free(r->envbase);
	hx_policy_free(r->policy);
	free(r->policy_text);
	for (size_t i = 0; i < HX_MAX_PROFILES; i++)
		free(r->profile_paths[i]);
}

static bool tree_holds(void *arg, pid_t self, const unsigned long *inos,
		       size_t n)
{
	return hx_unotify_tree_holds(arg, self, inos, n);
}

/* The user-notify handler on lfd, with the agent's DNS when sealed
 * (its listeners are the handler's from here, whatever comes of it). */
static int start_notify(struct run *r, int lfd)
{
	struct hx_unotify_dns dns = {
	    .ns = r->dnsns,
	    .l = r->dns_l,
	    .upstream = r->o->has_dns_upstream ? &r->o->dns_upstream : NULL,
	    .denied_rcode = r->o->dns_refused ? ns_r_refused : ns_r_nxdomain};
	int e =
	    hx_unotify_start(lfd, &r->pl, r->srv, r->sess.sock_path, 4, r->gate,
			     r->child, r->dnsns ? &dns : NULL, &r->un);

	if (r->dnsns)
		r->dns_l = (struct hx_dnsns_listeners){-1, -1, -1, -1};
	return e;
}

/* The child's listener, handed over r->hand: served, or the child killed. */
static void serve_notify(struct run *r)
{
	int lfd, e = 0;

	close(r->hand[1]);
	r->hand[1] = -1;
	/* The child made itself dumpable to hand its listener over
	 * and waits for our ack: an unprivileged tracer can seize it
	 * only now (before, it is non-dumpable like us), and it has
	 * not exec'd yet. No gate, no agent. */
	lfd = hx_unotify_receive(r->hand[0], r->child, 10000);
	hx_phase("entered"); /* the child is in its sandbox */
	if (lfd >= 0) {
		/* What hx_sandbox_enter made: terminals.h, the IPC
		 * namespace (SysV IPC of its own, or refused). */
		r->terminals = own(r->child, "root/dev/pts", "/dev/pts", true,
				   "own devpts", "host");
		r->sysv_ipc = own(r->child, "ns/ipc", "/proc/self/ns/ipc",
				  false, "own namespace", "refused");
		hx_pipeline_view_root(&r->pl, r->child);
	}
	if (lfd >= 0 && r->exec_gate &&
	    (e = hx_execgate_start(r->child, &r->pl, r->srv, r->o->mcp,
				   gate_exit, r, &r->gate))) {
		hx_say("exec gate: %s", strerror(-e));
		kill(r->child, SIGKILL);
		close(lfd);
		lfd = -ECANCELED;
	}
	if (lfd >= 0 && (e = hx_unotify_release_child(r->hand[0]))) {
		close(lfd);
		lfd = e;
	}
	close(r->hand[0]);
	r->hand[0] = -1;
	/* A failed hand-off ends the child (126): never unwatched. */
	if (lfd < 0 && lfd != -ECANCELED)
		hx_say("user-notify listener: %s", strerror(-lfd));
	else if (lfd >= 0 &&
		 (e = hx_sandbox_start_devbound(r->sb, &r->pl.devbound))) {
		/* Devices opened for the agent would take every ioctl. */
		hx_say("device reopener: %s", strerror(-e));
		close(lfd);
		kill(r->child, SIGKILL); /* unserved: no agent */
	} else if ((e = start_notify(r, lfd))) {
		hx_say("user-notify handler: %s", strerror(-e));
		kill(r->child, SIGKILL); /* unserved: no agent */
	} else {
		hx_correlate_sees(&r->pl, r->gate != NULL, r->trace_reads);
		r->pl.tree_holds = tree_holds;
		r->pl.tree_arg = r->un;
		/* Handed off: the child is past Landlock. */
		hx_sandbox_release(r->sb);
	}
}

/* The agent is let go (the kernel layer serves it), and what serves
 * the session beside it starts. */
static void serve_agent(struct run *r)
{
	if (r->hand[1] >= 0)
		serve_notify(r);
	/* After the fork: a resolver thread must not exist at fork time. */
	hx_dnsmap_start_resolver(r->dns, r->policy);
	hx_run_serve_metrics(r); /* the same */
	hx_run_start_trace(r);
	hx_phase("released");
}

/* The session's last records. Order (docs/worktrees.md): last
 * checkpoint and manifest, then session_end (it names the tree and the
 * manifest's hash), then the result commit whose trailer is the hash of
 * session_end. */
static void last_records(struct run *r, int code)
{
	hx_run_mcp_stop(r); /* what its calls did, before session_end */
	hx_worktree_finish(r->wt);
	hx_run_end_asks(r); /* what still waits is refused, recorded */
	hx_run_hidden_changes(r);
	/* Its files in /dev/shm go with the tree, as its TMPDIR does. */
	r->shm_removed = hx_owned_sweep_shm(r->pl.owned, &r->shm_left);
	hx_pipeline_tick(&r->pl, true); /* before session_end, which counts */
	hx_run_log_end(r, code);
	hx_worktree_result(r->wt, r->audit, r->o->cmd, r->o->ncmd, code);
}

int hx_run(const struct hx_options *o)
{
	static struct run run; /* large (paths): not on the stack */
	struct run *r = &run;
	sigset_t mask, old;
	char **env = NULL;
	int code = 2, sfd = -1, e;
	pid_t self;
	struct hx_ask_stats asked;
	bool audit_open;

	/* Zero as static storage starts: hx_run runs once a process, and a
	 * memset would touch all of its 400 KB (100 page faults a start). */
	hx_phase("start");
	hx_run_own_signals(r);
	r->reaper.dir_fd = r->reaper.procs_fd = r->reaper.pipe_w = -1;
	r->reaper.pids_fd = r->tty.fd = r->child_fd = -1; /* tty: none yet */
	r->dns_l = (struct hx_dnsns_listeners){-1, -1, -1, -1};
	r->reaper_err = -ENOTSUP;
	r->hand[0] = r->hand[1] = -1;
	r->metrics_fd = -1;
	r->mcp_fd[0] = r->mcp_fd[1] = r->mcp_http_fd = -1;
	r->o = o;
	if (setup(r))
		goto out;
	if (!decide_command(r)) {
		code = 126;
		goto end;
	}
	env = child_env(r);
	/* What each exec's environment is told from (envdiff.h): the
	 * agent's first, less harness's own names. */
	if (env &&
	    !(r->envbase = hx_envbase_new((const char *const *)env, r->shim))) {
		hx_say("setup: %s", strerror(ENOMEM));
		goto end;
	}
	r->pl.envbase = r->envbase;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	if (!env || sigprocmask(SIG_BLOCK, &mask, &old) ||
	    (sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
		hx_say("setup: %s", strerror(errno));
		goto end;
	}
	r->sigsrc.fd = sfd;
	r->sigsrc.handle = on_signal;
	r->sigsrc.arg = r;
	if (hx_server_add(r->srv, &r->sigsrc, EPOLLIN)) {
		hx_say("epoll: %s", strerror(errno));
		goto end;
	}
	/* Orphans of the tree come back to us, so nothing outlives the
	 * session; and the agent may not ptrace or read us. The reaper is
	 * settled first, or it could be one of those orphans. */
	hx_reaper_settle(&r->reaper);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_DUMPABLE, 0);
	fflush(NULL);
	self = getpid();
	r->child = hx_reaper_fork(&r->reaper);
	if (r->child < 0) {
		hx_say("fork: %s", strerror(errno));
		goto end;
	}
	if (r->child == 0)
		child_exec(r, env, &old, self);
	r->child_fd = (int)syscall(SYS_pidfd_open, r->child, 0); /* unreaped */
	/* First: each bind of the child's masks waits for its server. */
	if ((e = hx_sandbox_serve_masks(r->sb, r->child, &r->pl, r->srv))) {
		hx_say("masks: cannot be served: %s", strerror(-e));
		kill(r->child, SIGKILL); /* they would wait on nobody */
	}
	hx_alerts_set_root(r->pl.alerts, r->child);
	hx_run_ask_terminal(r);
	if (hx_run_mcp_start(r))
		kill(r->child, SIGKILL); /* nobody to serve */
	if (r->ka && hx_kaudit_start(r->ka, r->child, &r->pl, r->srv)) {
		hx_say("landlock audit records: cannot be served");
		hx_kaudit_free(r->ka);
		r->ka = NULL;
	}
	serve_agent(r);
	/* A log that takes no more records ends the session: what cannot
	 * be audited does not go on (hx_record_fail). */
	while (!r->child_done && !r->pl.failed)
		if (hx_server_run_once(r->srv, -1) < 0)
			break;
	hx_phase("exited");
	if (!r->pl.failed)
		drain(r, 1000);
	/* The keeper first: it is no part of the tree, and ends at once. */
	hx_run_settle_alerts(r); /* thawed: nothing waits on a stopped one */
	hx_dnsns_close(r->dnsns);
	kill_tree(r);
	drain(r, 200);
	/* The last refusals the kernel has queued, before session_end. */
	hx_kaudit_finish(r->ka, 300);
	hx_sandbox_stop_masks(r->sb);
	if (r->ka && r->child_done && !hx_kaudit_domain_known(r->ka) &&
	    !o->quiet)
		fprintf(stderr, "harness-exec: warning: Landlock's refusals "
				"were not recorded: the kernel's audit records "
				"of the session's domain never came\n");
	/* Nothing of the tree is left; the counters stay for session_end. */
	code = r->pl.failed    ? HX_EXIT_AUDIT_FAILED
	       : r->child_done ? hx_proc_exit_code(r->child_status)
			       : 2;
end:
	last_records(r, code);
out:
	/* What may still append goes first (the gate logs the findings it
	 * has not handed over); then the log's last flush overlaps the rest
	 * of the teardown. */
	r->pl.tree_holds = NULL; /* no tree to ask once it stops */
	hx_run_stop_metrics(r);	 /* the last file: all of session_end */
	hx_run_finish_trace(r);	 /* the last batch: session_end's too */
	hx_unotify_stop(r->un);
	r->un = NULL;
	hx_execgate_stop(r->gate);
	r->gate = NULL;
	hx_ask_stats(r->pl.ask, &asked); /* for the last line */
	hx_run_close_ask(r);		 /* no worker waits any more */
	hx_run_anchor(r); /* nothing appends now; NULL log: none */
	hx_audit_sync_start(r->audit);
	if (sfd >= 0)
		close(sfd);
	free(env);
	teardown(r);
	audit_open = r->audit != NULL;
	if (audit_open && hx_audit_close(r->audit))
		hx_say("audit log %s: sync failed", r->sess.audit_path);
	r->audit = NULL;
	if (audit_open && !o->quiet)
		fprintf(
		    stderr,
		    "harness: session %s: %llu events, %llu %s; audit log %s\n",
		    r->sess.id, (unsigned long long)r->pl.events,
		    (unsigned long long)(r->pl.verdicts[HX_VERDICT_DENY] +
					 r->pl.verdicts[HX_VERDICT_ASK] -
					 asked.allowed),
		    r->pl.mode == HX_MODE_AUDIT ? "would be denied" : "denied",
		    r->sess.audit_path);
	return code;
}
