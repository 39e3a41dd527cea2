/* The class of one command (DESIGN.md section 4): tables of known
 * commands and subcommands, and the few whose arguments decide (rm in
 * the workspace or out of it, git push --force, dd of=, chmod -R).
 * Every entry has examples in tests/unit/test_cmdview.c. */
#include "policy/cmdview.h"
#include "common/path.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define RO   HX_CLASS_READ_ONLY
#define MUT  HX_CLASS_MUTATING
#define CODE HX_CLASS_CODE
#define PKG  HX_CLASS_PACKAGE_INSTALL
#define NET  HX_CLASS_NETWORK
#define DEST HX_CLASS_DESTRUCTIVE
#define PRIV HX_CLASS_PRIVILEGE

static const struct hx_cmdclass_entry table[] = {
    /* read only: shell builtins, viewers, searches */
    {"ls", NULL, RO},
    {"cat", NULL, RO},
    {"head", NULL, RO},
    {"tail", NULL, RO},
    {"grep", NULL, RO},
    {"egrep", NULL, RO},
    {"fgrep", NULL, RO},
    {"rg", NULL, RO},
    {"ag", NULL, RO},
    {"wc", NULL, RO},
    {"stat", NULL, RO},
    {"file", NULL, RO},
    {"diff", NULL, RO},
    {"cmp", NULL, RO},
    {"comm", NULL, RO},
    {"less", NULL, RO},
    {"more", NULL, RO},
    {"echo", NULL, RO},
    {"printf", NULL, RO},
    {"pwd", NULL, RO},
    {"which", NULL, RO},
    {"type", NULL, RO},
    {"true", NULL, RO},
    {"false", NULL, RO},
    {"test", NULL, RO},
    {"[", NULL, RO},
    {":", NULL, RO},
    {"sort", NULL, RO},
    {"uniq", NULL, RO},
    {"cut", NULL, RO},
    {"tr", NULL, RO},
    {"column", NULL, RO},
    {"nl", NULL, RO},
    {"od", NULL, RO},
    {"xxd", NULL, RO},
    {"strings", NULL, RO},
    {"paste", NULL, RO},
    {"expr", NULL, RO},
    {"seq", NULL, RO},
    {"tac", NULL, RO},
    {"jq", NULL, RO},
    {"du", NULL, RO},
    {"df", NULL, RO},
    {"env", NULL, RO},
    {"printenv", NULL, RO},
    {"id", NULL, RO},
    {"whoami", NULL, RO},
    {"uname", NULL, RO},
    {"date", NULL, RO},
    {"basename", NULL, RO},
    {"dirname", NULL, RO},
    {"realpath", NULL, RO},
    {"readlink", NULL, RO},
    {"sha256sum", NULL, RO},
    {"sha1sum", NULL, RO},
    {"md5sum", NULL, RO},
    {"base64", NULL, RO},
    {"tree", NULL, RO},
    {"ps", NULL, RO},
    {"pgrep", NULL, RO},
    {"hostname", NULL, RO},
    {"sleep", NULL, RO},
    {"cd", NULL, RO},
    {"pushd", NULL, RO},
    {"popd", NULL, RO},
    {"export", NULL, RO},
    {"set", NULL, RO},
    {"shopt", NULL, RO},
    {"unset", NULL, RO},
    {"local", NULL, RO},
    {"read", NULL, RO},
    {"exit", NULL, RO},
    {"return", NULL, RO},
    {"shift", NULL, RO},
    {"wait", NULL, RO},
    {"declare", NULL, RO},
    {"let", NULL, RO},
    {"umask", NULL, RO},
    {"ulimit", NULL, RO},
    {"alias", NULL, RO},
    {"nproc", NULL, RO},
    {"sed", NULL, RO},
    {"awk", NULL, RO},
    {"gawk", NULL, RO},
    {"mawk", NULL, RO},
    {"find", NULL, RO},
    {"dd", NULL, RO},
    {"exec", NULL, RO},
    {"command", NULL, RO},
    /* mutating: inside the workspace it is the agent's work */
    {"tee", NULL, MUT},
    {"cp", NULL, MUT},
    {"mv", NULL, MUT},
    {"mkdir", NULL, MUT},
    {"touch", NULL, MUT},
    {"ln", NULL, MUT},
    {"make", NULL, MUT},
    {"gcc", NULL, MUT},
    {"cc", NULL, MUT},
    {"g++", NULL, MUT},
    {"c++", NULL, MUT},
    {"clang", NULL, MUT},
    {"ld", NULL, MUT},
    {"as", NULL, MUT},
    {"ar", NULL, MUT},
    {"install", NULL, MUT},
    {"patch", NULL, MUT},
    {"tar", NULL, MUT},
    {"unzip", NULL, MUT},
    {"zip", NULL, MUT},
    {"gzip", NULL, MUT},
    {"xz", NULL, MUT},
    {"cmake", NULL, MUT},
    {"ninja", NULL, MUT},
    {"go", NULL, MUT},
    {"rustc", NULL, MUT},
    {"cargo", NULL, MUT},
    {"npm", NULL, MUT},
    {"yarn", NULL, MUT},
    {"pnpm", NULL, MUT},
    {"pip", NULL, MUT},
    {"pip3", NULL, MUT},
    {"apt", NULL, MUT},
    {"apt-get", NULL, MUT},
    {"gem", NULL, MUT},
    {"uv", NULL, MUT},
    {"rm", NULL, MUT},
    {"rmdir", NULL, MUT},
    {"unlink", NULL, MUT},
    {"chmod", NULL, MUT},
    {"chown", NULL, MUT},
    {"chgrp", NULL, MUT},
    /* destructive wherever they point */
    {"kill", NULL, MUT},
    {"pkill", NULL, MUT},
    {"killall", NULL, MUT},
    {"truncate", NULL, MUT},
    {"shred", NULL, DEST},
    {"wipefs", NULL, DEST},
    {"mkfs", NULL, DEST},
    {"mke2fs", NULL, DEST},
    {"mkswap", NULL, DEST},
    {"fdisk", NULL, DEST},
    {"sfdisk", NULL, DEST},
    {"parted", NULL, DEST},
    {"blkdiscard", NULL, DEST},
    /* network */
    {"curl", NULL, NET},
    {"wget", NULL, NET},
    {"ssh", NULL, NET},
    {"scp", NULL, NET},
    {"sftp", NULL, NET},
    {"rsync", NULL, NET},
    {"nc", NULL, NET},
    {"ncat", NULL, NET},
    {"netcat", NULL, NET},
    {"socat", NULL, NET},
    {"telnet", NULL, NET},
    {"ftp", NULL, NET},
    /* privilege */
    {"sudo", NULL, PRIV},
    {"su", NULL, PRIV},
    {"doas", NULL, PRIV},
    {"pkexec", NULL, PRIV},
    {"run0", NULL, PRIV},
    {"setcap", NULL, PRIV},
    {"setfacl", NULL, PRIV},
    {"mount", NULL, PRIV},
    {"umount", NULL, PRIV},
    {"chroot", NULL, PRIV},
    {"nsenter", NULL, PRIV},
    {"unshare", NULL, PRIV},
    {"capsh", NULL, PRIV},
    {"setpriv", NULL, PRIV},
    {"passwd", NULL, PRIV},
    /* code: what runs is in a file or an argument, not in the argv */
    {"python", NULL, CODE},
    {"python3", NULL, CODE},
    {"node", NULL, CODE},
    {"perl", NULL, CODE},
    {"ruby", NULL, CODE},
    {"php", NULL, CODE},
    {"deno", NULL, CODE},
    {"bun", NULL, CODE},
    {"lua", NULL, CODE},
    {"npx", NULL, CODE},
    {"source", NULL, CODE},
    {".", NULL, CODE},
    {"sh", NULL, CODE},
    {"bash", NULL, CODE},
    {"dash", NULL, CODE},
    {"zsh", NULL, CODE},
    {"fish", NULL, CODE},
    /* subcommands */
    {"apt", "install", PKG},
    {"apt-get", "install", PKG},
    {"pip", "install", PKG},
    {"pip3", "install", PKG},
    {"npm", "install", PKG},
    {"npm", "i", PKG},
    {"npm", "add", PKG},
    {"npm", "ci", PKG},
    {"yarn", "add", PKG},
    {"yarn", "install", PKG},
    {"pnpm", "add", PKG},
    {"pnpm", "install", PKG},
    {"pnpm", "i", PKG},
    {"cargo", "install", PKG},
    {"gem", "install", PKG},
    {"go", "install", PKG},
    {"go", "get", PKG},
    {"uv", "add", PKG},
    {"uv", "pip", PKG},
    {"npm", "publish", NET},
    {"git", "status", RO},
    {"git", "log", RO},
    {"git", "diff", RO},
    {"git", "show", RO},
    {"git", "blame", RO},
    {"git", "grep", RO},
    {"git", "ls-files", RO},
    {"git", "ls-tree", RO},
    {"git", "rev-parse", RO},
    {"git", "describe", RO},
    {"git", "shortlog", RO},
    {"git", "cat-file", RO},
    {"git", "rev-list", RO},
    {"git", "merge-base", RO},
    {"git", "for-each-ref", RO},
    {"git", "show-ref", RO},
    {"git", "version", RO},
    {"git", "help", RO},
    {"git", "reflog", RO},
    {"git", "branch", RO},
    {"git", "remote", RO},
    {"git", "tag", RO},
    {"git", "stash", MUT},
    {"git", "config", MUT},
    {"git", "add", MUT},
    {"git", "commit", MUT},
    {"git", "init", MUT},
    {"git", "checkout", MUT},
    {"git", "switch", MUT},
    {"git", "merge", MUT},
    {"git", "rebase", MUT},
    {"git", "mv", MUT},
    {"git", "restore", MUT},
    {"git", "cherry-pick", MUT},
    {"git", "apply", MUT},
    {"git", "am", MUT},
    {"git", "revert", MUT},
    {"git", "rm", MUT},
    {"git", "reset", MUT},
    {"git", "worktree", MUT},
    {"git", "clean", DEST},
    {"git", "filter-branch", DEST},
    {"git", "push", NET},
    {"git", "fetch", NET},
    {"git", "pull", NET},
    {"git", "clone", NET},
    {"git", "ls-remote", NET},
    {"git", "submodule", NET},
};

