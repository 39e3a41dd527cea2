/* harness-audit sessions, and a command's log by session; see
 * sessions_cli.h. A session is known by its first record (session_start)
 * and its last (session_end, when it ended): two reads of its log. */
#define _GNU_SOURCE
#include "tools/sessions_cli.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/notice.h"
#include "common/sbuf.h"
#include "supervisor/export/logline.h"
#include "supervisor/export/proctree.h"
#include "supervisor/proc.h"
#include "supervisor/record.h"
#include "supervisor/session.h"

static const char usage[] =
    "Usage: harness-audit sessions [--here] [--json]\n"
    "\n"
    "Lists your sessions ($XDG_STATE_HOME/harness/sessions), oldest first:\n"
    "id, start (UTC), duration, exit status (running: harness-exec still\n"
    "runs it; cut: its log has no session_end), events, denied and asked\n"
    "calls, the --worktree branch, the command. On a terminal a table;\n"
    "otherwise, or with --json, one JSON object per line (jq reads it).\n"
    "\n"
    "  --here   only the sessions started in the current directory\n"
    "  --json   JSON lines on a terminal too\n"
    "\n"
    "Every other command takes a log path, a session id, or --last (the\n"
    "default): the last session started in the current directory.\n";

static json_t *parse_line(const char *s, size_t n)
{
	json_error_t e;

	return json_loadb(s, n, 0, &e);
}

/* The last whole line of f, parsed: a session_end is short beside the
 * log, and looked for in its last 256 KiB. */
static json_t *last_record(FILE *f)
{
	static char buf[256 * 1024];
	long size, off;
	size_t n;
	char *end, *nl;

	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) <= 0)
		return NULL;
	off = size > (long)sizeof(buf) ? size - (long)sizeof(buf) : 0;
	if (fseek(f, off, SEEK_SET))
		return NULL;
	n = fread(buf, 1, sizeof(buf), f);
	if (!n || buf[n - 1] != '\n')
		return NULL; /* a torn last line: no end */
	end = buf + n - 1;
	*end = '\0';
	nl = memrchr(buf, '\n', (size_t)(end - buf));
	if (!nl && off > 0)
		return NULL;
	nl = nl ? nl + 1 : buf;
	return parse_line(nl, (size_t)(end - nl));
}

static bool is_event(json_t *r, const char *name)
{
	return r && !strcmp(hx_record_field(r, "event"), name);
}

static bool is_session(json_t *r, const char *id)
{
	return r && !strcmp(hx_record_field(r, "session"), id);
}

/* A log several sessions wrote (an --audit-log given to each in turn):
 * the session's own session_start and last record, read from its own
 * lines. Its first and last lines were another session's: the second
 * session was listed with the first's command and start, the first
 * with the second's end (and --last then named either). */
static void load_shared(const char *id, FILE *f, struct hx_sessions_entry *s)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	json_decref(s->start);
	json_decref(s->end);
	s->start = s->end = NULL;
	rewind(f);
	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *r;

		if (!hx_logline_is_session(line, (size_t)n, id) ||
		    !(r = parse_line(line, (size_t)n)))
			continue;
		if (!s->start && is_event(r, "session_start"))
			s->start = json_incref(r);
		json_decref(s->end);
		s->end = r;
	}
	free(line);
	if (!is_event(s->end, "session_end")) {
		json_decref(s->end);
		s->end = NULL;
	}
}

/* The session of log path (id: its name); false when the log does not
 * begin with a session_start. */
static bool load(const char *id, const char *path, struct hx_sessions_entry *s)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	memset(s, 0, sizeof(*s));
	if (!f)
		return false;
	if (strlen(id) >= sizeof(s->id) || strlen(path) >= sizeof(s->log)) {
		fclose(f);
		return false;
	}
	strcpy(s->id, id);
	strcpy(s->log, path);
	n = getline(&line, &cap, f);
	if (n > 0)
		s->start = parse_line(line, (size_t)n);
	free(line);
	/* harness-audit compact kept its first and last records */
	if (is_event(s->start, "compacted")) {
		json_t *c = s->start;

		s->start = json_incref(json_object_get(c, "session_start"));
		s->end = json_incref(json_object_get(c, "session_end"));
		s->compacted = true;
		json_decref(c);
		fclose(f);
		return is_event(s->start, "session_start");
	}
	if (is_event(s->start, "session_start")) {
		s->end = last_record(f);
		if (!is_session(s->start, id) ||
		    (s->end && !is_session(s->end, id)))
			load_shared(id, f, s);
		else if (!is_event(s->end, "session_end")) {
			json_decref(s->end);
			s->end = NULL;
		}
	}
	fclose(f);
	return is_event(s->start, "session_start");
}

