/* The agent's kernel set-up; see sandbox.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/sandbox.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/securebits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/policy.h"
#include "supervisor/kernel/caps.h"
#include "supervisor/kernel/features.h"
#include "supervisor/kernel/ipool.h"
#include "supervisor/kernel/ipcns.h"
#include "supervisor/kernel/devbound.h"
#include "supervisor/kernel/landlock.h"
#include "supervisor/kernel/landlock_tree.h"
#include "supervisor/kernel/maskfs.h"
#include "supervisor/kernel/masks.h"
#include "supervisor/kernel/oomshield.h"
#include "supervisor/kernel/maskwatch.h"
#include "supervisor/kernel/rlimits.h"
#include "supervisor/kernel/seccomp_deny.h"
#include "supervisor/kernel/terminals.h"
#include "supervisor/server.h"

#define CAP_MAX 63

struct hx_sandbox {
	/* Second mounts (hx_policy_vars.alias_*): a project root's other
	 * name is walked for masks too. Borrowed. */
	const char *const *alias_from, *const *alias_to;
	size_t nalias;
	char alias_roots[2][PATH_MAX];
	struct hx_features k;
	struct hx_seccomp_prog *prog;
	struct hx_landlock *ll;
	enum hx_mode mode;
	int last_cap;	  /* /proc/sys/kernel/cap_last_cap */
	int handoff;	  /* child's end of the listener socketpair, or -1 */
	bool exec_gate;	  /* execve/execveat notified (execgate.h) */
	bool trace_reads; /* every open notified, read-only ones too */
	bool ready;	  /* hx_sandbox_ready said yes: the child may enter */
	/* The Landlock ruleset is derived on a thread while the rest is
	 * set up: its directory walk takes milliseconds (landlock_tree.h). */
	bool ll_pending;
	pthread_t ll_thread;
	const struct hx_policy *policy;
	struct hx_policy_vars vars;
	bool describe; /* the ruleset's text made, for --verbose */
	int ll_err;
	char ll_msg[256];
	struct hx_limits limits; /* enforce mode: the policy's rlimits */
	/* Denied files inside write roots, found on a thread (masks.h). */
	struct hx_masks_job *masks_job;
	struct hx_masks *masks;
	bool masks_truncated;
	/* Why every open is decided in place of the masks, or "" */
	char reads_for_masks[128];
	int watch_err; /* hx_maskwatch_new's (the user's inotify count) */
	int masks_err; /* why they are not applied, or 0 */
	/* The masks as FUSE file systems that record who looks (maskfs.h),
	 * or NULL: then mask_records_err says why. */
	struct hx_maskfs *maskfs;
	int mask_records_err;
	size_t held_masks; /* of them, Landlock's refused files and dirs */
	/* Nodes of the FUSE masks kept after them for held paths not there
	 * at start (hx_landlock_absent, borrowed from ll), granted in the
	 * child and bound when the file appears. */
	const char **absent;
	size_t nabsent;
	/* What is made in the project later, masked as it appears
	 * (maskwatch.h); NULL without FUSE masks. */
	struct hx_maskwatch *watch;
	struct hx_source watch_src;
	struct hx_server *srv;
	char mask_dir[PATH_MAX]; /* the session's, where the covers are */
	bool quiet;
	/* Landlock's refusals are read as audit records (kaudit.h): the
	 * child asks for them and makes one refusal first, a signal to
	 * ll_probe (harness-exec, outside its domain), which names its
	 * domain to the reader. 0: not read. */
	pid_t ll_probe;
};

/* With these set and locked, uid 0 is just a uid: exec grants no
 * capabilities, setuid() keeps none, and nothing can undo the bits. */
#define SECBITS                                                                \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |       \
	 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |             \
	 SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

static int read_last_cap(void)
{
	char buf[16] = "";
	int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	int v;

	if (fd >= 0)
		close(fd);
	/* Unknown: try every bit; PR_CAPBSET_DROP says EINVAL past the
	 * last one, which the child treats as the end. */
	if (n <= 0 || sscanf(buf, "%d", &v) != 1 || v < 0 || v > CAP_MAX)
		return CAP_MAX;
	return v;
}

