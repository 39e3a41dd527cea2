/* harness-policy: check a policy file, explain a decision, print the
 * embedded default. All the logic is in libhxpolicy. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "policy/policy.h"
#include "tools/grants_cli.h"
#include "tools/learn_cli.h"
#include "tools/policytest_cli.h"

enum cmd {
	CMD_NONE,
	CMD_CHECK,
	CMD_EXPLAIN,
	CMD_DEFAULT,
	CMD_SHOW,
	CMD_PROFILES
};
#define NCMDS	     6
#define MAX_PROFILES 8

struct args {
	enum cmd cmd;
	const char *policy; /* explain, show: NULL for the default */
	const char *profiles[MAX_PROFILES]; /* explain, show: --profile */
	size_t nprofiles;
	int nargs; /* check: files; explain: event words */
	char **args;
};

static const char usage_main[] =
    "Usage: harness-policy [-h] COMMAND [ARGS...]\n"
    "\n"
    "Check, explain and print harness policies.\n"
    "\n"
    "Commands:\n"
    "  check FILE...                       validate policy files and run "
    "their examples\n"
    "  explain [--policy FILE] -- EVENT... show the verdict and the rule "
    "for an event\n"
    "  default                             print the embedded default "
    "policy\n"
    "  show [--policy FILE] [--profile P]  print the composed policy, "
    "each rule\n"
    "                                      with where it is written\n"
    "  profiles                            list the built-in profiles\n"
    "  learn LOG...                        a policy that allows what recorded\n"
    "                                      sessions did\n"
    "  test POLICY LOG...                  replay recorded sessions through a\n"
    "                                      policy: what would change\n"
    "  grants [revoke ID...]               list or revoke the answers given\n"
    "                                      \"always\" to harness-exec's "
    "questions\n"
    "\n"
    "Options:\n"
    "  -h, --help   show this help; `harness-policy COMMAND --help` for a "
    "command\n"
    "\n"
    "Exit status:\n"
    "  0 success, 1 failed examples, 2 a policy error or a usage error.\n"
    "\n"
    "Policy variables: $HOME and $TMPDIR (default /tmp) from the "
    "environment,\n"
    "$CWD the current directory, $WORKTREE = $CWD, $SESSION \"explain\".\n";

static const char usage_check[] =
    "Usage: harness-policy check [-h] [--] FILE...\n"
    "\n"
    "Loads each FILE as a harness policy, reporting the first error as\n"
    "FILE:LINE:COLUMN: MESSAGE (with a hint on the next line), then runs\n"
    "every rule's match / not_match examples against that rule, reporting\n"
    "each one that fails. Prints \"FILE: ok, N rules, M examples\" for a\n"
    "good file.\n"
    "\n"
    "Options:\n"
    "  -h, --help   show this help\n"
    "  --           end of options (for a file named like an option)\n"
    "\n"
    "Exit status:\n"
    "  0  every file is valid and all its examples pass\n"
    "  1  some example failed\n"
    "  2  a file could not be read or is not a valid policy; usage error\n"
    "\n"
    "Examples:\n"
    "  harness-policy check policy/default.yaml\n"
    "  harness-policy default > my.yaml && harness-policy check my.yaml\n";

