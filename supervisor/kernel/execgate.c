/* The exec gate; see execgate.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/execgate.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/kernel/lineage.h"
#include "supervisor/path_resolve.h"
#include "supervisor/pidset.h"
#include "supervisor/pipeline.h"
#include "supervisor/proc.h"
#include "supervisor/server.h"
#include "supervisor/correlate.h"
#include "supervisor/record.h"
#include "supervisor/sha256.h"

#define GATE_SIG SIGUSR2 /* wakes the tracer out of waitpid at stop */

struct approval {
	pid_t pid, tid;
	uint64_t seq; /* the decision's record (0: coalesced) */
	char *path;   /* as decided (malloc'd) */
	char *cwd;    /* the cwd decided in (malloc'd), or NULL */
	dev_t dev;
	ino_t ino;
	/* What the new image opens by name, each the file decided: a #!
	 * script's name at each level, a loader's program. */
	struct {
		char *name; /* malloc'd */
		dev_t dev;
		ino_t ino;
	} names[HX_EXECGATE_NAMES];
	size_t nnames;
	/* The argv by its length and digest, not a copy: an approval lasts
	 * until the thread's exec event or its end, and one the kernel
	 * then refuses (E2BIG past a quarter of the stack limit, which the
	 * decision cannot know) leaves it; copies of argvs of up to 6 MiB
	 * let each of the agent's threads hold that much of ours. */
	size_t len;
	char sum[65];
	/* The environment the same way (hx_execgate_approve_env): a thread
	 * that rewrote envp's strings after the decision ran the approved
	 * command with GIT_DIR of its choosing. */
	bool has_env;
	size_t env_len;
	char env_sum[65];
	struct approval *next;
};

/* A mismatch found by the tracer, logged on the loop's thread. */
struct finding {
	pid_t pid, old_tid;
	bool approved, killed;
	bool env;     /* all but its environment was the approved one */
	uint64_t seq; /* the decision's record it broke (0: none) */
	char exe[PATH_MAX];
	char *cmdline; /* NUL-separated, len bytes */
	size_t len;
	struct finding *next;
};

/* A tracee's stop the tracer keeps while the tree is held, and how it
 * goes on after (PTRACE_CONT with a signal, PTRACE_LISTEN). */
struct parked {
	pid_t tid;
	int req, sig;
};

/* A process with records that exited, logged on the loop's thread. */
struct exited {
	pid_t pid;
	int status;
	struct timespec when;
	struct exited *next;
};

struct hx_execgate {
	pid_t root;
	struct hx_pipeline *pl;
	struct hx_server *srv;
	struct hx_source src;
	int efd;
	void (*on_exit)(void *);
	void *arg;
	pthread_t th;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int seize_err; /* 1: pending */
	struct approval *appr;
	struct approval *unrun; /* approvals no exec followed, to log */
	struct finding *found;
	struct exited *gone;
	struct hx_lineage *lineage; /* NULL: not kept */
	bool root_done;
	int root_status;
	atomic_bool stopping;
	atomic_int tracer_tid; /* the tracer thread: TracerPid of tracees */
	atomic_ullong checked, mismatches;
	/* The hold (hx_execgate_hold): asked for, and done by the tracer
	 * (held_ack, under lock). The rest is the tracer thread's own:
	 * every tracee, and the stops it keeps while held. */
	atomic_bool hold_req;
	bool held, held_ack;
	unsigned holders; /* under lock: an alert's pause, a question's */
	pid_t *tids;
	size_t ntids, captids;
	struct parked *parked;
	size_t nparked, capparked;
};

