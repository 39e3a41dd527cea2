/* The actions of a session's alerts (alerts.h) as harness-exec does
 * them: notify runs the rule's command outside the sandbox (a child of
 * harness-exec, not of the agent: no shim, no Landlock, no filter) with
 * the alert record as JSON on its stdin; pause freezes the agent's
 * cgroup (cgroup.freeze: every process at once, forks in flight too),
 * or stops each process with SIGSTOP where the session has no cgroup,
 * until `harness-exec resume` or a signal to harness-exec; kill writes
 * cgroup.kill (or sends SIGKILL to each process). */
#define _GNU_SOURCE
#include "supervisor/run_int.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"
#include "policy/policy.h"
#include "supervisor/alerts.h"
#include "supervisor/kernel/execgate.h"
#include "supervisor/proc.h"
#include "supervisor/record.h"
#include "supervisor/say.h"

#define HOOKS_MAX    16
#define HOOK_WAIT_MS 5000
#define TREE_MAX     4096
#define STOP_ROUNDS  4

extern char **environ;

struct hx_run_alerts {
	pthread_mutex_t lock;
	int hook_fd[HOOKS_MAX]; /* pidfds of the hooks that may run */
	pid_t hook_pid[HOOKS_MAX];
	const struct hx_alert_rule *hook_rule[HOOKS_MAX];
	bool paused;
	const char *paused_by; /* PAUSE_CGROUP, _PTRACE or _SIGSTOP */
	uint64_t paused_ms;
};

/* How a pause holds the tree, best first: the cgroup's freezer (every
 * process at once); the exec gate's tracer, which keeps every process
 * of the tree in a ptrace stop (no cgroup: an ordinary user); SIGSTOP
 * to each process in STOP_ROUNDS scans, which a process that forks
 * faster than a scan escapes, and then SIGCONTs the rest. */
static const char PAUSE_CGROUP[] = "cgroup.freeze";
static const char PAUSE_PTRACE[] = "ptrace";
static const char PAUSE_SIGSTOP[] = "SIGSTOP";

/* Whether p is a hook or descends from one (it is no part of the agent,
 * though a child of harness-exec too). Only a hook that still runs: the
 * pid of one that has ended may be an agent's process now, which would
 * be spared. Under the lock. */
static bool of_hook(const struct hx_run_alerts *ra, pid_t p)
{
	for (size_t i = 0; i < HOOKS_MAX; i++) {
		struct pollfd pf = {.fd = ra->hook_fd[i], .events = POLLIN};

		if (ra->hook_fd[i] >= 0 && poll(&pf, 1, 0) == 0 &&
		    (p == ra->hook_pid[i] ||
		     hx_proc_descends(p, ra->hook_pid[i])))
			return true;
	}
	return false;
}

/* sig to every process of the agent's tree (orphans come back to
 * harness-exec, so the tree is what descends from it and is under the
 * sandbox's filters: not our helpers, not the hooks), in rounds: what a
 * process forks between two scans is met by the next. Under the
 * lock. */
static void signal_tree(struct run *r, int sig)
{
	static struct hx_proc d[TREE_MAX];
	struct hx_procstatus self;
	int filters = hx_proc_status(getpid(), &self) ? -1 : self.filters;

	for (int round = 0; round < STOP_ROUNDS; round++) {
		size_t n = hx_proc_descendants(getpid(), d, TREE_MAX);

		for (size_t i = 0; i < n; i++)
			if (hx_proc_confined(d[i].pid, filters) &&
			    !of_hook(r->alerts_rt, d[i].pid))
				hx_proc_signal(&d[i], sig);
		if (sig == SIGCONT)
			break;
	}
}

static void pause_tree(struct run *r)
{
	struct hx_run_alerts *ra = r->alerts_rt;

	pthread_mutex_lock(&ra->lock);
	if (!ra->paused) {
		ra->paused_by = PAUSE_CGROUP;
		if (hx_reaper_write(&r->reaper, "cgroup.freeze", "1"))
			ra->paused_by = PAUSE_PTRACE;
		if (ra->paused_by == PAUSE_PTRACE &&
		    hx_execgate_hold(r->gate, true))
			ra->paused_by = PAUSE_SIGSTOP;
		if (ra->paused_by == PAUSE_SIGSTOP)
			signal_tree(r, SIGSTOP);
		ra->paused = true;
		ra->paused_ms = hx_mono_ms();
	}
	pthread_mutex_unlock(&ra->lock);
}