static const char usage_explain[] =
    "Usage: harness-policy explain [-h] [--policy FILE | FILE] -- EVENT "
    "WORDS...\n"
    "\n"
    "Decides one hypothetical event with the policy (the embedded default\n"
    "without --policy) and prints one line:\n"
    "  VERDICT  CATEGORY  RISK  rule=RULE  pattern=PATTERN\n"
    "RULE is the rule's id, FILE:LINE for a rule without one, or\n"
    "default:CATEGORY when no rule matched (no pattern then). An exec adds\n"
    "class=CLASS (read_only, mutating, other, code, package_install,\n"
    "network, unparsable, destructive, privilege: the strongest of what it\n"
    "runs, read through sh -c, env, xargs, find -exec, git -C, eval) and,\n"
    "when a command it runs decided, judged_as=THAT COMMAND. What only a\n"
    "session knows is judged there, after the policy: a loopback port the\n"
    "policy says ask for is allowed when only the session's processes\n"
    "listen on it (rule harness:own-listener) or when it is the model\n"
    "endpoint the agent's environment names (harness:model-endpoint); a\n"
    "unix socket no process of the session bound is refused\n"
    "(harness:neighbour).\n"
    "\n"
    "Events:\n"
    "  exec CMD [ARG...]      CMD without '/' is looked up in $PATH\n"
    "  read PATH | write PATH | unlink PATH | mkdir PATH | rmdir PATH |\n"
    "  truncate PATH          relative paths are made absolute\n"
    "  rename SRC DST         both are writes\n"
    "  link EXISTING NEW      a write of NEW, a read of EXISTING\n"
    "  symlink TARGET NEW     a write of NEW\n"
    "  connect ADDR | send ADDR\n"
    "                         ADDR: IPv4:PORT, [IPv6]:PORT, NAME:PORT,\n"
    "                         unix:/path or unix:@abstract; an IP\n"
    "                         address is judged by its names (names=):\n"
    "                         the NAME given here, and in a session the\n"
    "                         names harness-exec's DNS answered for it\n"
    "                         (audit records: args.names, names_from)\n"
    "  listen ADDR            a server's bind: IPv4:PORT or [IPv6]:PORT\n"
    "                         (0.0.0.0, [::]: every interface), judged\n"
    "                         by the rules' listen: patterns only\n"
    "  resolve NAME           a name lookup: allowed when some port of the\n"
    "                         name may be reached, or by a rule of its own\n"
    "\n"
    "Options:\n"
    "  -p, --policy FILE   the policy to use (default: the embedded one)\n"
    "  -P, --profile NAME  add a built-in profile or a policy file to it\n"
    "                      (repeatable), as harness-exec --profile does\n"
    "  -h, --help          show this help\n"
    "  --                  end of options: the event follows\n"
    "\n"
    "Exit status:\n"
    "  0  the event was decided (whatever the verdict)\n"
    "  2  a policy error, or a bad event or usage\n"
    "\n"
    "Examples:\n"
    "  harness-policy explain -- read ~/.ssh/id_rsa\n"
    "  harness-policy explain --policy my.yaml -- exec git push origin main\n"
    "  harness-policy explain -- connect api.anthropic.com:443\n";

static const char usage_default[] =
    "Usage: harness-policy default [-h]\n"
    "\n"
    "Prints the default policy compiled into harness, verbatim: the\n"
    "commented YAML of policy/default.yaml. A starting point for your own.\n"
    "\n"
    "Options:\n"
    "  -h, --help   show this help\n"
    "\n"
    "Exit status:\n"
    "  0 success, 2 usage error.\n"
    "\n"
    "Examples:\n"
    "  harness-policy default > my-policy.yaml\n";

static const char usage_show[] =
    "Usage: harness-policy show [-h] [--policy FILE] [--profile NAME]...\n"
    "\n"
    "Prints the policy as harness-exec composes it: the main policy (the\n"
    "embedded default without --policy), what it includes, and each\n"
    "--profile, every rule with its verdict, access and expanded patterns\n"
    "and, in a comment, the file and line it comes from. Rules named\n"
    "harness:* are the session's own (its directory and audit log,\n"
    "included policy files, a worktree's git paths).\n"
    "\n"
    "Options:\n"
    "  -p, --policy FILE   the main policy (default: the embedded one)\n"
    "  -P, --profile NAME  add a built-in profile, or a policy file\n"
    "                      (a path with a '/'); repeatable\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status:\n"
    "  0 success, 2 a policy error or a usage error.\n"
    "\n"
    "Examples:\n"
    "  harness-policy show --profile claude\n"
    "  harness-policy show --policy my.yaml | less\n";

static const char usage_profiles[] =
    "Usage: harness-policy profiles [-h]\n"
    "\n"
    "Lists the built-in profiles, one a line: NAME, what it is for, and\n"
    "the commands harness-exec chooses it for (globs on the real path of\n"
    "the wrapped executable or of the script an interpreter runs).\n"
    "`harness-policy show --profile NAME` prints one's rules.\n"
    "\n"
    "Options:\n"
    "  -h, --help   show this help\n"
    "\n"
    "Exit status:\n"
    "  0 success, 2 usage error.\n";