static void wake_loop(struct hx_execgate *g)
{
	uint64_t one = 1;

	if (write(g->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, the loop wakes */
	}
}

/* An approval that no exec followed (the kernel refused the exec, or
 * the thread ended first): its "failed" record is written on the
 * loop's thread. Under g->lock. */
static void unrun(struct hx_execgate *g, struct approval *a)
{
	a->next = g->unrun;
	g->unrun = a;
	wake_loop(g);
}

int hx_execgate_approve(struct hx_execgate *g, const struct hx_peer *peer,
			uint64_t seq, const char *path, dev_t dev, ino_t ino,
			const char *cmdline, size_t len, const char *cwd)
{
	struct approval *a = malloc(sizeof(*a)), **pp;
	pid_t tid = peer->tid;

	if (!a || !(a->path = strdup(path ? path : ""))) {
		free(a);
		return -ENOMEM;
	}
	if (!cwd)
		a->cwd = NULL;
	else if (!(a->cwd = strdup(cwd))) {
		free(a->path);
		free(a);
		return -ENOMEM;
	}
	a->pid = peer->pid;
	a->tid = tid;
	a->seq = seq;
	a->dev = dev;
	a->ino = ino;
	a->nnames = 0;
	a->len = len;
	hx_sha256_hex(cmdline, len, a->sum);
	pthread_mutex_lock(&g->lock);
	for (pp = &g->appr; *pp; pp = &(*pp)->next)
		if ((*pp)->tid == tid) {
			struct approval *old = *pp;

			*pp = old->next;
			unrun(g, old); /* a new exec: that one did not run */
			break;
		}
	a->next = g->appr;
	g->appr = a;
	pthread_mutex_unlock(&g->lock);
	return 0;
}

void hx_execgate_withdraw(struct hx_execgate *g, pid_t tid, uint64_t seq)
{
	struct approval **pp, *a;

	pthread_mutex_lock(&g->lock);
	for (pp = &g->appr; (a = *pp); pp = &a->next)
		if (a->tid == tid && a->seq == seq) {
			*pp = a->next;
			unrun(g, a);
			break;
		}
	pthread_mutex_unlock(&g->lock);
}

int hx_execgate_approve_name(struct hx_execgate *g, pid_t tid, dev_t dev,
			     ino_t ino, const char *name)
{
	char *copy = strdup(name);
	struct approval *a;
	int e = -ENOENT;

	if (!copy)
		return -ENOMEM;
	pthread_mutex_lock(&g->lock);
	for (a = g->appr; a; a = a->next)
		if (a->tid == tid) {
			e = -ENOSPC;
			if (a->nnames == HX_EXECGATE_NAMES)
				break;
			a->names[a->nnames].name = copy;
			a->names[a->nnames].dev = dev;
			a->names[a->nnames++].ino = ino;
			copy = NULL;
			e = 0;
			break;
		}
	pthread_mutex_unlock(&g->lock);
	free(copy);
	return e;
}

int hx_execgate_approve_env(struct hx_execgate *g, pid_t tid, const char *env,
			    size_t len)
{
	struct approval *a;
	char sum[65];
	int e = -ENOENT;

	hx_sha256_hex(env ? env : "", len, sum);
	pthread_mutex_lock(&g->lock);
	for (a = g->appr; a; a = a->next)
		if (a->tid == tid) {
			a->has_env = true;
			a->env_len = len;
			memcpy(a->env_sum, sum, sizeof(sum));
			e = 0;
			break;
		}
	pthread_mutex_unlock(&g->lock);
	return e;
}

/* Whether the new image's environment is the one decided, as the
 * kernel copied it (it has run no instruction to change it yet). */
static bool env_holds(const struct approval *a, pid_t pid)
{
	char *env, sum[65];
	size_t len;
	bool ok;

	if (!a->has_env)
		return true;
	if (!(env = hx_proc_environ(pid, a->env_len, &len)))
		return false;
	hx_sha256_hex(env, len, sum);
	ok = len == a->env_len && !strcmp(sum, a->env_sum);
	free(env);
	return ok;
}

static void approval_free(struct approval *a)
{
	if (a) {
		for (size_t i = 0; i < a->nnames; i++)
			free(a->names[i].name);
		free(a->cwd);
		free(a->path);
	}
	free(a);
}

/* Whether the new image's cwd is the one its exec was decided in: a
 * relative name of its argv (rm -rf build, a script's ./run.sh) means
 * what it names from there, and a question showed it. A thread moved
 * it while the question waited, and the approved command ran in another
 * directory under a record naming the first. */
static bool cwd_holds(const struct approval *a, pid_t pid)
{
	char link[64], now[PATH_MAX];
	ssize_t n;

	if (!a->cwd)
		return true;
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	n = readlink(link, now, sizeof(now) - 1);
	if (n <= 0)
		return false;
	now[n] = '\0';
	return !strcmp(now, a->cwd);
}

/* Whether each name the new image opens by name is still the file
 * decided: the image is stopped, single-threaded, its fd table its own
 * (exec unshares it), and no other process shares its cwd (clone
 * CLONE_FS without CLONE_THREAD is refused in BPF), so its cwd cannot
 * change after this, and what the name leads to only through a swap in
 * the file system (or another process's /proc entry, which the kernel
 * layer refuses in a name: unotify_exec.c). Walked as the image walks
 * it: from its cwd, its symlinks resolved as it sees them (a link to
 * /dev/fd/5 is its fd 5, not ours). */
static bool names_hold(const struct approval *a, pid_t pid)
{
	char abs[PATH_MAX], res[PATH_MAX], path[PATH_MAX + 64];
	bool ours;
	struct stat st;

	if (!a->nnames)
		return true; /* a program run as itself: no readlink */
	ours = hx_path_root_ours(pid);
	for (size_t i = 0; i < a->nnames; i++) {
		const char *n = a->names[i].name;

		if (hx_path_absolute(pid, pid, AT_FDCWD, n, abs, sizeof(abs)) ||
		    hx_path_resolve_root(pid, pid, ours, abs, true, res,
					 sizeof(res)))
			return false;
		hx_proc_self_path(pid, pid, res, path, sizeof(path));
		if (stat(path, &st) || !S_ISREG(st.st_mode) || !st.st_nlink ||
		    st.st_dev != a->names[i].dev ||
		    st.st_ino != a->names[i].ino)
			return false;
	}
	return true;
}

/* Takes tid's approval out of the table (the caller frees it). */
static struct approval *take(struct hx_execgate *g, pid_t tid)
{
	struct approval **pp, *a = NULL;

	pthread_mutex_lock(&g->lock);
	for (pp = &g->appr; *pp; pp = &(*pp)->next)
		if ((*pp)->tid == tid) {
			a = *pp;
			*pp = a->next;
			break;
		}
	pthread_mutex_unlock(&g->lock);
	return a;
}

/* Whether pid is dying: out of its exec-event stop, which only its
 * tracer's word or a SIGKILL ends, and its memory gone (no exe link),
 * which a live process, stopped or frozen, keeps. */
static bool dying(pid_t pid)
{
	struct hx_procstat st;
	char path[64], exe[16];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (readlink(path, exe, sizeof(exe)) >= 0)
		return false;
	return hx_proc_stat(pid, &st) || st.state != 't';
}

/* At PTRACE_EVENT_EXEC of pid (formerly thread old_tid): the new image
 * must be the approved file with the approved argv. */
static void check_exec(struct hx_execgate *g, pid_t pid, pid_t old_tid)
{
	struct approval *a = take(g, old_tid);
	struct finding *f;
	struct stat st;
	char path[64];
	char *cmd = NULL, sum[65];
	size_t len = 0;
	bool ok = false, env = false, gone;

	atomic_fetch_add(&g->checked, 1);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (a && !stat(path, &st) && st.st_dev == a->dev &&
	    st.st_ino == a->ino) {
		cmd = hx_proc_cmdline(pid, a->len, &len);
		if (cmd && len == a->len)
			hx_sha256_hex(cmd, len, sum);
		ok = cmd && len == a->len && !strcmp(sum, a->sum) &&
		     cwd_holds(a, pid) && names_hold(a, pid);
		env = ok && !env_holds(a, pid);
		ok = ok && !env;
	}
	/* Killed meanwhile by another (its parent, a sibling's exit_group):
	 * what the look read failed (its mm is going), which is no swap,
	 * and the image will run no instruction. No finding; the kill is
	 * sent all the same, in case this look is wrong. */
	gone = !ok && a && dying(pid);
	if (gone && g->pl->mode == HX_MODE_ENFORCE)
		kill(pid, SIGKILL);
	if (ok || gone) {
		free(cmd);
		approval_free(a);
		return;
	}
	atomic_fetch_add(&g->mismatches, 1);
	/* What ran is read while the tracee is still stopped (it cannot
	 * run before PTRACE_CONT); then it is killed. */
	f = calloc(1, sizeof(*f));
	if (f) {
		hx_proc_exe(pid, f->exe, sizeof(f->exe));
		if (!cmd)
			cmd = hx_proc_cmdline(pid, 64u << 10, &len);
	}
	if (g->pl->mode == HX_MODE_ENFORCE)
		kill(pid, SIGKILL);
	if (!f) {
		free(cmd);
		approval_free(a);
		return;
	}
	f->pid = pid;
	f->old_tid = old_tid;
	f->approved = a != NULL;
	f->seq = a ? a->seq : 0;
	f->env = env;
	f->killed = g->pl->mode == HX_MODE_ENFORCE;
	f->cmdline = cmd;
	f->len = len;
	approval_free(a);
	pthread_mutex_lock(&g->lock);
	f->next = g->found;
	g->found = f;
	pthread_mutex_unlock(&g->lock);
	wake_loop(g);
}

/* tid ended: an approval it still had was not run. */
static void forget(struct hx_execgate *g, pid_t tid)
{
	struct approval *a = take(g, tid);

	if (!a)
		return;
	pthread_mutex_lock(&g->lock);
	unrun(g, a);
	pthread_mutex_unlock(&g->lock);
}

/* ---- birth lineage (lineage.h) ---- */

static void go_on(struct hx_execgate *g, pid_t tid, int req, int sig);

/* child is born at parent's fork, vfork or clone event. */
static void line_born(struct hx_execgate *g, pid_t parent, pid_t child)
{
	bool cont, doom;

	hx_lineage_born(g->lineage, parent, child, &cont, &doom);
	/* Born into a branch being killed, after the list of its processes
	 * was taken: it dies before its first instruction. */
	if (doom)
		kill(child, SIGKILL);
	if (cont) /* through go_on: a tree held by an alert parks it */
		go_on(g, child, PTRACE_CONT, 0);
}

pid_t hx_execgate_branch(struct hx_execgate *g, pid_t pid)
{
	return g ? hx_lineage_branch(g->lineage, pid) : 0;
}

size_t hx_execgate_kill_branch(struct hx_execgate *g, pid_t branch, int sig)
{
	return g ? hx_lineage_kill_branch(g->lineage, branch, sig) : 0;
}

static bool is_stop_sig(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

/* A process of the log exited: its process_exit record, from the loop.
 * Only the tracer sees every exit of the tree (the tree's parents reap
 * their own children, harness-exec only the orphans). */
static void note_exit(struct hx_execgate *g, pid_t pid, int st)
{
	struct exited *x = malloc(sizeof(*x));

	if (!x)
		return;
	x->pid = pid;
	x->status = st;
	clock_gettime(CLOCK_REALTIME, &x->when);
	pthread_mutex_lock(&g->lock);
	x->next = g->gone;
	g->gone = x;
	pthread_mutex_unlock(&g->lock);
	wake_loop(g);
}

/* A stop of tid ends with req (and sig), now or, while the tree is
 * held, at the release: a tracee in a ptrace stop stays there whatever
 * signal it gets (SIGCONT too), until its tracer lets it go. */
static void go_on(struct hx_execgate *g, pid_t tid, int req, int sig)
{
	struct parked *p;

	if (g->held && g->nparked == g->capparked) {
		size_t cap = g->capparked ? 2 * g->capparked : 64;

		if ((p = realloc(g->parked, cap * sizeof(*p)))) {
			g->parked = p;
			g->capparked = cap;
		}
	}
	if (g->held && g->nparked < g->capparked) {
		g->parked[g->nparked++] = (struct parked){tid, req, sig};
		return;
	}
	/* out of memory: it goes on (fails open: the SIGSTOP scans are
	 * still done by the caller) */
	ptrace(req, tid, 0, (void *)(uintptr_t)sig);
}

/* A new tracee (the root, or a child of a fork, vfork or clone event):
 * interrupted at once if the tree is held, since it may have run past
 * its first stop before its parent's event came. */
static void tracee_add(struct hx_execgate *g, pid_t tid)
{
	if (g->ntids == g->captids) {
		size_t cap = g->captids ? 2 * g->captids : 256;
		pid_t *t = realloc(g->tids, cap * sizeof(*t));

		if (!t)
			return;
		g->tids = t;
		g->captids = cap;
	}
	g->tids[g->ntids++] = tid;
	if (g->held)
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
}

static void tracee_del(struct hx_execgate *g, pid_t tid)
{
	for (size_t i = 0; i < g->ntids; i++)
		if (g->tids[i] == tid) {
			g->tids[i] = g->tids[--g->ntids];
			return;
		}
}

/* Does what hx_execgate_hold asked: every tracee interrupted (a
 * PTRACE_EVENT_STOP the tracer keeps, like every later stop and every
 * new tracee's first one), or every kept stop let go. */
static void hold_sync(struct hx_execgate *g)
{
	bool want = atomic_load(&g->hold_req);

	if (want && !g->held) {
		g->held = true;
		for (size_t i = 0; i < g->ntids; i++)
			ptrace(PTRACE_INTERRUPT, g->tids[i], 0, 0);
	} else if (!want && g->held) {
		g->held = false;
		for (size_t i = 0; i < g->nparked; i++)
			ptrace(g->parked[i].req, g->parked[i].tid, 0,
			       (void *)(uintptr_t)g->parked[i].sig);
		g->nparked = 0;
	}
	pthread_mutex_lock(&g->lock);
	g->held_ack = g->held;
	pthread_mutex_unlock(&g->lock);
}

/* One ptrace stop or exit of pid. */
static void on_wait(struct hx_execgate *g, pid_t pid, int st)
{
	int sig, ev;
	unsigned long msg = 0;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		forget(g, pid);
		hx_correlate_gone(g->pl, pid); /* its claims: its own only */
		tracee_del(g, pid);
		hx_lineage_gone(g->lineage, pid);
		if (hx_pidset_take(g->pl->recorded, pid))
			note_exit(g, pid, st);
		if (pid == g->root) {
			pthread_mutex_lock(&g->lock);
			g->root_done = true;
			g->root_status = st;
			pthread_mutex_unlock(&g->lock);
			wake_loop(g);
		}
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	sig = WSTOPSIG(st);
	ev = (unsigned)st >> 16;
	switch (ev) {
	case 0:
		/* Signal-delivery-stop: deliver it as if untraced. */
		go_on(g, pid, PTRACE_CONT, sig);
		return;
	case PTRACE_EVENT_EXEC:
		if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg))
			msg = (unsigned long)pid;
		if ((pid_t)msg != pid) {
			tracee_del(g, (pid_t)msg); /* a thread's exec */
			/* The leader's own exec, approved, lost to this one
			 * (de_thread killed it; no exit is reported for it):
			 * its approval did not run. */
			forget(g, pid);
		}
		/* The image that made a claim is gone, its thread kept or
		 * its number taken by the thread that execs (no exit is
		 * reported for a leader so ended): a static program's claim
		 * stood for the write of the image it exec'd (thirtieth
		 * attack review, part a). The exec's own sight came before. */
		hx_correlate_gone(g->pl, pid);
		if ((pid_t)msg != pid)
			hx_correlate_gone(g->pl, (pid_t)msg);
		check_exec(g, pid, (pid_t)msg);
		break;
	case PTRACE_EVENT_STOP:
		/* A group-stop (SIGSTOP, ^Z): stay stopped, but let SIGCONT
		 * and job control work. SIGTRAP: a new tracee's first stop
		 * (PTRACE_SEIZE'd children start here, not with SIGSTOP), or
		 * the hold's interrupt. */
		if (is_stop_sig(sig)) {
			go_on(g, pid, PTRACE_LISTEN, 0);
			return;
		}
		if (sig == SIGTRAP && pid != g->root &&
		    hx_lineage_first_stop(g->lineage, pid))
			return;
		break;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE: /* the child is auto-attached */
		if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) || !msg)
			break;
		tracee_add(g, (pid_t)msg);
		line_born(g, pid, (pid_t)msg);
		break;
	default:
		break;
	}
	go_on(g, pid, PTRACE_CONT, 0);
}

