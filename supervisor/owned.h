/* What is the session's own and what is a neighbour's (issue 10, class
 * 4): a service of the user's outside the sandbox obeys the user's uid,
 * which the agent has, so a place-based list of sockets always misses
 * one (tmux -S /tmp/x, ssh-agent -a, a user's postgres). The owner does
 * not: a unix socket belongs to who bound it, a /dev/shm file (POSIX
 * shared memory and semaphores of every process, one tmpfs for the
 * machine) to who made it. The kernel layer sees every bind and create
 * of the session and records their inodes here; a socket of the agent's
 * uid, or a /dev/shm file of anyone's, that is not recorded is a
 * neighbour's (harness:neighbour), whatever rule allowed its place. Only with
 * the kernel layer, which sees every bind; a ring, so one forgotten is refused,
 * which fails safe. Thread-safe. */
#ifndef HX_OWNED_H
#define HX_OWNED_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

struct hx_owned;

int hx_owned_new(struct hx_owned **out);
void hx_owned_free(struct hx_owned *o);

/* Records the file name names in the directory dirfd (dirfd itself when
 * name is ""): the session made it. */
void hx_owned_add(struct hx_owned *o, int dirfd, const char *name);

/* Whether the unix socket at path (symlinks resolved) serves a process
 * of uid that no process of the session bound. *st gets what was judged
 * (st_ino 0: no socket there), which the kernel layer checks again on
 * what it connects. As root, /run, /var/run (but the users' runtime
 * dirs) and /dev/log are the system's daemons', left to the policy's
 * lists. */
bool hx_owned_neighbour_socket(struct hx_owned *o, uid_t uid, const char *path,
			       struct stat *st);

/* Whether path (its last name not followed: removing a symlink is the
 * agent's) is a neighbour's socket file (hx_owned_neighbour_socket)
 * where the rule of p that would let the agent connect to it does not
 * say neighbours: true. Such a socket is not the agent's to remove or
 * rename over either: with it gone, a socket the agent binds there is
 * the one the service's clients outside the session reach (the user's
 * git handed its password to an agent that had replaced git's
 * credential cache's socket). A policy that gives the agent the
 * neighbours there gives it their names too. */
struct hx_policy;
bool hx_owned_neighbour_name(struct hx_owned *o, const struct hx_policy *p,
			     uid_t uid, const char *path);

/* Whether path in /dev/shm is a file the session did not make, whoever
 * owns it. *fresh: no file there (what the call makes is the
 * session's). */
bool hx_owned_neighbour_shm(struct hx_owned *o, const char *path, bool *fresh);

/* The same anywhere (not followed): whether path is a file the session
 * did not make, for a place whose rule says own_files (another session's
 * of the same agent outside the harness sources its files there). */
bool hx_owned_foreign_file(struct hx_owned *o, const char *path, bool *fresh);

/* At the session's end, its tree gone: removes from /dev/shm every file
 * the session made there (the machine's one tmpfs, in memory: a file
 * left there held half of the machine's memory past the session, and
 * a name left there is the one a program of the user's opens next).
 * The first HX_OWNED_SHM_MAX are known; *left: more were made. Returns
 * how many were removed. */
#define HX_OWNED_SHM_MAX 65536
size_t hx_owned_sweep_shm(struct hx_owned *o, bool *left);

#endif
