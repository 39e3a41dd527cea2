/* Internals of the policy engine: the compiled form and the helpers the
 * policy/ files share. Not a public API: only the .c files of policy/ include
 * it. Everything a policy owns lives in its arena and is freed with it. */
#ifndef HX_POLICY_INT_H
#define HX_POLICY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/globindex.h"
#include "policy/policy.h"

/* A bump allocator: rules are never freed one by one. */
struct hx_arena_block;
struct hx_arena {
	struct hx_arena_block *head;
};
/* Zeroed memory, or NULL when out of memory. */
void *hx_arena_alloc(struct hx_arena *a, size_t size);
char *hx_arena_strndup(struct hx_arena *a, const char *s, size_t n);
char *hx_arena_strdup(struct hx_arena *a, const char *s);
void hx_arena_free(struct hx_arena *a);

#define HX_ACCESS_READ	1u
#define HX_ACCESS_WRITE 2u
#define HX_ACCESS_ANY	(HX_ACCESS_READ | HX_ACCESS_WRITE)

enum hx_section {
	HX_SEC_FILES = 0,
	HX_SEC_EXEC,
	HX_SEC_NET,
	HX_SEC_COUNT,
};

/* Where something was written, 1-based. */
struct hx_pos {
	unsigned line, column;
};

/* "git push *": exe matches the basename of the executable when bare,
 * its path when it holds a '/'; args[i] is an fnmatch glob on argv[1+i];
 * rest means a final "*" word: any further arguments, none included. */
#define HX_EXECPAT_MAX_ARGS 32
struct hx_execpat {
	enum hx_cmd_class cls; /* "class:NAME": matches that class, no argv */
	const char *exe;
	bool exe_is_path;
	const char **args;
	size_t nargs;
	bool rest;
};

enum hx_nethost {
	HX_NH_ANY = 0, /* "*" */
	HX_NH_NAME,    /* exact name, lowercased */
	HX_NH_SUFFIX,  /* "*.domain": name is ".domain", lowercased */
	HX_NH_V4,      /* address or CIDR */
	HX_NH_V6,
	HX_NH_UNIX, /* name is a path glob, or "@glob" for abstract names */
};

struct hx_netpat {
	enum hx_nethost kind;
	const char *name;
	uint8_t addr[16]; /* network order; V4 uses the first 4 bytes */
	unsigned prefix;
	unsigned port_lo, port_hi; /* 0..65535 for "*" */
	int proto;		   /* "tcp:", "udp:": IPPROTO_*; 0: any */
	bool listen;		   /* "listen:": what a server binds */
};

/* What a network pattern is matched against. family is AF_INET,
 * AF_INET6, AF_UNIX, or AF_UNSPEC when there is no address. port < 0
 * means no port (resolve): every port pattern matches. */
struct hx_netsubj {
	int family;
	uint8_t addr[16];
	int port;
	const char *unix_path; /* "@name" when abstract */
	const char *const *names;
	size_t nnames;
	int proto;   /* IPPROTO_*; 0: unknown, which every pattern matches */
	bool listen; /* a bind (listen: patterns), not a destination */
};

struct hx_pattern {
	const char *text; /* after variable expansion */
	unsigned spec;	  /* larger is more specific */
	union {
		struct hx_execpat exec;
		struct hx_netpat net;
	} u;
};

struct hx_example {
	const char *text; /* expanded */
	struct hx_pos pos;
	bool should_match;
};

struct hx_rule {
	const char *name;   /* id, or "file:line" */
	const char *origin; /* "file:line" where it is written */
	enum hx_verdict verdict;
	unsigned access; /* files only */
	bool
	    neighbours; /* network allow: opens a neighbour's unix socket too */
	bool decisive;	/* a session rule that wins over every other match */
	bool keep_existing; /* files allow: what predates the session stays */
	bool own_files; /* files allow: only the session's own are written */
	struct hx_pattern *pats;
	size_t npats;
	/* harness:protect's: what each pattern's matches hold, so that the
	 * paths of every call skip most of its patterns unmatched; the
	 * first nneeds patterns' (the aliases add patterns at the load's
	 * end: a pattern past them is matched whole) */
	struct hx_glob_need *needs;
	size_t nneeds;
	struct hx_example *ex;
	size_t nex;
};

/* Where the agent's own work is ($CWD, $WORKTREE, $TMPDIR): a
 * removal inside it is mutating (rm -rf build), outside it destructive
 * (rm -rf ~). */
struct hx_workspace {
	const char *roots[4]; /* absolute; NULL entries are unset */
	const char *home;     /* what ~ is; NULL unknown */
	/* the event's (hx_event.resolve) for one decision; NULL in the
	 * policy */
	int (*resolve)(const void *arg, const char *path, bool follow_last,
		       char *out, size_t size);
	const void *resolve_arg;
	bool git_env_config; /* hx_event's, for one decision */
};

/* One document of a composed policy (the main file and its includes),
 * text copied, for the policy's digest and `harness-policy show`. */
struct hx_source {
	const char *name; /* as errors call it: a path, or "profile:NAME" */
	const char *text;
	size_t len;
};
#define HX_POLICY_MAX_SOURCES 32
#define HX_POLICY_MAX_DISABLE 64

/* A rule id a document's "disable:" names, applied once all are loaded. */
struct hx_disable {
	const char *id, *file;
	struct hx_pos pos;
};
#define HX_POLICY_MAX_DEPTH 8

