/* Commands understood: the shell reader (policy/shparse.c), the parts of
 * an exec (policy/cmdview.c), the class tables with an example for every
 * entry (policy/cmdclass.c), and exec rules judging every part. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/shparse.h"
#include "policy/cmdview.h"
#include "tests/unit/check_main.h"
#include "tests/unit/cmdview_parts.h"
#include "tests/unit/policy_vars.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the shell reader ---- */

static const struct {
	const char *script;
	const char *cmds;   /* the commands, words joined by ' ', by "; " */
	const char *opaque; /* a part of the reason, or NULL */
} sh_cases[] = {
    {"cd sub && git push", "cd sub; git push", NULL},
    {"a; b | c || d & e", "a; b; c; d; e", NULL},
    {"echo $(rm -rf /) x", "rm -rf /; echo $(rm -rf /) x", NULL},
    {"echo `id -u`", "id -u; echo `id -u`", NULL},
    {"echo \"$(whoami) `date`\"", "whoami; date; echo $(whoami) `date`", NULL},
    {"if true; then rm x; elif false; then :; else ls; fi",
     "true; rm x; false; :; ls", NULL},
    {"for f in *.c; do gcc -c \"$f\"; done", "gcc -c $f", NULL},
    {"for f in $(ls); do echo $f; done", "ls; echo $f", NULL},
    {"while read l; do echo $l; done < list", "read l; echo $l", NULL},
    {"X=1 Y=\"a b\" make -j2", "make -j2", NULL},
    {"X=$(curl -s x)", "curl -s x", NULL},
    {"cat <<'EOF' > f\nrm -rf /\nEOF\necho ok", "cat; echo ok", NULL},
    {"cat <<-EOF\n\t$HOME\n\tEOF\nls", "cat; ls", NULL},
    {"cat <<EOF\n$(rm -rf /)\nEOF", NULL, "here-document"},
    {"case $x in a) rm -rf /;; (b|c) ls; pwd;; *) id ;; esac; echo ok",
     "rm -rf /; ls; pwd; id; echo ok", NULL},
    {"case $(git branch) in\n main) git push;;\n esac", "git branch; git push",
     NULL},
    {"case x in a) ls; esac", "ls", NULL},
    {"case x in a) ls", NULL, "unclosed"},
    {"case x a) ls;; esac", NULL, "case without in"},
    {"ls;; pwd", NULL, ";; outside a case"},
    {"echo ${X:-$(rm -rf /)}", NULL, "${...}"},
    {"echo ${HOME}/x ${#PATH}", "echo ${HOME}/x ${#PATH}", NULL},
    {"echo 'unclosed", NULL, "unclosed '"},
    {"echo \"unclosed", NULL, "unclosed \""},
    {"echo $(ls", NULL, "unclosed"},
    {"f() { rm -rf build; }; f", "rm -rf build; f", NULL},
    {"function g { ls; }", "ls", NULL},
    {"[[ -f x && $(id) == y ]] && ls", "id; ls", NULL},
    {"(cd /etc && rm passwd); ls", "cd /etc; rm passwd; ls", NULL},
    {"$CMD arg", "$CMD arg", NULL},
    {"arr=(1 \"$(id)\" *.c); ls \"${arr[@]}\"", "id; ls ${arr[@]}", NULL},
    {"arr=(1 2; ls", NULL, "array"},
    {"echo $'a\\x41\\tb'", "echo aA\tb", NULL},
    {"echo $'\\u00e9'", NULL, "escape"},
    {"echo $'\\' ; rm -rf ~\necho '", NULL, "$'...'"},
    {"git commit -m \"fix: a && b; c\"", "git commit -m fix: a && b; c", NULL},
    {"ls # rm -rf /", "ls", NULL},
    {"ls a#b", "ls a#b", NULL},
    {"diff <(sort a) <(sort b)", "sort a; sort b; diff <(sort a) <(sort b)",
     NULL},
    {"((i++)); ls", "ls", NULL},
    {"echo $((1 + 2))", "echo $((1 + 2))", NULL},
    {"echo $(( $(rm -rf /) ))", "rm -rf /; echo $(( $(rm -rf /) ))", NULL},
    {"echo $(( `id -u` ))", NULL, "arithmetic"},
    {"((x = $(id -u) )); ls", "id -u; ls", NULL},
    {"((ls) ); (( (1+2) * 3 ))", "ls", NULL},
    {"! grep -q x f", "grep -q x f", NULL},
    {"{ ls; pwd; }", "ls; pwd", NULL},
    {"ls \\\n  -la", "ls -la", NULL},
    {"echo a\\ b 'c'\"d\"", "echo a b cd", NULL},
    {"coproc cat", NULL, "coproc"},
    {"echo x >", NULL, "redirection"},
    {"ls 2>/dev/null >&2 |& cat", "ls; cat", NULL},
    {"", "", NULL},
    {"\n\n;", "", NULL},
};

static void join_cmds(const struct hx_sh_script *s, char *out, size_t size)
{
	size_t off = 0;

	out[0] = '\0';
	for (size_t i = 0; i < s->ncmds; i++)
		for (size_t k = 0; k < s->cmds[i].argc; k++)
			off += (size_t)snprintf(out + off, size - off, "%s%s",
						k   ? " "
						: i ? "; "
						    : "",
						s->cmds[i].argv[k]);
}

START_TEST(sh_table)
{
	struct hx_sh_script s;
	char got[512];

	ck_assert_int_eq(hx_sh_parse(sh_cases[_i].script,
				     strlen(sh_cases[_i].script), "/home/u",
				     &s),
			 0);
	if (sh_cases[_i].opaque) {
		ck_assert_msg(s.opaque && strstr(s.opaque, sh_cases[_i].opaque),
			      "'%s': opaque %s, want %s", sh_cases[_i].script,
			      s.opaque, sh_cases[_i].opaque);
	} else {
		ck_assert_msg(!s.opaque, "'%s': opaque: %s at %zu",
			      sh_cases[_i].script, s.opaque, s.opaque_at);
		join_cmds(&s, got, sizeof(got));
		ck_assert_msg(!strcmp(got, sh_cases[_i].cmds),
			      "'%s': got '%s', want '%s'", sh_cases[_i].script,
			      got, sh_cases[_i].cmds);
	}
	hx_sh_free(&s);
}
END_TEST

