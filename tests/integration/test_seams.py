"""Seams where an emulated call could act on more than it was decided
on (issue 10, class 1), tried by a static busybox, which only the kernel
layer sees: a rename of a directory above a denied path, a hard link
that would give write access to its target."""

import os
import shutil
import subprocess
import sys

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


# A thread that gave itself an fd table of its own (unshare CLONE_FILES)
# and, in it, the number of the main thread's directory a/ for b/; then
# each call that takes an fd: openat (create), mkdirat, fchmod, and
# inotify_add_watch's directory through it.
THREAD_FDS = r'''
import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
a = os.open("a", os.O_RDONLY | os.O_DIRECTORY)
out = {}
def run():
    if libc.unshare(0x400) != 0:  # CLONE_FILES
        out["err"] = ctypes.get_errno(); return
    os.close(a)
    b = os.open("b", os.O_RDONLY | os.O_DIRECTORY)
    assert b == a, (a, b)
    fd = os.open("x", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=b)
    os.write(fd, b"made"); os.fchmod(fd, 0o600); os.close(fd)
    os.mkdir("d", dir_fd=b)
t = threading.Thread(target=run); t.start(); t.join()
print("thread", out.get("err", "ok"))
'''


def test_a_threads_own_fd_table_is_the_one_its_calls_use(wd):
    """The kernel layer took a call's fds from the process's table by
    number (pidfd_getfd of the process, /proc/<pid>/fd), so a thread
    with a table of its own had its openat(dirfd) made in the directory
    its process's fd of that number names: a/x for b/x (nineteenth
    attack review, from reading the code). The calling thread's own fd
    now (a pidfd of the thread, PIDFD_THREAD; /proc/<tid>/fd)."""
    for d in ("a", "b"):
        os.makedirs(os.path.join(wd.path, d))
    for shim in ({}, {"HARNESS_SHIM": ""}):
        for d in ("a", "b"):
            for f in ("x", "d"):
                p = os.path.join(wd.path, d, f)
                if os.path.isdir(p):
                    os.rmdir(p)
                elif os.path.exists(p):
                    os.unlink(p)
        r = harness([sys.executable, "-c", THREAD_FDS], wd, policy=None, env=shim)
        check(r.stdout.strip() == "thread ok", "%s: %r %r" % (shim, r.stdout, r.stderr))
        made = sorted(os.path.relpath(os.path.join(dp, n), wd.path)
                      for dp, ds, fs in os.walk(wd.path) for n in ds + fs
                      if os.path.relpath(dp, wd.path) in ("a", "b"))
        check(made == ["b/d", "b/x"], "%s: made %r\n%s" % (shim, made, r.dump()))
        check(os.stat(os.path.join(wd.path, "b", "x")).st_mode & 0o777 == 0o600,
              "%s: fchmod" % shim)
        bx = os.path.join(wd.path, "b", "x")
        recs = [e for e in r.records if e.get("args", {}).get("path") == bx]
        check(recs and not [e for e in r.records if e.get("args", {}).get("path") ==
                            os.path.join(wd.path, "a", "x")], "%s: records\n%s" % (shim, r.dump()))
