"""The eighth attack review: an ordinary user's agent under the default
policy, each hole tried as the attacker would and checked for its
effect and its record."""

import os
import shutil

from lib import PYTHON, check, harness
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox")


def test_a_directory_moved_in_brings_nothing_the_policy_would_not_write(wd):
    """The toolchains profile lets the agent write a few directories by
    their exact name so that a first run can make them (~/go, ~/.npm,
    ~/.yarn, ~/.bun), not what goes beneath them (~/go/bin, on many
    users' PATH; ~/.npm/_npx, which npx runs without asking). A rename
    was refused only for the deny and ask patterns beneath its source
    and destination, so a directory filled in $TMPDIR and moved to ~/go
    (python, a static busybox), or a symlink ~/go to a store the agent
    fills, put ~/go/bin/gopls and ~/.npm/_npx/... there: code the user
    runs later, outside the harness. What a move takes away is a write
    as well: ~/go, with the user's ~/go/bin in it, moved out of the way.
    Moves inside the write roots keep working."""
    home = fake_home(wd)
    os.makedirs(os.path.join(home, "mine", "bin"))
    user_tool = os.path.join(home, "mine", "bin", "tool")
    open(user_tool, "w").write("the user's\n")
    script = (
        "cd \"$TMPDIR\" && mkdir -p g/bin n/_npx/a/node_modules/e y/bin && "
        "echo evil > g/bin/gopls && echo evil > n/_npx/a/node_modules/e/index.js && "
        "echo evil > y/bin/x && "
        "%s -c \"import os; os.rename('g', os.path.expanduser('~/go'))\"; "
        "%s mv n ~/.npm; mv y ~/.yarn; "
        "mkdir -p ~/.npm/_cacache/b/bin && echo evil > ~/.npm/_cacache/b/bin/bun && "
        "ln -s ~/.npm/_cacache/b ~/.bun; "
        "mkdir -p k/l && echo ok > k/l/f && mv k kk && cd \"$OLDPWD\" && mkdir -p p/q && "
        "mv p kk && "
        "mkdir -p ~/.cache/c && mv ~/.cache/c ~/.cache/c2 && echo moves-ok") % (
            PYTHON, BUSYBOX)
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    for p in ("go/bin/gopls", ".npm/_npx/a/node_modules/e/index.js", ".yarn/bin/x",
              ".bun/bin/bun"):
        check(not os.path.exists(os.path.join(home, p)),
              "~/%s put in place by a move or a link: %r" % (p, r.stderr))
    check("moves-ok" in r.stdout and os.path.isdir(os.path.join(wd.path, "kk", "q")),
          "a move inside the write roots refused: %r %r" % (r.stdout, r.stderr))
    for dst in (os.path.join(home, "go"), os.path.join(home, ".npm")):
        rec = r.one(op="rename", args_path2=dst)
        check(rec["verdict"] == "deny" and rec["rule"] == "default:file_write",
              "record %r" % rec)
    rec = r.one(op="symlink", args_path=os.path.join(home, ".bun"))
    check(rec["verdict"] == "deny", "record %r" % rec)

    # Taking away: ~/go, holding the user's ~/go/bin, moved out.
    os.rename(os.path.join(home, "mine"), os.path.join(home, "go"))
    r = harness([BUSYBOX, "sh", "-c", "mv ~/go \"$TMPDIR/g\" && rm -rf \"$TMPDIR/g\"; echo x"],
                wd, policy=None, env={"HOME": home})
    check(os.path.exists(os.path.join(home, "go", "bin", "tool")),
          "the user's ~/go/bin/tool moved away and removed")
    rec = r.one(op="rename", args_path=os.path.join(home, "go"))
    check(rec["verdict"] == "deny" and rec["layer"] == "kernel", "record %r" % rec)