static void kill_agent(struct run *r)
{
	struct hx_run_alerts *ra = r->alerts_rt;

	pthread_mutex_lock(&ra->lock);
	if (hx_reaper_write(&r->reaper, "cgroup.kill", "1")) {
		/* held first: no fork between two scans escapes them */
		hx_execgate_hold(r->gate, true);
		signal_tree(r, SIGKILL);
	}
	pthread_mutex_unlock(&ra->lock);
}

/* Whether the agent may write path, as written or as it resolves: a
 * hook runs outside the sandbox, and must not run or read what the agent
 * could have put there (a script in the project, a program on a PATH
 * entry in it). A path the policy denies for writing cannot be replaced
 * either: a rename or unlink of it, or of a directory above it, is a
 * write of it. */
static bool agent_writes(const struct run *r, const char *path)
{
	char real[PATH_MAX];
	struct hx_event ev = {.op = HX_OP_WRITE, .path = path};
	struct hx_decision d;

	hx_policy_decide(r->policy, &ev, &d);
	if (d.verdict != HX_VERDICT_DENY || !realpath(path, real))
		return true;
	ev.path = real;
	hx_policy_decide(r->policy, &ev, &d);
	return d.verdict != HX_VERDICT_DENY;
}

/* Whether the agent may write what an element of a list of paths in
 * the hook's environment names (PATH, LD_LIBRARY_PATH, BASH_ENV...): an
 * absolute one it may write is its code found by the hook's programs (a
 * shell's `cat` looked up on a PATH that names the project's venv, a
 * file bash sources), run outside the sandbox. Relative ones are of
 * the hook's cwd, "/". */
static bool agent_names(const struct run *r, const char *elem, size_t len)
{
	char path[PATH_MAX];

	if (!len || elem[0] != '/')
		return false;
	if (len >= sizeof(path))
		return true; /* cannot be decided: dropped */
	memcpy(path, elem, len);
	path[len] = '\0';
	return agent_writes(r, path);
}

/* The program of command, as an absolute path: a bare name is looked up
 * in harness-exec's PATH, skipping relative entries (they name the
 * project) and those the agent may write (agent_names: the hook's PATH
 * is without them too), so that a program the agent puts there neither
 * runs nor keeps the user's from running. 0, or an errno with *why
 * said. */
static int hook_program(const struct run *r, const char *name, char *out,
			size_t size, const char **why)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	bool planted = false;

	*why = NULL;
	if (strchr(name, '/')) {
		snprintf(out, size, "%s", name); /* absolute: the loader's */
		return access(out, X_OK) ? errno : 0;
	}
	snprintf(buf, sizeof(buf), "%s",
		 path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *save = NULL, *dir = strtok_r(buf, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] != '/' ||
		    (size_t)snprintf(out, size, "%s/%s", dir, name) >= size ||
		    access(out, X_OK))
			continue;
		if (!agent_names(r, dir, strlen(dir)))
			return 0;
		planted = true;
	}
	*why =
	    planted ? "the agent may write the program" : "not found on PATH";
	return planted ? EPERM : ENOENT;
}

/* Whether arg names a file or directory the agent may write: a script
 * it runs, a directory it reads (make -C: the Makefile there). A
 * relative name is of harness-exec's directory, the agent's project. */
