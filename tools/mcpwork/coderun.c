/* code_run's child and its pipes; see coderun.h. */
#define _GNU_SOURCE
#include "tools/mcpwork/coderun.h"
#include "tools/mcpwork/grow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/kernel/landlock_uapi.h"
#include "tools/mcpwork/args.h"
#include "tools/mcpwork/bounds.h"
#include "tools/mcpwork/text.h"

#define CHUNK (64u << 10)

/* What failed in the child before the program ran. */
enum { STAGE_CWD = 1, STAGE_EXEC = 2 };

struct stream {
	int fd;
	char *buf;
	size_t len, cap, max;
	uint64_t total;
};

struct hx_mw_coderun {
	uint64_t id;
	pid_t pid;
	int in_fd, rep_fd; /* stdin's write end; the child's exec report */
	int pidfd;	   /* pins the child and its group's number */
	char *in;
	size_t in_len, in_off;
	struct stream out, err;
	uint64_t start, deadline, kill_at, reaped_at, last_progress, end;
	bool reaped, timed_out, cancelled, term_sent, kill_sent, finished;
	int status;
	int stage, stage_errno;
	char what[PATH_MAX]; /* the program or the cwd, for messages */
	char cwd[PATH_MAX];
};

/* A spawn's plan, borrowed from the request's args. */
struct plan {
	const char **argv;
	char **envp;
	const char *cwd;
	const char *in;
	size_t in_len;
	uint64_t timeout, max;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int str_arg(json_t *v, const char *what, const char **s, json_t **res)
{
	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return hx_mw_args_error(
		    res, EINVAL, "%s must be a string without NUL bytes", what);
	*s = json_string_value(v);
	return 0;
}

/* argv from "command", "argv" or "language" + "code". */
static int plan_argv(json_t *args, struct plan *p, json_t **res)
{
	json_t *cmd = json_object_get(args, "command");
	json_t *argv = json_object_get(args, "argv");
	json_t *lang = json_object_get(args, "language");
	json_t *code = json_object_get(args, "code");
	const char *s = NULL;
	json_t *v;
	size_t i, n;
	int rc;

	if (!!cmd + !!argv + !!(lang || code) != 1 || !lang != !code)
		return hx_mw_args_error(res, EINVAL,
					"give exactly one of command, argv, "
					"and language with code");
	n = argv ? json_array_size(argv) : 3;
	if (argv && (!json_is_array(argv) || !n || n > HX_MW_ARGV_MAX))
		return hx_mw_args_error(res, EINVAL,
					"argv must be an array of 1 to %u "
					"strings",
					HX_MW_ARGV_MAX);
	p->argv = calloc(n + 1, sizeof(*p->argv));
	if (!p->argv)
		return hx_mw_args_error(res, ENOMEM, "out of memory");
	if (argv) {
		json_array_foreach(argv, i, v)
		{
			if ((rc = str_arg(v, "argv's members", &p->argv[i],
					  res)) < 0)
				return rc;
		}
		return 0;
	}
	if (cmd) {
		if ((rc = str_arg(cmd, "command", &s, res)) < 0)
			return rc;
		p->argv[0] = "/bin/sh";
		p->argv[1] = "-c";
		p->argv[2] = s;
		return 0;
	}
	if ((rc = str_arg(lang, "language", &s, res)) < 0)
		return rc;
	if (!strcmp(s, "python"))
		p->argv[0] = "python3", p->argv[1] = "-c";
	else if (!strcmp(s, "node"))
		p->argv[0] = "node", p->argv[1] = "-e";
	else
		return hx_mw_args_error(res, EINVAL,
					"language must be \"python\" or "
					"\"node\"");
	return str_arg(code, "code", &p->argv[2], res);
}

static bool env_name_ok(const char *k)
{
	return k[0] && !strchr(k, '=');
}

/* The worker's environment with the additions (their names replaced). */
static int plan_env(json_t *args, struct plan *p, json_t **res)
{
	extern char **environ;
	json_t *env = json_object_get(args, "env"), *v;
	size_t n = 0, i = 0, add;
	const char *k, *s;
	int rc;

	if (env &&
	    (!json_is_object(env) || json_object_size(env) > HX_MW_ENV_MAX))
		return hx_mw_args_error(res, EINVAL,
					"env must be an object of at most %u "
					"strings",
					HX_MW_ENV_MAX);
	add = env ? json_object_size(env) : 0;
	while (environ[n])
		n++;
	p->envp = calloc(n + add + 1, sizeof(*p->envp));
	if (!p->envp)
		return hx_mw_args_error(res, ENOMEM, "out of memory");
	for (n = 0; environ[n]; n++) {
		const char *eq = strchr(environ[n], '=');
		char name[256];

		if (eq && (size_t)(eq - environ[n]) < sizeof(name)) {
			snprintf(name, sizeof(name), "%.*s",
				 (int)(eq - environ[n]), environ[n]);
			if (env && json_object_get(env, name))
				continue;
		}
		if (!(p->envp[i++] = strdup(environ[n])))
			return hx_mw_args_error(res, ENOMEM, "out of memory");
	}
	json_object_foreach(env, k, v)
	{
		if (!env_name_ok(k))
			return hx_mw_args_error(res, EINVAL,
						"env: \"%s\" is no variable "
						"name",
						k);
		if ((rc = str_arg(v, "env's values", &s, res)) < 0)
			return rc;
		if (asprintf(&p->envp[i], "%s=%s", k, s) < 0) {
			p->envp[i] = NULL;
			return hx_mw_args_error(res, ENOMEM, "out of memory");
		}
		i++;
	}
	return 0;
}

static void free_plan(struct plan *p)
{
	size_t i;

	free(p->argv);
	for (i = 0; p->envp && p->envp[i]; i++)
		free(p->envp[i]);
	free(p->envp);
}

static int plan(json_t *args, struct plan *p, json_t **res)
{
	static const char *const keys[] = {
	    "command", "argv",	"language",	    "code", "cwd", "timeout_ms",
	    "env",     "stdin", "max_output_bytes", NULL};
	int rc;

	if ((rc = hx_mw_args_only(args, keys, res)) < 0 ||
	    (rc = hx_mw_args_path(args, "cwd", &p->cwd, res)) < 0 ||
	    (rc = hx_mw_args_uint(args, "timeout_ms", HX_MW_TIMEOUT_DEFAULT, 1,
				  HX_MW_TIMEOUT_MAX, &p->timeout, NULL, res)) <
		0 ||
	    (rc = hx_mw_args_uint(args, "max_output_bytes",
				  HX_MW_OUTPUT_DEFAULT, 0, HX_MW_OUTPUT_MAX,
				  &p->max, NULL, res)) < 0 ||
	    (rc = hx_mw_args_str(args, "stdin", &p->in, &p->in_len, res)) < 0 ||
	    (rc = plan_argv(args, p, res)) < 0 ||
	    (rc = plan_env(args, p, res)) < 0)
		return rc;
	return 0;
}

/* Closes every fd from 3 up but keep. close_range(2) when the kernel
 * (5.9) and the sandbox let it; a loop over the limit otherwise. */
static void close_from_3(int keep)
{
	long max, fd;

	if ((keep == 3 ||
	     syscall(SYS_close_range, 3, (unsigned)keep - 1, 0) == 0) &&
	    syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0) == 0)
		return;
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		if (fd != keep)
			close((int)fd);
}

