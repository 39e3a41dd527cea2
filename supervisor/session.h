/* A session: its id, its directories, its socket path and the private
 * TMPDIR of the agent, plus the globs the policy must protect.
 *
 * Lifecycle: hx_session_init (pure, fills names) -> hx_session_create
 * (makes the directories) -> ... -> hx_session_cleanup (removes the
 * private TMPDIR and the socket; the session dir with the log stays). */
#ifndef HX_SESSION_H
#define HX_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define HX_SESSION_ID_MAX   64
#define HX_SESSION_NPROTECT 16
/* The globs of every other session's tmp_root: two per byte of the id */
#define HX_SESSION_NOTHERS (2 * HX_SESSION_ID_MAX)
#define HX_SESSION_NFILES  8
/* <state>/live/<id>: a running session's own files, NUL-separated */
#define HX_SESSION_LIVE "live"

struct hx_session {
	char id[HX_SESSION_ID_MAX + 1];
	char state_dir[PATH_MAX];  /* $XDG_STATE_HOME/harness */
	char dir[PATH_MAX];	   /* <state>/sessions/<id> */
	char audit_path[PATH_MAX]; /* default <dir>/audit.jsonl */
	char sock_path[108];	   /* fits sun_path */
	char ask_path[108];	   /* the ask socket (ask.h) */
	char run_dir[PATH_MAX];	   /* /tmp/harness-<uid> */
	char tmp_root[PATH_MAX];   /* <run_dir>/<id> */
	char tmpdir[PATH_MAX];	   /* <tmp_root>/tmp: the agent's TMPDIR */
	bool created_tmp;
	int tmp_lock; /* tmp_root's lock file, flocked while it lives */
	int run_fd;   /* run_dir, checked ours (hx_session_create) */
	/* protect globs (escaped) and the pointers handed to the policy */
	char protect_buf[HX_SESSION_NPROTECT][PATH_MAX + 8];
	char others_buf[HX_SESSION_NOTHERS][HX_SESSION_ID_MAX + 48];
	const char *protect[HX_SESSION_NPROTECT + HX_SESSION_NOTHERS];
	size_t nprotect, nbuf, nothers;
	/* The files of the session's outside its session dir (an
	 * --audit-log, a --metrics-file, a socket), for every other
	 * session to refuse its agent too (hx_session_register). */
	char files[HX_SESSION_NFILES][PATH_MAX];
	size_t nfiles;
	bool registered;
};

/* True when name is a valid session name: [A-Za-z0-9._-]{1,64}, not "."
 * or "..". */
bool hx_session_name_valid(const char *name);

/* The name of session's checkpoint n's ref into buf ("refs/harness/
 * SESSION/checkpoints/N": the worktree's, and harness-mcp's diff and
 * restore); 0 or -ENAMETOOLONG. */
int hx_session_checkpoint_ref(const char *session, unsigned n, char *buf,
			      size_t size);

/* A new unique id "YYYYMMDDTHHMMSSZ-<6 hex>" into buf (>= 24 bytes). */
int hx_session_new_id(char *buf, size_t size);

/* The user's harness state dir: $XDG_STATE_HOME/harness, else
 * $HOME/.local/state/harness. 0 or -ENAMETOOLONG. */
int hx_session_state_dir(char *out, size_t size);

/* Fills s: id (name, or a new one), every path (audit_log overrides the
 * default audit path when not NULL), and the protect globs (which also
 * cover policy_path when not NULL). Reads the environment (HOME,
 * XDG_STATE_HOME); creates nothing. Returns 0, -EINVAL for a bad name,
 * -ENAMETOOLONG. */
int hx_session_init(struct hx_session *s, const char *name,
		    const char *audit_log, const char *policy_path);

/* Moves the socket to the run dir (/tmp/harness-<uid>/<id>.sock), for a
 * shim that connects by path itself (--no-kernel-notify): the session
 * directory is masked in the agent's view when it lies in a write root,
 * and nothing beneath a mask can be reached. 0 or -ENAMETOOLONG,
 * -ENOSPC. */
int hx_session_sock_in_run_dir(struct hx_session *s);

/* Protects one more file of the harness (made absolute from the cwd).
 * 0, -ENOSPC when HX_SESSION_NPROTECT are, -ENAMETOOLONG. */
int hx_session_protect(struct hx_session *s, const char *path);

/* Notes path (absolute) as one of the session's own files that other
 * sessions' agents must not write: 0 or -ENOSPC. */
int hx_session_note_file(struct hx_session *s, const char *path);

/* Writes <state>/live/<id>, the files noted, for the other sessions'
 * pipelines (pipeline_sessions.c); removed by hx_session_cleanup.
 * 0 or -errno. */
int hx_session_register(struct hx_session *s);

/* Creates the state and session dirs (0700; -EEXIST when the session dir
 * already exists) and the private TMPDIR under a /tmp/harness-<uid> dir
 * that must be ours and 0700 (-EPERM otherwise). The TMPDIR's parent is
 * flocked for the session's life; one no session holds, left by a
 * harness-exec that was killed, is removed there with its socket. */
int hx_session_create(struct hx_session *s);

/* Removes the private TMPDIR tree (no symlink is followed, no other
 * mount is entered) and the socket. Returns 0 or the first -errno. */
int hx_session_cleanup(struct hx_session *s);

/* Removes a directory tree (or the file) at path: no symlink in it is
 * followed, no other file system entered, and a process writing in it
 * meanwhile cannot steer the removal elsewhere (openat and unlinkat
 * from directories held open). 0, or the first -errno; what could not
 * be removed stays. supervisor/rmtree.c. */
int hx_rmtree(const char *path);

/* hx_rmtree of name in the directory open at dfd, name not followed
 * either: for a tree whose parent directory was opened and checked. */
int hx_rmtree_at(int dfd, const char *name);

#endif