static void gate_wake(int sig)
{
	(void)sig;
}

static void *tracer(void *arg)
{
	struct hx_execgate *g = arg;
	int e = 0, st;
	pid_t pid;

	atomic_store(&g->tracer_tid, (int)gettid());
	if (ptrace(PTRACE_SEIZE, g->root, 0,
		   (void *)(uintptr_t)HX_EXECGATE_OPTS))
		e = -errno;
	pthread_mutex_lock(&g->lock);
	g->seize_err = e;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	if (e)
		return NULL;
	tracee_add(g, g->root);
	/* The only waiter of the process's children while the gate runs:
	 * ptrace stops and exits of the whole tree (__WALL: threads too). */
	while (!atomic_load(&g->stopping)) {
		hold_sync(g);
		pid = waitpid(-1, &st, __WALL);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: the tree is gone */
		}
		on_wait(g, pid, st);
	}
	/* Returning ends the tracer: PTRACE_O_EXITKILL kills what is left. */
	return NULL;
}

static void log_finding(struct hx_execgate *g, const struct finding *f)
{
	struct hx_peer peer = {
	    .pid = f->pid, .tid = f->old_tid, .exe = f->exe[0] ? f->exe : NULL};
	json_t *rec = hx_record_new(g->pl, &peer, "execve", NULL);
	json_t *args;

	g->pl->events++;
	g->pl->verdicts[HX_VERDICT_DENY]++;
	if (!rec)
		return;
	args = json_object();
	json_object_set_new(args, "path",
			    hx_record_text(rec, "args.path", f->exe));
	hx_record_cmdline(rec, args, "argv", "args.argv", f->cmdline, f->len);
	json_object_set_new(rec, "op", json_string("exec"));
	json_object_set_new(rec, "args", args);
	json_object_set_new(rec, "category", json_string("exec"));
	json_object_set_new(rec, "risk", json_string("critical"));
	json_object_set_new(rec, "verdict", json_string("deny"));
	json_object_set_new(rec, "enforced", json_boolean(f->killed));
	json_object_set_new(rec, "rule", json_string("harness:exec-gate"));
	json_object_set_new(rec, "layer", json_string("kernel"));
	json_object_set_new(rec, "exec_gate", json_string("mismatch"));
	json_object_set_new(rec, "attack", json_true());
	/* no approval: an exec the kernel layer never decided (a swap after
	 * the decision by another thread, or of a thread never seen). */
	json_object_set_new(rec, "approved", json_boolean(f->approved));
	/* The allow of what was decided, which did not run. */
	if (f->seq)
		json_object_set_new(rec, "ref_seq",
				    json_integer((json_int_t)f->seq));
	/* what differed: its environment, all else as approved */
	if (f->env)
		json_object_set_new(rec, "env_changed", json_true());
	json_object_set_new(rec, "killed", json_boolean(f->killed));
	hx_record_append(g->pl, rec, NULL);
	json_decref(rec);
}