static void report(int fd, int stage, int e)
{
	int msg[2] = {stage, e};
	ssize_t w = write(fd, msg, sizeof(msg));

	(void)w;
	_exit(127);
}

/* The child in a Landlock domain of its own that scopes signals (ABI
 * 6, Linux 6.12): nothing a code_run starts can stop, kill or (Landlock
 * also bounds ptrace access to the domain) read the worker, which
 * serves every call, nor another call's processes. It handles no file
 * or network access: those stay the session's. 0, or the errno of a
 * kernel that has the scope and still refused. */
static int scope_signals(void)
{
	struct hx_ll_ruleset_attr a = {.scoped = HX_LL_SCOPE_SIGNAL};
	long fd = syscall(__NR_landlock_create_ruleset, &a, sizeof(a), 0);
	int e = 0;

	/* Set already inside the harness; outside it (unit tests) it is
	 * what restrict_self needs without CAP_SYS_ADMIN. */
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (fd < 0) /* older than 6.12: docs/mcp.md says what is lost */
		return errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP
			   ? 0
			   : errno;
	if (syscall(__NR_landlock_restrict_self, (int)fd, 0))
		e = errno;
	close((int)fd);
	return e;
}

/* In the child, between fork and exec: its own group, the pipes as
 * 0, 1 and 2, nothing else open (the socket to the front above all),
 * the signals as a fresh program expects them. */