START_TEST(sh_details)
{
	struct hx_sh_script s;

	/* where each command runs, after the script's own cd's */
	ck_assert_int_eq(hx_sh_parse("cd a && cd b; make; (cd /x; ls); pwd; "
				     "cd \"$D\"; rm y",
				     1000, "/home/u", &s),
			 0);
	ck_assert_int_eq(s.ncmds, 8);
	ck_assert_str_eq(s.cmds[2].dir, "a/b");
	ck_assert_str_eq(s.cmds[4].dir, "/x");
	ck_assert_str_eq(s.cmds[5].dir, "a/b"); /* the subshell's cd is over */
	ck_assert_ptr_null(s.cmds[7].dir);
	hx_sh_free(&s);

	/* what is known of each word */
	ck_assert_int_eq(
	    hx_sh_parse("rm -rf \"$D\" $E *.o {a,b} ~/x [ x ]", 100, "/h", &s),
	    0);
	ck_assert_int_eq(s.ncmds, 1);
	ck_assert_uint_eq(s.cmds[0].flags[2], HX_SHW_DYNAMIC);
	ck_assert_uint_eq(s.cmds[0].flags[3], HX_SHW_DYNAMIC | HX_SHW_SPLIT);
	ck_assert_uint_eq(s.cmds[0].flags[4], HX_SHW_GLOB | HX_SHW_SPLIT);
	ck_assert_uint_eq(s.cmds[0].flags[5], HX_SHW_GLOB | HX_SHW_SPLIT);
	ck_assert_str_eq(s.cmds[0].argv[6], "/h/x");
	ck_assert_uint_eq(s.cmds[0].flags[7], 0); /* "[" is test(1) */
	hx_sh_free(&s);

	/* redirections: a file written, or not */
	ck_assert_int_eq(hx_sh_parse("a > f; b >/dev/null 2>&1; c &> g; d >&2",
				     100, NULL, &s),
			 0);
	ck_assert(s.cmds[0].writes && !s.cmds[1].writes && s.cmds[2].writes &&
		  !s.cmds[3].writes);
	hx_sh_free(&s);

	/* NUL ends the text; nesting is bounded */
	ck_assert_int_eq(hx_sh_parse("ls\0rm -rf /", 11, NULL, &s), 0);
	ck_assert_int_eq(s.ncmds, 1);
	hx_sh_free(&s);
	ck_assert_int_eq(
	    hx_sh_parse("$($($($($($($($($($(ls))))))))))", 100, NULL, &s), 0);
	ck_assert_ptr_nonnull(s.opaque);
	hx_sh_free(&s);
}
END_TEST

/* ---- parts and classes of an exec ---- */

static const struct hx_workspace ws = {
    .roots = {"/work/proj", NULL, "/tmp/hx-s1", NULL},
    .home = "/home/u",
    .resolve = NULL,
    .resolve_arg = NULL};

static void view_of(const char *cmdline, struct hx_cmd_view *v,
		    const char **words)
{
	static char buf[4096];
	long n = hx_sh_words(cmdline, buf, sizeof(buf), words, 63);

	ck_assert_msg(n >= 0, "'%s' is not one command", cmdline);
	hx_cmdview_build(v, NULL, words, (size_t)n, "/work/proj", &ws);
}

