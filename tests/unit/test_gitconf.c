/* A repository's configured code (supervisor/gitconf.h): the keys
 * that run code or force a push, the places git reads as code, a bare
 * repository's layout outside every .git. */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/gitconf.h"
#include "supervisor/gitobj.h"
#include "tests/unit/check_main.h"

static const struct {
	const char *text;
	bool code;
} gc_table[] = {
    {"[core]\n\trepositoryformatversion = 0\n\tbare = false\n", false},
    {"[remote \"origin\"]\n\turl = https://x/y\n[user]\n\tname = a\n", false},
    {"[branch \"config\"]\n\tremote = origin\n", false},
    {"[core]\n\tfsmonitor = ./x\n", true},
    {"[Core]\n  FSMonitor=./x\n", true},
    {"[core] fsmonitor = ./x\n", true},	      /* a key after the header */
    {"[core \"a]b\"] hookspath = h\n", true}, /* ... after any ']' */
    {"\xef\xbb\xbf[core]\r\n\tsshCommand = x\r\n", true},
    {"[include]\n\tpath = ../x\n", true},
    {"[includeIf \"gitdir:/\"]\n\tpath = x\n", true},
    {"[alias]\n\tst = !sh -c x\n", true},
    {"[alias]\n\tst = status -s\n", false},
    {"[filter \"lfs\"]\n\tclean = git-lfs clean\n", true},
    {"[diff \"x\"]\n\ttextconv = ./t\n", true},
    {"[hook \"a\"]\n\tevent = pre-commit\n", true},
    {"[pager]\n\tlog = ./p\n", true},
    {"[core]\n\talternateRefsCommand = x\n", true},
    {"[submodule \"m\"]\n\tupdate = !x\n", true},
    {"[remote \"o\"]\n\turl = ext::sh -c x\n", true},
    {"[protocol \"ext\"]\n\tallow = always\n", true},
    {"[x]\n\ty = 1\n[core]\n\teditor\n", true}, /* no '=': true */
    /* what a clone writes; a push refspec forcing, deleting, or not */
    {"[remote \"origin\"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
     false},
    {"[remote \"origin\"]\n\tpush = +HEAD:main\n", true},
    {"[remote \"o\"]\n\tPush=\"+refs/heads/*:refs/heads/*\"\n", true},
    {"[remote \"o\"]\n\tpush = :main\n", true},
    {"[remote \"o\"]\n\tpush = refs/heads/main:refs/heads/main\n", false},
    {"[remote \"o\"]\n\tmirror = true\n", true},
    {"[remote \"o\"]\n\tmirror\n", true},
    {"[remote \"o\"]\n\tmirror = false\n", false},
    {"[remote \"o\"] mirror = yes\n", true},
    /* a value continued on the next line; a number git reads as true */
    {"[remote \"o\"]\n\tpush = \\\n+HEAD:main\n", true},
    {"[remote \"o\"]\n\tpush = \\\r\n+HEAD:main\r\n", true},
    {"[remote \"o\"]\n\tpush = \\\\\n+HEAD:main\n", false},
    {"[remote \"o\"]\n\tmirror = 01\n", true},
    {"[remote \"o\"]\n\tmirror = 0x1\n", true},
    {"[remote \"o\"]\n\tmirror = \"no\" # not\n", false},
    {"[remote \"o\"]\n\tmirror = OFF\r\n", false},
    {"[branch \"main\"]\n\tpush = +x\n", false}, /* no such key there */
};

START_TEST(gitconf_names_code_table)
{
	ck_assert_int_eq(
	    hx_gitconf_names_code(gc_table[_i].text, strlen(gc_table[_i].text)),
	    gc_table[_i].code);
}
END_TEST