static void child(const struct plan *p, const int in[2], const int out[2],
		  const int err[2], int rep)
{
	extern char **environ;
	sigset_t none;
	int e;

	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL); /* ignored in the worker, inherited */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
		report(rep, STAGE_EXEC, errno);
	close_from_3(rep);
	if ((e = scope_signals()))
		report(rep, STAGE_EXEC, e);
	if (chdir(p->cwd) < 0)
		report(rep, STAGE_CWD, errno);
	/* execvp searches the PATH of environ: the child's own. */
	environ = p->envp;
	execvp(p->argv[0], (char *const *)p->argv);
	report(rep, STAGE_EXEC, errno);
}

static int pipes(int fds[4][2])
{
	int i;

	for (i = 0; i < 4; i++)
		fds[i][0] = fds[i][1] = -1;
	for (i = 0; i < 4; i++)
		if (pipe2(fds[i], O_CLOEXEC) < 0)
			return -errno;
	return 0;
}

static void close_pipes(int fds[4][2])
{
	int i;

	for (i = 0; i < 4; i++) {
		close_fd(&fds[i][0]);
		close_fd(&fds[i][1]);
	}
}

static int spawn(struct hx_mw_coderun *r, const struct plan *p, json_t **res)
{
	int fds[4][2]; /* stdin, stdout, stderr, report */
	int rc = pipes(fds), i;

	if (rc < 0) {
		close_pipes(fds);
		return hx_mw_args_error(res, -rc, "pipe: %s", strerror(-rc));
	}
	r->pid = fork();
	if (r->pid < 0) {
		rc = errno;
		close_pipes(fds);
		return hx_mw_args_error(res, rc, "fork: %s", strerror(rc));
	}
	if (!r->pid)
		child(p, fds[0], fds[1], fds[2], fds[3][1]);
	/* Both sides set the group, so that a kill right after the fork
	 * reaches it whichever runs first. */
	setpgid(r->pid, r->pid);
	r->pidfd = (int)syscall(SYS_pidfd_open, r->pid, 0);
	r->in_fd = fds[0][1];
	r->out.fd = fds[1][0];
	r->err.fd = fds[2][0];
	r->rep_fd = fds[3][0];
	fds[0][1] = fds[1][0] = fds[2][0] = fds[3][0] = -1;
	close_pipes(fds);
	for (i = 0; i < 4; i++) {
		int fd = i == 0	  ? r->in_fd
			 : i == 1 ? r->out.fd
			 : i == 2 ? r->err.fd
				  : r->rep_fd;

		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	}
	return 0;
}

int hx_mw_coderun_start(uint64_t id, json_t *args, uint64_t now,
			struct hx_mw_coderun **run, json_t **res)
{
	struct plan p = {0};
	struct hx_mw_coderun *r;
	int rc;

