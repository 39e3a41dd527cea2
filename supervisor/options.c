/* harness-exec option parsing; see options.h. No getopt: its global
 * state makes repeated parsing in tests awkward. */
#include "supervisor/options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/types.h"
#include "supervisor/session.h"

enum {
	O_POLICY,
	O_PROFILE,
	O_MODE,
	O_AUDIT_LOG,
	O_SESSION,
	O_QUIET,
	O_VERBOSE,
	O_HELP,
	O_VERSION,
	O_DOCTOR,
	O_WORKTREE,
	O_BASE,
	O_COPY_UNTRACKED,
	O_KEEP_WORKTREE,
	O_NO_KERNEL_NOTIFY,
	O_EXEC_GATE,
	O_NO_EXEC_GATE,
	O_TRACE_READS,
	O_NO_KERNEL_AUDIT,
	O_DNS_UPSTREAM,
	O_DNS_DENIED,
	O_ASK_TIMEOUT,
	O_METRICS,
	O_METRICS_FILE,
	O_OTLP_ENDPOINT
};

static const struct {
	const char *lng;
	char shrt;
	bool arg;
	int id;
} opts[] = {
    {"policy", 'p', true, O_POLICY},
    {"mode", 'm', true, O_MODE},
    {"profile", 'P', true, O_PROFILE},
    {"audit-log", 'a', true, O_AUDIT_LOG},
    {"session", 's', true, O_SESSION},
    {"quiet", 'q', false, O_QUIET},
    {"verbose", 'v', false, O_VERBOSE},
    {"help", 'h', false, O_HELP},
    {"version", 'V', false, O_VERSION},
    {"doctor", 0, false, O_DOCTOR},
    {"worktree", 0, false, O_WORKTREE},
    {"base", 0, true, O_BASE},
    {"copy-untracked", 0, false, O_COPY_UNTRACKED},
    {"keep-worktree", 0, false, O_KEEP_WORKTREE},
    {"no-kernel-notify", 0, false, O_NO_KERNEL_NOTIFY},
    {"exec-gate", 0, false, O_EXEC_GATE},
    {"no-exec-gate", 0, false, O_NO_EXEC_GATE},
    {"trace-reads", 0, false, O_TRACE_READS},
    {"no-kernel-audit", 0, false, O_NO_KERNEL_AUDIT},
    {"dns-upstream", 0, true, O_DNS_UPSTREAM},
    {"dns-denied", 0, true, O_DNS_DENIED},
    {"ask-timeout", 0, true, O_ASK_TIMEOUT},
    {"metrics", 0, true, O_METRICS},
    {"metrics-file", 0, true, O_METRICS_FILE},
    {"otlp-endpoint", 0, true, O_OTLP_ENDPOINT},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

int hx_options_upstream(const char *s, struct sockaddr_in *out)
{
	const char *colon = strrchr(s, ':');
	char host[INET_ADDRSTRLEN], *end;
	unsigned long port;

	memset(out, 0, sizeof(*out));
	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	port = strtoul(colon + 1, &end, 10);
	if (*end || !colon[1] || !port || port > 65535 ||
	    inet_pton(AF_INET, host, &out->sin_addr) != 1)
		return -EINVAL;
	out->sin_family = AF_INET;
	out->sin_port = htons((uint16_t)port);
	return 0;
}

static int set_otlp(struct hx_options *o, const char *val, char *err,
		    size_t errlen)
{
	if (strncmp(val, "http://", 7) || !val[7]) {
		snprintf(err, errlen,
			 "--otlp-endpoint %s: expected an http:// URL of an "
			 "OTLP/HTTP collector, e.g. http://localhost:4318",
			 val);
		return -EINVAL;
	}
	o->otlp_endpoint = val;
	return 0;
}

static int set(struct hx_options *o, int id, const char *val, char *err,
	       size_t errlen)
{
	switch (id) {
	case O_POLICY:
		if (!val[0])
			goto empty;
		o->policy = val;
		break;
	case O_PROFILE:
		if (!val[0])
			goto empty;
		if (!strcmp(val, "none")) {
			o->no_profile = true;
		} else if (o->nprofiles == HX_MAX_PROFILES) {
			snprintf(err, errlen, "--profile: at most %d",
				 HX_MAX_PROFILES);
			return -EINVAL;
		} else {
			o->profiles[o->nprofiles++] = val;
		}
		break;
	case O_MODE:
		if (!strcmp(val, "enforce"))
			o->mode = HX_MODE_ENFORCE;
		else if (!strcmp(val, "audit"))
			o->mode = HX_MODE_AUDIT;
		else {
			snprintf(err, errlen,
				 "--mode: '%s' is not enforce or audit", val);
			return -EINVAL;
		}
		break;
	case O_AUDIT_LOG:
		if (!val[0])
			goto empty;
		o->audit_log = val;
		break;
	case O_SESSION:
		if (!hx_session_name_valid(val)) {
			snprintf(err, errlen,
				 "--session: '%s' is not a valid name "
				 "([A-Za-z0-9._-], 1 to 64 characters)",
				 val);
			return -EINVAL;
		}
		o->session = val;
		break;
	case O_QUIET:
		o->quiet = true;
		break;
	case O_VERBOSE:
		o->verbose = true;
		break;
	case O_HELP:
		o->help = true;
		break;
	case O_VERSION:
		o->version = true;
		break;
	case O_DOCTOR:
		o->doctor = true;
		break;
	case O_WORKTREE:
		o->worktree = true;
		break;
	case O_BASE:
		if (!val[0])
			goto empty;
		o->base = val;
		break;
	case O_COPY_UNTRACKED:
		o->copy_untracked = true;
		break;
	case O_KEEP_WORKTREE:
		o->keep_worktree = true;
		break;
	case O_NO_KERNEL_NOTIFY:
		o->no_kernel_notify = true;
		break;
	case O_EXEC_GATE:
		o->exec_gate = true;
		break;
	case O_NO_EXEC_GATE:
		o->exec_gate = false;
		break;
	case O_TRACE_READS:
		o->trace_reads = true;
		break;
	case O_NO_KERNEL_AUDIT:
		o->no_kernel_audit = true;
		break;
	case O_DNS_UPSTREAM:
		if (hx_options_upstream(val, &o->dns_upstream)) {
			snprintf(err, errlen,
				 "--dns-upstream %s: expected IPv4:PORT, e.g. "
				 "127.0.0.1:5353",
				 val);
			return -EINVAL;
		}
		o->has_dns_upstream = true;
		break;
	case O_DNS_DENIED:
		if (strcmp(val, "nxdomain") && strcmp(val, "refused")) {
			snprintf(
			    err, errlen,
			    "--dns-denied %s: expected nxdomain or refused",
			    val);
			return -EINVAL;
		}
		o->dns_refused = !strcmp(val, "refused");
		break;
	case O_ASK_TIMEOUT: {
		char *end;
		unsigned long v = strtoul(val, &end, 10);

		if (val[0] < '0' || val[0] > '9' || *end || v > 86400) {
			snprintf(err, errlen,
				 "--ask-timeout %s: expected seconds, 0 to "
				 "86400 (0: refuse an ask at once)",
				 val);
			return -EINVAL;
		}
		o->ask_timeout = (int)v;
		break;
	}
	case O_METRICS:
		if (!val[0])
			goto empty;
		o->metrics = val; /* checked as it is bound (metrics_serve.h) */
		break;
	case O_METRICS_FILE:
		if (!val[0])
			goto empty;
		o->metrics_file = val;
		break;
	case O_OTLP_ENDPOINT:
		return set_otlp(o, val, err, errlen);
	}
	return 0;
empty:
	for (size_t k = 0; k < NOPTS; k++)
		if (opts[k].id == id)
			snprintf(err, errlen, "--%s: empty value", opts[k].lng);
	return -EINVAL;
}

bool hx_options_takes_value(const char *a)
{
	for (size_t k = 0; k < NOPTS; k++)
		if (opts[k].arg && ((a[0] == '-' && a[1] == '-' &&
				     !strcmp(a + 2, opts[k].lng)) ||
				    (a[0] == '-' && opts[k].shrt &&
				     a[1] == opts[k].shrt && !a[2])))
			return true;
	return false;
}

int hx_options_parse(int argc, char *const *argv, struct hx_options *o,
		     char *err, size_t errlen)
{
	int i, r;
	size_t k;

	memset(o, 0, sizeof(*o));
	o->mode = -1;
	o->ask_timeout = -1;
	o->exec_gate = true;
	if (errlen)
		err[0] = '\0';
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq;
		bool found = false;

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break; /* the command starts */
		for (k = 0; k < NOPTS && !found; k++) {
			size_t n = strlen(opts[k].lng);

			if (a[1] == '-') {
				if (strncmp(a + 2, opts[k].lng, n))
					continue;
				eq = a + 2 + n;
				if (*eq == '=' && opts[k].arg)
					val = eq + 1;
				else if (*eq)
					continue;
			} else if (a[1] != opts[k].shrt || a[2]) {
				continue;
			}
			found = true;
			if (opts[k].arg && !val) {
				if (i + 1 >= argc) {
					snprintf(err, errlen,
						 "--%s needs a value",
						 opts[k].lng);
					return -EINVAL;
				}
				val = argv[++i];
			}
			r = set(o, opts[k].id, val, err, errlen);
			if (r)
				return r;
		}
		if (!found) {
			snprintf(err, errlen, "unknown option '%s'", a);
			return -EINVAL;
		}
	}
	if ((o->base || o->copy_untracked || o->keep_worktree) &&
	    !o->worktree) {
		snprintf(err, errlen, "--%s needs --worktree",
			 o->base	     ? "base"
			 : o->copy_untracked ? "copy-untracked"
					     : "keep-worktree");
		return -EINVAL;
	}
	if (o->no_profile && o->nprofiles) {
		snprintf(err, errlen, "--profile none excludes other profiles");
		return -EINVAL;
	}
	if (o->quiet && o->verbose) {
		snprintf(err, errlen,
			 "--quiet and --verbose exclude each other");
		return -EINVAL;
	}
	o->cmd = argv + i;
	o->ncmd = argc - i;
	if (!o->ncmd && !o->help && !o->version && !o->doctor) {
		snprintf(err, errlen, "no command given");
		return -EINVAL;
	}
	return 0;
}

