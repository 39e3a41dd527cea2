/* harness-exec command line; parsing is apart from main so tests can
 * call it. */
#ifndef HX_OPTIONS_H
#define HX_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdio.h>

#define HX_MAX_PROFILES 8

struct hx_options {
	const char *policy; /* --policy FILE, or NULL: embedded default */
	/* --profile NAME|FILE (repeatable): added to the policy; none of
	 * them: the one detected from the command; --profile none: none */
	const char *profiles[HX_MAX_PROFILES];
	size_t nprofiles;
	bool no_profile;
	int mode;	       /* -1: the policy's; else enum hx_mode */
	int ask_timeout;       /* seconds; -1: the policy's (ask.h) */
	const char *audit_log; /* --audit-log PATH */
	const char *session;   /* --session NAME */
	bool quiet, verbose, help, version;
	bool doctor; /* --doctor: report the kernel mechanisms, run nothing */
	/* --no-kernel-notify: no seccomp user-notify layer (shim, deny
	 * list and Landlock only) */
	bool no_kernel_notify;
	/* --exec-gate: execve/execveat notified and decided in the kernel
	 * layer, checked at the exec event (execgate.h). Off by default
	 * until it is proven on every workload. */
	bool exec_gate;
	bool trace_reads;     /* --trace-reads */
	bool no_kernel_audit; /* --no-kernel-audit: leave it off */
	/* --dns-upstream ADDR:PORT: the name server the supervisor asks
	 * for the agent (unotify_dns.c); else resolv.conf's */
	bool has_dns_upstream;
	struct sockaddr_in dns_upstream;
	bool dns_refused; /* --dns-denied refused: REFUSED, not NXDOMAIN */
	/* --worktree [--base REF] [--copy-untracked] [--keep-worktree]:
	 * run in a linked git worktree (docs/worktrees.md) */
	bool worktree, copy_untracked, keep_worktree;
	const char *base;
	/* --metrics ADDR, --metrics-file FILE (metrics_serve.h), or NULL */
	const char *metrics, *metrics_file;
	const char *otlp_endpoint; /* --otlp-endpoint URL (exporter.h) */
	/* harness-mcp (tools/mcp_cli.c): the command is its worker, and
	 * stdin and stdout are the MCP client's (mcp/front.h); quotas for
	 * every tool (0: each tool's own) and a result's text bound */
	bool mcp;
	unsigned mcp_per_minute, mcp_concurrent;
	unsigned long mcp_max_output;
	const char *mcp_http; /* --http [HOST:]PORT or unix:PATH; NULL: stdio */
	char *const *cmd;     /* argv of the command, NULL-terminated */
	int ncmd;
};

/* Parses argv (argv[0] is the program). Options end at "--" or at the
 * first non-option. Returns 0, or -EINVAL with a message in err (a usage
 * error: exit 2). --help / --version / --doctor set their flag and need no
 * CMD. */
int hx_options_parse(int argc, char *const *argv, struct hx_options *o,
		     char *err, size_t errlen);

/* Whether argument a is an option whose value is the next argument
 * ("--policy", "-p"; not "--policy=FILE"): for harness-mcp, which
 * passes these on. */
bool hx_options_takes_value(const char *a);

/* "a.b.c.d:PORT" into *out; 0 or -EINVAL. */
int hx_options_upstream(const char *s, struct sockaddr_in *out);

/* The --help text. */
void hx_options_usage(FILE *f);

#endif
