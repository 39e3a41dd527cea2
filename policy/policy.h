/* The policy engine: a YAML policy compiled into an immutable in-memory
 * form, and the decision function the supervisor calls for every event.
 *
 * Lifecycle: hx_policy_load_* -> hx_policy_decide (any number of times,
 * from any thread: the compiled policy is never modified) ->
 * hx_policy_free. hx_policy_free(NULL) is a no-op. */
#ifndef HX_POLICY_H
#define HX_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/names.h"
#include "common/types.h"

struct hx_policy;

/* A rule the session adds: its name ("harness:..."), verdict and
 * patterns (network syntax), all borrowed; neighbours as the rule key. */
struct hx_session_rule {
	const char *name;
	enum hx_verdict verdict;
	const char *const *patterns;
	size_t npatterns;
	bool neighbours;
	/* Wins over every other rule that matches, deny and ask too: for
	 * an address whose traffic the supervisor itself answers (port 53
	 * with the agent's DNS sealed, unotify_dns.c), where the address
	 * decides nothing. */
	bool decisive;
};

/* Values of the policy variables. NULL members are unset: a pattern
 * using an unset variable is an error, except $WORKTREE, which falls back
 * to $CWD. protect lists extra globs the policy must deny for every
 * access (the session directory, the audit log, the policy file): they
 * become rule "harness:protect", ahead of every rule of the file. */
struct hx_policy_vars {
	const char *home;     /* $HOME */
	const char *cwd;      /* $CWD */
	const char *tmpdir;   /* $TMPDIR: the session's private temp dir */
	const char *worktree; /* $WORKTREE */
	const char *session;  /* $SESSION */
	const char *const *protect;
	size_t nprotect;
	/* Absolute globs the agent may not write, in audit mode too, as
	 * harness:protect for writes only (reads stay the policy's): the
	 * cgroup file systems, where the session's cgroup holds its process
	 * count and its end. */
	const char *const *protect_write;
	size_t nprotect_write;
	/* Extra write rules of the session (a --worktree session's git
	 * paths): absolute globs, appended to the file rules as
	 * "harness:worktree-deny" (deny, write) and "harness:worktree"
	 * (allow, write). Reads are not affected; deny > allow as usual. */
	const char *const *write_deny;
	size_t nwrite_deny;
	const char *const *write_allow;
	size_t nwrite_allow;
	/* Write-deny globs of what git runs code from by configuration
	 * (supervisor/gitconf.h): "harness:git-config" (deny, write). */
	const char *const *git_deny;
	size_t ngit_deny;
	/* The files git's configuration names as a credential helper's
	 * store: "harness:git-credentials" (deny, read and write). */
	const char *const *git_secret;
	size_t ngit_secret;
	/* Network rules of the session, appended to the policy's (e.g.
	 * harness:resolver allowing the system's name servers,
	 * harness:ssh-agent denying the socket $SSH_AUTH_SOCK names). */
	const struct hx_session_rule *net_rules;
	size_t nnet_rules;
	/* Second mounts (supervisor/mountalias.h): what is beneath
	 * alias_from[i] (an absolute path) is also beneath alias_to[i] (an
	 * absolute glob, escaped). Every deny and ask file rule holds there
	 * too: its patterns are rebased and appended (alias.c). */
	const char *const *alias_from;
	const char *const *alias_to;
	size_t nalias;
	/* The deny and ask file rules that name a place through a symbolic
	 * link (the file system read at load) rebased onto its real path
	 * too (alias.c): the session's, not the policy tools'. */
	bool real_prefixes;
	/* Extra includes of the main document (--profile): built-in
	 * profile names or absolute files, loaded after it. */
	const char *const *include;
	size_t ninclude;
};

/* Where a policy is wrong; lines and columns count from 1. */
struct hx_policy_error {
	char file[256];
	unsigned line, column;
	char message[256];
	char hint[256]; /* may be empty */
};

/* Loads and compiles a policy. Returns 0 and sets *out, or -EINVAL with
 * *err filled (a policy error), or another -errno (file unreadable, with
 * *err filled too). The vars and their strings are copied. */
int hx_policy_load_file(const char *path, const struct hx_policy_vars *vars,
			struct hx_policy **out, struct hx_policy_error *err);