static void warn(bool quiet, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warn(bool quiet, const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	fputs("harness-exec: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *derive_landlock(void *arg)
{
	struct hx_sandbox *sb = arg;

	sb->ll_err =
	    hx_landlock_prepare(sb->policy, &sb->vars, sb->describe, &sb->ll,
				sb->ll_msg, sizeof(sb->ll_msg));
	return NULL;
}

/* Without Landlock in the kernel there is nothing to derive (sb->ll
 * stays NULL, as hx_landlock_prepare would leave it). */
static int start_landlock(struct hx_sandbox *sb, const struct hx_policy *p,
			  const struct hx_policy_vars *vars, char *err,
			  size_t errlen)
{
	int e;

	if (hx_landlock_abi() <= 0)
		return 0;
	sb->policy = p;
	sb->vars = *vars;
	e = pthread_create(&sb->ll_thread, NULL, derive_landlock, sb);
	if (e) {
		snprintf(err, errlen, "landlock thread: %s", strerror(e));
		return -e;
	}
	sb->ll_pending = true;
	return 0;
}

int hx_sandbox_prepare(const struct hx_policy *p,
		       const struct hx_policy_vars *vars, enum hx_mode mode,
		       bool quiet, bool describe, struct hx_sandbox **out,
		       char *err, size_t errlen)
{
	struct hx_sandbox *sb = calloc(1, sizeof(*sb));
	int e;

	*out = NULL;
	if (!sb) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	sb->mode = mode;
	sb->quiet = quiet;
	sb->describe = describe;
	sb->handoff = -1;
	sb->alias_from = vars->alias_from;
	sb->alias_to = vars->alias_to;
	sb->nalias = vars->nalias;
	/* Asked before the derivation starts (harness-exec asks earlier
	 * still, while it parses the policy), the answer kept: with the
	 * derivation's walk on the other CPU, copying the mount table took
	 * 2-3 ms, not 0.2. */
	if (mode == HX_MODE_ENFORCE && geteuid() != 0)
		hx_sandbox_userns_probe();
	if (mode == HX_MODE_ENFORCE &&
	    (e = start_landlock(sb, p, vars, err, errlen)))
		goto fail;
	hx_features_probe(&sb->k, false);
	sb->last_cap = read_last_cap();
	if (!sb->k.seccomp || !sb->k.nnp) {
		snprintf(err, errlen,
			 "the kernel has no %s: the static deny list cannot "
			 "hold (see harness-exec --doctor)",
			 sb->k.nnp ? "seccomp filter" : "no_new_privs");
		e = -ENOSYS;
		goto fail;
	}
	e = hx_seccomp_build(&sb->prog, err, errlen);
	if (e)
		goto fail;
	hx_limits_from_policy(p, mode == HX_MODE_AUDIT, &sb->limits);
	if (mode == HX_MODE_ENFORCE) {
		if (!sb->ll_pending)
			warn(quiet,
			     "landlock missing (ABI %d): file and TCP access "
			     "are bounded only by the shim, which a static "
			     "binary skips",
			     sb->k.landlock_abi);
	}
	if (sb->k.user_notif && !sb->k.notify_killable)
		warn(quiet, "no WAIT_KILLABLE_RECV (before 5.19): a signal "
			    "restarts a call being decided, which is then "
			    "recorded (and asked) again");
	if (!sb->k.cap_setpcap && sb->k.root)
		warn(quiet, "root without CAP_SETPCAP: the bounding set and "
			    "securebits cannot be locked; no_new_privs still "
			    "stops setuid and file capabilities");
	*out = sb;
	return 0;
fail:
	hx_sandbox_free(sb);
	return e;
}

/* The other name of root (or of a part of it) through a second mount,
 * into out (to's glob escapes undone); false: none. */
static bool alias_root(const char *root, const char *from, const char *to,
		       char *out, size_t size)
{
	size_t n = strlen(from), k = 0;
	const char *rest = "";

	if (!strncmp(root, from, n) && (root[n] == '/' || !root[n]))
		rest = root + n; /* the root is beneath the mount's root */
	else if (strncmp(from, root, strlen(root)) || from[strlen(root)] != '/')
		return false; /* else a part of the root mounted elsewhere */
	for (; *to && k + 1 < size; to++) {
		if (*to == '\\' && to[1])
			to++;
		out[k++] = *to;
	}
	out[k] = '\0';
	if (k + strlen(rest) >= size)
		return false;
	strcat(out, rest);
	return true;
}

int hx_sandbox_find_masks(struct hx_sandbox *sb, const char *const *roots,
			  size_t nroots, const char *mask_dir,
			  const char *quiet_dir)
{
	const char *all[4];
	size_t n = 0, extra = 0;

	if (sb->mode != HX_MODE_ENFORCE || sb->trace_reads)
		return 0; /* nothing is held, or every open is decided */
	/* A second mount of the project shows its masked files unmasked:
	 * walked as the project is (the rules are rebased onto it). */
	for (size_t i = 0; i < nroots && n < 4; i++)
		all[n++] = roots[i];
	for (size_t i = 0; i < nroots; i++)
		for (size_t a = 0; a < sb->nalias && n < 4 && extra < 2; a++)
			if (alias_root(roots[i], sb->alias_from[a],
				       sb->alias_to[a], sb->alias_roots[extra],
				       PATH_MAX))
				all[n++] = sb->alias_roots[extra++];
	roots = all;
	nroots = n;
	snprintf(sb->mask_dir, sizeof(sb->mask_dir), "%s", mask_dir);
	/* Masks made later need the FUSE root to bind from. */
	sb->mask_records_err = hx_maskfs_probe();
	if (!sb->mask_records_err &&
	    (sb->watch_err = hx_maskwatch_new(sb->policy, &sb->watch)))
		sb->watch = NULL;
	if (sb->watch && quiet_dir && hx_maskwatch_quiet(sb->watch, quiet_dir))
		return -ENOMEM;
	return hx_masks_start(sb->policy, roots, nroots, mask_dir,
			      HX_MASKS_MAX_ENTRIES, sb->watch, &sb->masks_job);
}

static int probe_child(void *arg)
{
	(void)arg;
	return 0;
}

/* A child is made in new ones, or not. Cloned into our memory, and we
 * wait (CLONE_VFORK): a fork copied every page table. Asked once. */
int hx_sandbox_userns_probe(void)
{
	static char stack[4096] __attribute__((aligned(16)));
	static int known = 1;
	pid_t pid;
	int st;

	if (known <= 0)
		return known;
	pid = clone(probe_child, stack + sizeof(stack),
		    CLONE_VM | CLONE_VFORK | CLONE_NEWUSER | CLONE_NEWNS |
			SIGCHLD,
		    NULL);
	if (pid < 0)
		known = -EPERM;
	else
		known = waitpid(pid, &st, 0) == pid ? 0 : -ECHILD;
	return known;
}

/* The masks as FUSE file systems (maskfs.h). */
static int serve_masks_so(struct hx_sandbox *sb)
{
	size_t n = hx_masks_count(sb->masks);
	const char **paths = calloc(n + sb->nabsent, sizeof(*paths));
	bool *dirs = calloc(n + sb->nabsent, sizeof(*dirs));
	int e = -ENOMEM;

	if (paths && dirs) {
		for (size_t i = 0; i < n; i++) {
			paths[i] = hx_masks_path(sb->masks, i);
			dirs[i] = hx_masks_is_dir(sb->masks, i);
		}
		for (size_t i = 0; i < sb->nabsent; i++)
			paths[n + i] = sb->absent[i];
		e = hx_maskfs_new(paths, dirs, n + sb->nabsent, &sb->maskfs);
	}
	free(paths);
	free(dirs);
	return e;
}

/* The held masks from had on, watched under their names (maskwatch.h):
 * one dropped with its file (renamed over, removed and made again) is
 * bound again, else Landlock refused its reads with no record. Not one
 * beneath a directory mask: the bind would look up in that mask. */
static bool beneath_dir_mask(const struct hx_masks *m, const char *p)
{
	size_t n = hx_masks_count(m);

	for (size_t k = 0; k < n; k++)
		if (hx_masks_is_dir(m, k) && strcmp(p, hx_masks_path(m, k)) &&
		    hx_ll_within(p, hx_masks_path(m, k)))
			return true;
	return false;
}

static void hold_watched(struct hx_sandbox *sb, size_t had)
{
	size_t n = hx_masks_count(sb->masks), k = 0, files;
	const char *const *absent;
	size_t nabsent;

	for (size_t i = had; sb->watch && i < n; i++)
		if (!beneath_dir_mask(sb->masks, hx_masks_path(sb->masks, i)))
			hx_maskwatch_hold(sb->watch,
					  hx_masks_path(sb->masks, i));
	/* The absent ones, watched; a file's gets a node, kept in order
	 * after the masks (a directory's mask needs no grant: its
	 * look-ups reach the node). */
	nabsent = hx_landlock_absent(sb->ll, &absent, &files);
	if (!sb->watch || !n || !nabsent ||
	    !(sb->absent = calloc(nabsent, sizeof(*sb->absent))))
		return;
	for (size_t i = 0; i < nabsent; i++)
		if (!beneath_dir_mask(sb->masks, absent[i]) &&
		    !hx_maskwatch_hold(sb->watch, absent[i]) && i < files)
			sb->absent[k++] = absent[i];
	sb->nabsent = k;
}

/* Landlock's refusals read (kaudit.h): no held masks, but their names
 * are watched all the same, so that one the user's tool re-points by a
 * symlink to a file Landlock grants (a dotfile manager's new target) is
 * masked on its name; Landlock refuses that node (no grant), on record. */
static void watch_held_names(struct hx_sandbox *sb)
{
	const char *const *paths;
	size_t n = hx_landlock_held(sb->ll, &paths), files;

	for (size_t i = 0; sb->watch && i < n; i++)
		hx_maskwatch_hold(sb->watch, paths[i]);
	n = hx_landlock_absent(sb->ll, &paths, &files);
	for (size_t i = 0; sb->watch && i < n; i++)
		hx_maskwatch_hold(sb->watch, paths[i]);
}

/* Landlock's refused directories as masks, but harness's own state: the
 * session's directory holds the socket the shim reaches. */
static void add_held(struct hx_sandbox *sb, const char *const *paths, size_t n)
{
	const char **keep = calloc(n, sizeof(*keep));
	size_t k = 0, had = hx_masks_count(sb->masks);

	if (!keep) {
		sb->masks_err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!hx_ll_within(paths[i], sb->mask_dir) &&
		    !hx_ll_within(sb->mask_dir, paths[i]))
			keep[k++] = paths[i];
	sb->masks_err = hx_masks_add(&sb->masks, keep, k, NULL, sb->mask_dir);
	sb->held_masks = hx_masks_count(sb->masks) - had;
	free(keep);
	if (!sb->masks_err)
		hold_watched(sb, had);
}

/* Masks that do not cover the project (its walk cut short at
 * HX_MASKS_MAX_ENTRIES, or none made) leave its denied files to
 * Landlock's grant of the write root: a static program read a .env
 * past 200,000 entries that an earlier session's agent (or a
 * node_modules) left. Every open is decided in the kernel layer instead
 * (as --trace-reads), the masks dropped as that mode has none. 0 when
 * done, 1 without user-notify (warned), or -errno: no start. */
static int reads_instead_of_masks(struct hx_sandbox *sb, const char *why,
				  bool quiet)
{
	char err[128];
	int e;

	if (sb->handoff < 0)
		return 1;
	if ((e = hx_seccomp_build_notify(sb->prog, sb->exec_gate, true, err,
					 sizeof(err))))
		return e;
	sb->trace_reads = true;
	snprintf(sb->reads_for_masks, sizeof(sb->reads_for_masks), "%s", why);
	hx_masks_free(sb->masks);
	sb->masks = NULL;
	sb->held_masks = 0;
	sb->nabsent = 0;
	hx_maskwatch_free(sb->watch);
	sb->watch = NULL;
	if (!quiet)
		fprintf(stderr,
			"harness-exec: warning: %s: every open is decided in "
			"the kernel layer instead (as --trace-reads)\n",
			why);
	return 0;
}

/* Whether what the masks hold stops short of the project, and why:
 * its walk was cut, or the watches for what is made in it later were
 * refused (the user's inotify counts, which another session's agent,
 * root's above all, can fill). */
static bool masks_short(const struct hx_sandbox *sb, char *why, size_t len)
{
	if (sb->masks_truncated)
		snprintf(why, len,
			 "the project has more than %d entries, or a path "
			 "longer than %d bytes, to look at for masks",
			 HX_MASKS_MAX_ENTRIES, PATH_MAX - 1);
	else if (sb->watch_err)
		snprintf(why, len,
			 "the project cannot be watched for masks made later "
			 "(inotify: %s)",
			 strerror(-sb->watch_err));
	else if (hx_maskwatch_refused(sb->watch))
		snprintf(why, len,
			 "%zu directories of the project cannot be watched "
			 "for masks made later (inotify watches)",
			 hx_maskwatch_refused(sb->watch));
	else
		return false;
	return true;
}

static int masks_ready(struct hx_sandbox *sb, bool quiet)
{
	const char *const *paths;
	char why[128];
	size_t n;
	int e;

	if (!sb->masks_job)
		return 0;
	sb->masks_err =
	    hx_masks_join(sb->masks_job, &sb->masks, &sb->masks_truncated);
	sb->masks_job = NULL;
	/* And the read denies inside the other write roots, which Landlock
	 * names (~/.local/share/keyrings under a write root ~/.local).
	 * Without user-notify the shim connects to the session's socket
	 * itself: nothing above it is masked then. */
	if (!sb->masks_err && (n = hx_landlock_masked(sb->ll, &paths)))
		sb->masks_err = hx_masks_add(
		    &sb->masks, paths, n, sb->handoff < 0 ? sb->mask_dir : NULL,
		    sb->mask_dir);
	/* Their directories, for the names made there later: the write
	 * root grants them (a token rewritten, a history saved). */
	n = sb->masks_err ? 0 : hx_landlock_name_dirs(sb->ll, &paths);
	for (size_t i = 0; sb->watch && i < n; i++)
		hx_maskwatch_names(sb->watch, paths[i]);
	/* When Landlock's refusals are not read (an ordinary user: no
	 * CAP_AUDIT_READ), the files and directories it refuses are masks
	 * too, that say who looked (maskfs.h): a file's node is granted to
	 * Landlock in the child (hx_landlock_grant_mask), a directory's
	 * listing already is (names stay listable everywhere). */
	if (!sb->masks_err && !sb->mask_records_err && sb->ll_probe <= 0 &&
	    (n = hx_landlock_held(sb->ll, &paths)))
		add_held(sb, paths, n);
	else if (!sb->masks_err && !sb->mask_records_err && sb->ll_probe > 0)
		watch_held_names(sb);
	if (!sb->masks_err && sb->watch &&
	    (n = hx_landlock_deny_paths(sb->ll, &paths)))
		hx_maskwatch_denies(sb->watch, paths, n);
	if (!sb->masks_err && masks_short(sb, why, sizeof(why)) &&
	    (e = reads_instead_of_masks(sb, why, quiet)) <= 0)
		return e;
	n = hx_masks_count(sb->masks);
	if (!sb->masks_err && n && geteuid() != 0)
		sb->masks_err = hx_sandbox_userns_probe();
	if (sb->masks_err) {
		hx_masks_free(sb->masks);
		sb->masks = NULL;
		sb->held_masks = 0;
		sb->nabsent = 0;
	}
	hx_masks_note_dirs(sb->masks, sb->policy); /* those it keeps */
	if ((hx_masks_count(sb->masks) || (sb->watch && sb->masks)) &&
	    !sb->mask_records_err)
		sb->mask_records_err = serve_masks_so(sb);
	if (!sb->maskfs) { /* nothing to mask later with */
		hx_maskwatch_free(sb->watch);
		sb->watch = NULL;
	}
	if (sb->masks_err) {
		snprintf(why, sizeof(why),
			 "the project's denied files cannot be masked (%s)",
			 strerror(-sb->masks_err));
		if ((e = reads_instead_of_masks(sb, why, quiet)) <= 0)
			return e;
	}
	if (quiet)
		return 0;
	if (sb->masks_err)
		fprintf(stderr,
			"harness-exec: warning: cannot mask the files the "
			"policy denies inside write roots (%s): programs "
			"without the shim may read them\n",
			strerror(-sb->masks_err));
	else if (sb->masks_truncated)
		fprintf(stderr,
			"harness-exec: warning: the project has more than %d "
			"entries, or a path longer than %d bytes; denied "
			"files past them are not masked\n",
			HX_MASKS_MAX_ENTRIES, PATH_MAX - 1);
	return 0;
}

void hx_sandbox_describe(const struct hx_sandbox *sb, FILE *out)
{
	if (sb->mode == HX_MODE_AUDIT)
		fprintf(out, "landlock: signal scope only (audit mode)\n");
	else
		hx_landlock_describe(sb->ll, out);
}

int hx_sandbox_ready(struct hx_sandbox *sb, char *err, size_t errlen)
{
	int e;

	if (sb->ll_pending) {
		pthread_join(sb->ll_thread, NULL);
		sb->ll_pending = false;
		if (sb->ll_err) {
			snprintf(err, errlen, "%s", sb->ll_msg);
			return sb->ll_err;
		}
	}
	/* after Landlock: it names some */
	if ((e = masks_ready(sb, sb->quiet))) {
		snprintf(err, errlen, "every open decided: %s", strerror(-e));
		return e;
	}
	sb->ready = true;
	return 0;
}

/* Child side: no stdio locks or allocation matter after fork of a
 * single-threaded parent, but keep it to write(2) anyway. */
static void die_child(const char *what, int e) __attribute__((noreturn));
static void die_child(const char *what, int e)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "harness-exec: sandbox: %s: %s\n",
			 what, strerror(e));

	if (n > 0 && write(2, buf, (size_t)n) < 0)
		_exit(126);
	_exit(126);
}

static void warn_child(const char *what, int e, bool quiet)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "harness-exec: warning: %s: %s\n",
			 what, strerror(e));

	if (!quiet && n > 0 && write(2, buf, (size_t)n) < 0)
		return;
}