void hx_sessions_drop(struct hx_sessions_entry *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_decref(s[i].start);
		json_decref(s[i].end);
	}
	free(s);
}

static int by_start(const void *a, const void *b)
{
	const struct hx_sessions_entry *x = a, *y = b;

	return strcmp(hx_record_field(x->start, "time"),
		      hx_record_field(y->start, "time"));
}

int hx_sessions_list(struct hx_sessions_entry **out, size_t *count)
{
	char state[PATH_MAX], dir[PATH_MAX], log[PATH_MAX];
	struct hx_sessions_entry *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *d;
	DIR *dh;
	int r = hx_session_state_dir(state, sizeof(state));

	*out = NULL;
	*count = 0;
	if (r)
		return r;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/sessions", state) >=
	    sizeof(dir))
		return -ENAMETOOLONG;
	if (!(dh = opendir(dir)))
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dh))) {
		if (!hx_session_name_valid(d->d_name))
			continue;
		if (n == cap) {
			struct hx_sessions_entry *p =
			    realloc(v, (cap = cap ? cap * 2 : 32) * sizeof(*v));

			if (!p) {
				closedir(dh);
				hx_sessions_drop(v, n);
				return -ENOMEM;
			}
			v = p;
		}
		if ((size_t)snprintf(log, sizeof(log), "%s/%s/audit.jsonl", dir,
				     d->d_name) >= sizeof(log))
			continue;
		if (load(d->d_name, log, &v[n])) {
			n++;
		} else {
			json_decref(v[n].start);
			json_decref(v[n].end);
		}
	}
	closedir(dh);
	qsort(v, n, sizeof(*v), by_start);
	*out = v;
	*count = n;
	return 0;
}

/* The sessions, and the current directory into cwd (NULL: not
 * needed); -errno (said on err) when either cannot be had. */
static int list_here(char *cwd, size_t size, struct hx_sessions_entry **v,
		     size_t *n, FILE *err)
{
	int r = !cwd || getcwd(cwd, size) ? hx_sessions_list(v, n) : -errno;

	if (r)
		fprintf(err, "harness-audit: the sessions: %s\n", strerror(-r));
	return r;
}

static bool here(const struct hx_sessions_entry *s, const char *cwd)
{
	return !strcmp(hx_record_field(s->start, "cwd"), cwd);
}

int hx_sessions_id_of(const char *log, char *id, size_t size)
{
	char state[PATH_MAX], pre[PATH_MAX + 16];
	struct stat st;
	const char *rest;
	size_t n;

	id[0] = '\0';
	if (hx_session_state_dir(state, sizeof(state)) ||
	    (size_t)snprintf(pre, sizeof(pre), "%s/sessions/", state) >=
		sizeof(pre) ||
	    strncmp(log, pre, strlen(pre)))
		return 0;
	rest = log + strlen(pre);
	n = strcspn(rest, "/");
	if (strcmp(rest + n, "/audit.jsonl") || n >= size || lstat(log, &st))
		return 0;
	memcpy(id, rest, n);
	id[n] = '\0';
	return S_ISLNK(st.st_mode) ? 2 : 1;
}

const char *hx_sessions_only(const char *log, char *id, size_t size)
{
	return hx_sessions_id_of(log, id, size) == 2 ? id : NULL;
}