/* How a process of the log ended: exit_code, or signal (its name)
 * and core_dumped. */
static void log_exit(struct hx_execgate *g, const struct exited *x)
{
	struct hx_peer peer = {.pid = x->pid};
	json_t *rec = hx_record_new(g->pl, &peer, "process_exit", &x->when);
	char sig[32];

	if (!rec)
		return;
	json_object_set_new(rec, "category", json_string("process"));
	if (WIFEXITED(x->status)) {
		json_object_set_new(rec, "exit_code",
				    json_integer(WEXITSTATUS(x->status)));
	} else {
		const char *abbrev = sigabbrev_np(WTERMSIG(x->status));

		if (abbrev)
			snprintf(sig, sizeof(sig), "SIG%s", abbrev);
		else
			snprintf(sig, sizeof(sig), "%d", WTERMSIG(x->status));
		json_object_set_new(rec, "signal", json_string(sig));
		if (WCOREDUMP(x->status))
			json_object_set_new(rec, "core_dumped", json_true());
	}
	hx_record_append_event(g->pl, rec, NULL, NULL);
	json_decref(rec);
}

static void log_exits(struct hx_execgate *g)
{
	struct exited *list, *x, *rev = NULL;

	pthread_mutex_lock(&g->lock);
	list = g->gone;
	g->gone = NULL;
	pthread_mutex_unlock(&g->lock);
	for (; list; list = x) { /* oldest first */
		x = list->next;
		list->next = rev;
		rev = list;
	}
	for (; rev; rev = x) {
		x = rev->next;
		log_exit(g, rev);
		free(rev);
	}
}