static const struct {
	const char *cmdline;
	const char *cls;
	const char *part; /* a part that must be there, or NULL */
} view_cases[] = {
    {"git push origin main", "network", NULL},
    {"env X=1 git push", "network", "git push"},
    {"env -i -u HOME -C sub X=1 git push", "network", "git push"},
    {"bash -lc 'git push'", "network", "git push"},
    {"bash -c -l 'source /tmp/snap.sh && eval '\"'\"'git push'\"'\"''",
     "network", "git push"},
    {"sh -c 'cd sub && git push'", "network", "git push"},
    {"xargs git push", "network", "git push [input]"},
    {"xargs --max-lines git push --force", "destructive", NULL},
    {"xargs --replace rm -rf /", "destructive", NULL},
    {"xargs -0 -n 1 -I{} git push", "network", NULL},
    {"nice -n 5 timeout -s KILL 10 git push", "network", "git push"},
    {"find . -name '*.o' -exec rm {} +", "mutating", "rm ./*"},
    {"find / -name x -exec rm {} ;", "destructive", "rm //*"},
    {"find / -name x -delete", "destructive", NULL},
    {"find . -name x -delete", "mutating", NULL},
    {"find . -type f -name '*.c'", "read_only", NULL},
    {"git -C /elsewhere push --force", "destructive", "git push --force"},
    {"git -c core.pager=evil log", "code", NULL},
    {"git -c user.name=x commit -m y", "mutating", NULL},
    {"git -c remote.origin.push=+main:main push origin", "destructive",
     "git push origin"},
    {"git -c remote.o.x.mirror=true push o.x", "destructive", NULL},
    {"git -c remote.origin.mirror=false push origin", "network", NULL},
    {"git -c remote.origin.push=HEAD:main push origin", "network", NULL},
    {"git -c include.path=/x/f push", "destructive", NULL},
    {"git send-pack --force ../r.git main", "destructive", NULL},
    {"git send-pack ../r.git +main", "destructive", NULL},
    {"git --config-env=remote.origin.push=V push", "destructive", NULL},
    {"git --config-env remote.origin.mirror=V push", "destructive", NULL},
    {"git --config-env=core.pager=V log", "code", NULL},
    /* git-core's dashed builtins: git runs the one argv[0] names */
    {"/usr/lib/git-core/git-push --force origin main", "destructive",
     "git push --force origin main"},
    {"git-reset --hard", "destructive", NULL},
    {"git-status", "read_only", NULL},
    {"rm -rf build", "mutating", NULL},
    {"rm -rf /work/proj/build /tmp/x", "mutating", NULL},
    {"rm -rf /home/u", "destructive", NULL},
    {"rm -rf /work/proj", "destructive", NULL},
    {"rm -rf ../other", "destructive", NULL},
    {"rm -rf /tmp", "destructive", NULL},
    {"sh -c 'rm -rf \"$DIR\"'", "destructive", NULL},
    {"sh -c 'rm -rf *'", "mutating", NULL},
    {"sh -c 'rm -rf ~'", "destructive", NULL},
    {"sh -c 'rm -rf ~/x'", "destructive", NULL},
    {"sh -c 'cd /etc && rm -rf x'", "destructive", NULL},
    {"sh -c 'cd sub && rm -rf x'", "mutating", NULL},
    {"sh -c 'cd \"$D\" && rm -rf x'", "destructive", NULL},
    {"sh -c 'eval \"$X\"'", "unparsable", NULL},
    {"sh -c '$CMD x'", "unparsable", NULL},
    {"sh -c 'case $1 in a) ls;; esac'", "read_only", NULL},
    {"sh -c 'case $1 in a) rm -rf /;; esac'", "destructive", NULL},
    {"sh -c 'bash -c \"$SCRIPT\"'", "unparsable", NULL},
    {"env -S 'git push'", "unparsable", NULL},
    {"sh -c 'ls | grep x | wc -l'", "read_only", NULL},
    {"sh -c 'echo hi > out.txt'", "mutating", NULL},
    {"sh -c 'ls && git push && sudo id'", "privilege", "sudo id"},
    {"sudo -u root rm -rf /", "privilege", "rm -rf /"},
    {"busybox sh -c 'rm -rf /'", "destructive", "rm -rf /"},
    {"sh script.sh", "code", NULL},
    {"bash", "code", NULL},
    {"python3 -c 'print(1)'", "code", NULL},
    {"python3.11 -m pip install x", "package_install", NULL},
    {"trap 'rm -rf /' EXIT", "destructive", "rm -rf /"},
    {"flock /tmp/l -c 'git push'", "network", "git push"},
    {"command -v git", "read_only", NULL},
    {"command git push", "network", "git push"},
    {"env", "read_only", NULL},
    {"sh -c ''", "read_only", NULL},
    {"frobnicate --now", "other", NULL},
    {"chmod -R 777 /", "destructive", NULL},
    {"chmod -R u+w build", "mutating", NULL},
    {"chmod -R u+w /home/u", "destructive", NULL},
    {"rm -r /", "destructive", NULL},
    {"rm -f -r /home/u", "destructive", NULL},
    {"truncate -s 0 -r ref log", "mutating", NULL},
    {"mv /home/u/.ssh /tmp/x", "destructive", NULL},
    {"mv a b", "mutating", NULL},
    {"mv -t /etc a", "destructive", NULL},
    {"cp /dev/null /home/u/.bashrc", "destructive", NULL},
    {"cp -r /usr/share/doc/x docs", "mutating", NULL},
    {"ln -sf /dev/null /home/u/.bashrc", "destructive", NULL},
    {"install -m 755 x /usr/local/bin/x", "destructive", NULL},
    {"rsync -a --delete src/ dst/", "destructive", NULL},
    {"git update-ref -d refs/heads/x", "destructive", NULL},
    {"sh -c '((rm -rf ~) )'", "destructive", NULL},
    {"sh -c 'echo $((rm -rf ~) )'", "destructive", NULL},
    {"sh -c 'echo $(( $(nproc) * 2 ))'", "read_only", NULL},
    {"sh -c 'echo $(( `nproc` * 2 ))'", "unparsable", NULL},
    {"chmod 4755 x", "privilege", NULL},
    {"dd if=/dev/zero of=/dev/sda", "destructive", NULL},
    {"awk 'BEGIN{system(\"id\")}'", "code", NULL},
    {"sed -i.bak s/a/b/ f", "mutating", NULL},
    {"sort -o out in", "mutating", NULL},
    {"git push origin +main", "destructive", NULL},
    {"git push origin :old", "destructive", NULL},
    {"git push -u origin main", "network", NULL},
    {"git clean -n", "read_only", NULL},
    {"git branch -D old", "destructive", NULL},
    {"git branch feature", "mutating", NULL},
    {"git stash drop", "destructive", NULL},
    {"git checkout -f main", "destructive", NULL},
    /* A function that runs its arguments ("$@" in its body, Codex's
     * shell snapshot): what each call gives it is a command. */
    {"bash -c 'f() { \"$@\"; }; f git push'", "network", "git push"},
    {"bash -c 'f() { command -p \"$@\"; }; f rm -rf ~'", "destructive", NULL},
    {"bash -c 'function f { \"$2\"; }; f x rm -rf ~'", "destructive", NULL},
    {"bash -c 'f() { \"$@\"; }; f f rm -rf ~'", "destructive", NULL},
    {"bash -c 'f() { \"$@\"; }; g() { f \"$@\"; }; g git push'", "network",
     "git push"},
    {"bash -c 'f() { \"$@\"; }; eval \"f rm -rf ~\"'", "destructive", NULL},
    {"bash -c 'f() { \"$@\"; }; f ls | f wc -l'", "other", "wc -l"},
    {"bash -c 'f() { \"$@\"; }'", "read_only", NULL},
    /* what the reader cannot follow stays unparsable */
    {"bash -c 'f() { shift; \"$@\"; }; f x rm -rf ~'", "unparsable", NULL},
    {"bash -c 'f() { set -- rm -rf ~; \"$@\"; }; f'", "unparsable", NULL},
    {"bash -c 'f() ( \"$@\" ); f rm -rf ~'", "unparsable", NULL},
    {"bash -c 'f() { \"$@\"; }; f $X -rf ~'", "unparsable", NULL},
    {"bash -c '\"$@\"' sh rm -rf /", "unparsable", NULL},
    {"bash -c 'f() { :; }; { \"$@\"; }'", "unparsable", NULL},
};

START_TEST(view_table)
{
	struct hx_cmd_view v;
	const char *words[64];

	view_of(view_cases[_i].cmdline, &v, words);
	ck_assert_msg(!strcmp(hx_cmd_class_name(v.cls), view_cases[_i].cls),
		      "'%s': class %s, want %s", view_cases[_i].cmdline,
		      hx_cmd_class_name(v.cls), view_cases[_i].cls);
	if (view_cases[_i].part)
		ck_assert_msg(has_part(&v, view_cases[_i].part),
			      "'%s': no part '%s'", view_cases[_i].cmdline,
			      view_cases[_i].part);
	hx_cmdview_free(&v);
}
END_TEST

/* A push whose environment sets git configuration the session's did
 * not (hx_event.git_env_config) is read as forced; what else git runs
 * is not changed by it. */