	if ((rc = plan(args, &p, res)) < 0)
		goto out;
	r = calloc(1, sizeof(*r));
	if (!r || (p.in_len && !(r->in = malloc(p.in_len)))) {
		free(r);
		rc = hx_mw_args_error(res, ENOMEM, "out of memory");
		goto out;
	}
	r->id = id;
	r->in_fd = r->out.fd = r->err.fd = r->rep_fd = r->pidfd = -1;
	r->out.max = r->err.max = p.max;
	if (p.in_len)
		memcpy(r->in, p.in, p.in_len);
	r->in_len = p.in_len;
	snprintf(r->what, sizeof(r->what), "%s", p.argv[0]);
	snprintf(r->cwd, sizeof(r->cwd), "%s", p.cwd);
	if ((rc = spawn(r, &p, res)) < 0) {
		free(r->in);
		free(r);
		goto out;
	}
	if (!r->in_len)
		close_fd(&r->in_fd);
	r->start = r->last_progress = now;
	r->deadline = now + p.timeout;
	*run = r;
out:
	free_plan(&p);
	return rc;
}

uint64_t hx_mw_coderun_id(const struct hx_mw_coderun *r)
{
	return r->id;
}

pid_t hx_mw_coderun_pid(const struct hx_mw_coderun *r)
{
	return r->pid;
}

int hx_mw_coderun_fds(const struct hx_mw_coderun *r, struct pollfd *p)
{
	int n = 0;

	if (r->out.fd >= 0)
		p[n++] = (struct pollfd){.fd = r->out.fd, .events = POLLIN};
	if (r->err.fd >= 0)
		p[n++] = (struct pollfd){.fd = r->err.fd, .events = POLLIN};
	if (r->rep_fd >= 0)
		p[n++] = (struct pollfd){.fd = r->rep_fd, .events = POLLIN};
	if (r->in_fd >= 0)
		p[n++] = (struct pollfd){.fd = r->in_fd, .events = POLLOUT};
	return n;
}

/* Reads what there is; past max it is counted, not kept. */
static void drain(struct stream *s)
{
	char chunk[CHUNK];
	ssize_t n;
	size_t keep;

	for (;;) {
		n = read(s->fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			break;
		s->total += (uint64_t)n;
		keep =
		    s->max - s->len < (size_t)n ? s->max - s->len : (size_t)n;
		if (keep && hx_mw_grow(&s->buf, &s->cap, s->len + keep, 0))
			keep = 0; /* counted, not kept */
		if (keep)
			memcpy(s->buf + s->len, chunk, keep);
		s->len += keep;
	}
	close_fd(&s->fd);
}

static void feed_stdin(struct hx_mw_coderun *r)
{
	ssize_t w;

	while (r->in_off < r->in_len) {
		w = write(r->in_fd, r->in + r->in_off, r->in_len - r->in_off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w < 0)
			break; /* EPIPE: the child does not read it */
		r->in_off += (size_t)w;
	}
	close_fd(&r->in_fd);
}

static void read_report(struct hx_mw_coderun *r)
{
	int msg[2];
	ssize_t n;

	do
		n = read(r->rep_fd, msg, sizeof(msg));
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return;
	/* EOF: the exec closed the pipe, the program runs. */
	if (n == (ssize_t)sizeof(msg)) {
		r->stage = msg[0];
		r->stage_errno = msg[1];
	}
	close_fd(&r->rep_fd);
}

void hx_mw_coderun_io(struct hx_mw_coderun *r, const struct pollfd *p, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!p[i].revents || p[i].fd < 0)
			continue;
		if (p[i].fd == r->out.fd)
			drain(&r->out);
		else if (p[i].fd == r->err.fd)
			drain(&r->err);
		else if (p[i].fd == r->rep_fd)
			read_report(r);
		else if (p[i].fd == r->in_fd)
			feed_stdin(r);
	}
}

#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1U << 2) /* Linux 6.9 */
#endif

/* sig to the group through the pidfd: the group of the child's struct
 * pid, which its members keep from reuse, where the child's number,
 * once reaped, may lead another group. -1 (errno) as kill(2); EINVAL
 * before 6.9. */