static bool names_agents(const struct run *r, const char *arg)
{
	struct stat st;

	return !stat(arg, &st) &&
	       (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
	       (arg[0] != '/' || agent_writes(r, arg));
}

/* Why a hook would run or read what the agent may write, or NULL: its
 * program, an argument, an option's value (--directory=DIR). */
static const char *hook_unsafe(const struct run *r, const char *prog,
			       const char *const *argv)
{
	const char *eq;

	if (agent_writes(r, prog))
		return "the agent may write the program";
	for (size_t i = 1; argv[i]; i++)
		if (names_agents(r, argv[i]) ||
		    (argv[i][0] == '-' && (eq = strchr(argv[i], '=')) &&
		     names_agents(r, eq + 1)))
			return "the agent may write a file it names";
	return NULL;
}

/* NAME=VALUE without the elements of its list of paths that the agent
 * may write (agent_names), or entry itself when none is; NULL when
 * nothing is left, or out of memory. A URL's value is no list of
 * paths. */
static char *hook_var(const struct run *r, char *entry, char **alloc)
{
	const char *eq = strchr(entry, '='), *v, *end;
	size_t kept = 0, n;
	bool dropped = false;
	char *o;

	*alloc = NULL;
	if (!eq || strstr(eq, "://"))
		return entry;
	if (!(o = malloc(strlen(entry) + 1)))
		return NULL;
	n = (size_t)(eq - entry) + 1;
	memcpy(o, entry, n);
	for (v = eq + 1;; v = end + 1) {
		end = strchrnul(v, ':');
		if (agent_names(r, v, (size_t)(end - v))) {
			dropped = true;
		} else {
			if (kept++)
				o[n++] = ':';
			memcpy(o + n, v, (size_t)(end - v));
			n += (size_t)(end - v);
		}
		if (!*end)
			break;
	}
	o[n] = '\0';
	if (!dropped) {
		free(o);
		return entry;
	}
	if (!kept) {
		free(o);
		return NULL;
	}
	return *alloc = o;
}

/* The hook's environment: harness-exec's, with the alert's names, and
 * without what the agent may write (hook_var). The strings made are in
 * *made, for hook_env_free. */
static char **hook_env(struct run *r, const char *alert, char *own[3],
		       size_t own_size, char ***made)
{
	size_t n = 0, k = 0, m = 0;
	char **env, *alloc;

	while (environ[n])
		n++;
	env = calloc(n + 4, sizeof(*env));
	*made = calloc(n + 1, sizeof(**made));
	if (!env || !*made) {
		free(env);
		free(*made);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "HARNESS_ALERT=", 14) &&
		    strncmp(environ[i], "HARNESS_SESSION=", 16) &&
		    strncmp(environ[i], "HARNESS_AUDIT_LOG=", 18) &&
		    (env[k] = hook_var(r, environ[i], &alloc))) {
			k++;
			if (alloc)
				(*made)[m++] = alloc;
		}
	snprintf(own[0], own_size, "HARNESS_ALERT=%s", alert);
	snprintf(own[1], own_size, "HARNESS_SESSION=%s", r->sess.id);
	snprintf(own[2], own_size, "HARNESS_AUDIT_LOG=%s", r->sess.audit_path);
	env[k++] = own[0];
	env[k++] = own[1];
	env[k++] = own[2];
	return env;
}

static void hook_env_free(char **env, char **made)
{
	for (size_t i = 0; made && made[i]; i++)
		free(made[i]);
	free(made);
	free(env);
}

static int spawn_hook(struct run *r, const struct hx_alert_rule *rule,
		      const char *prog, int in, pid_t *pid)
{
	char b[3][PATH_MAX + 32], *own[3] = {b[0], b[1], b[2]};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	char **made, **env = hook_env(r, rule->id, own, sizeof(b[0]), &made);
	int e;

	if (!env)
		return ENOMEM;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in, 0);
	/* nothing of the supervisor's: its sockets, the log, the listener */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	/* not the project: what it finds there is the agent's */
	posix_spawn_file_actions_addchdir_np(&fa, "/");
	posix_spawnattr_init(&at);
	/* its own process group: the terminal's ^C is harness-exec's */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
					  POSIX_SPAWN_SETSIGDEF |
					  POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setpgroup(&at, 0);
	e = posix_spawn(pid, prog, &fa, &at, (char *const *)rule->command, env);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	hook_env_free(env, made);
	return e;
}