const struct hx_cmdclass_entry *hx_cmdclass_table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

static bool has(const struct hx_cmd_part *p, const char *a)
{
	for (size_t i = 1; i < p->argc; i++)
		if (!strcmp(p->argv[i], a))
			return true;
	return false;
}

/* An option cluster holding letter (-rf has 'r'), or the long one. */
static bool has_opt(const struct hx_cmd_part *p, char letter, const char *lng)
{
	for (size_t i = 1; i < p->argc; i++) {
		const char *a = p->argv[i];

		if (!strcmp(a, "--"))
			break;
		if (lng && !strncmp(a, lng, strlen(lng)))
			return true;
		if (a[0] == '-' && a[1] != '-' && strchr(a + 1, letter))
			return true;
	}
	return false;
}

/* python3.11 -> python3; mkfs.ext4 -> mkfs */
static bool same_cmd(const char *name, const char *cmd)
{
	size_t n = strlen(cmd);

	if (strncmp(name, cmd, n))
		return false;
	if (name[n] == '\0')
		return true;
	if (!strcmp(cmd, "mkfs"))
		return name[n] == '.';
	if (strncmp(cmd, "python", 6))
		return false;
	for (name += n; *name; name++)
		if (!((*name >= '0' && *name <= '9') || *name == '.'))
			return false;
	return true;
}