START_TEST(view_env_config_forces_push)
{
	struct hx_workspace env_ws = ws;
	const char *push[] = {"git", "push", "origin", "main"},
		   *status[] = {"git", "status"}, *dashed[] = {"git-push"};
	struct hx_cmd_view v;

	env_ws.git_env_config = true;
	hx_cmdview_build(&v, NULL, push, 4, "/work/proj", &env_ws);
	ck_assert_str_eq(hx_cmd_class_name(v.cls), "destructive");
	hx_cmdview_free(&v);
	hx_cmdview_build(&v, NULL, dashed, 1, "/work/proj", &env_ws);
	ck_assert_str_eq(hx_cmd_class_name(v.cls), "destructive");
	hx_cmdview_free(&v);
	hx_cmdview_build(&v, NULL, status, 2, "/work/proj", &env_ws);
	ck_assert_str_eq(hx_cmd_class_name(v.cls), "read_only");
	hx_cmdview_free(&v);
	hx_cmdview_build(&v, NULL, push, 4, "/work/proj", &ws);
	ck_assert_str_eq(hx_cmd_class_name(v.cls), "network");
	hx_cmdview_free(&v);
}
END_TEST

START_TEST(view_bounds)
{
	char script[8192];
	const char *argv[4] = {"sh", "-c", script, NULL};
	struct hx_cmd_view v;
	size_t off = 0;

	/* sh -c 'sh -c "sh -c ..."': nested past the bound */
	strcpy(script, "ls");
	for (int i = 0; i < 12; i++) {
		char tmp[8192 + 16]; /* the script and its wrapping */

		snprintf(tmp, sizeof(tmp), "sh -c '%s'", script);
		/* quote for the next level: ' -> '\'' */
		off = 0;
		for (const char *c = tmp; *c && off < sizeof(script) - 5; c++) {
			if (*c == '\'') {
				memcpy(script + off, "'\\''", 4);
				off += 4;
			} else {
				script[off++] = *c;
			}
		}
		script[off] = '\0';
	}
	hx_cmdview_build(&v, NULL, argv, 3, "/work/proj", &ws);
	ck_assert_str_eq(hx_cmd_class_name(v.cls), "unparsable");
	hx_cmdview_free(&v);

	/* more commands than parts: unparsable, never a part dropped */
	off = 0;
	for (int i = 0; i < 100; i++)
		off += (size_t)snprintf(script + off, sizeof(script) - off,
					"ls; ");
	snprintf(script + off, sizeof(script) - off, "rm -rf /");
	hx_cmdview_build(&v, NULL, argv, 3, "/work/proj", &ws);
	ck_assert_int_ge(v.cls, HX_CLASS_UNPARSABLE);
	hx_cmdview_free(&v);
}
END_TEST

/* The tables judge the file that runs, not what argv[0] says it is;
 * argv[0] where the file is unknown to them (an alternative's name) or
 * busybox (which runs argv[0]'s applet). */
START_TEST(view_names_the_file)
{
	static const char *const fake[] = {"ls", "reset", "--hard"};
	static const char *const rm[] = {"ls", "-rf", "/home/u"};
	static const char *const cc[] = {"cc", "-c", "x.c"};
	static const char *const bb[] = {"sh", "-c", "rm -rf /"};
	static const char *const dash[] = {"sh", "-c", "git push"};
	const struct {
		const char *path;
		const char *const *argv;
		size_t argc;
		enum hx_cmd_class cls;
	} cases[] = {
	    {"/usr/bin/git", fake, 3, HX_CLASS_DESTRUCTIVE},
	    {"/usr/bin/rm", rm, 3, HX_CLASS_DESTRUCTIVE},
	    {"/usr/bin/x86_64-linux-gnu-gcc-12", cc, 3, HX_CLASS_MUTATING},
	    {"/usr/bin/busybox", bb, 3, HX_CLASS_DESTRUCTIVE},
	    {"/usr/bin/dash", dash, 3, HX_CLASS_NETWORK},
	};
	struct hx_cmd_view v;

	for (size_t i = 0; i < N(cases); i++) {
		hx_cmdview_build(&v, cases[i].path, cases[i].argv,
				 cases[i].argc, "/work/proj", &ws);
		ck_assert_msg(v.cls == cases[i].cls, "%s as %s: %s",
			      cases[i].path, cases[i].argv[0],
			      hx_cmd_class_name(v.cls));
		hx_cmdview_free(&v);
	}
}
END_TEST

/* ---- one example per entry of the class table ---- */