/* A policy file's text as loaded (files, pipes, /dev/stdin alike, up
 * to the size cap): 0 and *text (free it), or -errno. */
int hx_policy_read(const char *path, char **text, size_t *len);
/* Same, from memory; name is what errors call the file. */
int hx_policy_load_buffer(const char *name, const char *text, size_t len,
			  const struct hx_policy_vars *vars,
			  struct hx_policy **out, struct hx_policy_error *err);
/* A policy composes: its top-level "include:" lists built-in profiles
 * (a bare NAME) and files (hx_profile_is_file; relative to the including
 * file's directory),
 * loaded in order, each at most once, their rules added to the
 * including document's. An included document may hold only version,
 * include, profile, files, exec and network: the session-wide settings
 * are the main policy's. Every included file is also protected like the
 * policy itself (rule harness:protect). Errors name the included file,
 * and the hint where it was included from.
 *
 * HX_DEFAULT_PROTECTIONS names the embedded default's protective rules:
 * its deny and ask rules (and those of what it includes), none of its
 * allow rules or settings, by reference, so that a policy that includes
 * them (a learned one) refuses what the default refuses as it is now. */
#define HX_DEFAULT_PROTECTIONS "default-protections"

/* The embedded default policy (policy/default.yaml, compiled in). */
int hx_policy_load_default(const struct hx_policy_vars *vars,
			   struct hx_policy **out, struct hx_policy_error *err);
const char *hx_policy_default_text(size_t *len);

void hx_policy_free(struct hx_policy *p);

/* Built-in profiles (policy/profiles/NAME.yaml, compiled in): rules for
 * one agent or toolchain, with a "profile:" mapping (description, and
 * detect: globs on the real path of the command they are for). */
/* The i-th profile's name, or NULL past the last. */
const char *hx_profile_name(size_t i);
/* Whether an include names a file (a '/' in it, or a .yaml or .yml
 * name) rather than a built-in profile. */
bool hx_profile_is_file(const char *what);
/* The YAML text of profile name, or NULL. */
const char *hx_profile_text(const char *name, size_t *len);
/* Loads only a profile's "profile:" mapping (no rules): for
 * hx_policy_description; vars (may be NULL) expand its detect globs.
 * Same returns as hx_policy_load_buffer. */
int hx_profile_load_meta(const char *name, const struct hx_policy_vars *vars,
			 struct hx_policy **out, struct hx_policy_error *err);
/* The same of any document's text (all of it parsed). */
int hx_policy_load_meta_buffer(const char *name, const char *text, size_t len,
			       const struct hx_policy_vars *vars,
			       struct hx_policy **out,
			       struct hx_policy_error *err);
/* The first built-in profile one of whose detect globs (with $HOME
 * from home) matches one of paths (the real paths of the command: its
 * executable, and the script an interpreter was given), or NULL. */
const char *hx_profile_detect(const char *home, const char *const *paths,
			      size_t npaths);
/* The main document's profile description, or NULL. */
const char *hx_policy_description(const struct hx_policy *p);

/* Calls fn for each document of the policy, the main one first: its
 * name (a path, "<default>" or "profile:NAME") and its text. */
void hx_policy_foreach_source(const struct hx_policy *p,
			      void (*fn)(const char *name, const char *text,
					 size_t len, void *arg),
			      void *arg);

/* One rule as written, for `harness-policy show`; strings owned by the
 * policy. */
struct hx_rule_info {
	const char *section; /* "files", "exec", "network" */
	const char *name;    /* id, or "file:line" */
	const char *origin;  /* "file:line" where it is written */
	enum hx_verdict verdict;
	unsigned access;	     /* files: HX_ACCESS_* */
	bool neighbours;	     /* network: "neighbours: true" */
	const char *const *patterns; /* expanded */
	size_t npatterns;
};
/* Calls fn for each rule, section by section, in load order (protect
 * and the session's rules included). */
void hx_policy_foreach_rule(const struct hx_policy *p,
			    void (*fn)(const struct hx_rule_info *r, void *arg),
			    void *arg);

/* Formats err as "file:line:column: message" plus "\n  hint: ..." when
 * there is a hint. Returns buf. */