static bool beneath(const char *root, const char *path, bool or_same)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return or_same || path[1] != '\0';
	if (strncmp(root, path, n))
		return false;
	return path[n] == '/' || (or_same && path[n] == '\0');
}

/* Whether abs (normalized) is inside the workspace or scratch space:
 * beneath a root, or the root itself when what is meant is beneath it
 * (a glob's fixed part). */
static bool path_in_workspace(const char *abs, bool or_same,
			      const struct hx_workspace *ws)
{
	static const char *const scratch[] = {"/tmp", "/var/tmp", "/dev/shm"};

	for (size_t k = 0; k < sizeof(ws->roots) / sizeof(ws->roots[0]); k++)
		if (ws->roots[k] && beneath(ws->roots[k], abs, or_same))
			return true;
	for (size_t k = 0; k < sizeof(scratch) / sizeof(scratch[0]); k++)
		if (beneath(scratch[k], abs, or_same))
			return true;
	return false;
}

/* Whether word i of p names a path inside the workspace: never one
 * whose value is not known. A glob names what is beneath its fixed part
 * (rm -rf build/x* is beneath build). */
static bool in_workspace(const struct hx_cmd_part *p, size_t i,
			 const struct hx_workspace *ws, bool or_same)
{
	char word[PATH_MAX], abs[PATH_MAX];
	unsigned f = p->flags ? p->flags[i] : 0;
	bool glob = f & HX_SHW_GLOB;

	if ((f & HX_SHW_DYNAMIC) || !ws || strlen(p->argv[i]) >= sizeof(word))
		return false;
	strcpy(word, p->argv[i]);
	if (glob) {
		char *slash;

		word[strcspn(word, "*?[{")] = '\0';
		slash = strrchr(word, '/');
		if (slash)
			slash[slash == word ? 1 : 0] = '\0';
		else
			word[0] = '\0';
	}
	if (word[0] != '/' && !p->dir)
		return false;
	if (hx_path_normalize(p->dir ? p->dir : "/", word[0] ? word : ".", abs,
			      sizeof(abs)) < 0)
		return false;
	/* rm -rf link/x removes beneath where the link leads; rm -rf link
	 * the link alone. (Resolved now: a link swapped before rm runs is
	 * the file rules' to judge, as every unlink is.) */
	if (ws->resolve &&
	    ws->resolve(ws->resolve_arg, abs, glob, word, sizeof(word)) == 0)
		strcpy(abs, word);
	return path_in_workspace(abs, glob || or_same, ws);
}