static const struct {
	const char *cmdline;
	enum hx_cmd_class cls;
} examples[] = {
    {"ls -la src", HX_CLASS_READ_ONLY},
    {"cat README.md", HX_CLASS_READ_ONLY},
    {"head -n 20 log", HX_CLASS_READ_ONLY},
    {"tail -f log", HX_CLASS_READ_ONLY},
    {"grep -rn TODO src", HX_CLASS_READ_ONLY},
    {"egrep 'a|b' f", HX_CLASS_READ_ONLY},
    {"fgrep x f", HX_CLASS_READ_ONLY},
    {"rg -n main", HX_CLASS_READ_ONLY},
    {"ag pattern", HX_CLASS_READ_ONLY},
    {"wc -l f", HX_CLASS_READ_ONLY},
    {"stat f", HX_CLASS_READ_ONLY},
    {"file a.out", HX_CLASS_READ_ONLY},
    {"diff -u a b", HX_CLASS_READ_ONLY},
    {"cmp a b", HX_CLASS_READ_ONLY},
    {"comm -12 a b", HX_CLASS_READ_ONLY},
    {"less f", HX_CLASS_READ_ONLY},
    {"more f", HX_CLASS_READ_ONLY},
    {"echo hello", HX_CLASS_READ_ONLY},
    {"printf '%s\\n' x", HX_CLASS_READ_ONLY},
    {"pwd", HX_CLASS_READ_ONLY},
    {"which git", HX_CLASS_READ_ONLY},
    {"type ls", HX_CLASS_READ_ONLY},
    {"true", HX_CLASS_READ_ONLY},
    {"false", HX_CLASS_READ_ONLY},
    {"test -f x", HX_CLASS_READ_ONLY},
    {"[ -d src ]", HX_CLASS_READ_ONLY},
    {":", HX_CLASS_READ_ONLY},
    {"sort -u f", HX_CLASS_READ_ONLY},
    {"uniq -c", HX_CLASS_READ_ONLY},
    {"cut -d: -f1 /etc/passwd", HX_CLASS_READ_ONLY},
    {"tr a-z A-Z", HX_CLASS_READ_ONLY},
    {"column -t", HX_CLASS_READ_ONLY},
    {"nl f", HX_CLASS_READ_ONLY},
    {"od -c f", HX_CLASS_READ_ONLY},
    {"xxd f", HX_CLASS_READ_ONLY},
    {"strings a.out", HX_CLASS_READ_ONLY},
    {"paste a b", HX_CLASS_READ_ONLY},
    {"expr 1 + 2", HX_CLASS_READ_ONLY},
    {"seq 10", HX_CLASS_READ_ONLY},
    {"tac f", HX_CLASS_READ_ONLY},
    {"jq .name package.json", HX_CLASS_READ_ONLY},
    {"du -sh .", HX_CLASS_READ_ONLY},
    {"df -h", HX_CLASS_READ_ONLY},
    {"env", HX_CLASS_READ_ONLY},
    {"printenv PATH", HX_CLASS_READ_ONLY},
    {"id -u", HX_CLASS_READ_ONLY},
    {"whoami", HX_CLASS_READ_ONLY},
    {"uname -a", HX_CLASS_READ_ONLY},
    {"date +%s", HX_CLASS_READ_ONLY},
    {"basename /a/b", HX_CLASS_READ_ONLY},
    {"dirname /a/b", HX_CLASS_READ_ONLY},
    {"realpath .", HX_CLASS_READ_ONLY},
    {"readlink -f x", HX_CLASS_READ_ONLY},
    {"sha256sum f", HX_CLASS_READ_ONLY},
    {"sha1sum f", HX_CLASS_READ_ONLY},
    {"md5sum f", HX_CLASS_READ_ONLY},
    {"base64 -d f", HX_CLASS_READ_ONLY},
    {"tree -L 2", HX_CLASS_READ_ONLY},
    {"ps aux", HX_CLASS_READ_ONLY},
    {"pgrep node", HX_CLASS_READ_ONLY},
    {"hostname", HX_CLASS_READ_ONLY},
    {"sleep 1", HX_CLASS_READ_ONLY},
    {"cd src", HX_CLASS_READ_ONLY},
    {"pushd src", HX_CLASS_READ_ONLY},
    {"popd", HX_CLASS_READ_ONLY},
    {"export X=1", HX_CLASS_READ_ONLY},
    {"set -e", HX_CLASS_READ_ONLY},
    {"shopt -s nullglob", HX_CLASS_READ_ONLY},
    {"unset X", HX_CLASS_READ_ONLY},
    {"local x=1", HX_CLASS_READ_ONLY},
    {"read -r line", HX_CLASS_READ_ONLY},
    {"exit 1", HX_CLASS_READ_ONLY},
    {"return 0", HX_CLASS_READ_ONLY},
    {"shift", HX_CLASS_READ_ONLY},
    {"wait", HX_CLASS_READ_ONLY},
    {"declare -a x", HX_CLASS_READ_ONLY},
    {"let i=i+1", HX_CLASS_READ_ONLY},
    {"umask 022", HX_CLASS_READ_ONLY},
    {"ulimit -n", HX_CLASS_READ_ONLY},
    {"alias ll='ls -l'", HX_CLASS_READ_ONLY},
    {"nproc", HX_CLASS_READ_ONLY},
    {"sed -n 1,5p f", HX_CLASS_READ_ONLY},
    {"awk '{print $1}' f", HX_CLASS_READ_ONLY},
    {"gawk -F: '{print $1}' f", HX_CLASS_READ_ONLY},
    {"mawk 1 f", HX_CLASS_READ_ONLY},
    {"find src -name '*.c'", HX_CLASS_READ_ONLY},
    {"dd if=/dev/urandom bs=16 count=1", HX_CLASS_READ_ONLY},
    {"exec", HX_CLASS_READ_ONLY},
    {"command -v node", HX_CLASS_READ_ONLY},
    {"tee out.log", HX_CLASS_MUTATING},
    {"cp a b", HX_CLASS_MUTATING},
    {"mv a b", HX_CLASS_MUTATING},
    {"mkdir -p build", HX_CLASS_MUTATING},
    {"touch x", HX_CLASS_MUTATING},
    {"ln -s a b", HX_CLASS_MUTATING},
    {"make -j2", HX_CLASS_MUTATING},
    {"gcc -c x.c", HX_CLASS_MUTATING},
    {"cc -o x x.c", HX_CLASS_MUTATING},
    {"g++ x.cc", HX_CLASS_MUTATING},
    {"c++ x.cc", HX_CLASS_MUTATING},
    {"clang -O2 x.c", HX_CLASS_MUTATING},
    {"ld -o x x.o", HX_CLASS_MUTATING},
    {"as x.s", HX_CLASS_MUTATING},
    {"ar rcs lib.a x.o", HX_CLASS_MUTATING},
    {"install -m 755 x bin/", HX_CLASS_MUTATING},
    {"patch -p1", HX_CLASS_MUTATING},
    {"tar xzf x.tgz", HX_CLASS_MUTATING},
    {"unzip x.zip", HX_CLASS_MUTATING},
    {"zip -r x.zip src", HX_CLASS_MUTATING},
    {"gzip f", HX_CLASS_MUTATING},
    {"xz -d f.xz", HX_CLASS_MUTATING},
    {"cmake -B build", HX_CLASS_MUTATING},
    {"ninja -C build", HX_CLASS_MUTATING},
    {"go build ./...", HX_CLASS_MUTATING},
    {"rustc x.rs", HX_CLASS_MUTATING},
    {"cargo build", HX_CLASS_MUTATING},
    {"npm test", HX_CLASS_MUTATING},
    {"yarn build", HX_CLASS_MUTATING},
    {"pnpm run lint", HX_CLASS_MUTATING},
    {"pip list", HX_CLASS_MUTATING},
    {"pip3 freeze", HX_CLASS_MUTATING},
    {"apt update", HX_CLASS_MUTATING},
    {"apt-get update", HX_CLASS_MUTATING},
    {"gem list", HX_CLASS_MUTATING},
    {"uv run pytest", HX_CLASS_MUTATING},
    {"rm -f build/x.o", HX_CLASS_MUTATING},
    {"rmdir build", HX_CLASS_MUTATING},
    {"unlink x", HX_CLASS_MUTATING},
    {"chmod +x run.sh", HX_CLASS_MUTATING},
    {"chown u:u x", HX_CLASS_MUTATING},
    {"chgrp g x", HX_CLASS_MUTATING},
    {"shred -u secret", HX_CLASS_DESTRUCTIVE},
    {"wipefs -a /dev/sdb", HX_CLASS_DESTRUCTIVE},
    {"truncate -s 0 log", HX_CLASS_MUTATING},
    {"truncate -s 0 /etc/motd", HX_CLASS_DESTRUCTIVE},
    {"kill -9 1234", HX_CLASS_MUTATING},
    {"pkill node", HX_CLASS_MUTATING},
    {"killall python3", HX_CLASS_MUTATING},
    {"mkfs.ext4 /dev/sdb1", HX_CLASS_DESTRUCTIVE},
    {"mke2fs /dev/sdb1", HX_CLASS_DESTRUCTIVE},
    {"mkswap /dev/sdb2", HX_CLASS_DESTRUCTIVE},
    {"fdisk /dev/sdb", HX_CLASS_DESTRUCTIVE},
    {"sfdisk /dev/sdb", HX_CLASS_DESTRUCTIVE},
    {"parted /dev/sdb rm 1", HX_CLASS_DESTRUCTIVE},
    {"blkdiscard /dev/sdb", HX_CLASS_DESTRUCTIVE},
    {"curl -fsSL https://x", HX_CLASS_NETWORK},
    {"wget https://x", HX_CLASS_NETWORK},
    {"ssh host uptime", HX_CLASS_NETWORK},
    {"scp f host:", HX_CLASS_NETWORK},
    {"sftp host", HX_CLASS_NETWORK},
    {"rsync -a src/ host:dst", HX_CLASS_NETWORK},
    {"nc -l 8080", HX_CLASS_NETWORK},
    {"ncat host 80", HX_CLASS_NETWORK},
    {"netcat host 80", HX_CLASS_NETWORK},
    {"socat - TCP:host:80", HX_CLASS_NETWORK},
    {"telnet host 25", HX_CLASS_NETWORK},
    {"ftp host", HX_CLASS_NETWORK},
    {"sudo ls", HX_CLASS_PRIVILEGE},
    {"su - root", HX_CLASS_PRIVILEGE},
    {"doas sh", HX_CLASS_PRIVILEGE},
    {"pkexec bash", HX_CLASS_PRIVILEGE},
    {"run0 id", HX_CLASS_PRIVILEGE},
    {"setcap cap_net_raw+ep x", HX_CLASS_PRIVILEGE},
    {"setfacl -m u:x:r f", HX_CLASS_PRIVILEGE},
    {"mount /dev/sdb1 /mnt", HX_CLASS_PRIVILEGE},
    {"umount /mnt", HX_CLASS_PRIVILEGE},
    {"chroot /srv sh", HX_CLASS_PRIVILEGE},
    {"nsenter -t 1 -m", HX_CLASS_PRIVILEGE},
    {"unshare -r sh", HX_CLASS_PRIVILEGE},
    {"capsh --print", HX_CLASS_PRIVILEGE},
    {"setpriv --reuid 0 sh", HX_CLASS_PRIVILEGE},
    {"passwd", HX_CLASS_PRIVILEGE},
    {"python manage.py migrate", HX_CLASS_CODE},
    {"python3 -c 'import os'", HX_CLASS_CODE},
    {"node server.js", HX_CLASS_CODE},
    {"perl -e 'print 1'", HX_CLASS_CODE},
    {"ruby -e 'p 1'", HX_CLASS_CODE},
    {"php -r 'echo 1;'", HX_CLASS_CODE},
    {"deno eval 1", HX_CLASS_CODE},
    {"bun -e 1", HX_CLASS_CODE},
    {"lua x.lua", HX_CLASS_CODE},
    {"npx prettier .", HX_CLASS_CODE},
    {"source venv/bin/activate", HX_CLASS_CODE},
    {". ./env.sh", HX_CLASS_CODE},
    {"sh configure", HX_CLASS_CODE},
    {"bash build.sh", HX_CLASS_CODE},
    {"dash x.sh", HX_CLASS_CODE},
    {"zsh x.zsh", HX_CLASS_CODE},
    {"fish -c ls", HX_CLASS_CODE},
    {"apt install jq", HX_CLASS_PACKAGE_INSTALL},
    {"apt-get install -y jq", HX_CLASS_PACKAGE_INSTALL},
    {"pip install requests", HX_CLASS_PACKAGE_INSTALL},
    {"pip3 install -r requirements.txt", HX_CLASS_PACKAGE_INSTALL},
    {"npm install", HX_CLASS_PACKAGE_INSTALL},
    {"npm i left-pad", HX_CLASS_PACKAGE_INSTALL},
    {"npm add x", HX_CLASS_PACKAGE_INSTALL},
    {"npm ci", HX_CLASS_PACKAGE_INSTALL},
    {"yarn add react", HX_CLASS_PACKAGE_INSTALL},
    {"yarn install", HX_CLASS_PACKAGE_INSTALL},
    {"pnpm add x", HX_CLASS_PACKAGE_INSTALL},
    {"pnpm install", HX_CLASS_PACKAGE_INSTALL},
    {"pnpm i", HX_CLASS_PACKAGE_INSTALL},
    {"cargo install ripgrep", HX_CLASS_PACKAGE_INSTALL},
    {"gem install rails", HX_CLASS_PACKAGE_INSTALL},
    {"go install x@latest", HX_CLASS_PACKAGE_INSTALL},
    {"go get x", HX_CLASS_PACKAGE_INSTALL},
    {"uv add httpx", HX_CLASS_PACKAGE_INSTALL},
    {"uv pip install x", HX_CLASS_PACKAGE_INSTALL},
    {"npm publish", HX_CLASS_NETWORK},
    {"git status", HX_CLASS_READ_ONLY},
    {"git log --oneline", HX_CLASS_READ_ONLY},
    {"git diff HEAD~1", HX_CLASS_READ_ONLY},
    {"git show HEAD", HX_CLASS_READ_ONLY},
    {"git blame f", HX_CLASS_READ_ONLY},
    {"git grep x", HX_CLASS_READ_ONLY},
    {"git ls-files", HX_CLASS_READ_ONLY},
    {"git ls-tree HEAD", HX_CLASS_READ_ONLY},
    {"git rev-parse HEAD", HX_CLASS_READ_ONLY},
    {"git describe --tags", HX_CLASS_READ_ONLY},
    {"git shortlog -sn", HX_CLASS_READ_ONLY},
    {"git cat-file -p HEAD", HX_CLASS_READ_ONLY},
    {"git rev-list --count HEAD", HX_CLASS_READ_ONLY},
    {"git merge-base a b", HX_CLASS_READ_ONLY},
    {"git for-each-ref", HX_CLASS_READ_ONLY},
    {"git show-ref", HX_CLASS_READ_ONLY},
    {"git version", HX_CLASS_READ_ONLY},
    {"git help log", HX_CLASS_READ_ONLY},
    {"git reflog", HX_CLASS_READ_ONLY},
    {"git branch -a", HX_CLASS_READ_ONLY},
    {"git remote -v", HX_CLASS_READ_ONLY},
    {"git tag -l", HX_CLASS_READ_ONLY},
    {"git stash", HX_CLASS_MUTATING},
    {"git config user.name x", HX_CLASS_MUTATING},
    {"git add -A", HX_CLASS_MUTATING},
    {"git commit -m x", HX_CLASS_MUTATING},
    {"git init", HX_CLASS_MUTATING},
    {"git checkout main", HX_CLASS_MUTATING},
    {"git switch -c x", HX_CLASS_MUTATING},
    {"git merge x", HX_CLASS_MUTATING},
    {"git rebase main", HX_CLASS_MUTATING},
    {"git mv a b", HX_CLASS_MUTATING},
    {"git restore --staged f", HX_CLASS_MUTATING},
    {"git cherry-pick abc", HX_CLASS_MUTATING},
    {"git apply x.patch", HX_CLASS_MUTATING},
    {"git am x.patch", HX_CLASS_MUTATING},
    {"git revert HEAD", HX_CLASS_MUTATING},
    {"git rm f", HX_CLASS_MUTATING},
    {"git reset --soft HEAD~1", HX_CLASS_MUTATING},
    {"git worktree add ../x", HX_CLASS_MUTATING},
    {"git clean -fdx", HX_CLASS_DESTRUCTIVE},
    {"git filter-branch --tree-filter x", HX_CLASS_DESTRUCTIVE},
    {"git push origin main", HX_CLASS_NETWORK},
    {"git fetch --all", HX_CLASS_NETWORK},
    {"git pull --rebase", HX_CLASS_NETWORK},
    {"git clone https://x", HX_CLASS_NETWORK},
    {"git ls-remote origin", HX_CLASS_NETWORK},
    {"git submodule update --init", HX_CLASS_NETWORK},
    /* the issue's destructive list */
    {"rm -rf /home/u/project", HX_CLASS_DESTRUCTIVE},
    {"git push --force origin main", HX_CLASS_DESTRUCTIVE},
    {"git reset --hard origin/main", HX_CLASS_DESTRUCTIVE},
    {"chmod -R 755 /srv", HX_CLASS_DESTRUCTIVE},
    {"dd if=x.img of=/dev/sdb", HX_CLASS_DESTRUCTIVE},
    {"mkfs -t ext4 /dev/sdb1", HX_CLASS_DESTRUCTIVE},
};