/* A free place among the hooks for rule's: one whose hook has ended is
 * reused. -EBUSY: a hook of rule's still runs. A rule the agent sets off
 * at will (refusals in a row, once a second) whose hook takes long (a
 * dialog the user must close) would otherwise fill every place, and
 * the next alert's hook, of the rule that matters, would not run: one
 * hook a rule at a time, the person already has that rule's. -EAGAIN:
 * none is free. */
static int hook_slot(struct hx_run_alerts *ra, const struct hx_alert_rule *rule)
{
	int free_slot = -EAGAIN;

	for (int i = 0; i < HOOKS_MAX; i++) {
		struct pollfd p = {.fd = ra->hook_fd[i], .events = POLLIN};

		if (ra->hook_fd[i] >= 0 && poll(&p, 1, 0) == 1) {
			close(ra->hook_fd[i]);
			ra->hook_fd[i] = -1;
		}
		if (ra->hook_fd[i] < 0 && free_slot < 0)
			free_slot = i;
		else if (ra->hook_fd[i] >= 0 && ra->hook_rule[i] == rule)
			return -EBUSY;
	}
	return free_slot;
}

static void notify(struct run *r, const struct hx_alert_rule *rule, json_t *rec,
		   uint64_t seq)
{
	struct hx_run_alerts *ra = r->alerts_rt;
	json_t *o;
	char *text, prog[PATH_MAX], msg[PATH_MAX + 128];
	const char *why;
	int p[2], e, slot;
	pid_t pid;

	e = hook_program(r, rule->command[0], prog, sizeof(prog), &why);
	if (!e && (why = hook_unsafe(r, prog, rule->command)))
		e = EPERM;
	if (e) {
		snprintf(msg, sizeof(msg), "notify %s: %s: not run",
			 rule->command[0], why ? why : strerror(e));
		hx_say("alert %s: %s", rule->id, msg);
		hx_record_error(&r->pl, "alert_notify_failed", rule->id, msg);
		return;
	}
	if (!(o = json_deep_copy(rec)))
		return;
	json_object_set_new(o, "seq", json_integer((json_int_t)seq));
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	pthread_mutex_lock(&ra->lock);
	slot = hook_slot(ra, rule);
	if (slot < 0) {
		e = -slot;
	} else if (!text || pipe2(p, O_CLOEXEC)) {
		e = text ? errno : ENOMEM;
	} else {
		e = spawn_hook(r, rule, prog, p[0], &pid);
		close(p[0]);
		/* An alert is a line, far below a pipe's 64 KiB: never
		 * blocks the thread that decides, even if the hook
		 * does not read. */
		fcntl(p[1], F_SETFL, O_NONBLOCK);
		if (!e) {
			if (write(p[1], text, strlen(text)) < 0 ||
			    write(p[1], "\n", 1) < 0)
				e = errno;
			ra->hook_fd[slot] =
			    (int)syscall(SYS_pidfd_open, pid, 0);
			ra->hook_pid[slot] = pid;
			ra->hook_rule[slot] = rule;
		}
		close(p[1]);
	}
	pthread_mutex_unlock(&ra->lock);
	free(text);
	if (!e)
		return;
	if (e == EBUSY)
		snprintf(msg, sizeof(msg),
			 "notify %s: its last hook still runs",
			 rule->command[0]);
	else if (e == EAGAIN)
		snprintf(msg, sizeof(msg), "notify %s: %d hooks run already",
			 rule->command[0], HOOKS_MAX);
	else
		snprintf(msg, sizeof(msg), "notify %s: %s", rule->command[0],
			 strerror(e));
	hx_say("alert %s: %s", rule->id, msg);
	hx_record_error(&r->pl, "alert_notify_failed", rule->id, msg);
}

static void on_alert(void *arg, const struct hx_alert_fired *f, json_t *rec,
		     uint64_t seq)
{
	struct run *r = arg;

	if (f->rule->actions & HX_ACT_NOTIFY)
		notify(r, f->rule, rec, seq);
	if (f->rule->actions & HX_ACT_KILL)
		kill_agent(r);
	else if (f->rule->actions & HX_ACT_PAUSE)
		pause_tree(r);
}

