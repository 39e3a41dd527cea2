"""Attack review 28, part c: the name the supervisor decides on and the
object the kernel acts on (path resolution), under the embedded default
policy in enforce mode, as root and as an ordinary user, through the
shim and from a static busybox.

Every path is judged as named and as resolved (its symlinks followed),
but a rule names a place as the policy spells it: a $HOME given through
a symbolic link (/home/u -> /var/home/u, as Fedora's image-based systems
and many automounted homes have), or a ~/.ssh or ~/.bashrc that is a
link into a dotfiles checkout, named in the rules a place no resolved
path is ever called (a link where a rule has a wildcard too:
~/.zshrc.local for "$HOME/.zshrc.*"). With the session in the real directory (a session
in $HOME, or in the dotfiles checkout) the agent wrote ~/.bashrc's and
~/.ssh's real files by their real names (or by a relative name, which
resolves to them), allowed as the project's own files: a deny and ask
rule whose literal directories meet a symbolic link is now rebased onto
their real path at load (policy/alias.c).

One record stands for the shim's request and the kernel layer's sight
of the same call when their keys agree, and the key was the name as
given: a thread that re-pointed a symbolic link on the way between the
two (l -> dA, then l -> dB) had the file made in dB recorded as made in
dA (path_resolved), in 84 opens of 300. The key now holds the resolved
names each layer decided on: such a call gets the kernel layer's own
record, and the shim's a kernel_unconfirmed one
(supervisor/pipeline_key.c). The second path is keyed as decided too:
the kernel layer hands a rename's or link's second path over resolved,
the shim as named, and each such call into a linked directory was two
records, the kernel layer's a false shim_bypass.

The masks' walk skipped every entry whose path is longer than PATH_MAX
("beyond any path the agent names"), but a program names it by
relative steps (a cwd, a dirfd): one session's agent moved the user's
config/ (and its .env) past PATH_MAX by short renames (mkdir N; mv TOP
N/, 22 times: no name decided is long), and the next session's static
program read the .env by chdir'ing down, unmasked, with no record. Such
a walk now stops short like one past its entry count: every open is
decided in the kernel layer (supervisor/kernel/masks.c).

The rules are written for $HOME as the environment gives it; with HOME
set elsewhere (sudo keeping the caller's, a home of the user's making
for the agent) the account's own home was named by no rule, and a
static program of a root agent read a credential store in /root that
the policy denies in $HOME. Its rules now hold in the account's home
too (supervisor/mountalias.c, hx_mountalias_home)."""

import json
import os
import pwd
import shutil

from lib import HELPERS, PYTHON, Skip, check, harness
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
    # And one a rule names by a wildcard ("$HOME/.zshrc.*").
    with open(os.path.join(dots, "zshrc.local"), "w") as f:
        f.write("# rc\n")
    os.symlink("dots/zshrc.local", os.path.join(home, ".zshrc.local"))
    # The agent asked to work in the checkout: its files are the
    # project's, but two of them are the user's shell rc and ssh dir.
    script = ("echo evil >> bashrc; echo key > ssh/authorized_keys; "
              "echo evil >> zshrc.local; "
              "%s sh -c 'echo evil2 >> bashrc; echo k2 > ssh/config'; "
              "cat ssh/id_rsa; echo ok > notes; cat notes" % BUSYBOX)
    r = _in(dots, script, wd, home)
    _untouched(os.path.join(dots, "bashrc"), "# rc\n")
    _untouched(os.path.join(dots, "zshrc.local"), "# rc\n")
    for f in ("authorized_keys", "config"):
        check(not os.path.exists(os.path.join(dots, "ssh", f)),
              "ssh/%s written in the checkout" % f)
    check("PRIVATE-KEY" not in r.stdout, "the key was read")
    _refused(r, os.path.join(dots, "bashrc"), "shell-rc")
    _refused(r, os.path.join(dots, "zshrc.local"), "shell-rc")
    _refused(r, os.path.join(dots, "ssh", "authorized_keys"), "ssh")
    _refused(r, os.path.join(dots, "ssh", "config"), "ssh")
    check(r.stdout.endswith("ok\n"), "the project's own file not written: %r"
          % r.stdout)


RELINK = r"""
import os, sys, threading
os.mkdir("dA"); os.mkdir("dB")
os.symlink("dA", "l")
stop = False
def flip():
    i = 0
    while not stop:
        t = "t%d" % (i % 2)
        try:
            os.symlink("dB" if i % 2 else "dA", t)
            os.rename(t, "l")
        except OSError:
            pass
        i += 1
th = threading.Thread(target=flip)
th.start()
for i in range(int(sys.argv[1])):
    os.close(os.open("l/f%d" % i, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
stop = True
th.join()
"""