char *hx_policy_error_format(const struct hx_policy_error *err, char *buf,
			     size_t size);

/* What an exec does, from its argv and the commands it runs in turn
 * (policy/cmdview.h), by increasing severity: an exec is of its
 * strongest part's class. Exec patterns name one as "class:NAME". */
enum hx_cmd_class {
	HX_CLASS_NONE = 0, /* not an exec, or a wrapper (env, sh -c) */
	HX_CLASS_READ_ONLY,
	HX_CLASS_MUTATING,
	HX_CLASS_OTHER, /* a program the tables do not know */
	HX_CLASS_CODE,	/* code from argv or a file: python -c, sh x.sh */
	HX_CLASS_PACKAGE_INSTALL,
	HX_CLASS_NETWORK,
	/* a script whose commands cannot be known before it runs ($CMD,
	 * eval "$x", case, a command inside ${...}) */
	HX_CLASS_UNPARSABLE,
	HX_CLASS_DESTRUCTIVE, /* rm -rf outside the workspace, git push -f */
	HX_CLASS_PRIVILEGE,
	HX_CLASS_COUNT,
};
/* "read_only" ...; NULL for HX_CLASS_NONE. */
const char *hx_cmd_class_name(enum hx_cmd_class c);
/* The class named name, or HX_CLASS_NONE. */
enum hx_cmd_class hx_cmd_class_parse(const char *name);
enum hx_risk hx_cmd_class_risk(enum hx_cmd_class c);

/* One event to decide. Pointers are borrowed for the call. */
struct hx_event {
	enum hx_op op;
	const char *path;  /* absolute, normalized (see types.h per op) */
	const char *path2; /* rename destination, link source, symlink target */
	const char *const *argv; /* exec: argv[0..argc-1] */
	size_t argc;
	/* exec: the caller's working directory (relative paths in argv);
	 * NULL: unknown */
	const char *cwd;
	/* exec: where a path of its operands leads, as the caller would
	 * walk it (symlinks followed, the last only when follow_last; what
	 * does not exist kept as written): rm -rf link/x removes beneath
	 * the link's target. 0 or -errno. NULL: paths taken as written. */
	int (*resolve)(const void *arg, const char *path, bool follow_last,
		       char *out, size_t size);
	const void *resolve_arg;
	/* exec: judged by the argv alone, not by what it runs in turn (the
	 * command a person typed: each exec it makes is judged when it
	 * happens, and nobody is asked about their own command line) */
	bool argv_only;
	/* exec: its environment sets git configuration the session's did
	 * not (GIT_CONFIG_COUNT and _KEY_n, _PARAMETERS, _GLOBAL, _SYSTEM):
	 * a push it makes may be forced as git -c remote.X.push=+... says */
	bool git_env_config;
	const struct sockaddr *addr; /* connect, send */
	socklen_t addrlen;
	const char *host;	  /* resolve: the name looked up */
	const char *const *names; /* connect/send: names known for addr */
	size_t nnames;
	int proto; /* connect/send to an IP address: the socket's SO_PROTOCOL
		    * (IPPROTO_TCP, IPPROTO_UDP); 0: unknown */
	/* rename: the source (or, exchanged, the destination) is or may be
	 * a directory, so everything beneath it moves too */
	bool moves_tree;
	/* symlink: its target made absolute and normalized (path2 is the
	 * link's text), its symlinks resolved in the second; NULL when
	 * unknown */
	const char *link_target, *link_target_resolved;
	/* write: an open whose fd reads too (any access mode but O_WRONLY:
	 * O_RDWR, O_RDONLY with O_CREAT or O_APPEND), decided as a read of
	 * the path as well */
	bool reads;
};

