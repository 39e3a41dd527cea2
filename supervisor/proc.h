/* Processes as /proc shows them: the one place that parses
 * /proc/<pid>/stat, the tree below a process, and signals that reach
 * exactly the process a scan saw. */
#ifndef HX_PROC_H
#define HX_PROC_H

#include <stddef.h>
#include <sys/types.h>

struct hx_procstat {
	char state; /* R, S, Z... */
	pid_t ppid;
	int threads;
	unsigned long long starttime; /* clock ticks after boot */
};

/* Fills *st for pid. Returns 0, or -errno (-ESRCH when it is gone,
 * -EBADMSG when the line does not parse). */
int hx_proc_stat(pid_t pid, struct hx_procstat *st);

/* pid's parent, or 0 when pid is gone. */
pid_t hx_proc_ppid(pid_t pid);

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

/* Sends sig to p through a pidfd, only when the process the pidfd names
 * started when the scan's did: a pid recycled since is never hit. */
void hx_proc_signal(const struct hx_proc *p, int sig);

#endif