/* Whether some operand of p (a word that is not an option, nor the
 * value of a short option in takes_arg) is outside the workspace or not
 * known; *dir gets the index of -t DIR's word (cp, mv, ln, install: the
 * destination) and *last the last operand's. */
static bool operand_outside(const struct hx_cmd_part *p, const char *takes_arg,
			    size_t skip, const struct hx_workspace *ws,
			    size_t *dir, size_t *last)
{
	bool opts = true, out = false;
	size_t n = 0;

	for (size_t i = 1; i < p->argc; i++) {
		const char *a = p->argv[i];

		if (opts && !strcmp(a, "--")) {
			opts = false;
			continue;
		}
		if (opts && a[0] == '-' && a[1] && a[1] != '-' &&
		    !(p->flags && (p->flags[i] & HX_SHW_DYNAMIC))) {
			for (const char *o = a + 1; *o; o++) {
				if (!strchr(takes_arg, *o))
					continue;
				if (!o[1] && i + 1 < p->argc)
					i++; /* the value is the next word */
				if (*o == 't')
					*dir = o[1] ? 0 : i;
				break;
			}
			continue;
		}
		if (opts && a[0] == '-' && a[1])
			continue; /* --long[=value] */
		if (n++ < skip)
			continue; /* chmod's mode */
		*last = i;
		out = out || !in_workspace(p, i, ws, false);
	}
	return out;
}