/* The approvals no exec followed, oldest first: each a "failed" record
 * after the exec's allow, which would otherwise say it ran. */
static void log_unrun(struct hx_execgate *g)
{
	struct approval *list, *a, *rev = NULL;

	pthread_mutex_lock(&g->lock);
	list = g->unrun;
	g->unrun = NULL;
	pthread_mutex_unlock(&g->lock);
	for (; list; list = a) {
		a = list->next;
		list->next = rev;
		rev = list;
	}
	for (; rev; rev = a) {
		struct hx_peer peer = {.pid = rev->pid, .tid = rev->tid};

		a = rev->next;
		hx_pipeline_failed(g->pl, &peer, HX_OP_EXEC, rev->path, NULL,
				   rev->seq, 0);
		approval_free(rev);
	}
}

static void on_events(struct hx_server *s, struct hx_source *src,
		      uint32_t events)
{
	struct hx_execgate *g = src->arg;
	struct finding *list, *f, *rev = NULL;
	uint64_t v;
	bool done;

	(void)s;
	(void)events;
	if (read(g->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&g->lock);
	list = g->found;
	g->found = NULL;
	done = g->root_done;
	pthread_mutex_unlock(&g->lock);
	while (list) { /* oldest first */
		f = list->next;
		list->next = rev;
		rev = list;
		list = f;
	}
	while (rev) {
		f = rev->next;
		log_finding(g, rev);
		free(rev->cmdline);
		free(rev);
		rev = f;
	}
	log_unrun(g);
	log_exits(g);
	if (done && g->on_exit)
		g->on_exit(g->arg);
}

int hx_execgate_start(pid_t child, struct hx_pipeline *pl,
		      struct hx_server *srv, bool lineage,
		      void (*on_exit)(void *), void *arg,
		      struct hx_execgate **out)
{
	struct hx_execgate *g = calloc(1, sizeof(*g));
	struct sigaction sa;
	int e;

	*out = NULL;
	if (!g)
		return -ENOMEM;
	g->root = child;
	g->pl = pl;
	g->srv = srv;
	g->on_exit = on_exit;
	g->arg = arg;
	g->seize_err = 1;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	g->efd = -1; /* what fail: closes */
	if (lineage && (e = hx_lineage_new(child, &g->lineage)))
		goto fail;
	g->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->efd < 0) {
		e = -errno;
		goto fail;
	}
	g->src.fd = g->efd;
	g->src.handle = on_events;
	g->src.arg = g;
	if (hx_server_add(srv, &g->src, EPOLLIN)) {
		e = -errno;
		close(g->efd);
		g->efd = -1;
		goto fail;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = gate_wake; /* no SA_RESTART: waitpid says EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(GATE_SIG, &sa, NULL);
	if ((e = -pthread_create(&g->th, NULL, tracer, g)))
		goto fail;
	g->started = true;
	pthread_mutex_lock(&g->lock);
	while (g->seize_err == 1)
		pthread_cond_wait(&g->cond, &g->lock);
	e = g->seize_err;
	pthread_mutex_unlock(&g->lock);
	if (e)
		goto fail;
	*out = g;
	return 0;
fail:
	hx_execgate_stop(g);
	return e ? e : -EAGAIN;
}

int hx_execgate_hold(struct hx_execgate *g, bool hold)
{
	bool done = false, want = hold;

	if (!g || !g->started)
		return -ENOSYS;
	/* Counted: a question on the terminal and an alert's pause hold
	 * the tree each, and the end of one must not let the other's go. */
	pthread_mutex_lock(&g->lock);
	if (hold)
		g->holders++;
	else if (g->holders)
		g->holders--;
	hold = g->holders > 0;
	atomic_store(&g->hold_req, hold);
	pthread_mutex_unlock(&g->lock);
	/* The tracer sleeps in waitpid: the signal makes it look, and is
	 * sent again until it has, since one that comes while it is not
	 * in waitpid wakes nothing. */
	for (int i = 0; i < 500 && !done; i++) {
		pthread_kill(g->th, GATE_SIG);
		usleep(i ? 2000 : 200);
		pthread_mutex_lock(&g->lock);
		done = g->held_ack == hold;
		pthread_mutex_unlock(&g->lock);
	}
	if (!done && want)
		hx_execgate_hold(g, false); /* not held: nothing to let go */
	return done ? 0 : -ETIMEDOUT;
}

pid_t hx_execgate_tracer(const struct hx_execgate *g)
{
	return g ? (pid_t)atomic_load(&g->tracer_tid) : 0;
}

bool hx_execgate_child_status(struct hx_execgate *g, int *status)
{
	bool done;

	pthread_mutex_lock(&g->lock);
	done = g->root_done;
	if (done)
		*status = g->root_status;
	pthread_mutex_unlock(&g->lock);
	return done;
}

void hx_execgate_stats(const struct hx_execgate *g, unsigned long long *checked,
		       unsigned long long *mismatches)
{
	*checked = g ? atomic_load(&g->checked) : 0;
	*mismatches = g ? atomic_load(&g->mismatches) : 0;
}

void hx_execgate_stop(struct hx_execgate *g)
{
	struct approval *a;
	struct finding *f;
	struct exited *x;

	if (!g)
		return;
	atomic_store(&g->stopping, true);
	if (g->started)
		while (pthread_tryjoin_np(g->th, NULL) == EBUSY) {
			pthread_kill(g->th, GATE_SIG);
			usleep(1000);
		}
	/* Exits seen after session_end are not the session's any more,
	 * nor the execs its end cut short. */
	while ((x = g->gone)) {
		g->gone = x->next;
		free(x);
	}
	while ((a = g->unrun)) {
		g->unrun = a->next;
		approval_free(a);
	}
	if (g->efd >= 0) {
		/* Findings not yet logged (the loop is ending): log them. */
		g->on_exit = NULL;
		on_events(g->srv, &g->src, 0);
		hx_server_del(g->srv, &g->src);
		close(g->efd);
	}
	while ((a = g->appr)) {
		g->appr = a->next;
		approval_free(a);
	}
	hx_lineage_free(g->lineage);
	while ((f = g->found)) {
		g->found = f->next;
		free(f->cmdline);
		free(f);
	}
	free(g->tids);
	free(g->parked);
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->cond);
	free(g);
}