static const char *usage_of(enum cmd c)
{
	switch (c) {
	case CMD_SHOW:
		return usage_show;
	case CMD_PROFILES:
		return usage_profiles;
	case CMD_CHECK:
		return usage_check;
	case CMD_EXPLAIN:
		return usage_explain;
	case CMD_DEFAULT:
		return usage_default;
	case CMD_NONE:
		break;
	}
	return usage_main;
}

/* Returns -1 to go on, or the exit status (help printed: 0; usage
 * error: 2). */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option main_opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static const struct option sub_opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"policy", required_argument, NULL, 'p'},
	    {"profile", required_argument, NULL, 'P'},
	    {NULL, 0, NULL, 0},
	};
	static const char *const names[NCMDS] = {
	    NULL, "check", "explain", "default", "show", "profiles"};
	bool takes_policy;
	int c;

	memset(a, 0, sizeof(*a));
	/* '+': stop at the command word; its options are its own. */
	while ((c = getopt_long(argc, argv, "+h", main_opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_main, stdout);
			return 0;
		}
		goto usage;
	}
	if (optind >= argc) {
		fputs("harness-policy: no command given\n", stderr);
		goto usage;
	}
	for (int i = 1; i < NCMDS; i++)
		if (!strcmp(argv[optind], names[i]))
			a->cmd = (enum cmd)i;
	if (a->cmd == CMD_NONE) {
		fprintf(stderr, "harness-policy: unknown command '%s'\n",
			argv[optind]);
		goto usage;
	}
	argc -= optind;
	argv += optind;
	optind = 1;
	/* getopt names argv[0] in its messages: name the subcommand. */
	static char prog[32];

	snprintf(prog, sizeof(prog), "harness-policy %s", names[a->cmd]);
	argv[0] = prog;
	takes_policy = a->cmd == CMD_EXPLAIN || a->cmd == CMD_SHOW;
	while ((c = getopt_long(argc, argv, takes_policy ? "+hp:P:" : "+h",
				sub_opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_of(a->cmd), stdout);
			return 0;
		}
		if (c == 'p' && takes_policy) {
			a->policy = optarg;
			continue;
		}
		if (c == 'P' && takes_policy && a->nprofiles < MAX_PROFILES) {
			a->profiles[a->nprofiles++] = optarg;
			continue;
		}
		goto usage;
	}
	a->args = argv + optind;
	a->nargs = argc - optind;
	switch (a->cmd) {
	case CMD_CHECK:
		if (a->nargs == 0) {
			fputs("harness-policy check: no file given\n", stderr);
			goto usage;
		}
		break;
	case CMD_EXPLAIN:
		/* "explain FILE -- EVENT": getopt stopped at FILE, so the
		 * "--" is still there, after it. */
		if (strcmp(argv[optind - 1], "--") && a->nargs > 1 &&
		    !strcmp(a->args[1], "--")) {
			if (a->policy) {
				fputs("harness-policy explain: two policies "
				      "given\n",
				      stderr);
				goto usage;
			}
			a->policy = a->args[0];
			a->args += 2;
			a->nargs -= 2;
		}
		if (a->nargs == 0) {
			fputs("harness-policy explain: no event given\n",
			      stderr);
			goto usage;
		}
		break;
	case CMD_DEFAULT:
	case CMD_SHOW:
	case CMD_PROFILES:
		if (a->nargs) {
			fprintf(stderr, "%s: takes no arguments\n", prog);
			goto usage;
		}
		break;
	case CMD_NONE:
		break;
	}
	return -1;
usage:
	fprintf(stderr, "%s", usage_of(a->cmd));
	return 2;
}

struct tool_vars {
	struct hx_policy_vars v;
	char cwd[PATH_MAX];
};

static void tool_vars_init(struct tool_vars *t)
{
	const char *tmp = getenv("TMPDIR");

	memset(t, 0, sizeof(*t));
	t->v.home = getenv("HOME");
	t->v.cwd = getcwd(t->cwd, sizeof(t->cwd)) ? t->cwd : NULL;
	t->v.tmpdir = tmp && *tmp ? tmp : "/tmp";
	t->v.session = "explain";
}

