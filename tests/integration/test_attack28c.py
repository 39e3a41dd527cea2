"""Attack review 28, part c: the name the supervisor decides on and the
object the kernel acts on (path resolution), under the embedded default
policy in enforce mode, as root and as an ordinary user, through the
shim and from a static busybox.

Every path is judged as named and as resolved (its symlinks followed),
but a rule names a place as the policy spells it: a $HOME given through
a symbolic link (/home/u -> /var/home/u, as Fedora's image-based systems
and many automounted homes have), or a ~/.ssh or ~/.bashrc that is a
link into a dotfiles checkout, named in the rules a place no resolved
path is ever called. With the session in the real directory (a session
in $HOME, or in the dotfiles checkout) the agent wrote ~/.bashrc's and
~/.ssh's real files by their real names (or by a relative name, which
resolves to them), allowed as the project's own files: a deny and ask
rule whose literal directories meet a symbolic link is now rebased onto
their real path at load (policy/alias.c)."""

import os

from lib import check, harness
from test_default_policy import fake_home

BUSYBOX = "/bin/busybox"


def _untouched(path, text):
    with open(path) as f:
        got = f.read()
    check(got == text, "%s was changed: %r" % (path, got))


def _refused(r, path, rule):
    recs = [x for x in r.events(args_path=path)
            if x.get("verdict") in ("deny", "allow")]
    check(recs, "no record of %s:\n%s" % (path, r.dump()))
    for x in recs:
        check(x["verdict"] == "deny" and x["rule"] == rule,
              "%s: %s by %r, want deny by %r" % (path, x["verdict"],
                                                 x["rule"], rule))


def test_rules_of_a_home_named_through_a_symlink_hold_on_its_real_path(wd):
    home = fake_home(wd)
    named = home + "-link"
    os.symlink(os.path.basename(home), named)
    # The session in the user's home (its real path: getcwd's), the
    # policy's $HOME the symlinked name the user's environment gives.
    script = ("echo evil >> %s/.bashrc; echo key > .ssh/authorized_keys; "
              "%s sh -c 'echo evil2 >> .bashrc; echo k2 > .ssh/config'; "
              "mkdir -p .cache/x && echo ok > ~/.cache/x/y && cat .cache/x/y"
              % (home, BUSYBOX))
    r = _in(home, script, wd, named)
    _untouched(os.path.join(home, ".bashrc"), "# rc\n")
    for f in ("authorized_keys", "config"):
        check(not os.path.exists(os.path.join(home, ".ssh", f)),
              "~/.ssh/%s written by its real name" % f)
    _refused(r, os.path.join(home, ".bashrc"), "shell-rc")
    _refused(r, os.path.join(home, ".ssh", "authorized_keys"), "ssh")
    _refused(r, os.path.join(home, ".ssh", "config"), "ssh")
    # What the rules allow by the symlinked name still is.
    check(r.stdout.endswith("ok\n"), "~/.cache not written: %r %r"
          % (r.stdout, r.stderr[-500:]))


def _in(cwd, script, wd, home):
    """harness() with the session started in cwd, not in the project."""
    old = wd.path
    wd.path = cwd
    try:
        return harness(["sh", "-c", script], wd, policy=None,
                       env={"HOME": home})
    finally:
        wd.path = old


def test_a_secret_linked_into_a_dotfiles_checkout_is_denied_there(wd):
    home = fake_home(wd)
    dots = os.path.join(home, "dots")
    os.makedirs(os.path.join(dots, "ssh"))
    with open(os.path.join(dots, "bashrc"), "w") as f:
        f.write("# rc\n")
    os.rename(os.path.join(home, ".ssh", "id_rsa"),
              os.path.join(dots, "ssh", "id_rsa"))
    os.rmdir(os.path.join(home, ".ssh"))
    os.unlink(os.path.join(home, ".bashrc"))
    os.symlink("dots/ssh", os.path.join(home, ".ssh"))
    os.symlink("dots/bashrc", os.path.join(home, ".bashrc"))
    # The agent asked to work in the checkout: its files are the
    # project's, but two of them are the user's shell rc and ssh dir.
    script = ("echo evil >> bashrc; echo key > ssh/authorized_keys; "
              "%s sh -c 'echo evil2 >> bashrc; echo k2 > ssh/config'; "
              "cat ssh/id_rsa; echo ok > notes; cat notes" % BUSYBOX)
    r = _in(dots, script, wd, home)
    _untouched(os.path.join(dots, "bashrc"), "# rc\n")
    for f in ("authorized_keys", "config"):
        check(not os.path.exists(os.path.join(dots, "ssh", f)),
              "ssh/%s written in the checkout" % f)
    check("PRIVATE-KEY" not in r.stdout, "the key was read")
    _refused(r, os.path.join(dots, "bashrc"), "shell-rc")
    _refused(r, os.path.join(dots, "ssh", "authorized_keys"), "ssh")
    _refused(r, os.path.join(dots, "ssh", "config"), "ssh")
    check(r.stdout.endswith("ok\n"), "the project's own file not written: %r"
          % r.stdout)