struct hx_policy {
	struct hx_arena arena;
	const char *source;
	struct hx_source sources[HX_POLICY_MAX_SOURCES];
	size_t nsources;
	struct hx_disable disable[HX_POLICY_MAX_DISABLE];
	size_t ndisable;
	/* The main document's profile: mapping (built-in profiles have one). */
	const char *description;
	const char **detect; /* globs on the command's real path */
	size_t ndetect;
	enum hx_mode mode;
	bool log_reads;
	unsigned ask_timeout; /* seconds; 0: an ask is refused at once */
	struct hx_audit_quota quota;
	struct hx_redact_conf redact;
	struct hx_alert_rule *alerts;
	size_t nalerts;
	uint64_t limits[HX_LIMIT_COUNT];
	unsigned limits_set; /* bit (1 << l) for each limit the policy sets */
	enum hx_verdict defaults[HX_CAT_COUNT];
	struct hx_rule *rules[HX_SEC_COUNT];
	size_t nrules[HX_SEC_COUNT];
	struct hx_rule protect;	      /* "harness:protect", npats may be 0 */
	struct hx_rule protect_write; /* "harness:protect", writes only */
	bool keeps_existing;	      /* some rule says keep_existing */
	bool owns_files;	      /* some rule says own_files */
	struct hx_workspace ws;
	/* The file rules' patterns by directory (fileindex.c); NULL: too
	 * many, scanned */
	struct hx_file_index *files;
};

/* ---- fileindex.c ---- */

#define HX_FILE_INDEX_MAX   4096 /* patterns; more are scanned */
#define HX_FILE_INDEX_WORDS (HX_FILE_INDEX_MAX / 64)

struct hx_file_index;
struct hx_fref {
	const struct hx_rule *rule;
	const struct hx_pattern *pat;
	struct hx_glob_need need;
};

/* Made once the rules are final (they are not changed after). 0, or -1
 * out of memory. */
int hx_file_index_build(struct hx_policy *p);
/* Sets in bits the ordinals of the file patterns that may match the
 * absolute path (a superset of those that do, in rule and pattern
 * order); returns how many words of bits to look at. */
size_t hx_file_index_mark(const struct hx_file_index *ix, const char *path,
			  uint64_t bits[HX_FILE_INDEX_WORDS]);
const struct hx_fref *hx_file_index_ref(const struct hx_file_index *ix,
					size_t ordinal);

/* "default:<category>", static. */
const char *hx_default_rule_name(enum hx_category c);
/* The keys of the limits section, NULL-terminated. */
extern const char *const *hx_limit_names;
/* The risk of a category before the supervisor refines it. */
enum hx_risk hx_category_risk(enum hx_category c);

/* Variable expansion, each value normalized as a path and, in a glob
 * (glob true), escaped. On success returns 0 and a malloc'd string in
 * *out and, when map is not NULL, a malloc'd array mapping each output
 * byte (and the terminator) to the offset of the input byte it came
 * from. On error returns -EINVAL (-ENOMEM) with *bad the input offset
 * and msg/hint filled. */
int hx_expand_vars(const struct hx_policy_vars *v, const char *in, bool glob,
		   char **out, size_t **map, size_t *bad, char *msg,
		   size_t msglen, char *hint, size_t hintlen);

/* Network patterns. hx_netpat_parse returns 0, or -EINVAL with *bad the
 * offset in text and *why a static message. */
int hx_netpat_parse(struct hx_arena *a, const char *text, struct hx_netpat *np,
		    size_t *bad, const char **why);
unsigned hx_netpat_specificity(const struct hx_netpat *np);
bool hx_netpat_match(const struct hx_netpat *np, const struct hx_netsubj *s);
/* Parses "host:port", "[v6]:port" or "unix:PATH" into s (names point
 * into namebuf, which must hold strlen(text)+1 bytes). 0 or -EINVAL. */
int hx_netsubj_parse_example(const char *text, struct hx_netsubj *s,
			     char *namebuf, const char **namev);
/* Parses an IPv4 or IPv6 literal; returns AF_INET/AF_INET6 or 0. */
int hx_parse_ip(const char *s, size_t len, uint8_t addr[16]);
/* Letters, digits, '-', '.' and '_' only: what a host name is (a DNS
 * name with an escaped "\." or a byte of another kind is none: its text
 * would be judged as another name than the one asked). */
bool hx_host_name_ok(const char *s, size_t len);

/* Exec patterns; the same bad/why convention. Words are split in place
 * in an arena copy. */
int hx_execpat_parse(struct hx_arena *a, const char *text,
		     struct hx_execpat *ep, size_t *bad, const char **why);
unsigned hx_execpat_specificity(const struct hx_execpat *ep);
bool hx_execpat_match(const struct hx_execpat *ep, const char *path,
		      const char *const *argv, size_t argc);

/* Compiles one pattern of section sec written at pos (its first byte):
 * variables expanded, then validated for the section. On error returns
 * -EINVAL with err's line, column, message and hint set (not its file). */
int hx_compile_pattern(struct hx_policy *p, enum hx_section sec,
		       const struct hx_policy_vars *v, const char *text,
		       struct hx_pos pos, struct hx_pattern *out,
		       struct hx_policy_error *err);
int hx_compile_example(struct hx_policy *p, const struct hx_policy_vars *v,
		       const char *text, struct hx_pos pos, bool should_match,
		       struct hx_example *out, struct hx_policy_error *err);

/* Fills err (all of it); returns -EINVAL. */
int hx_policy_fail(struct hx_policy_error *err, const char *file, unsigned line,
		   unsigned column, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

#endif