START_TEST(example_classes)
{
	struct hx_cmd_view v;
	const char *words[64];

	view_of(examples[_i].cmdline, &v, words);
	ck_assert_msg(v.cls == examples[_i].cls, "'%s': %s, want %s",
		      examples[_i].cmdline, hx_cmd_class_name(v.cls),
		      hx_cmd_class_name(examples[_i].cls));
	hx_cmdview_free(&v);
}
END_TEST

/* Every entry of the table has an example of its own class. */
START_TEST(every_entry_has_an_example)
{
	size_t n;
	const struct hx_cmdclass_entry *t = hx_cmdclass_table(&n);

	for (size_t i = 0; i < n; i++) {
		bool found = false;

		for (size_t k = 0; k < N(examples) && !found; k++) {
			char buf[256];
			const char *w[64];
			long nw = hx_sh_words(examples[k].cmdline, buf,
					      sizeof(buf), w, 64);
			const char *name = nw > 0 ? w[0] : "";

			if (examples[k].cls != t[i].cls ||
			    strncmp(name, t[i].cmd, strlen(t[i].cmd)))
				continue;
			if (name[strlen(t[i].cmd)] &&
			    name[strlen(t[i].cmd)] != '.' &&
			    strcmp(t[i].cmd, "python"))
				continue;
			found =
			    !t[i].sub || (nw > 1 && !strcmp(w[1], t[i].sub));
		}
		ck_assert_msg(found, "no example for %s %s (%s)", t[i].cmd,
			      t[i].sub ? t[i].sub : "",
			      hx_cmd_class_name(t[i].cls));
	}
}
END_TEST

