/* A session's processes as its log tells them (harness-audit tree and
 * export): a process is the pid its records carry (an exec keeps it),
 * its parent the records' ppid, what it ran the argv of each allowed
 * exec no later record takes back (failed, kernel_unconfirmed, revoked
 * naming it), its end its process_exit record; each refused call is kept
 * under it. A pid that exited and comes back is a new process. A
 * process whose parent made no record (a subshell that only forked)
 * goes under the agent's first process, marked lost_parent. */
#ifndef HX_PROCTREE_H
#define HX_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>

struct json_t;

struct hx_ptree_refusal {
	char verdict[8], op[24], what[512], rule[96], time[40];
	long long ask;	 /* its question, or 0 */
	long long count; /* the calls it stands for: past the audit rate,
			  * an audit_overflow group's count, else 1 */
	bool approved;	 /* the question was answered yes */
	struct hx_ptree_refusal *next;
};

struct hx_ptree_proc {
	long long pid, ppid;
	char start[40], end[40]; /* its first and last record's times */
	char *exe;
	struct json_t *images; /* the argv of each exec, oldest first */
	/* the executable each ran (a string, or null): argv[0] is the
	 * caller's word, "git" for /usr/bin/curl by exec -a */
	struct json_t *image_paths;
	/* the seq of each image's exec record (0: none), by which a record
	 * that says it never ran takes it back */
	struct json_t *image_seqs;
	char *last_image; /* the last as the log has it */
	bool exited, closed;
	struct json_t *how; /* exit_code (integer) or signal (string) */
	size_t events, refused;
	struct hx_ptree_refusal *ref, **ref_tail;
	struct hx_ptree_proc *parent, *first_child, *last_child, *next;
	bool lost_parent;
	bool shown;    /* the printer's */
	bool exported; /* the live exporter's (exporter.h) */
};

struct hx_ptree {
	struct hx_ptree_proc **all; /* in the order of their first record */
	size_t n, cap;
	/* pid -> its newest process (open addressing; 0: empty) */
	struct hx_ptree_proc **by_pid;
	size_t slots;
	long long harness_pid;
	struct json_t *session_start, *session_end; /* or NULL */
	/* A log file's check (harness-audit export): 1 it verifies, -1 it
	 * does not; 0 not checked (a live session's own records). */
	int log_verified;
};

/* An argv (a JSON array) as one terminal-safe line, cut at size. */
void hx_argv_line(struct json_t *argv, char *out, size_t size);

/* The paths a record's args name, terminal-safe, into out (cut at
 * size): "PATH", with " (resolved R)" where the call's path_resolved
 * differs, then " -> PATH2" likewise; "" without a path. What the call
 * acted on is the resolved one: a write through a symbolic link in the
 * project to a file outside was shown, and matched, as the link (the
 * eleventh attack review). */
void hx_paths_line(struct json_t *args, char *out, size_t size);

/* One line of a log into t (which starts zeroed): what a reader that
 * follows a log as it grows feeds it. line may be changed. */
void hx_ptree_take_line(struct hx_ptree *t, char *line, size_t n);

/* Reads the log at path into *t (zeroed first). 0 or -errno. */
int hx_ptree_read(struct hx_ptree *t, const char *path);
/* As hx_ptree_read, of session only's records (NULL: all). */
int hx_ptree_read_of(struct hx_ptree *t, const char *path, const char *only);
void hx_ptree_free(struct hx_ptree *t);

#endif