static void print_failure(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s\n", msg);
}

static int print_error(const struct hx_policy_error *err)
{
	char buf[1024];

	fprintf(stderr, "%s\n", hx_policy_error_format(err, buf, sizeof(buf)));
	return 2;
}

/* file alone, or else as a profile is used: included by the default
 * policy (its disable: may name the default's rules). The error is the
 * file's own. */
static int load_checked(const char *file, const struct hx_policy_vars *v,
			struct hx_policy **p, struct hx_policy_error *err)
{
	struct hx_policy_vars with = *v;
	struct hx_policy_error err2;
	char abs[PATH_MAX];
	const char *inc[1] = {abs};

	if (!hx_policy_load_file(file, v, p, err))
		return 0;
	if (!realpath(file, abs))
		return -1;
	with.include = inc;
	with.ninclude = 1;
	return hx_policy_load_default(&with, p, &err2) ? -1 : 0;
}

static int cmd_check(const struct args *a, const struct hx_policy_vars *v)
{
	int status = 0;

	for (int i = 0; i < a->nargs; i++) {
		struct hx_policy_error err;
		struct hx_policy *p;
		size_t nrules, nex, failed;

		if (load_checked(a->args[i], v, &p, &err)) {
			status = print_error(&err);
			continue;
		}
		hx_policy_stats(p, &nrules, &nex);
		failed = hx_policy_check_examples(p, print_failure, NULL);
		if (failed) {
			fprintf(stderr, "%s: %zu of %zu examples failed\n",
				a->args[i], failed, nex);
			if (status == 0)
				status = 1;
		} else {
			printf("%s: ok, %zu rules, %zu examples\n", a->args[i],
			       nrules, nex);
		}
		hx_policy_free(p);
	}
	return status;
}

/* The policy of explain and show: --policy or the default, plus the
 * --profile includes. */
static int load_composed(const struct args *a, const struct hx_policy_vars *vin,
			 struct hx_policy **p)
{
	struct hx_policy_vars v = *vin;
	struct hx_policy_error err;
	int ret;

	v.include = a->profiles;
	v.ninclude = a->nprofiles;
	ret = a->policy ? hx_policy_load_file(a->policy, &v, p, &err)
			: hx_policy_load_default(&v, p, &err);
	return ret ? print_error(&err) : 0;
}

static int cmd_explain(const struct args *a, const struct hx_policy_vars *v)
{
	struct hx_event_storage *st = malloc(sizeof(*st));
	struct hx_policy *p = NULL;
	struct hx_decision d;
	struct hx_event ev;
	char msg[512];
	int status = 2;

	if (!st) {
		perror("harness-policy");
		return 2;
	}
	if ((status = load_composed(a, v, &p))) {
		status = 2;
		goto out;
	}
	status = 2;
	if (hx_event_parse(a->nargs, a->args, &ev, st, msg, sizeof(msg))) {
		fprintf(stderr, "harness-policy explain: %s\n", msg);
		goto out;
	}
	hx_policy_decide(p, &ev, &d);
	printf("%s  %s  %s  rule=%s", hx_verdict_name(d.verdict),
	       hx_category_name(d.category), hx_risk_name(d.risk), d.rule);
	if (d.pattern)
		printf("  pattern=%s", d.pattern);
	if (d.cls)
		printf("  class=%s", hx_cmd_class_name(d.cls));
	if (d.judged_as[0])
		printf("  judged_as=%s", d.judged_as);
	/* An address is judged by its names: here the one given; in a
	 * session those its DNS answered (args.names, args.names_from). */
	if ((ev.op == HX_OP_CONNECT || ev.op == HX_OP_SEND) && ev.addr &&
	    ev.addr->sa_family != AF_UNIX) {
		printf("  names=");
		for (size_t i = 0; i < ev.nnames; i++)
			printf("%s%s(given)", i ? "," : "", ev.names[i]);
		if (!ev.nnames)
			printf("none");
	}
	if (hx_policy_mode(p) == HX_MODE_AUDIT)
		printf("  (audit mode: not enforced)");
	putchar('\n');
	status = 0;
out:
	hx_policy_free(p);
	free(st);
	return status;
}

