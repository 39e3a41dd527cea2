/* harness-audit compact; see compact_cli.h. */
#define _GNU_SOURCE
#include "tools/compact_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/audit.h"
#include "supervisor/fmt.h"
#include "supervisor/record.h"
#include "supervisor/session.h"
#include "tools/sessions_cli.h"
#include "tools/summary_cli.h"

static const char usage[] =
    "Usage: harness-audit compact [--keep AGE] [--aggregate AGE]\n"
    "                             [--dry-run]\n"
    "\n"
    "Ages your sessions' logs ($XDG_STATE_HOME/harness/sessions) by when\n"
    "they ended:\n"
    "  younger than --keep (default 30d)   left whole\n"
    "  younger than --aggregate (90d)      the log replaced by one\n"
    "                     compacted record: the session's first and last\n"
    "                     records, its counts by category and verdict,\n"
    "                     refusals, top hosts, path prefixes and rules,\n"
    "                     and the removed chain's record count, first and\n"
    "                     last hash; it continues that chain (its prev is\n"
    "                     the last hash), so verify still proves it, and\n"
    "                     the last hash can be checked against a copy,\n"
    "                     the worktree result commit's trailer or a\n"
    "                     collector's\n"
    "  older               the session's directory removed\n"
    "AGE: 30s, 15m, 12h, 7d; --aggregate none: never removed. A running\n"
    "session, one whose log was cut (no session_end), one whose chain is\n"
    "broken, and one whose log is an --audit-log elsewhere are left as\n"
    "they are and said so. --dry-run says what would be done.\n";

struct plan {
	double keep, aggregate; /* seconds; aggregate < 0: never */
	bool dry;
	FILE *out, *err;
	size_t changed;
};

/* An age (hx_fmt_parse_age), or none: -1. */
static int parse_age(const char *s, double *out)
{
	long long v = strcmp(s, "none") ? hx_fmt_parse_age(s) : -1;

	if (v < 0 && strcmp(s, "none"))
		return -1;
	*out = (double)v;
	return 0;
}

static double age_of(json_t *end)
{
	char now[HX_FMT_TIME_LEN];
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return hx_sessions_seconds(hx_record_field(end, "time"),
				   hx_fmt_time(&ts, now, sizeof(now)));
}

/* The compacted record of a verified log: what it stood for. */
static json_t *compacted(const struct hx_sessions_entry *s,
			 const struct hx_audit_verify *v, const struct plan *p)
{
	json_t *sum = hx_summary_json(s->log, 20), *rec;

	if (!sum)
		return NULL;
	rec = json_pack(
	    "{s:s,s:s,s:s,s:O,s:O,s:{s:I,s:s,s:s,s:s,s:s},s:o,s:{s:f,s:f}}",
	    "session", s->id, "event", "compacted", "category", "process",
	    "session_start", s->start, "session_end", s->end, "removed",
	    "records", (json_int_t)v->records, "first_hash", v->first_hash,
	    "last_hash", v->last_hash, "since",
	    hx_record_field(s->start, "time"), "until",
	    hx_record_field(s->end, "time"), "summary", sum, "policy", "keep_s",
	    p->keep, "aggregate_s", p->aggregate);
	return rec;
}

/* The log replaced whole by line: a new file synced, renamed over it,
 * the directory synced. */