/* The subcommands: worktrees (worktree.h), answers to questions
 * (askcli.h). */
static void usage_subcommands(FILE *f)
{
	fputs("Worktree sessions (harness-exec SUBCOMMAND; run a program\n"
	      "of one of these names as 'harness-exec -- NAME'):\n"
	      "  harness-exec checkpoint [SESSION]   checkpoint a running one\n"
	      "  harness-exec restore SESSION N      worktree back to N\n"
	      "  harness-exec gc [--older-than AGE]  remove ended sessions'\n"
	      "                        worktrees and refs (AGE: 30m, 12h, 7d)\n"
	      "\n",
	      f);
	fputs(
	    "Approvals (a call the policy says ask for waits in its system\n"
	    "call; the question is put on this terminal, the agent's\n"
	    "terminal input held meanwhile, and answered with a key: o once,\n"
	    "s for the session, a always, d deny, D deny always):\n"
	    "  harness-exec pending [--session ID]  what waits, as JSON lines\n"
	    "  harness-exec approve ID [--scope once|session|always]\n"
	    "                        [--prefix N] [--session ID]\n"
	    "  harness-exec deny ID [--scope once|session|always]\n"
	    "                        answer from another terminal or a\n"
	    "                        program; \"always\" is kept in\n"
	    "                        $XDG_STATE_HOME/harness/grants.jsonl\n"
	    "                        (harness-policy grants lists, revokes)\n"
	    "  harness-exec answer ID [--] TEXT\n"
	    "                        answers a question of the agent's own\n"
	    "                        (harness-mcp's ask_user); on this\n"
	    "                        terminal: a digit picks a choice, or\n"
	    "                        type a line and Enter; Esc declines\n"
	    "\n"
	    "Alerts (the policy's alerts:, docs/alerts.md):\n"
	    "  harness-exec resume [--session ID]\n"
	    "                        thaws a session an alert paused\n"
	    "\n",
	    f);
}

