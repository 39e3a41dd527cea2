/* Processes as /proc shows them: the one place that parses
 * /proc/<pid>/stat and /proc/<tid>/status and reads an exe link, the
 * tree below a process, and signals that reach exactly the process a
 * scan saw. */
#ifndef HX_PROC_H
#define HX_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct hx_procstat {
	char state;	  /* R, S, Z... */
	pid_t ppid, pgrp; /* its parent, its process group */
	pid_t session;
	unsigned tty_nr; /* its controlling terminal's device, 0: none */
	int threads;
	unsigned long long starttime; /* clock ticks after boot */
	/* CPU time in clock ticks: its own, and its waited-for children's */
	unsigned long long utime, stime, cutime, cstime;
	long rss; /* resident pages */
};

/* Fills *st for pid. Returns 0, or -errno (-ESRCH when it is gone,
 * -EBADMSG when the line does not parse). */
int hx_proc_stat(pid_t pid, struct hx_procstat *st);
/* The same from a stat line's text (NUL-terminated): 0 or -EBADMSG. */
int hx_proc_stat_parse(const char *buf, struct hx_procstat *st);

/* A wait status as a shell says it: the exit code, 128+N for signal N,
 * else 2. */
int hx_proc_exit_code(int status);

/* path (absolute) as the supervisor reaches what thread tid of pid
 * names by it: its /proc/self and /proc/thread-self are pid's and tid's
 * (tid 0: pid), and so are /dev/fd, /dev/stdin, /dev/stdout and
 * /dev/stderr (links into /proc/self/fd), the supervisor's own are not.
 * Into out, cut to size. */
void hx_proc_self_path(pid_t pid, pid_t tid, const char *path, char *out,
		       size_t size);

/* pid's parent, or 0 when pid is gone. */
pid_t hx_proc_ppid(pid_t pid);
/* Whether pid is ancestor or one of its descendants (by parent links). */
bool hx_proc_descends(pid_t pid, pid_t ancestor);

/* hx_proc_descends, for pid pinned by pidfd (-1: not pinned): false when
 * it was reaped meanwhile, whose number may be another process's. */
bool hx_proc_descends_pinned(pid_t pid, int pidfd, pid_t ancestor);

/* What /proc/<tid>/status says of a thread (14 us on a small VM: read
 * it once per need). */
struct hx_procstatus {
	pid_t tgid, ppid, tracer; /* tracer: TracerPid, 0 untraced */
	uid_t uid;		  /* real */
	mode_t umask;
	int filters; /* Seccomp_filters (Linux 5.9), -1 unknown */
};

/* Fills *st for tid. Returns 0, or -errno (-EIO: unreadable, gone). */
int hx_proc_status(pid_t tid, struct hx_procstatus *st);

/* tid's signal masks (bit N-1 for signal N), from the same file. */
struct hx_procsignals {
	int threads; /* of its process */
	unsigned long long pending, shared, blocked, ignored, caught;
};
int hx_proc_signals(pid_t tid, struct hx_procsignals *sg);

/* Whether pid is under more seccomp filters than self_filters (this
 * process's, hx_proc_status of getpid()): a process of the agent's,
 * which inherits ours, adds the sandbox's and can never drop one; not a
 * helper harness-exec forked nor a hook it spawned, whatever image they
 * run (an agent's process running harness-exec's own binary is still
 * the agent's). Unknown (a kernel without the count): true. */
bool hx_proc_confined(pid_t pid, int self_filters);
/* The same judgement of a status already read. */
bool hx_proc_status_confined(const struct hx_procstatus *st, int self_filters);

/* pid's executable (/proc/<pid>/exe, or a thread's while its leader is
 * a zombie) into out, "" when unreadable. Returns its length, or -1. */
ssize_t hx_proc_exe(pid_t pid, char *out, size_t size);
/* The same of its working directory (/proc/<pid>/cwd; a thread's with
 * a tid). */
ssize_t hx_proc_cwd(pid_t pid, char *out, size_t size);
/* /proc/<pid>/cmdline (NUL-separated), at most cap bytes (more: *len =
 * cap + 1); free it. NULL when unreadable. */
char *hx_proc_cmdline(pid_t pid, size_t cap, size_t *len);
/* The same of /proc/<pid>/environ: the environment the kernel copied
 * at its exec (until the program changes that memory). */
char *hx_proc_environ(pid_t pid, size_t cap, size_t *len);

/* A namespace's identity (its nsfs inode). */
struct hx_nsid {
	dev_t dev;
	ino_t ino;
};

/* pid's namespace of kind ns ("mnt", "user"; pid 0: this process's).
 * Returns 0, or -errno (-ENOENT: gone). */
int hx_proc_ns(pid_t pid, const char *ns, struct hx_nsid *out);

/* A process a scan saw: its pid names it only as long as it lives. */
struct hx_proc {
	pid_t pid;
	unsigned long long starttime;
};

/* The living descendants of root (not zombies), breadth first; fills up
 * to max into out and returns the count. */
size_t hx_proc_descendants(pid_t root, struct hx_proc *out, size_t max);

/* hx_proc_descendants of harness-exec (getpid()) that are the agent's:
 * those carrying more seccomp filters than harness-exec (the agent's
 * first process installs them before its exec, unconditionally, and no
 * process sheds one), not its own helpers and hooks (the masks'
 * binder, the connectors), which it stops itself. All of them when the
 * kernel does not say (before Linux 5.9). */
size_t hx_proc_agent_descendants(struct hx_proc *out, size_t max);

/* Sends sig to p through a pidfd, only when the process the pidfd names
 * started when the scan's did: a pid recycled since is never hit.
 * true: it went to a process that is not a zombie. */
bool hx_proc_signal(const struct hx_proc *p, int sig);

/* A pidfd on pid, its start time in *p: the process a number named when
 * it was checked, whatever the number names later. -1 when it is gone. */
int hx_proc_pin(pid_t pid, struct hx_proc *p);

/* Whether the process that connected sock (its SO_PEERCRED pid) is still
 * the one its pid names, after a look at it by that number: its pidfd
 * (SO_PEERPIDFD, Linux 6.5) still unreaped. Reaped since it connected,
 * its number may be any process's: false. true before 6.5 (unpinned). */
bool hx_proc_peer_still(int sock);

/* sig to a child of ours through its pidfd (by its number where there
 * is none): once reaped, its number may be another process's. */
int hx_proc_kill(int pidfd, pid_t pid, int sig);

/* Whether the process pidfd pins (hx_proc_pin) is p and has not been
 * reaped: its number still names it, for a /proc scan by that number. */
bool hx_proc_pinned(int pidfd, const struct hx_proc *p);

/* sig to the process group whose id is the number of the process pidfd
 * pins (p): the group's members keep that number from being given to
 * another, so even once its leader is gone no other group is hit.
 * true: it went to one at least. */
bool hx_proc_signal_group(int pidfd, const struct hx_proc *p, int sig);

#endif