int hx_sessions_log(const char *arg, char *log, size_t size, FILE *err)
{
	char cwd[PATH_MAX], state[PATH_MAX];
	struct hx_sessions_entry *v;
	struct stat st;
	size_t n;

	if (arg && strcmp(arg, "--last")) {
		/* A session of that name first: a file named like it in the
		 * current directory (the project, the agent's to write; its
		 * TMPDIR names its session) was read in its place, a log of
		 * the agent's making (twenty-sixth attack review). That file
		 * is still read as ./NAME. */
		if (hx_session_name_valid(arg) &&
		    !hx_session_state_dir(state, sizeof(state)) &&
		    (size_t)snprintf(log, size, "%s/sessions/%s/audit.jsonl",
				     state, arg) < size &&
		    !stat(log, &st))
			return 0;
		if (!stat(arg, &st) && !S_ISDIR(st.st_mode)) {
			snprintf(log, size, "%s", arg);
			return 0;
		}
		fprintf(err,
			"harness-audit: %s: no such log, nor a session of "
			"yours (harness-audit sessions lists them)\n",
			arg);
		return 2;
	}
	if (list_here(cwd, sizeof(cwd), &v, &n, err))
		return 2;
	for (size_t i = n; i-- > 0;)
		if (here(&v[i], cwd)) {
			snprintf(log, size, "%s", v[i].log);
			hx_sessions_drop(v, n);
			return 0;
		}
	hx_sessions_drop(v, n);
	fprintf(err,
		"harness-audit: no session was started in %s; give a log, a "
		"session id (harness-audit sessions lists them)\n",
		cwd);
	return 2;
}

double hx_sessions_seconds(const char *a, const char *b)
{
	struct tm ta = {0}, tb = {0};
	const char *fa = strptime(a, "%Y-%m-%dT%H:%M:%S", &ta);
	const char *fb = strptime(b, "%Y-%m-%dT%H:%M:%S", &tb);

	if (!fa || !fb)
		return -1;
	return difftime(timegm(&tb), timegm(&ta)) + strtod(fb, NULL) -
	       strtod(fa, NULL);
}

/* Whether pid's process started by the time when (a record's time):
 * harness-exec starts before its session_start. The number of one
 * killed since is another process's, whose name is its own to choose
 * (PR_SET_NAME "harness-exec"): a session cut was listed running. The
 * boot time is in whole seconds: a second's slack. */