int hx_run_open_alerts(struct run *r)
{
	struct hx_run_alerts *ra;
	int e = hx_alerts_new(r->policy, r->o->quiet, &r->pl.alerts);

	if (e || !(ra = calloc(1, sizeof(*ra)))) {
		hx_say("alerts: %s", strerror(e ? -e : ENOMEM));
		return -1;
	}
	pthread_mutex_init(&ra->lock, NULL);
	for (int i = 0; i < HOOKS_MAX; i++)
		ra->hook_fd[i] = -1;
	r->alerts_rt = ra;
	hx_alerts_set_act(r->pl.alerts, on_alert, r);
	r->pl.watch = hx_alerts_record;
	return 0;
}

/* Thaws the tree, and records who asked (by: "harness-exec resume",
 * "signal", "session end"; pid: its process). -EALREADY: not paused. */
static int resume(struct run *r, const char *by, pid_t pid)
{
	struct hx_run_alerts *ra = r->alerts_rt;
	uint64_t ms;
	json_t *rec;
	const char *how;

	if (!ra)
		return -EALREADY;
	pthread_mutex_lock(&ra->lock);
	if (!ra->paused) {
		pthread_mutex_unlock(&ra->lock);
		return -EALREADY;
	}
	how = ra->paused_by;
	if (how == PAUSE_SIGSTOP)
		signal_tree(r, SIGCONT);
	else if (how == PAUSE_PTRACE)
		hx_execgate_hold(r->gate, false);
	else
		hx_reaper_write(&r->reaper, "cgroup.freeze", "0");
	ra->paused = false;
	ms = hx_mono_ms() - ra->paused_ms;
	pthread_mutex_unlock(&ra->lock);
	rec = hx_record_new(&r->pl, NULL, "resumed", NULL);
	if (rec) {
		hx_record_set_str(rec, "category", "process");
		hx_record_set_str(rec, "by", by);
		/* how it was held (PAUSE_*): only SIGSTOP can have missed
		 * a fork between two scans */
		hx_record_set_str(rec, "paused_by", how);
		if (pid)
			json_object_set_new(rec, "by_pid", json_integer(pid));
		json_object_set_new(rec, "paused_ms",
				    json_integer((json_int_t)ms));
		hx_record_append(&r->pl, rec, NULL);
		json_decref(rec);
	}
	return 0;
}

void hx_run_resume(struct run *r, pid_t pid, char *reply, size_t size)
{
	if (resume(r, "harness-exec resume", pid))
		snprintf(reply, size, "error the session is not paused");
	else
		snprintf(reply, size, "ok resumed");
}

void hx_run_alerts_signal(struct run *r)
{
	resume(r, "signal", 0);
}

void hx_run_settle_alerts(struct run *r)
{
	struct hx_run_alerts *ra = r->alerts_rt;
	uint64_t start = hx_mono_ms();
	bool running = true;

	if (!ra)
		return;
	resume(r, "session end", 0);
	while (running && hx_mono_ms() - start < HOOK_WAIT_MS) {
		running = false;
		pthread_mutex_lock(&ra->lock);
		for (int i = 0; i < HOOKS_MAX; i++) {
			struct pollfd p = {.fd = ra->hook_fd[i],
					   .events = POLLIN};

			running |= ra->hook_fd[i] >= 0 && poll(&p, 1, 0) == 0;
		}
		pthread_mutex_unlock(&ra->lock);
		if (running)
			hx_server_run_once(r->srv, 50);
	}
}

void hx_run_close_alerts(struct run *r)
{
	struct hx_run_alerts *ra = r->alerts_rt;

	r->pl.watch = NULL;
	hx_alerts_free(r->pl.alerts); /* nothing records any more */
	r->pl.alerts = NULL;
	if (!ra)
		return;
	for (int i = 0; i < HOOKS_MAX; i++)
		if (ra->hook_fd[i] >= 0)
			close(ra->hook_fd[i]);
	pthread_mutex_destroy(&ra->lock);
	free(ra);
	r->alerts_rt = NULL;
}