static void drop_caps(const struct hx_sandbox *sb)
{
	int e;

	if (sb->k.cap_setpcap) {
		if (prctl(PR_SET_SECUREBITS, SECBITS, 0, 0, 0))
			die_child("securebits", errno);
		for (int c = 0; c <= sb->last_cap; c++)
			if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0)) {
				if (errno == EINVAL && c > 0)
					break; /* past the kernel's last */
				die_child("bounding set", errno);
			}
	}
	if ((e = hx_caps_limit(0)))
		die_child("capabilities", -e);
	if (sb->k.cap_setpcap)
		for (int c = 0; c <= sb->last_cap; c++)
			if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
				die_child("bounding set still holds a cap",
					  EPERM);
}

int hx_sandbox_enable_notify(struct hx_sandbox *sb, int handoff_fd, char *err,
			     size_t errlen)
{
	int e;

	if (!sb->k.user_notif || !sb->k.pidfd_getfd) {
		snprintf(err, errlen, "the kernel has no %s",
			 sb->k.user_notif ? "pidfd_getfd"
					  : "seccomp user-notify");
		return -ENOSYS;
	}
	e = hx_seccomp_build_notify(sb->prog, sb->exec_gate, sb->trace_reads,
				    err, errlen);
	if (!e)
		sb->handoff = handoff_fd;
	return e;
}

