/* Exec classification tables; see classify.h. */
#include "supervisor/classify.h"

#include <stdbool.h>
#include <string.h>

#define C_READ                                                                 \
	{                                                                      \
		"read_only", HX_RISK_LOW                                       \
	}
#define C_MUT                                                                  \
	{                                                                      \
		"mutating", HX_RISK_MEDIUM                                     \
	}
#define C_DESTR                                                                \
	{                                                                      \
		"destructive", HX_RISK_HIGH                                    \
	}
#define C_NET                                                                  \
	{                                                                      \
		"network", HX_RISK_HIGH                                        \
	}
#define C_PRIV                                                                 \
	{                                                                      \
		"privilege", HX_RISK_CRITICAL                                  \
	}
#define C_PKG                                                                  \
	{                                                                      \
		"package_install", HX_RISK_HIGH                                \
	}
#define C_CODE                                                                 \
	{                                                                      \
		"code", HX_RISK_HIGH                                           \
	}
#define C_OTHER                                                                \
	{                                                                      \
		"other", HX_RISK_HIGH                                          \
	}

static const struct {
	const char *cmd;
	struct hx_exec_class c;
} by_name[] = {
    /* read only */
    {"ls", C_READ},
    {"cat", C_READ},
    {"head", C_READ},
    {"tail", C_READ},
    {"grep", C_READ},
    {"egrep", C_READ},
    {"fgrep", C_READ},
    {"rg", C_READ},
    {"find", C_READ},
    {"wc", C_READ},
    {"stat", C_READ},
    {"file", C_READ},
    {"diff", C_READ},
    {"less", C_READ},
    {"more", C_READ},
    {"echo", C_READ},
    {"printf", C_READ},
    {"pwd", C_READ},
    {"which", C_READ},
    {"true", C_READ},
    {"false", C_READ},
    {"test", C_READ},
    {"[", C_READ},
    {"sort", C_READ},
    {"uniq", C_READ},
    {"cut", C_READ},
    {"tr", C_READ},
    {"awk", C_READ},
    {"jq", C_READ},
    {"du", C_READ},
    {"df", C_READ},
    {"env", C_READ},
    {"id", C_READ},
    {"whoami", C_READ},
    {"uname", C_READ},
    {"date", C_READ},
    {"basename", C_READ},
    {"dirname", C_READ},
    {"realpath", C_READ},
    {"readlink", C_READ},
    {"sha256sum", C_READ},
    {"md5sum", C_READ},
    {"tree", C_READ},
    {"ps", C_READ},
    {"hostname", C_READ},
    {"sleep", C_READ},
    {"xargs", C_READ},
    {"tee", C_MUT},
    /* mutating */
    {"cp", C_MUT},
    {"mv", C_MUT},
    {"mkdir", C_MUT},
    {"touch", C_MUT},
    {"ln", C_MUT},
    {"make", C_MUT},
    {"gcc", C_MUT},
    {"cc", C_MUT},
    {"g++", C_MUT},
    {"c++", C_MUT},
    {"clang", C_MUT},
    {"ld", C_MUT},
    {"as", C_MUT},
    {"ar", C_MUT},
    {"install", C_MUT},
    {"patch", C_MUT},
    {"tar", C_MUT},
    {"unzip", C_MUT},
    {"gzip", C_MUT},
    {"cmake", C_MUT},
    {"ninja", C_MUT},
    {"go", C_MUT},
    {"rustc", C_MUT},
    {"cargo", C_MUT},
    {"npm", C_MUT},
    {"yarn", C_MUT},
    {"pnpm", C_MUT},
    {"pip", C_MUT},
    {"pip3", C_MUT},
    {"apt", C_MUT},
    {"apt-get", C_MUT},
    {"gem", C_MUT},
    /* destructive */
    {"rm", C_DESTR},
    {"rmdir", C_DESTR},
    {"dd", C_DESTR},
    {"shred", C_DESTR},
    {"wipefs", C_DESTR},
    {"truncate", C_DESTR},
    {"kill", C_DESTR},
    {"pkill", C_DESTR},
    {"killall", C_DESTR},
    /* network */
    {"curl", C_NET},
    {"wget", C_NET},
    {"ssh", C_NET},
    {"scp", C_NET},
    {"sftp", C_NET},
    {"rsync", C_NET},
    {"nc", C_NET},
    {"ncat", C_NET},
    {"netcat", C_NET},
    {"socat", C_NET},
    {"telnet", C_NET},
    {"ftp", C_NET},
    /* privilege */
    {"sudo", C_PRIV},
    {"su", C_PRIV},
    {"doas", C_PRIV},
    {"pkexec", C_PRIV},
    {"chmod", C_PRIV},
    {"chown", C_PRIV},
    {"chgrp", C_PRIV},
    {"setcap", C_PRIV},
    {"setfacl", C_PRIV},
    {"mount", C_PRIV},
    {"umount", C_PRIV},
    {"chroot", C_PRIV},
    {"nsenter", C_PRIV},
    {"unshare", C_PRIV},
    {"capsh", C_PRIV},
};