static bool started_by(pid_t pid, const char *when)
{
	struct hx_procstat st;
	unsigned long long btime = 0;
	char line[128], iso[32];
	long hz = sysconf(_SC_CLK_TCK);
	struct tm tm;
	time_t t;
	FILE *f;

	if (hz <= 0 || hx_proc_stat(pid, &st) ||
	    !(f = fopen("/proc/stat", "re")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	t = (time_t)(btime + (st.starttime + (unsigned long long)hz - 1) /
				 (unsigned long long)hz);
	if (!btime || !gmtime_r(&t, &tm) ||
	    !strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm))
		return false;
	return hx_sessions_seconds(iso, when) >= -1.0;
}

const char *hx_sessions_state(const struct hx_sessions_entry *s)
{
	char path[64], comm[32] = "";
	json_int_t pid = json_integer_value(json_object_get(s->start, "pid"));
	struct stat st;
	FILE *f;

	if (s->compacted)
		return "compacted";
	if (s->end)
		return "ended";
	/* harness-exec is not dumpable: its exe link is root's to read,
	 * its comm anyone's; and its socket is there until it ends. */
	snprintf(path, sizeof(path), "/proc/%lld/comm", (long long)pid);
	if (pid > 0 && (f = fopen(path, "re"))) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	if (!strcmp(comm, "harness-exec\n") &&
	    started_by((pid_t)pid, hx_record_field(s->start, "time")) &&
	    !stat(hx_record_field(s->start, "socket"), &st) &&
	    S_ISSOCK(st.st_mode))
		return "running";
	return "cut";
}

static json_int_t verdicts(const struct hx_sessions_entry *s, const char *v)
{
	return json_integer_value(
	    json_object_get(json_object_get(s->end, "verdicts"), v));
}

static json_t *as_json(const struct hx_sessions_entry *s)
{
	json_t *o = json_object(), *wt = json_object_get(s->end, "worktree");
	double d = s->end
		       ? hx_sessions_seconds(hx_record_field(s->start, "time"),
					     hx_record_field(s->end, "time"))
		       : -1;

	json_object_set_new(o, "id", json_string(s->id));
	json_object_set_new(o, "state", json_string(hx_sessions_state(s)));
	json_object_set(o, "start", json_object_get(s->start, "time"));
	json_object_set(o, "command", json_object_get(s->start, "command"));
	json_object_set(o, "cwd", json_object_get(s->start, "cwd"));
	json_object_set(o, "mode", json_object_get(s->start, "mode"));
	json_object_set_new(o, "log", json_string(s->log));
	if (s->end) {
		json_object_set(o, "end", json_object_get(s->end, "time"));
		if (d >= 0)
			json_object_set_new(
			    o, "duration_s",
			    json_real((double)(long long)(d * 1000) / 1000));
		json_object_set(o, "exit_code",
				json_object_get(s->end, "exit_code"));
		json_object_set(o, "events", json_object_get(s->end, "events"));
		json_object_set_new(o, "denied",
				    json_integer(verdicts(s, "deny")));
		json_object_set_new(o, "asked",
				    json_integer(verdicts(s, "ask")));
	}
	if (wt)
		json_object_set(o, "branch", json_object_get(wt, "branch"));
	return o;
}

void hx_sessions_duration(double d, char *out, size_t size)
{
	if (d < 0)
		snprintf(out, size, "-");
	else if (d < 60)
		snprintf(out, size, "%.1fs", d);
	else if (d < 3600)
		snprintf(out, size, "%dm%02ds", (int)d / 60, (int)d % 60);
	else
		snprintf(out, size, "%dh%02dm", (int)d / 3600,
			 (int)d % 3600 / 60);
}

static void row(FILE *out, const struct hx_sessions_entry *s)
{
	char when[20] = "", dur[16], exit[16], cmd[96], sid[128], sw[80],
	     sb[256];
	const char *st = hx_sessions_state(s),
		   *t = hx_record_field(s->start, "time");
	json_t *wt = json_object_get(s->end, "worktree");

	snprintf(when, sizeof(when), "%.10s %.8s", t,
		 strlen(t) > 11 ? t + 11 : "");
	hx_sessions_duration(
	    s->end ? hx_sessions_seconds(t, hx_record_field(s->end, "time"))
		   : -1,
	    dur, sizeof(dur));
	if (json_object_get(s->end, "signal"))
		snprintf(exit, sizeof(exit), "sig %lld",
			 (long long)json_integer_value(
			     json_object_get(s->end, "signal")));
	else if (s->end)
		snprintf(exit, sizeof(exit), "%lld",
			 (long long)json_integer_value(
			     json_object_get(s->end, "exit_code")));
	else
		snprintf(exit, sizeof(exit), "%s", st);
	hx_argv_line(json_object_get(s->start, "command"), cmd, sizeof(cmd));
	fprintf(
	    out, "%-26s %-19s %8s %7s %7lld %6lld %5lld  %-18s %s\n",
	    hx_text_safe(sid, sizeof(sid), s->id),
	    hx_text_safe(sw, sizeof(sw), when), dur, exit,
	    (long long)json_integer_value(json_object_get(s->end, "events")),
	    (long long)verdicts(s, "deny"), (long long)verdicts(s, "ask"),
	    hx_text_safe(sb, sizeof(sb),
			 wt ? hx_record_field(wt, "branch") : "-"),
	    cmd);
}

int hx_sessions_cli(int argc, char *const *argv, FILE *out, FILE *err)
{
	bool only_here = false, as_lines = !isatty(fileno(out));
	char cwd[PATH_MAX] = "";
	struct hx_sessions_entry *v;
	size_t n;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, out);
			return 0;
		}
		if (!strcmp(argv[i], "--here")) {
			only_here = true;
		} else if (!strcmp(argv[i], "--json")) {
			as_lines = true;
		} else {
			fprintf(err,
				"harness-audit: sessions: unknown "
				"argument '%s'\n\n%s",
				argv[i], usage);
			return 2;
		}
	}
	if (list_here(only_here ? cwd : NULL, sizeof(cwd), &v, &n, err))
		return 2;
	if (!as_lines)
		fprintf(out, "%-26s %-19s %8s %7s %7s %6s %5s  %-18s %s\n",
			"ID", "START (UTC)", "TIME", "EXIT", "EVENTS", "DENIED",
			"ASKED", "BRANCH", "COMMAND");
	for (size_t i = 0; i < n; i++) {
		json_t *o;

		if (only_here && !here(&v[i], cwd))
			continue;
		if (!as_lines) {
			row(out, &v[i]);
			continue;
		}
		o = as_json(&v[i]);
		json_dumpf(o, out, JSON_COMPACT);
		fputc('\n', out);
		json_decref(o);
	}
	hx_sessions_drop(v, n);
	return 0;
}