void hx_sandbox_set_exec_gate(struct hx_sandbox *sb, bool on)
{
	sb->exec_gate = on;
}

void hx_sandbox_set_trace_reads(struct hx_sandbox *sb, bool on)
{
	sb->trace_reads = on;
}

bool hx_sandbox_trace_reads(const struct hx_sandbox *sb)
{
	return sb && sb->trace_reads;
}

void hx_sandbox_set_landlock_log(struct hx_sandbox *sb, pid_t probe)
{
	sb->ll_probe = probe;
}

/* The listener goes to the parent, which takes it with pidfd_getfd
 * (a sendmsg here would itself wait on the listener nobody holds yet);
 * then the agent's copy is closed. Any failure: no agent. */
static void hand_off_listener(const struct hx_sandbox *sb)
{
	int lfd = hx_seccomp_install_notify(sb->prog);
	char ack = 0;
	ssize_t n;

	if (lfd < 0)
		die_child("seccomp user-notify", -lfd);
	/* pidfd_getfd needs ptrace access: we inherited non-dumpable. The
	 * exec below sets it again from the new image. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		die_child("dumpable", errno);
	do
		n = write(sb->handoff, &lfd, sizeof(lfd));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(lfd))
		die_child("listener hand-off", n < 0 ? errno : EIO);
	do
		n = read(sb->handoff, &ack, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || ack != 'k')
		die_child("listener hand-off", n < 0 ? errno : EPIPE);
	close(lfd);
	close(sb->handoff);
}

void hx_sandbox_enter(const struct hx_sandbox *sb)
{
	const char *what = "";
	bool own_devpts = false, ipc_own;
	int e, h, ns_e = -ENOSYS;

	if (!sb || !sb->ready)
		die_child("not prepared", EINVAL);
	/* Before any user namespace: one made now takes what is set here
	 * as its bound on the user's tasks outside. RLIMIT_NPROC, counted
	 * within, is set once it is made (hx_limits_apply_in_ns). */
	if ((e = hx_limits_apply(&sb->limits, &what)))
		die_child(what, -e);
	/* With the capabilities still held: as root, the floor too. */
	if ((e = hx_oom_expose_agent()))
		die_child("oom_score_adj", -e);
	/* The agent's own /dev/pts (terminals.h), in enforce mode, and the
	 * masks: they need the capabilities (in its own user namespace for
	 * an ordinary user) that are dropped next, and Landlock forbids
	 * mounts. Without a namespace (no user namespaces here) the agent
	 * runs with the host's /dev/pts, said on stderr. */
	if (sb->mode == HX_MODE_ENFORCE) {
		if ((e = ns_e = hx_masks_private_ns()) ||
		    (e = hx_terminals_isolate()))
			warn_child("other terminals stay reachable: cannot "
				   "mount a devpts of the agent's own",
				   -e, sb->quiet);
		else
			own_devpts = true;
	}
	if ((e = hx_limits_apply_in_ns(&sb->limits, ns_e == 0)))
		die_child("processes", -e);
	if ((e = hx_masks_apply(sb->masks, hx_maskfs_child_fd(sb->maskfs),
				sb->maskfs ? sb->nabsent : 0,
				hx_landlock_grant_mask, sb->ll)))
		die_child("masks", -e);
	/* Before the capabilities go (an ordinary user has them in the
	 * namespace above only): SysV IPC and message queues of its own,
	 * the message queue mounts its view has included (ipcns.h), or
	 * none (seccomp_deny.h, hx_seccomp_install_ipc). */
	if (geteuid() == 0) /* costs root nothing: audit mode has none */
		(void)hx_masks_private_ns();
	if ((e = hx_ipcns_enter(hx_masks_in_private_ns())) < 0)
		die_child("message queue mounts", -e);
	ipc_own = e == 1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die_child("no_new_privs", errno);
	drop_caps(sb);
	if (own_devpts && (e = hx_landlock_grant_own_devpts(sb->ll)))
		die_child("landlock (own devpts)", -e);
	if (sb->ll && (e = hx_landlock_restrict(sb->ll, sb->ll_probe > 0)))
		die_child("landlock", -e);
	/* Audit mode: no policy, but no signal to harness-exec (a SIGSTOP
	 * held every decided call, a SIGKILL ended the session with no
	 * anchor) nor to the user's processes outside. */
	if (sb->mode == HX_MODE_AUDIT && (e = hx_landlock_scope_signals()))
		die_child("landlock (signal scope)", -e);
	/* Refused by the signal scope (EPERM), before the agent runs. */
	if (sb->ll && sb->ll_probe > 0)
		kill(sb->ll_probe, 0);
	/* After Landlock: its ruleset fd is one of those closed here. No
	 * supervisor fd reaches the agent (DESIGN.md invariant 5); the
	 * hand-off socket is closed once the listener is handed off. */
	h = sb->handoff;
	if (h < 3) {
		if (syscall(SYS_close_range, 3u, ~0u, 0u))
			for (int fd = 3; fd < 65536; fd++)
				close(fd);
	} else {
		if ((h > 3 &&
		     syscall(SYS_close_range, 3u, (unsigned)h - 1, 0u)) ||
		    syscall(SYS_close_range, (unsigned)h + 1, ~0u, 0u))
			die_child("close_range", errno);
		/* First: the deny list refuses a new listener. */
		hand_off_listener(sb);
	}
	if (!ipc_own && (e = hx_seccomp_install_ipc(sb->prog)))
		die_child("seccomp ipc", -e);
	/* Last: from here on even our own set-up would be filtered. */
	if ((e = hx_seccomp_install(sb->prog)))
		die_child("seccomp", -e);
}

