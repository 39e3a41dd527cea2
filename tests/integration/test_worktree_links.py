"""A --worktree session's tree is a working tree like the project's,
though it lives beneath the project's .git (.git/harness/worktrees/ID):
the agent makes symlinks there (python -m venv, npm's .bin), renames
directories, and writes src/hooks/x.js or src/config. Before, every path
of it was taken for git's own: each of those was refused
(harness:git-config), and worktree sessions could not run a venv or an
npm install. What stays refused is git's: a nested repository's hooks,
the worktree's .git file, the project's .git.

A symlink in the tree meets harness-exec's own walks of it: a checkpoint
is taken while the agent runs (each writing process's end), and a
directory swapped for a link in the middle of libgit2's walk leads it to
read what the link names into a checkpoint the agent reads. The walk
runs in a child that Landlock confines to the tree and the git dir
(supervisor/kernel/confine.h; tests/unit/test_worktree.c races it). Here
the agent's own swaps wait for the supervisor, which takes the
checkpoint: 84 checkpoints under 8,000 swaps took nothing unconfined."""

import os

from lib import PYTHON, check, read_log
from test_worktree import git, make_repo, tree_files, wt_run


def test_a_worktree_holds_what_a_project_does(wd):
    repo = make_repo(wd)
    script = "\n".join([
        "try() { if sh -c \"$1\" 2>/dev/null; then echo \"MADE $2\"; else echo \"REFUSED $2\"; fi; }",
        "try 'ln -s sub/s lnk' link",
        "try 'mkdir -p node_modules/x node_modules/.bin && ln -s ../x/cli.js node_modules/.bin/x' binlink",
        "try 'mkdir m1 && echo 1 > m1/f && mv m1 m2' dirmove",
        "try 'mkdir -p src/hooks && echo x > src/hooks/useAuth.js' srchooks",
        "try 'printf \"[alias]\\n  x = !sh\\n\" > src/config' srcconfig",
        "try '%s -m venv --without-pip .venv' venv" % PYTHON,
        "try 'mkdir -p n && git -C n init -q && ln -s /tmp n/.git/hooks/pre-commit' nestedhook",
        "try 'rm .git' gitfile",
        "try 'ln -s \"%s/.git/config\" cfg && echo x >> cfg' throughlink" % repo,
    ])
    r = wt_run(wd, repo, ["sh", "-c", script], "wl1")
    r.expect_status(0)
    out = r.stdout
    for what in ("link", "binlink", "dirmove", "srchooks", "srcconfig", "venv"):
        check("MADE " + what in out, "%s: %s\n%s" % (what, out, r.stderr[-3000:]))
    for what in ("nestedhook", "gitfile", "throughlink"):
        check("REFUSED " + what in out, "%s: %s\n%s" % (what, out, r.stderr[-3000:]))
    files = tree_files(repo, "harness/wl1")
    mode = git(repo, "ls-tree", "harness/wl1", "lnk").split()[0]
    check(mode == "120000" and files.get("lnk") == b"sub/s", "lnk in the result: %s %r" %
          (mode, files.get("lnk")))
    check(files.get("m2/f") == b"1\n" and "src/hooks/useAuth.js" in files, sorted(files))
    check(os.path.islink(os.path.join(repo, ".git", "harness", "worktrees", "wl1",
                                      ".venv", "lib64")) or
          not os.path.isdir(os.path.join(repo, ".git", "harness", "worktrees", "wl1")),
          "the venv's lib64 link")
    recs = [x for x in read_log(r.log) if x.get("rule") == "harness:git-config"]
    check(recs, "the refusals' records")