/* Where things are, what harness-exec exits with, examples. */
static void usage_files(FILE *f)
{
	fputs(
	    "Files:\n"
	    "  $XDG_STATE_HOME/harness/sessions/<id>/audit.jsonl\n"
	    "                        the audit log (default ~/.local/state)\n"
	    "  $XDG_STATE_HOME/harness/sessions/<id>/sock\n"
	    "                        the supervisor socket (or\n"
	    "                        /tmp/harness-<uid>/<id>.sock when the\n"
	    "                        path is too long, or with\n"
	    "                        --no-kernel-notify)\n"
	    "  $XDG_STATE_HOME/harness/sessions/<id>/ask\n"
	    "                        the session's ask socket (approve, deny)\n"
	    "  $XDG_STATE_HOME/harness/grants.jsonl\n"
	    "                        the answers given \"always\"\n"
	    "  $XDG_STATE_HOME/harness/redact.key\n"
	    "                        the key of the tags of redacted secrets\n"
	    "                        (audit.redact)\n"
	    "  /tmp/harness-<uid>/<id>/tmp  the command's TMPDIR (a killed\n"
	    "                        session's is removed by the next start)\n"
	    "  The command can neither read nor write the state directory,\n"
	    "  the audit log or the policy file.\n"
	    "\n"
	    "Exit status:\n"
	    "  the command's status; 128+N when it was killed by signal N;\n"
	    "  126 when CMD cannot be executed, 127 when it is not found;\n"
	    "  2 on a usage error, a policy error (file:line:column) or a\n"
	    "  setup failure.\n"
	    "\n"
	    "Examples:\n"
	    "  harness-exec -- make test\n"
	    "  harness-exec --mode audit --verbose -- python3 agent.py\n"
	    "  harness-exec --policy team.yaml --audit-log run.jsonl -- sh -c "
	    "'git status'\n"
	    "  harness-audit verify "
	    "~/.local/state/harness/sessions/*/audit.jsonl\n",
	    f);
}