START_TEST(gitconf_places)
{
	static const struct {
		const char *path;
		bool in_project;
		enum hx_gitconf_place want;
	} t[] = {
	    {"/p/sub/.git/config", true, HX_GITCONF_CONFIG},
	    {"/p/sub/.git/config.worktree", true, HX_GITCONF_CONFIG},
	    {"/p/.git/modules/a/b/config", true, HX_GITCONF_CONFIG},
	    {"/p/sub/.git/refs/heads/config", true, HX_GITCONF_NONE},
	    {"/p/sub/.git/logs/refs/heads/config", true, HX_GITCONF_NONE},
	    {"/p/sub/.git/hooks/pre-commit", true, HX_GITCONF_CODE},
	    {"/p/sub/.git/hooks/pre-commit.sample", true, HX_GITCONF_NONE},
	    {"/p/sub/.git/modules/m/hooks/post-checkout", true,
	     HX_GITCONF_CODE},
	    {"/p/sub/.git/myhooks/x", true, HX_GITCONF_NONE},
	    {"/p/sub/.git/commondir", true, HX_GITCONF_CODE},
	    {"/p/sub/.git", true, HX_GITCONF_CODE},
	    {"/p/sub/.git", false, HX_GITCONF_CODE},
	    {"/p/bare/HEAD", true, HX_GITCONF_CODE},
	    {"/cache/go/vcs/x/HEAD", false, HX_GITCONF_NONE},
	    {"/p/sub/.git/HEAD", true, HX_GITCONF_NONE},
	    {"/p/src/config", true, HX_GITCONF_NONE},
	    {"/p/.github/config", true, HX_GITCONF_NONE},
	    /* a remote of the old layout: "Push: +main:main" forces */
	    {"/p/sub/.git/remotes/evil", true, HX_GITCONF_CODE},
	    {"/p/sub/.git/remotes", true, HX_GITCONF_CODE},
	    {"/p/.git/modules/m/remotes/evil", true, HX_GITCONF_CODE},
	    {"/p/.git/refs/remotes/origin/main", true, HX_GITCONF_NONE},
	    {"/p/.git/logs/refs/remotes/origin/main", true, HX_GITCONF_NONE},
	    {"/p/.git/modules/remotes/config", true, HX_GITCONF_CONFIG},
	    {"/p/.git/modules/remotes", true, HX_GITCONF_NONE},
	    {"/p/.git/worktrees/remotes/HEAD", true, HX_GITCONF_NONE},
	    {"/p/.git/xremotes/evil", true, HX_GITCONF_NONE},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++)
		ck_assert_msg(hx_gitconf_place(t[i].path, t[i].in_project) ==
				  t[i].want,
			      "%s", t[i].path);
	ck_assert(hx_gitconf_in_git("/p/sub/.git"));
	ck_assert(hx_gitconf_in_git("/p/sub/.git/hooks"));
	ck_assert(!hx_gitconf_in_git("/p/sub/.github"));
}
END_TEST

/* A bare repository's layout outside every .git (a cache's): judged by
 * what its directory holds (gitbare.c). */