struct hx_limits *hx_sandbox_limits(struct hx_sandbox *sb)
{
	return &sb->limits;
}

int hx_sandbox_start_devbound(struct hx_sandbox *sb, struct hx_devbound **out)
{
	*out = NULL;
	return sb ? hx_devbound_start(sb->ll, out) : 0;
}

void hx_sandbox_release(struct hx_sandbox *sb)
{
	if (sb)
		hx_landlock_release(sb->ll);
}

/* Where the OOM killer puts each side (oomshield.h): the agent's first
 * process takes harness-exec's value, raised to HX_OOM_AGENT_ADJ. */
static json_t *oom_json(void)
{
	int self;

	if (hx_oom_adj(&self))
		return json_null();
	return json_pack("{s:i, s:i}", "harness", self, "agent",
			 self > HX_OOM_AGENT_ADJ ? self : HX_OOM_AGENT_ADJ);
}

json_t *hx_sandbox_kernel_json(const struct hx_sandbox *sb)
{
	const struct hx_features *k;
	json_t *o;

	if (!sb)
		return json_null();
	k = &sb->k;
	o = json_object();
	json_object_set_new(o, "release", json_string(k->release));
	json_object_set_new(o, "seccomp", json_boolean(k->seccomp));
	json_object_set_new(o, "seccomp_deny_rules",
			    json_integer((json_int_t)hx_seccomp_ndeny));
	json_object_set_new(o, "user_notif", json_boolean(k->user_notif));
	json_object_set_new(o, "pidfd_getfd", json_boolean(k->pidfd_getfd));
	json_object_set_new(o, "notify_killable",
			    json_boolean(k->notify_killable));
	json_object_set_new(o, "landlock_abi", json_integer(k->landlock_abi));
	json_object_set_new(
	    o, "landlock",
	    json_string(sb->ll ? "applied"
			: sb->mode == HX_MODE_AUDIT
			    ? (k->landlock_abi >= 6
				   ? "signal scope only (audit mode)"
				   : "off (audit mode)")
			    : "missing"));
	json_object_set_new(o, "no_new_privs", json_boolean(k->nnp));
	json_object_set_new(o, "caps_bounding_dropped",
			    json_boolean(k->cap_setpcap));
	json_object_set_new(o, "cgroup2", json_boolean(k->cgroup2));
	json_object_set_new(o, "cgroup2_writable",
			    json_boolean(k->cgroup2_writable));
	/* Honest about what this build does not have yet. */
	json_object_set_new(o, "user_notify_used",
			    json_boolean(sb->handoff >= 0));
	/* The gate is on only with the notify layer that approves execs. */
	json_object_set_new(o, "exec_gate",
			    json_boolean(sb->exec_gate && sb->handoff >= 0));
	json_object_set_new(o, "limits", hx_limits_json(&sb->limits));
	json_object_set_new(o, "oom_score_adj", oom_json());
	/* Inside write roots; and Landlock's refused directories masked
	 * only so that a look into them is a record. */
	json_object_set_new(
	    o, "masks",
	    json_integer(
		(json_int_t)(hx_masks_count(sb->masks) - sb->held_masks)));
	if (sb->held_masks)
		json_object_set_new(o, "masks_held",
				    json_integer((json_int_t)sb->held_masks));
	if (sb->nabsent) /* nodes kept for held files not there yet */
		json_object_set_new(o, "masks_kept",
				    json_integer((json_int_t)sb->nabsent));
	/* ipool.h: how many new files in carved directories stay readable. */
	json_object_set_new(
	    o, "landlock_pool",
	    json_integer((json_int_t)hx_ipool_left(hx_sandbox_pool(sb))));
	if (sb->masks_err)
		json_object_set_new(o, "masks_missing",
				    json_string(strerror(-sb->masks_err)));
	if (sb->masks_truncated)
		json_object_set_new(o, "masks_truncated", json_true());
	/* In place of the masks: every open decided (user-notify). */
	if (sb->reads_for_masks[0])
		json_object_set_new(o, "reads_decided",
				    json_string(sb->reads_for_masks));
	/* Whether a look into a mask is a record (maskfs.h). */
	if (hx_masks_count(sb->masks))
		json_object_set_new(
		    o, "mask_records",
		    json_string(sb->maskfs ? "fuse"
					   : strerror(-sb->mask_records_err)));
	return o;
}