/* ---- exec rules judge every part ---- */

static const char p_exec[] =
    "version: 1\n"
    "exec:\n"
    "  - id: push\n"
    "    ask: [\"git push *\"]\n"
    "    match: [\"git push\", \"sh -c 'cd x && git push'\"]\n"
    "    not_match: [\"git status\", \"sh -c 'echo git push'\"]\n"
    "  - id: no-curl\n"
    "    deny: [\"/usr/bin/curl *\"]\n"
    "  - id: unreadable\n"
    "    ask: [\"class:unparsable\"]\n"
    "  - id: wipe\n"
    "    deny: [\"class:destructive\"]\n";

static const struct {
	const char *cmdline;
	enum hx_verdict v;
	const char *rule;
	const char *judged_as;
} exec_cases[] = {
    {"git push", HX_VERDICT_ASK, "push", ""},
    {"cd sub && git push", HX_VERDICT_ASK, "push", "git push"},
    {"bash -lc 'git push'", HX_VERDICT_ASK, "push", "git push"},
    {"env X=1 git push", HX_VERDICT_ASK, "push", "git push"},
    {"xargs git push", HX_VERDICT_ASK, "push", "git push [input]"},
    {"sh -c 'git $VERB origin'", HX_VERDICT_ASK, "push", "git $VERB origin"},
    {"sh -c 'git push origin main'", HX_VERDICT_ASK, "push",
     "git push origin main"},
    {"sh -c 'git status'", HX_VERDICT_ALLOW, "default:exec", ""},
    {"sh -c 'echo git push'", HX_VERDICT_ALLOW, "default:exec", ""},
    /* a bare name read from a script may be any file of that name */
    {"sh -c 'curl x'", HX_VERDICT_DENY, "no-curl", "curl x"},
    {"sh -c 'eval \"$X\"'", HX_VERDICT_ASK, "unreadable", ""},
    {"sh -c 'ls; rm -rf /'", HX_VERDICT_DENY, "wipe", "rm -rf /"},
    {"rm -rf build", HX_VERDICT_ALLOW, "default:exec", ""},
};