static int group_signal(const struct hx_mw_coderun *r, int sig)
{
	if (r->pidfd < 0)
		return errno = EINVAL, -1;
	return (int)syscall(SYS_pidfd_send_signal, r->pidfd, sig, NULL,
			    PIDFD_SIGNAL_PROCESS_GROUP);
}

static void signal_group(struct hx_mw_coderun *r, int sig)
{
	/* The group, and the child itself should it not be its leader yet
	 * (both sides set it, but neither may have run). */
	if (group_signal(r, sig) && errno == EINVAL)
		kill(-r->pid, sig);
	if (!r->reaped)
		kill(r->pid, sig);
}

/* True when a process of group pgid runs in /proc/pid/stat (a zombie
 * does not count); -1 when it cannot be read. */
static int runs_in(const char *pid, pid_t pgid)
{
	char path[64], buf[512];
	const char *p;
	char state;
	int fd, ppid, pgrp;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the name may hold anything */
	if (!p || sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
		return -1;
	return pgrp == pgid && state != 'Z' && state != 'X';
}

/* True when no process of the child's group is left but zombies: the
 * orphans of a killed group are reaped by whoever adopted them, and
 * that may take its time (an init that reaps once a second). */
static bool group_gone(const struct hx_mw_coderun *r)
{
	struct dirent *de;
	bool alive = false;
	DIR *d;

	if ((group_signal(r, 0) && errno == ESRCH) ||
	    (r->pidfd < 0 && kill(-r->pid, 0) < 0 && errno == ESRCH))
		return true;
	d = opendir("/proc");
	if (!d)
		return false;
	while (!alive && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			alive = runs_in(de->d_name, r->pid) == 1;
	closedir(d);
	return !alive;
}

static uint64_t until(uint64_t t, uint64_t now)
{
	return t > now ? t - now : 0;
}

static int min_wait(int cur, uint64_t ms)
{
	if (ms > INT_MAX)
		ms = INT_MAX;
	return cur < 0 || (int)ms < cur ? (int)ms : cur;
}

bool hx_mw_coderun_done(const struct hx_mw_coderun *r)
{
	return r->finished;
}

static void reap(struct hx_mw_coderun *r, uint64_t now)
{
	pid_t w;
	int st;

	do
		w = waitpid(r->pid, &st, WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w == 0)
		return;
	/* w < 0 (ECHILD) cannot be ours to wait for again: gone too. */
	r->reaped = true;
	r->status = w == r->pid ? st : 0;
	r->reaped_at = now;
	close_fd(&r->in_fd);
}

int hx_mw_coderun_tick(struct hx_mw_coderun *r, uint64_t now)
{
	int wait = -1;

	if (r->finished)
		return -1;
	if (!r->reaped)
		reap(r, now);
	if (!r->reaped && !r->term_sent && now >= r->deadline) {
		r->timed_out = r->term_sent = true;
		r->kill_at = now + HX_MW_TERM_GRACE_MS;
		signal_group(r, SIGTERM);
	}
	/* The group, not just the child: a background process it left,
	 * still holding the pipes or not, goes too. */
	if (r->term_sent && !r->kill_sent && now >= r->kill_at) {
		r->kill_sent = true;
		signal_group(r, SIGKILL);
	}
	/* After the child, its output is read for a short while more: a
	 * process it left in the background may hold the pipes open, and
	 * the call does not wait for that one. */
	if (r->reaped && now >= r->reaped_at + HX_MW_DRAIN_GRACE_MS) {
		if (r->out.fd >= 0)
			drain(&r->out), close_fd(&r->out.fd);
		if (r->err.fd >= 0)
			drain(&r->err), close_fd(&r->err.fd);
		close_fd(&r->rep_fd);
	}
	if (r->reaped && r->out.fd < 0 && r->err.fd < 0 && r->rep_fd < 0 &&
	    (!r->term_sent || r->kill_sent || group_gone(r))) {
		r->finished = true;
		r->end = now;
		return -1;
	}
	if (!r->reaped && !r->term_sent)
		wait = min_wait(wait, until(r->deadline, now));
	if (r->term_sent && !r->kill_sent)
		wait = min_wait(wait, r->reaped ? 50 : until(r->kill_at, now));
	if (r->reaped)
		wait = min_wait(
		    wait, until(r->reaped_at + HX_MW_DRAIN_GRACE_MS, now));
	return min_wait(wait, until(r->last_progress + HX_MW_PROGRESS_MS, now));
}

json_t *hx_mw_coderun_progress(struct hx_mw_coderun *r, uint64_t now)
{
	if (r->finished || now < r->last_progress + HX_MW_PROGRESS_MS)
		return NULL;
	r->last_progress = now;
	return json_pack("{s:I, s:I, s:I}", "elapsed_ms",
			 (json_int_t)(now - r->start), "stdout_bytes",
			 (json_int_t)r->out.total, "stderr_bytes",
			 (json_int_t)r->err.total);
}

void hx_mw_coderun_cancel(struct hx_mw_coderun *r)
{
	if (r->finished || r->cancelled)
		return;
	r->cancelled = r->term_sent = r->kill_sent = true;
	signal_group(r, SIGKILL);
	close_fd(&r->in_fd);
}

/* A stream as JSON text: cut at a whole character when it was cut. */
static json_t *text_of(const struct stream *s, bool *lossy)
{
	size_t n = s->len;

	if (s->total > s->len)
		n = hx_mw_text_utf8_cut(s->buf, n);
	return hx_mw_args_string_lossy(s->buf ? s->buf : "", n, lossy);
}

int hx_mw_coderun_result(struct hx_mw_coderun *r, json_t **res)
{
	char sig[32] = "";
	bool lossy = false;
	json_t *out, *err;
	int rc;

	if (r->stage) {
		rc = hx_mw_args_error(res, r->stage_errno, "%s %s: %s",
				      r->stage == STAGE_CWD ? "cwd" : "exec",
				      r->stage == STAGE_CWD ? r->cwd : r->what,
				      strerror(r->stage_errno));
		json_object_set_new(*res, "pid", json_integer(r->pid));
		return rc;
	}
	if (WIFSIGNALED(r->status))
		snprintf(sig, sizeof(sig), "SIG%s",
			 sigabbrev_np(WTERMSIG(r->status)) ?: "?");
	out = text_of(&r->out, &lossy);
	err = text_of(&r->err, &lossy);
	*res = json_pack(
	    "{s:o, s:o, s:o, s:o, s:I, s:I, s:b, s:b, s:b, s:b, s:I, s:i, "
	    "s:b}",
	    "exit_code",
	    WIFEXITED(r->status) ? json_integer(WEXITSTATUS(r->status))
				 : json_null(),
	    "signal", sig[0] ? json_string(sig) : json_null(), "stdout", out,
	    "stderr", err, "stdout_bytes", (json_int_t)r->out.total,
	    "stderr_bytes", (json_int_t)r->err.total, "stdout_truncated",
	    r->out.total > r->out.len, "stderr_truncated",
	    r->err.total > r->err.len, "timed_out", r->timed_out, "cancelled",
	    r->cancelled, "duration_ms", (json_int_t)(r->end - r->start), "pid",
	    (int)r->pid, "lossy", lossy);
	if (!*res)
		return hx_mw_args_error(res, ENOMEM, "out of memory");
	return 0;
}

void hx_mw_coderun_free(struct hx_mw_coderun *r)
{
	if (!r)
		return;
	if (!r->finished)
		signal_group(r, SIGKILL);
	while (!r->reaped && waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
		;
	close_fd(&r->in_fd);
	close_fd(&r->out.fd);
	close_fd(&r->err.fd);
	close_fd(&r->rep_fd);
	close_fd(&r->pidfd);
	free(r->out.buf);
	free(r->err.buf);
	free(r->in);
	free(r);
}