void hx_options_usage(FILE *f)
{
	fputs(
	    "Usage: harness-exec [OPTIONS] [--] CMD [ARGS...]\n"
	    "\n"
	    "Run CMD under the harness supervisor: every program it starts,\n"
	    "every file it opens for writing (and, by policy, reading),\n"
	    "every connection and name lookup its processes make through\n"
	    "libc is decided by the policy and written to a hash-chained\n"
	    "audit log. Denied calls fail with EACCES and print one line\n"
	    "on the program's stderr.\n"
	    "\n"
	    "Options:\n"
	    "  -p, --policy FILE     policy to enforce (YAML); default: the\n"
	    "                        embedded policy (harness-policy default)\n"
	    "  -P, --profile NAME    add a built-in profile (harness-policy\n"
	    "                        profiles) or a policy FILE to the "
	    "policy;\n"
	    "                        repeatable. Without it, the profile of\n"
	    "                        the command is chosen from its real\n"
	    "                        executable (or the script an interpreter\n"
	    "                        runs): claude, codex, gemini, ...;\n"
	    "                        --profile auto adds that one beside\n"
	    "                        others, --profile none adds none\n"
	    "  -m, --mode MODE       enforce (deny what the policy denies) or\n"
	    "                        audit (log the verdict, deny nothing);\n"
	    "                        overrides the policy's mode\n"
	    "  -a, --audit-log PATH  write the audit log to PATH (appended,\n"
	    "                        the chain continues) instead of the\n"
	    "                        session directory\n"
	    "  -s, --session NAME    session id ([A-Za-z0-9._-], at most 64);\n"
	    "                        default: YYYYMMDDTHHMMSSZ-<6 hex>\n"
	    "  -q, --quiet           no summary line at the end\n"
	    "  -v, --verbose         print the session id, its directory, the\n"
	    "                        audit log and the socket at start, and\n"
	    "                        what the kernel's Landlock ruleset holds\n"
	    "                        (denied, masked, writable, TCP ports)\n"
	    "  -h, --help            this help\n"
	    "  -V, --version         print the version\n"
	    "      --doctor          print which kernel mechanisms this\n"
	    "                        machine has (seccomp, user-notify,\n"
	    "                        Landlock ABI, cgroup v2, ...) and what\n"
	    "                        each guarantees or loses; run nothing\n"
	    "      --no-kernel-notify  no seccomp user-notify layer: writes,\n"
	    "                        connects and sends with an address are\n"
	    "                        then decided by the shim only (Landlock\n"
	    "                        and the deny list still hold)\n"
	    "      --dns-upstream ADDR:PORT\n"
	    "                        ask this IPv4 name server for the names\n"
	    "                        the agent may look up, instead of the\n"
	    "                        ones /etc/resolv.conf names (the agent's\n"
	    "                        own questions are answered by\n"
	    "                        harness-exec either way)\n"
	    "      --dns-denied nxdomain|refused\n"
	    "                        the answer to a question the policy\n"
	    "                        denies: the name does not exist (the\n"
	    "                        default), or the server will not say\n"
	    "      --ask-timeout SECONDS\n"
	    "                        how long a call the policy says ask for\n"
	    "                        waits for a person before it is refused\n"
	    "                        (default: the policy's ask_timeout, 60);\n"
	    "                        0 refuses it at once\n"
	    "      --trace-reads     decide every open in the kernel layer,\n"
	    "                        read-only ones too: reads of programs\n"
	    "                        that skip the shim are judged like\n"
	    "                        writes (also inside a write root) and\n"
	    "                        each is logged; costs a round trip per\n"
	    "                        open. On by itself in audit mode when\n"
	    "                        the policy logs reads (audit.log_reads)\n"
	    "      --no-kernel-audit  as root, when kernel audit is off,\n"
	    "                        leave it off: Landlock's refusals of\n"
	    "                        programs that skip the shim are then\n"
	    "                        not recorded (by default harness-exec\n"
	    "                        turns it on for its sessions and off\n"
	    "                        after the last one: docs/landlock.md)\n"
	    "      --no-exec-gate    do not decide execve/execveat in the\n"
	    "                        kernel layer nor check, at the exec\n"
	    "                        event (ptrace), that the new image and\n"
	    "                        argv are the approved ones (on by\n"
	    "                        default; off with --no-kernel-notify);\n"
	    "                        exec rules then bind only programs\n"
	    "                        that go through the shim\n"
	    "      --metrics ADDR    serve the session's metrics in\n"
	    "                        Prometheus's text format at\n"
	    "                        http://ADDR/metrics: ADDR is [HOST:]PORT\n"
	    "                        on a loopback address (127.0.0.1 by\n"
	    "                        default; port 0: any free one, said in\n"
	    "                        session_start) or unix:PATH, a socket\n"
	    "                        only its owner can connect to\n"
	    "      --metrics-file FILE\n"
	    "                        write them to FILE every 5 s and at the\n"
	    "                        end (a new file renamed over it), for\n"
	    "                        node_exporter's textfile collector\n"
	    "      --otlp-endpoint URL\n"
	    "                        send the session as OpenTelemetry\n"
	    "                        traces to an OTLP/HTTP collector as it\n"
	    "                        runs (http:// only; a URL without a\n"
	    "                        path gets /v1/traces); default:\n"
	    "                        $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or\n"
	    "                        $OTEL_EXPORTER_OTLP_ENDPOINT, unless\n"
	    "                        OTEL_TRACES_EXPORTER=none\n"
	    "      --worktree        run CMD in a new linked git worktree on\n"
	    "                        branch harness/<session>, with\n"
	    "                        checkpoints and a result commit\n"
	    "                        (docs/worktrees.md)\n"
	    "      --base REF        the worktree's start (default HEAD)\n"
	    "      --copy-untracked  copy untracked (not ignored) files in\n"
	    "      --keep-worktree   keep the worktree after the session\n"
	    "\n"
	    "Options end at '--' or at the first argument that is not one.\n"
	    "\n",
	    f);
	usage_subcommands(f);
	fputs(
	    "Kernel sandbox (both modes, also --mode audit): the command\n"
	    "runs with no_new_privs, no capabilities (also as root) and a\n"
	    "seccomp filter that refuses escape syscalls: ptrace,\n"
	    "process_vm_*, io_uring (ENOSYS), bpf, mount and namespace\n"
	    "creation, keyrings, TIOCSTI, a second seccomp listener,\n"
	    "fileless exec, clone3 (ENOSYS), other syscall ABIs (i386,\n"
	    "x32: killed). These protect the sandbox itself and are not\n"
	    "policy decisions, so audit mode enforces them too. In\n"
	    "enforce mode Landlock also bounds files and ports.\n"
	    "\n"
	    "Environment:\n"
	    "  HARNESS_SHIM          the shim library to preload (default:\n"
	    "                        libharness-shim.so next to harness-exec)\n"
	    "  XDG_STATE_HOME, HOME  where the state directory is\n"
	    "  The command gets HARNESS_SOCKET, LD_PRELOAD (the shim first)\n"
	    "  and TMPDIR (a private directory removed at the end).\n"
	    "\n",
	    f);
	usage_files(f);
}