def test_a_record_names_the_file_a_relinked_name_reached(wd):
    home = fake_home(wd)
    n = 300
    r = harness([PYTHON, "-c", RELINK, str(n)], wd, policy=None,
                env={"HOME": home})
    r.expect_status(0)
    made = {}
    for d in ("dA", "dB"):
        for f in os.listdir(os.path.join(wd.path, d)):
            made[f] = os.path.join(wd.path, d, f)
    check(len(made) == n, "%d files made of %d" % (len(made), n))
    unconfirmed = {x.get("ref_seq") for x in r.events(event="kernel_unconfirmed")}
    named = {}
    for x in r.records:
        a = x.get("args", {})
        if (a.get("path", "").startswith(os.path.join(wd.path, "l", "f"))
                and x.get("verdict") == "allow"
                and x.get("seq") not in unconfirmed):
            named.setdefault(a.get("path_resolved"), []).append(x)
    wrong = [f for f, real in made.items() if real not in named]
    check(not wrong, "%d of %d files made are recorded made elsewhere, e.g. %s: %s"
          % (len(wrong), n, wrong[:3],
             json.dumps([x["args"] for x in r.events(args_path=os.path.join(
                 wd.path, "l", wrong[0]))]) if wrong else ""))


HIDE = r"""
top=config
for i in $(seq 1 22); do
  n=$(printf 'p%03d%0196d' $i 0)
  mkdir $n && mv $top $n/ || exit 1
  top=$n
done
mv $top deep && echo hidden
"""


def test_a_secret_moved_past_path_max_is_not_read_in_the_next_session(wd):
    home = fake_home(wd)
    wd.file("config/.env", "USER-SECRET=1\n")
    r = harness([BUSYBOX, "sh", "-c", HIDE], wd, policy=None,
                env={"HOME": home})
    check(r.stdout == "hidden\n", "the move: %r %r" % (r.stdout, r.stderr[-500:]))
    probe = os.path.join(HELPERS, "static_attack28c")
    r = harness([probe, "deep"], wd, policy=None, env={"HOME": home})
    check("USER-SECRET" not in r.stdout, "the .env past PATH_MAX was read: %r"
          % r.stdout)
    check(r.stdout.startswith("stopped at depth"), "probe: %r" % r.stdout)
    start = r.one(event="session_start")
    kern = start.get("kernel", {})
    check(kern.get("masks_truncated") is True and kern.get("reads_decided"),
          "session_start does not say the masks stop short: %r" % kern)


def test_the_accounts_own_home_is_held_when_home_is_set_elsewhere(wd):
    home = fake_home(wd)
    acct = pwd.getpwuid(os.getuid()).pw_dir
    if not os.path.isdir(acct) or not os.access(acct, os.W_OK):
        raise Skip("the account's home %s is not there to write" % acct)
    # A store a rule names by a wildcard ($HOME/.config/JetBrains/*/
    # c.kdbx), in a directory of the test's own, removed after.
    made = []
    d = acct
    for part in (".config", "JetBrains",
                 "hx28c-" + os.path.basename(wd.path)):
        d = os.path.join(d, part)
        if not os.path.isdir(d):
            os.mkdir(d, 0o700)
            made.append(d)
    secret = os.path.join(d, "c.kdbx")
    try:
        with open(secret, "w") as f:
            f.write("ACCOUNT-KDBX\n")
        r = harness(["sh", "-c", "cat %s; %s cat %s" % (secret, BUSYBOX, secret)],
                    wd, policy=None, env={"HOME": home})
        check("ACCOUNT-KDBX" not in r.stdout,
              "the account's own store was read: %r" % r.stdout)
        _refused(r, secret, "cloud-and-registry-tokens")
    finally:
        for m in reversed(made):
            shutil.rmtree(m, ignore_errors=True)


def test_a_rename_into_a_linked_directory_is_one_record(wd):
    home = fake_home(wd)
    os.mkdir(os.path.join(wd.path, "d"))
    os.symlink("d", os.path.join(wd.path, "lnk"))
    wd.file("a", "a\n")
    r = harness([PYTHON, "-c", "import os; os.rename('a', 'lnk/a2'); "
                 "os.link('lnk/a2', 'lnk/a3')"], wd, policy=None,
                env={"HOME": home})
    r.expect_status(0)
    check(os.path.exists(os.path.join(wd.path, "d", "a3")), "not linked")
    for op in ("rename", "link"):
        recs = [x for x in r.events(op=op)
                if x.get("event") != "kernel_unconfirmed"]
        check(len(recs) == 1 and recs[0].get("layer") == "shim+kernel"
              and not recs[0].get("shim_bypass"),
              "%s: %s" % (op, [(x.get("layer"), x.get("shim_bypass"),
                                x.get("args", {}).get("path2"))
                               for x in recs]))
    r.none(event="kernel_unconfirmed")