static int cmd_default(void)
{
	size_t len;
	const char *text = hx_policy_default_text(&len);

	if (fwrite(text, 1, len, stdout) != len || fflush(stdout)) {
		perror("harness-policy: stdout");
		return 2;
	}
	return 0;
}

/* A string as a YAML double-quoted scalar. */
static void put_quoted(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if ((unsigned char)*s < 0x20)
			printf("\\x%02x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void show_rule(const struct hx_rule_info *r, void *arg)
{
	static const char *const access[] = {"", "read", "write", "any"};
	const char **section = arg;

	if (!*section || strcmp(*section, r->section))
		printf("%s:\n", *section = r->section);
	printf("  - id: %s    # %s\n", r->name, r->origin);
	if (!strcmp(r->section, "files") && r->access != HX_ACCESS_ANY)
		printf("    access: %s\n", access[r->access & 3]);
	if (r->neighbours)
		puts("    neighbours: true");
	printf("    %s: [", hx_verdict_name(r->verdict));
	for (size_t i = 0; i < r->npatterns; i++) {
		fputs(i ? ", " : "", stdout);
		put_quoted(r->patterns[i]);
	}
	puts("]");
}

static void show_source(const char *name, const char *text, size_t len,
			void *arg)
{
	(void)text;
	printf("#   %s (%zu bytes)\n", name, len);
	*(int *)arg += 1;
}

static int cmd_show(const struct args *a, const struct hx_policy_vars *v)
{
	struct hx_policy *p = NULL;
	const char *section = NULL;
	int n = 0;

	if (load_composed(a, v, &p))
		return 2;
	printf("# The policy harness-exec composes from:\n");
	hx_policy_foreach_source(p, show_source, &n);
	printf("# (rules in load order; deny > ask > allow, then the most "
	       "specific pattern)\nmode: %s\n",
	       hx_policy_mode(p) == HX_MODE_AUDIT ? "audit" : "enforce");
	hx_policy_foreach_rule(p, show_rule, &section);
	hx_policy_free(p);
	return fflush(stdout) ? 2 : 0;
}

static int cmd_profiles(const struct hx_policy_vars *v)
{
	for (size_t i = 0; hx_profile_name(i); i++) {
		struct hx_policy_error err;
		struct hx_policy *p;
		const char *d;

		if (hx_profile_load_meta(hx_profile_name(i), v, &p, &err)) {
			print_error(&err);
			return 2;
		}
		d = hx_policy_description(p);
		printf("%-12s %s\n", hx_profile_name(i), d ? d : "");
		hx_policy_free(p);
	}
	return fflush(stdout) ? 2 : 0;
}

int main(int argc, char **argv)
{
	struct tool_vars tv;
	struct args a;
	int ret;

	/* grants: the grants file, not a policy (tools/grants_cli.h). */
	if (argc > 1 && !strcmp(argv[1], "grants"))
		return hx_grants_cli(argc - 1, argv + 1, stdout, stderr);
	/* test: a policy against recorded sessions (policytest_cli.h). */
	if (argc > 1 && !strcmp(argv[1], "test"))
		return hx_policy_test_cli(argc - 1, argv + 1, stdout, stderr);
	/* learn: a policy from recorded sessions (learn_cli.h). */
	if (argc > 1 && !strcmp(argv[1], "learn"))
		return hx_learn_cli(argc - 1, argv + 1, stdout, stderr);
	ret = parse_args(argc, argv, &a);

	if (ret >= 0)
		return ret;
	tool_vars_init(&tv);
	switch (a.cmd) {
	case CMD_CHECK:
		return cmd_check(&a, &tv.v);
	case CMD_EXPLAIN:
		return cmd_explain(&a, &tv.v);
	case CMD_DEFAULT:
		return cmd_default();
	case CMD_SHOW:
		return cmd_show(&a, &tv.v);
	case CMD_PROFILES:
		return cmd_profiles(&tv.v);
	case CMD_NONE:
		break;
	}
	return 2;
}