START_TEST(gitconf_bare_places)
{
	char dir[] = "/tmp/hx-bare-XXXXXX", p[PATH_MAX];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/r", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/r/hooks", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	/* no repository yet: nothing by place, a hook by its name */
	snprintf(p, sizeof(p), "%s/r/hooks/post-checkout", dir);
	ck_assert_int_eq(hx_gitconf_bare_place(p), HX_GITCONF_NONE);
	ck_assert(hx_gitconf_hook_name(p));
	snprintf(p, sizeof(p), "%s/r/hooks/notes.txt", dir);
	ck_assert(!hx_gitconf_hook_name(p));
	ck_assert(!hx_gitconf_hook_name("/c/myhooks/post-checkout"));
	ck_assert(!hx_gitconf_hook_name("/c/hooks/pre-push.sample"));
	snprintf(p, sizeof(p), "%s/r/config", dir);
	ck_assert_int_eq(hx_gitconf_bare_place(p), HX_GITCONF_NONE);
	/* a repository: its config, every hook but samples, hooks */
	snprintf(p, sizeof(p), "%s/r/objects", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/r/config", dir);
	ck_assert_int_eq(hx_gitconf_bare_place(p), HX_GITCONF_CONFIG);
	snprintf(p, sizeof(p), "%s/r/hooks/notes.txt", dir);
	ck_assert_int_eq(hx_gitconf_bare_place(p), HX_GITCONF_CODE);
	snprintf(p, sizeof(p), "%s/r/hooks/pre-push.sample", dir);
	ck_assert_int_eq(hx_gitconf_bare_place(p), HX_GITCONF_NONE);
	snprintf(p, sizeof(p), "%s/r/hooks", dir);
	ck_assert_int_eq(hx_gitconf_bare_place(p), HX_GITCONF_CODE);
	snprintf(p, sizeof(p), "%s/r/HEAD", dir);
	ck_assert_int_eq(hx_gitconf_bare_place(p), HX_GITCONF_NONE);
	/* a remote of the old layout, remotes itself */
	snprintf(p, sizeof(p), "%s/r/remotes/evil", dir);
	ck_assert_int_eq(hx_gitconf_bare_place(p), HX_GITCONF_CODE);
	snprintf(p, sizeof(p), "%s/r/remotes", dir);
	ck_assert_int_eq(hx_gitconf_bare_place(p), HX_GITCONF_CODE);
	snprintf(p, sizeof(p), "%s/r", dir);
	ck_assert(!hx_gitconf_tree_carries_code(p, false));
	/* a hook in it: HEAD completes a layout that runs code */
	snprintf(p, sizeof(p), "%s/r/hooks/update", dir);
	close(open(p, O_CREAT | O_WRONLY, 0700));
	snprintf(p, sizeof(p), "%s/r/HEAD", dir);
	ck_assert_int_eq(hx_gitconf_bare_place(p), HX_GITCONF_CODE);
	snprintf(p, sizeof(p), "%s/r", dir);
	ck_assert(hx_gitconf_tree_carries_code(p, false));
	/* a directory of hooks to be moved in as one */
	snprintf(p, sizeof(p), "%s/r/hooks", dir);
	ck_assert(hx_gitconf_tree_carries_code(p, true));
	snprintf(p, sizeof(p), "rm -rf %s", dir);
	ck_assert_int_eq(system(p), 0);
}
END_TEST

/* The parts of an object store that say what an id holds other than by
 * a loose object's name (gitobj.h): the agent may not write them. */
START_TEST(gitobj_defines)
{
	const char *o = "/p/.git/objects";

	ck_assert(hx_gitobj_defines(o, "/p/.git/objects/pack"));
	ck_assert(hx_gitobj_defines(o, "/p/.git/objects/pack/pack-1.idx"));
	ck_assert(hx_gitobj_defines(o, "/p/.git/objects/info/commit-graph"));
	ck_assert(hx_gitobj_defines(o, "/p/.git/objects/info"));
	ck_assert(!hx_gitobj_defines(o, "/p/.git/objects/ab/cdef"));
	ck_assert(!hx_gitobj_defines(o, "/p/.git/objects/ab"));
	ck_assert(!hx_gitobj_defines(o, "/p/.git/objects/packs"));
	ck_assert(!hx_gitobj_defines(o, "/p/.git/objects/maintenance.lock"));
	ck_assert(!hx_gitobj_defines(o, "/p/.git/objectsx/pack/x"));
	ck_assert(!hx_gitobj_defines(o, "/q/.git/objects/pack/x"));
	ck_assert(!hx_gitobj_defines(NULL, "/p/.git/objects/pack/x"));
}
END_TEST

/* The repository found from a subdirectory as git finds it, its
 * relative values from the work tree's top, and each name beneath the
 * checkout again beneath a worktree of it (its result is merged there). */
START_TEST(gitconf_find_from_below_and_mirrored)
{
	char dir[] = "/tmp/hx-gcf-XXXXXX", p[PATH_MAX + 64],
	     want[PATH_MAX + 64];
	struct hx_gitconf *c = calloc(1, sizeof(*c));
	bool hooks = false, mirrored = false, prog = false;
	FILE *f;

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof(p), "mkdir -p %s/r/.git/objects %s/r/sub %s/wt", dir,
		 dir, dir);
	ck_assert_int_eq(system(p), 0);
	snprintf(p, sizeof(p), "%s/r/.git/config", dir);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs("[core]\n\thooksPath = .githooks\n[pager]\n\tlog = "
	      "./t/pg.sh\n",
	      f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/r/sub", dir);
	snprintf(want, sizeof(want), "%s/wt", dir);
	hx_gitconf_find(p, want, NULL, c);
	for (size_t i = 0; i < c->n; i++) {
		snprintf(want, sizeof(want), "%s/r/.githooks/**", dir);
		hooks |= !strcmp(c->ptrs[i], want);
		snprintf(want, sizeof(want), "%s/wt/.githooks/**", dir);
		mirrored |= !strcmp(c->ptrs[i], want);
		snprintf(want, sizeof(want), "%s/wt/t/pg.sh", dir);
		prog |= !strcmp(c->ptrs[i], want);
	}
	ck_assert_msg(hooks && mirrored && prog, "%zu globs, first %s", c->n,
		      c->n ? c->ptrs[0] : "");
	snprintf(want, sizeof(want), "%s/r/.git/objects", dir);
	ck_assert_str_eq(c->objects, want);
	snprintf(p, sizeof(p), "rm -rf %s", dir);
	ck_assert_int_eq(system(p), 0);
	free(c);
}
END_TEST

static Suite *gitconf_suite(void)
{
	Suite *s = suite_create("gitconf");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, gitconf_names_code_table, 0,
			    sizeof(gc_table) / sizeof(*gc_table));
	tcase_add_test(tc, gitconf_places);
	tcase_add_test(tc, gitconf_bare_places);
	tcase_add_test(tc, gitobj_defines);
	tcase_add_test(tc, gitconf_find_from_below_and_mirrored);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(gitconf_suite)
