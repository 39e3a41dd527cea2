/* The agent's rlimits; see rlimits.h. */
#include "supervisor/kernel/rlimits.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/path.h"

static const int resources[HX_LIMIT_COUNT] = {
    [HX_LIMIT_CPU] = RLIMIT_CPU,	   [HX_LIMIT_FILE_SIZE] = RLIMIT_FSIZE,
    [HX_LIMIT_OPEN_FILES] = RLIMIT_NOFILE, [HX_LIMIT_ADDRESS_SPACE] = RLIMIT_AS,
    [HX_LIMIT_CORE] = RLIMIT_CORE,	   [HX_LIMIT_PROCESSES] = RLIMIT_NPROC,
};

void hx_limits_from_policy(const struct hx_policy *p, bool audit,
			   struct hx_limits *out)
{
	uint64_t v;

	out->set = 0;
	out->processes = HX_PROCS_NONE;
	for (int i = 0; i < HX_LIMIT_COUNT; i++) {
		/* Audit mode limits nothing but the process count, which
		 * protects the harness itself. */
		if (audit && i != HX_LIMIT_PROCESSES)
			continue;
		if (!hx_policy_limit(p, (enum hx_limit)i, &v))
			continue;
		out->set |= 1u << i;
		out->value[i] = v >= RLIM_INFINITY ? RLIM_INFINITY - 1 : v;
	}
}

/* The tasks (threads included) whose real uid is ours: RLIMIT_NPROC
 * counts them all, not the session's alone. */
static rlim_t user_tasks(void)
{
	DIR *d = opendir("/proc"), *t;
	struct dirent *de, *te;
	char path[64];
	struct stat st;
	rlim_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/task", de->d_name);
		if (stat(path, &st) || st.st_uid != getuid())
			continue;
		if (!(t = opendir(path)))
			continue;
		while ((te = readdir(t)))
			n += te->d_name[0] != '.';
		closedir(t);
	}
	closedir(d);
	return n;
}

void hx_limits_processes(struct hx_limits *l, bool cgroup, bool own_ns)
{
	unsigned bit = 1u << HX_LIMIT_PROCESSES;

	if (!(l->set & bit))
		return;
	l->count = l->value[HX_LIMIT_PROCESSES];
	if (cgroup) {
		l->processes = HX_PROCS_CGROUP;
		l->set &= ~bit; /* pids.max holds it */
	} else if (getuid() != 0 && own_ns) {
		/* Not before the namespace: made then, it would take the
		 * limit as its bound on the user's tasks outside. */
		l->processes = HX_PROCS_RLIMIT;
		l->nproc_in_ns = true;
		l->set &= ~bit;
	} else if (getuid() != 0) {
		l->processes = HX_PROCS_RLIMIT;
		/* Threads harness-exec starts later (user-notify workers,
		 * the exec gate, the resolver) count too: they come out
		 * of the agent's share, which errs on the safe side. */
		l->value[HX_LIMIT_PROCESSES] += user_tasks();
	} else {
		/* The kernel exempts uid 0 from RLIMIT_NPROC. */
		l->processes = HX_PROCS_NONE;
		l->set &= ~bit;
	}
}

void hx_limits_raise_nofile(struct hx_limits *l)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur >= r.rlim_max)
		return;
	l->nofile_soft = r.rlim_cur;
	r.rlim_cur = r.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &r))
		l->nofile_soft = 0;
}

/* res as soft and hard limit v, never above the hard one it has. */
static int set_limit(int res, rlim_t v)
{
	struct rlimit cur, want;

	if (getrlimit(res, &cur))
		return -errno;
	want.rlim_max = v < cur.rlim_max ? v : cur.rlim_max;
	want.rlim_cur = want.rlim_max;
	return setrlimit(res, &want) ? -errno : 0;
}

/* The kernel counts queued signals and message queue bytes per user,
 * whatever the process: an agent that filled them left the user's other
 * programs without (sigqueue's EAGAIN, mq_open's ENOMEM) until its
 * queues went. Half of each is the session's. */