struct hx_decision {
	enum hx_verdict verdict; /* what the rules say, whatever the mode */
	enum hx_category category;
	enum hx_risk risk;
	/* The rule that decided: its id, or "file:line" when it has none, or
	 * "default:<category>" when no rule matched. Owned by the policy. */
	const char *rule;
	/* Where that rule is written, "file:line"; NULL for the defaults
	 * and the harness's own rules. Owned by the policy. */
	const char *origin;
	const char *pattern; /* the pattern that matched, or NULL */
	/* The rule that decided says "neighbours: true": it allows a unix
	 * socket of a service of the user's outside the session too (the
	 * supervisor refuses those otherwise, rule harness:neighbour). */
	bool neighbours;
	/* The file rule that decided says "keep_existing: true": what was
	 * there before the session is not written (supervisor/existing.h). */
	bool keep_existing;
	/* The file rule that decided says "own_files: true": a file there
	 * that the session did not make is not written (owned.h). */
	bool own_files;
	/* exec: its class (the strongest of its parts), and the part read
	 * from its arguments that decided, as text ("" when the argv
	 * itself did: the pattern matched it, or no rule did) */
	enum hx_cmd_class cls;
	char judged_as[160];
};

/* Whether path (absolute, normalized) is one of the harness's own
 * protected paths (harness:protect), the decision into *out if so. */
bool hx_policy_protects(const struct hx_policy *p, const char *path,
			struct hx_decision *out);

/* Decides ev. Never fails: an event it cannot judge (no path where one
 * is needed, an unknown address family) is denied by rule
 * "harness:malformed". Precedence: deny > ask > allow over all matching
 * rules; among rules of the winning verdict, the most specific pattern
 * names the rule; when none matches, the category's default. */
void hx_policy_decide(const struct hx_policy *p, const struct hx_event *ev,
		      struct hx_decision *out);

/* One command an exec runs in turn (sh -c 'cd x && git push' runs git
 * push) that a deny or ask rule matches; borrowed for the call. */
struct hx_exec_part {
	const char *const *argv;
	size_t argc;
	bool known;	 /* every word is known: no expansion, no glob */
	const char *dir; /* where it runs, absolute; NULL: unknown */
	enum hx_verdict verdict;
	const char *rule;
};
/* Calls fn for each such part of exec ev. Returns whether the argv
 * itself (what the kernel runs) matches a deny or ask rule. For
 * grants: a part granted as itself is a part allowed. */
bool hx_policy_exec_parts(const struct hx_policy *p, const struct hx_event *ev,
			  void (*fn)(const struct hx_exec_part *part,
				     void *arg),
			  void *arg);

/* Whether exec ev is one of the commands an exec of script (argv of n
 * words, run from cwd) runs in turn, as hx_policy_decide reads it, that
 * rule asked for: sh -c 'cd x && git push' showed git push, asked by
 * rule push; a person who allowed the script allowed that. The same
 * words, all known, in the same directory (hx_event.cwd). */
bool hx_policy_exec_runs(const struct hx_policy *p, const char *const *script,
			 size_t n, const char *cwd, const char *rule,
			 const struct hx_event *ev);

enum hx_mode hx_policy_mode(const struct hx_policy *p);

/* Resource limits (the policy's "limits" section): set as both the soft
 * and the hard rlimit of the agent's first process, so every process of
 * the session inherits them and none can raise them (no
 * CAP_SYS_RESOURCE). */
enum hx_limit {
	HX_LIMIT_CPU = 0,	/* "cpu": seconds, RLIMIT_CPU */
	HX_LIMIT_FILE_SIZE,	/* "file_size": bytes, RLIMIT_FSIZE */
	HX_LIMIT_OPEN_FILES,	/* "open_files": RLIMIT_NOFILE */
	HX_LIMIT_ADDRESS_SPACE, /* "address_space": bytes, RLIMIT_AS */
	HX_LIMIT_CORE,		/* "core": bytes, RLIMIT_CORE */
	/* "processes": tasks of the session; a cgroup's pids.max where
	 * harness-exec can make one, else RLIMIT_NPROC (supervisor/
	 * rlimits.c). Set by default (HX_PROCESSES_DEFAULT), in audit mode
	 * too: a fork storm would take the harness down with the agent. */
	HX_LIMIT_PROCESSES,
	HX_LIMIT_COUNT,
};
#define HX_PROCESSES_DEFAULT 4096

/* The audit log's share a session may take (the policy's "audit"
 * section: rate, burst, max_size; 0 is unlimited): records beyond rate
 * a second, after a burst of burst, are coalesced into an
 * audit_overflow record that counts them; past max_size bytes the
 * session ends. */