/* rm, rmdir, unlink, truncate, mv: mutating when every path they
 * remove (or move away) is inside the workspace, destructive otherwise
 * (rm -rf ~, rm -rf "$DIR", mv ~/.ssh x). */
static enum hx_cmd_class removal(const struct hx_cmd_part *p,
				 const struct hx_workspace *ws,
				 const char *takes_arg)
{
	size_t dir = 0, last = 0;

	if (operand_outside(p, takes_arg, 0, ws, &dir, &last))
		return DEST;
	return dir && !in_workspace(p, dir, ws, false) ? DEST : MUT;
}

/* cp, ln, install: what they write is their destination (-t DIR, or
 * the last operand): cp /dev/null ~/.bashrc overwrites what no
 * checkpoint holds. */
static enum hx_cmd_class copy_to(const struct hx_cmd_part *p,
				 const struct hx_workspace *ws,
				 const char *takes_arg)
{
	size_t dir = 0, last = 0;

	operand_outside(p, takes_arg, 0, ws, &dir, &last);
	if (dir)
		last = dir;
	return last && !in_workspace(p, last, ws, false) ? DEST : MUT;
}

/* find -delete removes beneath its start points. */
static enum hx_cmd_class find_class(const struct hx_cmd_part *p,
				    const struct hx_workspace *ws)
{
	static const char *const writes[] = {"-fprint", "-fprint0", "-fprintf",
					     "-fls", NULL};
	size_t i = 1;

	if (has(p, "-delete")) {
		while (i < p->argc && p->argv[i][0] == '-' && p->argv[i][1] &&
		       strchr("HLP", p->argv[i][1]))
			i++;
		if (i >= p->argc || p->argv[i][0] == '-') /* find . */
			return ws && p->dir &&
				       path_in_workspace(p->dir, true, ws)
				   ? MUT
				   : DEST;
		for (; i < p->argc && p->argv[i][0] != '-' &&
		       strcmp(p->argv[i], "(") && strcmp(p->argv[i], "!");
		     i++)
			if (!in_workspace(p, i, ws, true))
				return DEST; /* what is beneath a start goes */
		return MUT;
	}
	for (size_t k = 0; writes[k]; k++)
		if (has(p, writes[k]))
			return MUT;
	return RO;
}

/* chmod u+s, 4755: setuid and setgid bits. */
static bool setid_mode(const char *m)
{
	size_t n = strspn(m, "01234567");

	if (n == strlen(m) && n >= 4)
		return (m[n - 4] - '0') & 6;
	return strchr(m, 's') && strspn(m, "ugoa+-=rwxXst,") == strlen(m);
}

/* chmod, chown, chgrp: setuid bits are privilege; -R outside the
 * workspace (or of a path not known) is destructive. */
static enum hx_cmd_class perms(const struct hx_cmd_part *p,
			       const struct hx_workspace *ws)
{
	size_t dir = 0, last = 0;

	for (size_t i = 1; i < p->argc; i++)
		if (setid_mode(p->argv[i]))
			return PRIV;
	if (has_opt(p, 'R', "--recursive") &&
	    operand_outside(p, "", 1, ws, &dir, &last))
		return DEST;
	return MUT;
}

/* The first argument that is not an option (git -C dir status). */
static size_t subcommand(const char *cmd, const struct hx_cmd_part *p)
{
	size_t i;

	for (i = 1; i < p->argc; i++) {
		if (p->argv[i][0] != '-')
			return i;
		if (!strcmp(cmd, "git") &&
		    (!strcmp(p->argv[i], "-C") || !strcmp(p->argv[i], "-c") ||
		     !strcmp(p->argv[i], "--git-dir") ||
		     !strcmp(p->argv[i], "--work-tree")))
			i++;
	}
	return p->argc;
}