static int spare_user_counts(void)
{
	static const int res[] = {RLIMIT_SIGPENDING, RLIMIT_MSGQUEUE};
	struct rlimit cur;
	int e;

	for (size_t i = 0; i < sizeof(res) / sizeof(*res); i++)
		if (!getrlimit(res[i], &cur) && cur.rlim_max != RLIM_INFINITY &&
		    (e = set_limit(res[i], cur.rlim_max / 2)))
			return e;
	return 0;
}

int hx_limits_apply(const struct hx_limits *l, const char **what)
{
	struct rlimit cur;
	int e;

	*what = "queued signals and message queues";
	if ((e = spare_user_counts()))
		return e;

	*what = hx_limit_name(HX_LIMIT_OPEN_FILES);
	if (l->nofile_soft && !getrlimit(RLIMIT_NOFILE, &cur)) {
		cur.rlim_cur = l->nofile_soft;
		if (setrlimit(RLIMIT_NOFILE, &cur))
			return -errno;
	}

	for (int i = 0; i < HX_LIMIT_COUNT; i++) {
		if (!(l->set & (1u << i)))
			continue;
		*what = hx_limit_name((enum hx_limit)i);
		if ((e = set_limit(resources[i], l->value[i])))
			return e;
	}
	return 0;
}

/* The host's per-user count in file host, halved, as the session
 * namespace's own in file ns (system calls only: in the child). Best
 * effort: it spares the user's other programs, it bounds no policy. */
static void halve_count(const char *host, const char *ns)
{
	char buf[24];
	long v = 0;
	int fd = open(host, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	size_t k;

	if (fd >= 0)
		close(fd);
	for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		v = v * 10 + (buf[i] - '0');
	if (n <= 0 || v <= 0 || v > 1L << 30)
		return; /* unknown: the host's own limit holds alone */
	k = hx_utoa((uint64_t)(v / 2 ? v / 2 : 1), buf);
	fd = open(ns, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, buf, k) < 0) {
			/* the host's own limit holds alone */
		}
		close(fd);
	}
}

int hx_limits_apply_in_ns(const struct hx_limits *l, bool in_ns)
{
	/* In the user's own user namespace (its root until the capabilities
	 * go), the kernel's per-user inotify counts are the namespace's
	 * too, and charged to the user's: half of each for the session,
	 * the rest the user's other programs' (an agent took all 128
	 * instances, and every inotify_init outside failed with EMFILE
	 * until the session ended). */
	if (in_ns && geteuid() != 0) {
		halve_count("/proc/sys/fs/inotify/max_user_instances",
			    "/proc/sys/user/max_inotify_instances");
		halve_count("/proc/sys/fs/inotify/max_user_watches",
			    "/proc/sys/user/max_inotify_watches");
	}
	if (!l->nproc_in_ns)
		return 0;
	/* Without a namespace of its own after all: the user's tasks. */
	return set_limit(RLIMIT_NPROC,
			 in_ns ? l->count : l->count + user_tasks());
}

json_t *hx_limits_json(const struct hx_limits *l)
{
	static const char *const how[] = {
	    [HX_PROCS_NONE] = "none",
	    [HX_PROCS_CGROUP] = "cgroup",
	    [HX_PROCS_RLIMIT] = "rlimit",
	};
	json_t *o = json_object();

	for (int i = 0; o && i < HX_LIMIT_COUNT; i++)
		if (i != HX_LIMIT_PROCESSES && (l->set & (1u << i)))
			json_object_set_new(
			    o, hx_limit_name((enum hx_limit)i),
			    json_integer((json_int_t)l->value[i]));
	if (o && l->count) {
		json_object_set_new(o, "processes",
				    json_integer((json_int_t)l->count));
		json_object_set_new(o, "processes_by",
				    json_string(how[l->processes]));
		if (l->processes == HX_PROCS_RLIMIT) {
			json_object_set_new(
			    o, "nproc_rlimit",
			    json_integer(
				(json_int_t)(l->nproc_in_ns
						 ? l->count
						 : l->value
						       [HX_LIMIT_PROCESSES])));
			/* Whose tasks it counts: the session's alone in its
			 * own user namespace, else every task of the user. */
			json_object_set_new(
			    o, "nproc_counts",
			    json_string(l->nproc_in_ns ? "session" : "user"));
		}
	}
	return o;
}