START_TEST(exec_parts)
{
	struct hx_policy *p = NULL;
	struct hx_policy_error err;
	struct hx_decision d;
	struct hx_event ev = {.op = HX_OP_EXEC, .cwd = "/work/proj"};
	char buf[4096], ebuf[512];
	const char *words[64];
	long n;

	ck_assert_msg(!hx_policy_load_buffer("t.yaml", p_exec, strlen(p_exec),
					     &vars, &p, &err),
		      "%s", hx_policy_error_format(&err, ebuf, sizeof(ebuf)));
	/* a line the sh_words reader takes as one command: sh -c it */
	n = hx_sh_words(exec_cases[_i].cmdline, buf, sizeof(buf), words, 63);
	if (n < 0) {
		words[0] = "sh";
		words[1] = "-c";
		words[2] = exec_cases[_i].cmdline;
		n = 3;
	}
	ev.argv = words;
	ev.argc = (size_t)n;
	hx_policy_decide(p, &ev, &d);
	ck_assert_msg(d.verdict == exec_cases[_i].v &&
			  !strcmp(d.rule, exec_cases[_i].rule) &&
			  !strcmp(d.judged_as, exec_cases[_i].judged_as),
		      "'%s': %s by %s as '%s'", exec_cases[_i].cmdline,
		      hx_verdict_name(d.verdict), d.rule, d.judged_as);
	ck_assert_uint_eq(hx_policy_check_examples(p, NULL, NULL), 0);
	hx_policy_free(p);
}
END_TEST

/* An allow that a part matches is no permission: under a policy that
 * denies exec by default, sh -c 'git status' is sh's exec, denied. */
START_TEST(part_never_allows)
{
	static const char y[] = "version: 1\n"
				"defaults:\n"
				"  exec: deny\n"
				"exec:\n"
				"  - allow: [\"git status *\"]\n";
	static const char *const direct[] = {"git", "status"};
	static const char *const via_sh[] = {"sh", "-c", "git status"};
	struct hx_policy *p = NULL;
	struct hx_policy_error err;
	struct hx_event ev = {.op = HX_OP_EXEC, .cwd = "/work/proj"};
	struct hx_decision d;

	ck_assert_int_eq(
	    hx_policy_load_buffer("t.yaml", y, strlen(y), &vars, &p, &err), 0);
	ev.argv = direct;
	ev.argc = 2;
	hx_policy_decide(p, &ev, &d);
	ck_assert_int_eq(d.verdict, HX_VERDICT_ALLOW);
	ev.argv = via_sh;
	ev.argc = 3;
	hx_policy_decide(p, &ev, &d);
	ck_assert_int_eq(d.verdict, HX_VERDICT_DENY);
	ck_assert_str_eq(d.rule, "default:exec");
	hx_policy_free(p);
}
END_TEST

/* What an answer on a script covers (hx_policy_exec_runs): a part it
 * showed, asked by the rule that asks now, every word known, in the
 * directory shown; not a command that only fits a glob it showed. */
START_TEST(script_covers_what_it_showed)
{
	static const char *const script[] = {
	    "sh", "-c",
	    ("find . -name '*.pyc' -exec rm -f {} +; git push origin main; "
	     "cd sub && git push origin feature")};
	static const char *const push[] = {"git", "push", "origin", "main"};
	static const char *const feat[] = {"git", "push", "origin", "feature"};
	static const char *const rm[] = {"rm", "-f", "-R", "/home/u/victim"};
	static const char *const rm2[] = {"rm", "-f", "./a.pyc"};
	const struct {
		const char *const *argv;
		size_t argc;
		const char *cwd, *rule;
		bool covered;
	} cases[] = {
	    {push, 4, "/work/proj", "push", true},
	    {push, 4, "/tmp", "push", false},
	    {push, 4, "/work/proj", "wipe", false},
	    {feat, 4, "/work/proj/sub", "push", true},
	    {feat, 4, "/work/proj", "push", false},
	    {rm, 4, "/work/proj", "wipe", false},
	    {rm2, 3, "/work/proj", "wipe", false},
	};
	struct hx_policy *p = NULL;
	struct hx_policy_error err;

	ck_assert_int_eq(hx_policy_load_buffer("t.yaml", p_exec, strlen(p_exec),
					       &vars, &p, &err),
			 0);
	for (size_t i = 0; i < N(cases); i++) {
		struct hx_event ev = {.op = HX_OP_EXEC,
				      .argv = cases[i].argv,
				      .argc = cases[i].argc,
				      .cwd = cases[i].cwd};

		ck_assert_msg(hx_policy_exec_runs(p, script, 3, "/work/proj",
						  cases[i].rule,
						  &ev) == cases[i].covered,
			      "case %zu", i);
	}
	hx_policy_free(p);
}
END_TEST

START_TEST(class_cannot_allow)
{
	static const char y[] = "version: 1\n"
				"exec:\n"
				"  - allow: [\"class:read_only\"]\n";
	static const char bad[] = "version: 1\n"
				  "exec:\n"
				  "  - deny: [\"class:harmless\"]\n";
	struct hx_policy *p = NULL;
	struct hx_policy_error err;

	ck_assert_int_eq(
	    hx_policy_load_buffer("t.yaml", y, strlen(y), &vars, &p, &err),
	    -EINVAL);
	ck_assert_uint_eq(err.line, 3);
	ck_assert_ptr_nonnull(strstr(err.message, "cannot allow"));
	ck_assert_int_eq(
	    hx_policy_load_buffer("t.yaml", bad, strlen(bad), &vars, &p, &err),
	    -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "no such class"));
}
END_TEST

static Suite *cmdview_suite(void)
{
	Suite *s = suite_create("cmdview");
	TCase *c = tcase_create("shell");

	tcase_add_loop_test(c, sh_table, 0, N(sh_cases));
	tcase_add_test(c, sh_details);
	suite_add_tcase(s, c);
	c = tcase_create("view");
	tcase_add_loop_test(c, view_table, 0, N(view_cases));
	tcase_add_test(c, view_bounds);
	tcase_add_test(c, view_env_config_forces_push);
	tcase_add_test(c, view_names_the_file);
	tcase_add_loop_test(c, example_classes, 0, N(examples));
	tcase_add_test(c, every_entry_has_an_example);
	suite_add_tcase(s, c);
	c = tcase_create("rules");
	tcase_add_loop_test(c, exec_parts, 0, N(exec_cases));
	tcase_add_test(c, part_never_allows);
	tcase_add_test(c, script_covers_what_it_showed);
	tcase_add_test(c, class_cannot_allow);
	suite_add_tcase(s, c);
	return s;
}

HX_TEST_MAIN(cmdview_suite)