/* git push --force, reset --hard, clean -f, branch -D ...: what a
 * checkpoint of the worktree cannot bring back. */
static enum hx_cmd_class git_refine(const struct hx_cmd_part *p,
				    const char *sub, size_t at,
				    enum hx_cmd_class c)
{
	if (!strcmp(sub, "reset") && has(p, "--hard"))
		return DEST;
	/* send-pack: push's plumbing, the same options and refspecs;
	 * http-push: push over WebDAV (--force, -D, +refspecs). */
	if (!strcmp(sub, "push") || !strcmp(sub, "send-pack") ||
	    !strcmp(sub, "http-push")) {
		if (p->git_forces)
			return DEST;
		for (size_t i = at + 1; i < p->argc; i++) {
			const char *a = p->argv[i];

			if ((a[0] == '+' || a[0] == ':') && a[1])
				return DEST; /* +main forces, :main deletes */
			if (!strncmp(a, "--force", 7) ||
			    !strcmp(a, "--delete") || !strcmp(a, "--mirror") ||
			    !strcmp(a, "--prune") ||
			    (a[0] == '-' && a[1] != '-' &&
			     (strchr(a, 'f') || strchr(a, 'd') ||
			      strchr(a, 'D'))))
				return DEST;
		}
	}
	if (!strcmp(sub, "clean"))
		return has_opt(p, 'n', "--dry-run") ? RO : DEST;
	if (!strcmp(sub, "branch") &&
	    (has_opt(p, 'D', NULL) || has_opt(p, 'd', "--delete")))
		return DEST;
	if (!strcmp(sub, "checkout") && (has_opt(p, 'f', "--force")))
		return DEST;
	if (!strcmp(sub, "stash") && (has(p, "drop") || has(p, "clear")))
		return DEST;
	if (!strcmp(sub, "reflog") && (has(p, "expire") || has(p, "delete")))
		return DEST;
	if (!strcmp(sub, "update-ref") && has(p, "-d"))
		return DEST;
	if ((!strcmp(sub, "branch") || !strcmp(sub, "remote") ||
	     !strcmp(sub, "tag")) &&
	    at + 1 < p->argc && p->argv[at + 1][0] != '-')
		return MUT; /* git branch NAME, git remote add ... */
	return c;
}

/* python -c, node -e ...: code; python -m pip install: a package. */
static enum hx_cmd_class interpreter(const struct hx_cmd_part *p,
				     const char *name)
{
	if (same_cmd(name, "python") && p->argc > 3 &&
	    !strcmp(p->argv[1], "-m") &&
	    (!strcmp(p->argv[2], "pip") || !strcmp(p->argv[2], "pip3")) &&
	    !strcmp(p->argv[3], "install"))
		return PKG;
	return CODE;
}

static enum hx_cmd_class by_table(const struct hx_cmd_part *p, const char *name)
{
	enum hx_cmd_class c = HX_CLASS_OTHER;
	size_t n = sizeof(table) / sizeof(table[0]), sub;

	/* the first byte first: a script's parts are many, the rows too */
	for (size_t i = 0; i < n; i++)
		if (table[i].cmd[0] == name[0] && !table[i].sub &&
		    same_cmd(name, table[i].cmd)) {
			c = table[i].cls;
			break;
		}
	sub = subcommand(name, p);
	if (sub >= p->argc)
		return c;
	for (size_t i = 0; i < n; i++)
		if (table[i].sub && table[i].cmd[0] == name[0] &&
		    !strcmp(name, table[i].cmd) &&
		    !strcmp(p->argv[sub], table[i].sub)) {
			c = table[i].cls;
			break;
		}
	if (!strcmp(name, "git"))
		c = git_refine(p, p->argv[sub], sub, c);
	if (c == PKG && !strcmp(name, "uv") && !has(p, "install") &&
	    strcmp(p->argv[sub], "add"))
		c = MUT; /* uv pip list */
	return c;
}