/* (command, subcommand) pairs that refine the class of by_name. */
static const struct {
	const char *cmd, *sub;
	struct hx_exec_class c;
} by_sub[] = {
    {"apt", "install", C_PKG},	   {"apt-get", "install", C_PKG},
    {"pip", "install", C_PKG},	   {"pip3", "install", C_PKG},
    {"npm", "install", C_PKG},	   {"npm", "i", C_PKG},
    {"npm", "add", C_PKG},	   {"yarn", "install", C_PKG},
    {"yarn", "add", C_PKG},	   {"pnpm", "install", C_PKG},
    {"pnpm", "add", C_PKG},	   {"pnpm", "i", C_PKG},
    {"cargo", "install", C_PKG},   {"gem", "install", C_PKG},
    {"go", "install", C_PKG},	   {"git", "status", C_READ},
    {"git", "log", C_READ},	   {"git", "diff", C_READ},
    {"git", "show", C_READ},	   {"git", "blame", C_READ},
    {"git", "grep", C_READ},	   {"git", "ls-files", C_READ},
    {"git", "rev-parse", C_READ},  {"git", "describe", C_READ},
    {"git", "branch", C_READ},	   {"git", "remote", C_READ},
    {"git", "config", C_MUT},	   {"git", "add", C_MUT},
    {"git", "commit", C_MUT},	   {"git", "init", C_MUT},
    {"git", "checkout", C_MUT},	   {"git", "switch", C_MUT},
    {"git", "merge", C_MUT},	   {"git", "rebase", C_MUT},
    {"git", "stash", C_MUT},	   {"git", "tag", C_MUT},
    {"git", "mv", C_MUT},	   {"git", "restore", C_MUT},
    {"git", "cherry-pick", C_MUT}, {"git", "apply", C_MUT},
    {"git", "rm", C_DESTR},	   {"git", "clean", C_DESTR},
    {"git", "push", C_NET},	   {"git", "fetch", C_NET},
    {"git", "pull", C_NET},	   {"git", "clone", C_NET},
    {"git", "ls-remote", C_NET},   {"git", "submodule", C_NET},
};

/* Interpreters and the option that makes them run code from argv. */
static const struct {
	const char *cmd, *opt;
} interp[] = {
    {"sh", "-c"},      {"bash", "-c"}, {"dash", "-c"},	   {"zsh", "-c"},
    {"ksh", "-c"},     {"fish", "-c"}, {"python", "-c"},   {"python3", "-c"},
    {"python2", "-c"}, {"node", "-e"}, {"node", "--eval"}, {"node", "-p"},
    {"perl", "-e"},    {"perl", "-E"}, {"ruby", "-e"},	   {"php", "-r"},
    {"deno", "eval"},  {"bun", "-e"},
};

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* python3.11 -> python3 */
static bool same_cmd(const char *name, const char *cmd)
{
	size_t n = strlen(cmd);

	if (strncmp(name, cmd, n))
		return false;
	if (name[n] == '\0')
		return true;
	if (strncmp(cmd, "python", 6))
		return false;
	for (name += n; *name; name++)
		if (!((*name >= '0' && *name <= '9') || *name == '.'))
			return false;
	return true;
}

static bool has_arg(const char *const *argv, size_t argc, const char *a)
{
	for (size_t i = 1; i < argc; i++)
		if (argv[i] && !strcmp(argv[i], a))
			return true;
	return false;
}