static int replace(const char *log, const char *line, size_t len)
{
	char tmp[PATH_MAX], *slash;
	int fd, e = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.compact", log) >=
	    sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -errno;
	if (write(fd, line, len) != (ssize_t)len || fsync(fd))
		e = errno ? -errno : -EIO;
	if (close(fd) && !e)
		e = -errno;
	if (!e && rename(tmp, log))
		e = -errno;
	if (e) {
		unlink(tmp);
		return e;
	}
	if ((slash = strrchr(tmp, '/'))) {
		*slash = '\0';
		if ((fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
			fsync(fd);
			close(fd);
		}
	}
	return 0;
}

static void compact_one(struct plan *p, const struct hx_sessions_entry *s)
{
	struct hx_audit_verify v;
	char hex[65];
	json_t *rec;
	char *line;
	size_t len;
	int e;

	if (hx_audit_verify(s->log, &v) || !v.records) {
		fprintf(p->out,
			"left %s: its chain does not verify (harness-audit "
			"verify %s): a compacted record would vouch for what "
			"cannot be proven\n",
			s->id, s->id);
		return;
	}
	p->changed++;
	if (p->dry) {
		fprintf(p->out, "would compact %s (%llu records)\n", s->id,
			(unsigned long long)v.records);
		return;
	}
	rec = compacted(s, &v, p);
	line = rec ? hx_audit_line(rec, v.last_seq + 1, v.last_hash, &len, hex)
		   : NULL;
	json_decref(rec);
	e = line ? replace(s->log, line, len) : -ENOMEM;
	free(line);
	if (e)
		fprintf(p->err, "harness-audit: compact %s: %s\n", s->id,
			strerror(-e));
	else
		fprintf(p->out, "compacted %s (%llu records into 1)\n", s->id,
			(unsigned long long)v.records);
}

static void remove_one(struct plan *p, const struct hx_sessions_entry *s)
{
	char dir[PATH_MAX], *slash;
	int e;

	snprintf(dir, sizeof(dir), "%s", s->log);
	if (!(slash = strrchr(dir, '/')))
		return;
	*slash = '\0';
	p->changed++;
	if (p->dry) {
		fprintf(p->out, "would remove %s\n", s->id);
		return;
	}
	if ((e = hx_rmtree(dir)))
		fprintf(p->err, "harness-audit: remove %s: %s\n", s->id,
			strerror(-e));
	else
		fprintf(p->out, "removed %s\n", s->id);
}

static void age_one(struct plan *p, const struct hx_sessions_entry *s)
{
	const char *state = hx_sessions_state(s);
	struct stat st;
	double age;

	if (strcmp(state, "ended") && strcmp(state, "compacted")) {
		fprintf(p->out, "left %s: %s\n", s->id, state);
		return;
	}
	/* an --audit-log elsewhere is the user's file, not the state's */
	if (lstat(s->log, &st) || !S_ISREG(st.st_mode)) {
		fprintf(p->out, "left %s: its log is elsewhere\n", s->id);
		return;
	}
	age = age_of(s->end);
	if (age < 0 || age < p->keep)
		return;
	if (p->aggregate >= 0 && age >= p->aggregate)
		remove_one(p, s);
	else if (!s->compacted)
		compact_one(p, s);
}

int hx_compact_cli(int argc, char *const *argv, FILE *out, FILE *err)
{
	struct plan p = {30 * 86400.0, 90 * 86400.0, false, out, err, 0};
	struct hx_sessions_entry *v;
	size_t n;
	int r;

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		double *to = !strcmp(a, "--keep")	 ? &p.keep
			     : !strcmp(a, "--aggregate") ? &p.aggregate
							 : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, out);
			return 0;
		}
		if (!strcmp(a, "--dry-run")) {
			p.dry = true;
		} else if (!to || i + 1 == argc || parse_age(argv[++i], to) ||
			   (to == &p.keep && p.keep < 0)) {
			fprintf(err, "harness-audit: compact: '%s'%s\n\n%s", a,
				to ? ": give an age: 30s, 15m, 12h, 7d" : "",
				usage);
			return 2;
		}
	}
	if (p.aggregate >= 0 && p.aggregate < p.keep) {
		fprintf(err, "harness-audit: compact: --aggregate is shorter "
			     "than --keep\n");
		return 2;
	}
	if ((r = hx_sessions_list(&v, &n))) {
		fprintf(err, "harness-audit: the sessions: %s\n", strerror(-r));
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		age_one(&p, &v[i]);
	hx_sessions_drop(v, n);
	if (!p.changed)
		fprintf(out, "nothing to compact or remove\n");
	return 0;
}