struct hx_audit_quota {
	uint64_t rate, burst, max_size;
};
/* Above what busy builds and package installs log (tens of thousands
 * of writes in a burst); max_size is what bounds a flood. */
#define HX_AUDIT_RATE_DEFAULT	  2000
#define HX_AUDIT_BURST_DEFAULT	  50000
#define HX_AUDIT_MAX_SIZE_DEFAULT (1ull << 30)
void hx_policy_audit_quota(const struct hx_policy *p,
			   struct hx_audit_quota *out);

/* Redaction of secrets in the audit log (the policy's audit.redact;
 * supervisor/redact.h applies it). On by default: the built-in formats
 * and names; the policy adds names and patterns, or turns it off. */
struct hx_redact_pattern {
	const char *name;  /* the type tag, [a-z0-9-] */
	const char *regex; /* POSIX extended, checked by the loader */
};
struct hx_redact_conf {
	bool enabled;
	/* fnmatch(3) globs on a variable's name, matched without case,
	 * beside the built-in *TOKEN*, *SECRET*...*/
	const char *const *env_names;
	size_t nenv_names;
	const struct hx_redact_pattern *patterns;
	size_t npatterns;
};
/* The policy's redaction settings; owned by p. */
const struct hx_redact_conf *hx_policy_redact(const struct hx_policy *p);

/* Alerts (the policy's alerts: section; supervisor/alerts.h watches
 * the records and acts). Each rule names a condition and what it does:
 * an alert record and a line on stderr always, and the actions. */
enum hx_alert_kind {
	HX_ALERT_DENIALS = 0, /* count denied calls in a row, one tree */
	HX_ALERT_RATE,	      /* count calls of category within window */
	HX_ALERT_SECRETS,     /* count denied reads within window */
	HX_ALERT_CHECKPOINT,  /* a checkpoint could not be written */
	HX_ALERT_DISK,	      /* the log's file system nearly full */
	HX_ALERT_KIND_COUNT,
};
enum hx_alert_action {
	HX_ACT_NOTIFY = 1u << 0, /* run command with the alert as JSON */
	HX_ACT_PAUSE = 1u << 1,	 /* freeze the tree until resumed */
	HX_ACT_ASK = 1u << 2,	 /* the next sensitive call is asked */
	HX_ACT_KILL = 1u << 3,	 /* end the agent's tree */
};
#define HX_ALERTS_MAX	   32
#define HX_ALERT_COUNT_MAX 1000000
struct hx_alert_rule {
	const char *id;
	const char *file; /* where it is defined, for the record */
	unsigned line;
	enum hx_alert_kind kind;
	enum hx_category category; /* HX_ALERT_RATE */
	unsigned count;		   /* DENIALS, RATE, SECRETS */
	uint64_t window_ms;	   /* RATE, SECRETS */
	/* SECRETS: fnmatch(3) globs on the denying rule's id; none: any
	 * denied read */
	const char *const *rules;
	size_t nrules;
	/* DISK: low below free_bytes, or below free_pct % of its size */
	uint64_t free_bytes;
	unsigned free_pct;
	unsigned actions; /* enum hx_alert_action bits; 0: logged only */
	const char *const *command; /* NOTIFY: argv, NULL-terminated */
};
/* The YAML word of a kind ("consecutive_denials"...), of one action. */
const char *hx_alert_kind_name(enum hx_alert_kind k);
const char *hx_alert_action_name(enum hx_alert_action a);
/* The policy's alert rules, in order; owned by p. */
const struct hx_alert_rule *hx_policy_alerts(const struct hx_policy *p,
					     size_t *n);

/* The YAML key of l. */
const char *hx_limit_name(enum hx_limit l);
/* Whether the policy sets l, and to what. */
bool hx_policy_limit(const struct hx_policy *p, enum hx_limit l,
		     uint64_t *value);
/* How long an ask waits for a person, in seconds (ask_timeout; 0: it
 * is refused at once). */
#define HX_ASK_TIMEOUT_DEFAULT 60
#define HX_ASK_TIMEOUT_MAX     86400
unsigned hx_policy_ask_timeout(const struct hx_policy *p);
/* Whether allowed read-only opens are logged one by one. */
bool hx_policy_log_reads(const struct hx_policy *p);
enum hx_verdict hx_policy_default_verdict(const struct hx_policy *p,
					  enum hx_category c);