static void on_created(const char *path, bool is_dir, void *arg)
{
	if (is_dir) /* before the bind: what is beneath it (masks.h) */
		hx_masks_note_dir();
	hx_maskfs_add(arg, path, is_dir);
}

static void on_watch(struct hx_server *s, struct hx_source *src,
		     uint32_t events)
{
	struct hx_sandbox *sb = src->arg;

	(void)s;
	(void)events;
	hx_maskwatch_read(sb->watch, on_created, sb->maskfs);
}

int hx_sandbox_serve_masks(struct hx_sandbox *sb, pid_t child,
			   struct hx_pipeline *pl, struct hx_server *srv)
{
	int e;

	if (!sb || !sb->maskfs)
		return 0;
	if ((e = hx_maskfs_start(sb->maskfs, child, pl, srv)) || !sb->watch)
		return e;
	sb->watch_src = (struct hx_source){
	    .fd = hx_maskwatch_fd(sb->watch), .handle = on_watch, .arg = sb};
	if ((e = hx_server_add(srv, &sb->watch_src, EPOLLIN)))
		return e;
	sb->srv = srv;
	return 0;
}

void hx_sandbox_stop_masks(struct hx_sandbox *sb)
{
	if (sb)
		hx_maskfs_stop(sb->maskfs);
}

json_t *hx_sandbox_masks_json(const struct hx_sandbox *sb)
{
	json_t *o;

	if (!sb || !sb->maskfs)
		return NULL;
	o = hx_maskfs_json(sb->maskfs);
	if (sb->watch)
		json_object_set_new(o, "watch", hx_maskwatch_json(sb->watch));
	return o;
}

struct hx_ipool *hx_sandbox_pool(const struct hx_sandbox *sb)
{
	return sb && sb->ready ? hx_landlock_pool(sb->ll) : NULL;
}

void hx_sandbox_free(struct hx_sandbox *sb)
{
	if (!sb)
		return;
	if (sb->ll_pending)
		pthread_join(sb->ll_thread, NULL);
	hx_seccomp_prog_free(sb->prog);
	hx_landlock_free(sb->ll);
	if (sb->masks_job) {
		bool t;

		hx_masks_join(sb->masks_job, &sb->masks, &t);
	}
	if (sb->srv)
		hx_server_del(sb->srv, &sb->watch_src);
	hx_maskwatch_free(sb->watch);
	hx_maskfs_free(sb->maskfs);
	hx_masks_free(sb->masks);
	free(sb->absent);
	free(sb);
}
