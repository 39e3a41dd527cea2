"""Seams where an emulated call could act on more than it was decided
on (issue 10, class 1), tried by a static busybox, which only the kernel
layer sees: a rename of a directory above a denied path, a hard link
that would give write access to its target."""

import os
import shutil
import subprocess

from lib import check, harness
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox")


def _bb(script, wd, home):
    return harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})


def test_directory_rename_cannot_move_a_denied_path(wd):
    home = fake_home(wd)
    subprocess.run(["git", "init", "-q", wd.path], check=True)
    # Move .git aside, plant a hook, move it back: every step that
    # would make the hook land is refused.
    script = ("mv .git g; mkdir -p g/hooks && echo evil > g/hooks/pre-commit; mv g .git; "
              "mkdir $TMPDIR/cfg && echo 'eval x' > $TMPDIR/cfg/.envrc && mv $TMPDIR/cfg cfg; "
              "mkdir -p lib && mv lib lib2 && echo moved")
    r = _bb(script, wd, home)
    check(os.path.isdir(os.path.join(wd.path, ".git", "hooks")), ".git was moved")
    check(not os.path.exists(os.path.join(wd.path, ".git", "hooks", "pre-commit")), "hook planted")
    check(not os.path.exists(os.path.join(wd.path, "cfg")), "a directory with .envrc moved in")
    check("moved" in r.stdout, "a plain directory rename was refused: %r" % r.stderr)
    rec = r.one(op="rename", args_path=os.path.join(wd.path, ".git"))
    check(rec["verdict"] == "deny" and rec["rule"] == "git-hooks" and rec["layer"] == "kernel",
          "record %r" % rec)
    rec = r.one(op="rename", args_path2=os.path.join(wd.path, "cfg"))
    check(rec["verdict"] == "ask" and rec["rule"] == "project-autorun", "record %r" % rec)


def test_hard_link_gives_no_write_access(wd):
    home = fake_home(wd)
    rc = os.path.join(home, ".bashrc")
    before = open(rc).read()
    r = _bb("ln %s rc && echo evil >> rc; cat rc" % rc, wd, home)
    check(open(rc).read() == before, "~/.bashrc written through a hard link")
    check(not os.path.exists(os.path.join(wd.path, "rc")), "the link was made")
    rec = r.one(op="link")
    check(rec["verdict"] == "deny" and rec["rule"] == "shell-rc", "record %r" % rec)


def test_symlink_cannot_plant_what_a_rule_holds(wd):
    """A symlink brings what is beneath its target under its own name:
    content the agent wrote somewhere it may (a cache) must not appear as
    the project's .claude/settings.json (it runs in the user's next
    session). Links to what the agent cannot write stay allowed."""
    home = fake_home(wd)
    evil = os.path.join(home, ".cache", "evil")
    script = ("mkdir -p %s && echo '{\"hooks\":{}}' > %s/settings.json; "
              "ln -s %s .claude; ln -s %s sub; ln -s /usr/include inc; "
              "mkdir -p lib && ln -s lib/x rel; echo done") % (evil, evil, evil, os.path.dirname(evil))
    for prog in ([BUSYBOX, "sh", "-c", script], ["sh", "-c", script]):
        for n in (".claude", "sub", "inc", "rel"):
            p = os.path.join(wd.path, n)
            if os.path.lexists(p):
                os.unlink(p)
        r = harness(prog, wd, policy=None, env={"HOME": home})
        check(r.stdout.strip().endswith("done"), "%s: %r %r" % (prog[0], r.stdout, r.stderr))
        check(not os.path.lexists(os.path.join(wd.path, ".claude")), "%s: .claude planted" % prog[0])
        check(not os.path.lexists(os.path.join(wd.path, "sub")),
              "%s: a link to a tree holding evil/ made" % prog[0])
        for n in ("inc", "rel"):
            check(os.path.islink(os.path.join(wd.path, n)), "%s: %s refused" % (prog[0], n))
        rec = r.one(op="symlink", args_path=os.path.join(wd.path, ".claude"))
        # ~/.cache/evil may hold pickles the link would show elsewhere:
        # cache-objects' deny is stronger than project-autorun's ask.
        check((rec["verdict"], rec["rule"]) in (("ask", "project-autorun"),
                                                ("deny", "cache-objects")),
              "%s: %r" % (prog[0], rec))