/* Whether some file rule says "keep_existing: true". */
bool hx_policy_keeps_existing(const struct hx_policy *p);
/* Whether some file rule says "own_files: true". */
bool hx_policy_owns_files(const struct hx_policy *p);
/* Whether a pattern of such a rule (an allow) may match beneath dir. */
bool hx_policy_keeps_beneath(const struct hx_policy *p, const char *dir);
/* The file name the policy was loaded from ("<default>" if embedded). */
const char *hx_policy_source(const struct hx_policy *p);

/* Calls fn for each pattern that applies to reads (rules with access
 * read or any), in order, with its verdict; protect globs come first.
 * The shim receives this list to allow reads locally. */
void hx_policy_foreach_read_rule(const struct hx_policy *p,
				 void (*fn)(enum hx_verdict v,
					    const char *pattern, void *arg),
				 void *arg);

/* Access bits of file rules (the same values as policy_int.h). */
#define HX_ACCESS_READ	1u
#define HX_ACCESS_WRITE 2u
#define HX_ACCESS_ANY	(HX_ACCESS_READ | HX_ACCESS_WRITE)

/* Calls fn for every pattern of every file rule, protect globs first
 * (rule "harness:protect", verdict deny, access HX_ACCESS_ANY), then
 * the rules in file order. access is HX_ACCESS_READ and/or
 * HX_ACCESS_WRITE; pattern is expanded; both strings are owned by the
 * policy. Read-only: for the Landlock ruleset (supervisor/landlock.c). */
void hx_policy_foreach_file_rule(const struct hx_policy *p,
				 void (*fn)(enum hx_verdict v, unsigned access,
					    const char *pattern,
					    const char *rule, void *arg),
				 void *arg);

/* Calls fn for every pattern of every network rule, in file order.
 * is_unix is true for unix:PATH patterns (ports are then 0..65535 and
 * meaningless); otherwise port_lo..port_hi is the pattern's TCP/UDP port
 * range (0..65535 for "*"). pattern is the expanded text. */
void hx_policy_foreach_net_rule(const struct hx_policy *p,
				void (*fn)(enum hx_verdict v, bool is_unix,
					   unsigned port_lo, unsigned port_hi,
					   const char *pattern,
					   const char *rule, void *arg),
				void *arg);

/* Calls fn for each literal host name in the network rules (no
 * wildcard), so the supervisor can resolve them for its address map. */
void hx_policy_foreach_host(const struct hx_policy *p,
			    void (*fn)(const char *name, void *arg), void *arg);

/* The number of rules (protect not counted) and of examples. */
void hx_policy_stats(const struct hx_policy *p, size_t *nrules,
		     size_t *nexamples);

/* Runs every rule's match / not_match examples. Calls fn once per
 * failed example with a "file:line:column: message" string; returns the
 * number that failed. */
size_t hx_policy_check_examples(const struct hx_policy *p,
				void (*fn)(const char *msg, void *arg),
				void *arg);

/* Parses an event written as the user would ("exec git push origin",
 * "read /etc/passwd", "write PATH", "rename SRC DST", "unlink PATH",
 * "mkdir PATH", "rmdir PATH", "truncate PATH", "connect HOST:PORT",
 * "send HOST:PORT", "resolve HOST"), for `harness-policy explain`.
 * argv is the words of the event. On success fills *ev, using storage
 * (which must outlive ev) and returns 0; -EINVAL with a message in err. */
struct hx_event_storage {
	struct sockaddr_storage addr;
	const char *names[1];
	/* Absolute forms of the paths (an exec's $PATH lookup, a relative
	 * path made absolute against the current directory). */
	char path[4096];
	char path2[4096];
	char cwd[4096]; /* an exec's: the current directory */
};
int hx_event_parse(int argc, char *const *argv, struct hx_event *ev,
		   struct hx_event_storage *storage, char *err, size_t errlen);

/* The category an op belongs to. */
enum hx_category hx_op_category(enum hx_op op);

#endif