/* First argument that is not an option (git -C dir -c k=v status). */
static size_t subcommand(const char *cmd, const char *const *argv, size_t argc)
{
	size_t i;

	for (i = 1; i < argc && argv[i]; i++) {
		if (argv[i][0] != '-')
			return i;
		if (!strcmp(cmd, "git") &&
		    (!strcmp(argv[i], "-C") || !strcmp(argv[i], "-c") ||
		     !strcmp(argv[i], "--git-dir") ||
		     !strcmp(argv[i], "--work-tree")))
			i++;
	}
	return argc;
}

static struct hx_exec_class git_refine(const char *sub, const char *const *argv,
				       size_t argc, struct hx_exec_class c)
{
	static const struct hx_exec_class destr = C_DESTR;

	if (!strcmp(sub, "reset") && has_arg(argv, argc, "--hard"))
		return destr;
	if (!strcmp(sub, "reset"))
		return (struct hx_exec_class)C_MUT;
	if (!strcmp(sub, "push") &&
	    (has_arg(argv, argc, "--force") || has_arg(argv, argc, "-f") ||
	     has_arg(argv, argc, "--force-with-lease") ||
	     has_arg(argv, argc, "--delete")))
		return destr;
	if (!strcmp(sub, "branch") &&
	    (has_arg(argv, argc, "-D") || has_arg(argv, argc, "-d")))
		return destr;
	return c;
}

struct hx_exec_class hx_classify_exec(const char *path, const char *const *argv,
				      size_t argc)
{
	static const struct hx_exec_class other = C_OTHER;
	struct hx_exec_class c = other;
	const char *name;
	size_t i, skip = 0, sub;

	/* Skip wrappers: env [-i] [VAR=x]... cmd, nice, nohup, time... */
	while (skip < argc && argv[skip]) {
		name = base(argv[skip]);
		if (!strcmp(name, "env") || !strcmp(name, "nice") ||
		    !strcmp(name, "nohup") || !strcmp(name, "time") ||
		    !strcmp(name, "command") || !strcmp(name, "exec") ||
		    !strcmp(name, "stdbuf") || !strcmp(name, "timeout")) {
			bool timeout = !strcmp(name, "timeout");

			skip++;
			while (
			    skip < argc && argv[skip] &&
			    (argv[skip][0] == '-' || strchr(argv[skip], '=')))
				skip++;
			if (timeout && skip < argc)
				skip++; /* the duration */
			continue;
		}
		break;
	}
	if (skip >= argc || !argv[skip]) {
		if (skip > 0 || !path)
			return skip > 0 ? (struct hx_exec_class)C_READ : other;
		name = base(path);
	} else {
		name = base(argv[skip]);
	}
	if (skip == 0 && path && argc && argv[0] && argv[0][0] == '-')
		name = base(path); /* login shells: argv[0] "-bash" */
	argv += skip;
	argc -= skip;

	for (i = 0; i < sizeof(interp) / sizeof(interp[0]); i++)
		if (same_cmd(name, interp[i].cmd) &&
		    has_arg(argv, argc, interp[i].opt))
			return (struct hx_exec_class)C_CODE;
	if (same_cmd(name, "python") && argc > 3 && !strcmp(argv[1], "-m") &&
	    (!strcmp(argv[2], "pip") || !strcmp(argv[2], "pip3")) &&
	    !strcmp(argv[3], "install"))
		return (struct hx_exec_class)C_PKG;
	if (!strcmp(name, "busybox") && argc > 1)
		return hx_classify_exec(NULL, argv + 1, argc - 1);
	if (!strcmp(name, "sed"))
		for (i = 1; i < argc; i++)
			if (argv[i] && !strncmp(argv[i], "-i", 2))
				return (struct hx_exec_class)C_MUT;
	if (!strcmp(name, "find") && has_arg(argv, argc, "-delete"))
		return (struct hx_exec_class)C_DESTR;

	for (i = 0; i < sizeof(by_name) / sizeof(by_name[0]); i++) {
		if (!strcmp(name, by_name[i].cmd)) {
			c = by_name[i].c;
			break;
		}
	}
	sub = subcommand(name, argv, argc);
	if (sub < argc) {
		for (i = 0; i < sizeof(by_sub) / sizeof(by_sub[0]); i++) {
			if (!strcmp(name, by_sub[i].cmd) &&
			    !strcmp(argv[sub], by_sub[i].sub)) {
				c = by_sub[i].c;
				break;
			}
		}
		if (!strcmp(name, "git"))
			c = git_refine(argv[sub], argv, argc, c);
	}
	return c;
}