static enum hx_cmd_class rm_class(const struct hx_cmd_part *p,
				  const struct hx_workspace *ws)
{
	return removal(p, ws, "");
}

static enum hx_cmd_class truncate_class(const struct hx_cmd_part *p,
					const struct hx_workspace *ws)
{
	return removal(p, ws, "sr"); /* -s SIZE, -r REF */
}

static enum hx_cmd_class mv_class(const struct hx_cmd_part *p,
				  const struct hx_workspace *ws)
{
	return removal(p, ws, "tS");
}

static enum hx_cmd_class cp_class(const struct hx_cmd_part *p,
				  const struct hx_workspace *ws)
{
	return copy_to(p, ws, "tS");
}

static enum hx_cmd_class install_class(const struct hx_cmd_part *p,
				       const struct hx_workspace *ws)
{
	return copy_to(p, ws, "tSgmo");
}

static enum hx_cmd_class dd_class(const struct hx_cmd_part *p,
				  const struct hx_workspace *ws)
{
	(void)ws;
	for (size_t i = 1; i < p->argc; i++)
		if (!strncmp(p->argv[i], "of=", 3))
			return DEST;
	return RO;
}

static enum hx_cmd_class rsync_class(const struct hx_cmd_part *p,
				     const struct hx_workspace *ws)
{
	(void)ws;
	for (size_t i = 1; i < p->argc; i++)
		if (!strncmp(p->argv[i], "--delete", 8) ||
		    !strncmp(p->argv[i], "--remove-source-files", 21))
			return DEST;
	return NET;
}

/* Commands whose operands decide, sorted by name. */
static const struct special {
	const char *name;
	enum hx_cmd_class (*fn)(const struct hx_cmd_part *p,
				const struct hx_workspace *ws);
} specials[] = {
    {"chgrp", perms},
    {"chmod", perms},
    {"chown", perms},
    {"cp", cp_class},
    {"dd", dd_class},
    {"find", find_class},
    {"install", install_class},
    {"ln", cp_class},
    {"mv", mv_class},
    {"rm", rm_class},
    {"rmdir", rm_class},
    {"rsync", rsync_class},
    {"truncate", truncate_class},
    {"unlink", rm_class},
};

static int special_cmp(const void *key, const void *e)
{
	return strcmp(key, ((const struct special *)e)->name);
}

static const struct special *special_of(const char *name)
{
	return bsearch(name, specials, sizeof(specials) / sizeof(specials[0]),
		       sizeof(specials[0]), special_cmp);
}

bool hx_cmdclass_known(const char *name)
{
	size_t n = sizeof(table) / sizeof(table[0]);

	if (special_of(name))
		return true;
	for (size_t i = 0; i < n; i++)
		if (table[i].cmd[0] == name[0] && same_cmd(name, table[i].cmd))
			return true;
	return false;
}

enum hx_cmd_class hx_cmdclass(const struct hx_cmd_part *p, const char *name,
			      const struct hx_workspace *ws)
{
	const struct special *sp;
	enum hx_cmd_class c;

	if (p->argc == 0 || !name[0])
		return HX_CLASS_OTHER;
	sp = special_of(name);
	c = sp ? sp->fn(p, ws) : by_table(p, name);
	if (c == CODE)
		c = interpreter(p, name);
	if ((!strcmp(name, "sed") && has_opt(p, 'i', "--in-place")) ||
	    (!strcmp(name, "sort") && has_opt(p, 'o', "--output")))
		c = MUT;
	if (strstr(name, "awk"))
		for (size_t i = 1; i < p->argc; i++)
			if (!strcmp(p->argv[i], "-f") ||
			    strstr(p->argv[i], "system"))
				c = CODE; /* awk runs what it is told */
	if (p->git_code && c < CODE)
		c = CODE;
	if (p->writes && c == RO)
		c = MUT; /* echo x > file */
	return c;
}
