"""Attack review 27, part b: the session's edges in time, its start, its
end and what outlives it (DESIGN classes 2, 8 and 9), under the embedded
default policy, from a static busybox and through the shim.

The agent's TMPDIR (/tmp/harness-<uid>/<id>/tmp) is harness-exec's to
remove at the end, or at the next start when harness-exec was killed.
What the agent left there in a directory of mode 0500 or 0 (as an
ordinary user), or deeper than the removal's walk went (128 levels),
stayed for good: the end removed the lock file first, so no later start
swept what was left either. And every later start opened each tmp_root's
lock file to see whether a session holds it: a FIFO at that name held
each start of the user in that open, for good."""

import fcntl
import json
import os
import signal
import stat
import subprocess
import time

from lib import EXEC, Skip, check, harness

BUSYBOX = "/bin/busybox"
LOCK = "harness-session.lock"

# What an agent leaves that a plain removal cannot: a directory without
# write (its file stays), one without search or read, a tree of 140
# levels. Prints its TMPDIR.
KEEP = ('cd "$TMPDIR" && mkdir -p ro/sub nox && echo x > ro/sub/f && echo y > nox/f && '
        'chmod 500 ro && chmod 0 nox && mkdir deep && cd deep && '
        'i=0; while [ $i -lt 140 ]; do mkdir d && cd d || exit 9; i=$((i+1)); done; '
        'echo z > f; chmod 500 .; echo "$TMPDIR"')


def _run_dir():
    return "/tmp/harness-%d" % os.getuid()


def _force_remove(path):
    """What a test left, made removable first (its own modes)."""
    if not os.path.lexists(path):
        return
    subprocess.run(["chmod", "-R", "u+rwx", path], capture_output=True)
    subprocess.run(["rm", "-rf", path], capture_output=True)


def _lock_released(path, seconds):
    """Whether the flock at path is free within seconds."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return True  # no lock: nothing holds the directory
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
        finally:
            os.close(fd)
        time.sleep(0.05)


def test_what_the_agent_leaves_in_its_tmpdir_goes_with_the_session(wd):
    """A directory of mode 0500 or 0 and a tree 140 levels deep in the
    agent's TMPDIR: before, its tmp_root outlived the session (a deep
    tree as root too), with no lock for a later start to sweep it by."""
    for sh in ([BUSYBOX, "sh", "-c"], ["sh", "-c"]):
        r = harness(sh + [KEEP], wd, policy=None)
        tmp = r.stdout.strip()
        root = os.path.dirname(tmp)
        try:
            check(r.status == 0 and tmp.startswith(_run_dir() + "/"),
                  "%s: %s %r %r" % (sh[0], r.status, r.stdout, r.stderr[-400:]))
            check(not os.path.lexists(root), "%s: the TMPDIR outlived its session: %s holds %r" % (
                sh[0], root, os.listdir(root) if os.path.isdir(root) else "?"))
            check(r.records[-1]["event"] == "session_end" and r.records[-1]["exit_code"] == 0,
                  "%s: the end %r" % (sh[0], r.records[-1]))
        finally:
            _force_remove(root)


def test_what_a_killed_sessions_agent_left_goes_at_the_next_start(wd):
    """The same tree in the TMPDIR of a session whose harness-exec is
    killed (its lock held, then unheld): the next start sweeps it all."""
    log = os.path.join(wd.state, "killed.jsonl")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    p = subprocess.Popen([EXEC, "--quiet", "--audit-log", log, "--", BUSYBOX, "sh", "-c",
                          KEEP + "; sleep 60"], cwd=wd.path, env=env, stdout=subprocess.PIPE,
                         text=True)
    root = None
    try:
        tmp = p.stdout.readline().strip()
        check(tmp.startswith(_run_dir() + "/"), "the agent did not start: %r" % tmp)
        root = os.path.dirname(tmp)
        p.send_signal(signal.SIGKILL)
        p.wait()
        check(os.path.isdir(root), "the kill itself removed %s" % root)
        # A start sweeps only what no session holds: the killed one's
        # helpers let go of its lock as they see it gone, later on a
        # loaded machine (a start before then rightly left it).
        check(_lock_released(os.path.join(root, LOCK), 30),
              "the killed session's lock was still held after 30 s")
        r = harness(["/bin/true"], wd, policy=None)
        check(r.status == 0, r.stderr[-400:])
        check(not os.path.lexists(root), "%s left after the next start" % root)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if root:
            _force_remove(root)


def test_a_lock_planted_in_the_run_dir_holds_no_later_start(wd):
    """An agent in audit mode (its policy unenforced; harness:protect is
    not) made a directory in /tmp/harness-<uid> with a FIFO named like a
    session's lock: every later start of the user waited in the sweep's
    open of it, for good. The lock files are harness:protect now, and a
    FIFO there (put by any other means) is no lock: the start goes on
    and leaves it (as root: in a run dir of a mount namespace's own)."""
    planted = os.path.join(_run_dir(), "zz-planted-%d" % os.getpid())
    script = 'mkdir %s && mkfifo %s/%s; ls -l %s' % (planted, planted, LOCK, planted)
    try:
        for sh in ([BUSYBOX, "sh", "-c"], ["sh", "-c"]):
            _force_remove(planted)
            r = harness(sh + [script], wd, policy=None, mode="audit")
            check(not os.path.lexists(os.path.join(planted, LOCK)),
                  "%s: the FIFO was made: %r" % (sh[0], r.stdout))
            # refused at its directory now, another session's to an agent
            recs = [x for x in r.records if x.get("args", {}).get("path", "").startswith(planted)]
            check(recs and all(x["verdict"] == "deny" and x["rule"] == "harness:protect" and
                               x.get("enforced", True) is not False for x in recs),
                  "%s: the records %r" % (sh[0], recs))
        # And one put there otherwise: the next start is not held by it.
        # In a private mount namespace's run dir, so that no other
        # harness-exec of the machine meets it (as root only: an ordinary
        # user has no mount namespace of its own to make).
        if os.getuid() != 0:
            return
        env = dict(os.environ, XDG_STATE_HOME=wd.state)
        env.pop("LD_PRELOAD", None)
        inner = ('mount -t tmpfs -o mode=700 none "$1" && mkdir "$1/x" && mkfifo "$1/x/%s" && '
                 'timeout -s KILL 10 "$2" --quiet -- /bin/true && test -p "$1/x/%s" && echo started' % (LOCK, LOCK))
        try:
            r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", inner,
                                "sh", _run_dir(), EXEC], cwd=wd.path, env=env,
                               capture_output=True, text=True, timeout=10)
        except subprocess.TimeoutExpired:
            check(False, "the next start waited on a FIFO at a lock's name")
        check(r.stdout.strip() == "started", "the next start (killed after 10 s if it waits on the "
              "FIFO): %r %r" % (r.stdout, r.stderr))
    finally:
        _force_remove(planted)


def test_a_live_sessions_lock_is_not_anothers_to_replace(wd):
    """An agent in audit mode replaced a live session's lock file by an
    unheld one: the next start took that session for killed and removed
    its TMPDIR under it. The lock files are harness:protect."""
    log = os.path.join(wd.state, "live.jsonl")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    live = subprocess.Popen([EXEC, "--quiet", "--audit-log", log, "--", "sh", "-c",
                             'echo "$TMPDIR"; sleep 60'], cwd=wd.path, env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        tmp = live.stdout.readline().strip()
        check(os.path.isdir(tmp), "the live session did not start: %r" % tmp)
        lock = os.path.join(os.path.dirname(tmp), LOCK)
        swap = 'rm -f %s; echo > %s; ls -l %s' % (lock, lock, os.path.dirname(tmp))
        for sh in ([BUSYBOX, "sh", "-c"], ["sh", "-c"]):
            r = harness(sh + [swap], wd, policy=None, mode="audit")
            recs = [x for x in r.records if x.get("args", {}).get("path") == lock]
            check(recs and all(x["verdict"] == "deny" and x["rule"] == "harness:protect" and
                               x.get("enforced", True) is not False for x in recs),
                  "%s: the records %r" % (sh[0], recs))
            check(os.path.isdir(tmp), "%s: the live session's TMPDIR was removed" % sh[0])
        check(json.loads(open(log).readline())["event"] == "session_start", "the live log")
    finally:
        live.terminate()
        live.wait()


def _repo(wd):
    def git(*a):
        return subprocess.run(["git", "-C", wd.path] + list(a), capture_output=True, text=True, timeout=10)
    git("init", "-q")
    wd.file("a.txt", "a\n")
    git("add", "a.txt")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "first")
    return git


def _specials(top):
    out = []
    for d, dirs, files in os.walk(top):
        for n in files + dirs:
            m = os.lstat(os.path.join(d, n)).st_mode
            if not (stat.S_ISREG(m) or stat.S_ISDIR(m)):
                out.append(os.path.join(d, n))
    return out


# A FIFO made, moved or linked into the repository's .git, by a node of
# any name git opens: its packed-refs, a ref, the index.
FIFOS = ('mkfifo .git/packed-refs; mkfifo .git/refs/heads/side; '
         'mkfifo "$TMPDIR/f" && mv "$TMPDIR/f" .git/refs/heads/moved; '
         'mkfifo "$TMPDIR/g" && ln "$TMPDIR/g" .git/packed-refs; '
         'rm -f .git/index && mkfifo .git/index; '
         'python3 -c "import os; os.mknod(\'.git/refs/heads/node\', 0o10644)"; '
         'mkfifo .gitignore; mkdir -p sub && mkfifo sub/.gitattributes; '
         'mkfifo "$TMPDIR/h" && mv "$TMPDIR/h" sub/.gitignore; '
         'mkfifo pipe-of-the-agents; find . -type p')


def test_a_fifo_in_the_repository_holds_no_later_git_nor_start(wd):
    """The agent may write its repository's .git (it commits), and made
    FIFOs there: the user's next git command, and harness-exec's next
    start with --worktree (libgit2 reads packed-refs), waited in their
    open of it for good. Git never leaves a FIFO, a socket or a device
    beneath a .git: refused like a symbolic link (harness:git-config),
    made, moved or linked there. Nor at a .gitignore or .gitattributes
    of the work tree, which git opens the same way (the user's git status
    waited); a FIFO of another name stays the agent's to make."""
    git = _repo(wd)
    for sh in ([BUSYBOX, "sh", "-c"], ["sh", "-c"]):
        r = harness(sh + [FIFOS], wd, policy=None)
        left = _specials(wd.path)
        check(left == [os.path.join(wd.path, "pipe-of-the-agents")],
              "%s: the nodes left: %r (%r)" % (sh[0], left, r.stderr[-600:]))
        os.unlink(left[0])
        # Each node's record: refused, its name in the .git (a rename's
        # second path; a link's first, the new name).
        landed = {}
        for x in r.records:
            a = x.get("args", {})
            where = a.get("path2") if x.get("op") == "rename" else a.get("path", "")
            if x.get("op") in ("write", "rename", "link") and (where or "").startswith(wd.path + "/"):
                landed[where[len(wd.path) + 1:]] = (x["verdict"], x.get("rule"))
        landed.pop("pipe-of-the-agents", None)
        want = {".git/packed-refs", ".git/refs/heads/side", ".git/refs/heads/moved", ".git/index",
                ".git/refs/heads/node", ".gitignore", "sub/.gitattributes", "sub/.gitignore"}
        check(set(landed) == want and all(v == ("deny", "harness:git-config") for v in landed.values()),
              "%s: the records %r" % (sh[0], landed))
    try:
        st = git("status", "--short")
    except subprocess.TimeoutExpired:
        st = None
    check(st is not None and st.returncode == 0, "the user's git status: %r" % (st and st.stderr))
    try:
        r = harness(["/bin/true"], wd, policy=None, extra=["--worktree"], timeout=30,
                    wrap=["timeout", "-s", "KILL", "15"])
    except subprocess.TimeoutExpired:
        r = None
    check(r is not None and r.status == 0, "the next --worktree start: %r" % (r and r.stderr[-400:]))
    # A --worktree session's tree is a work tree: a FIFO of its own
    # there is made, one at a .gitignore is not.
    r = harness([BUSYBOX, "sh", "-c", "mkfifo pipe; mkfifo .gitignore; find . -type p"], wd,
                policy=None, extra=["--worktree"])
    check(r.stdout.split() == ["./pipe"], "in the worktree: %r %r" % (r.stdout, r.stderr[-400:]))


def test_a_run_dir_made_public_keeps_no_later_start_out(wd):
    """An agent in audit mode (the policy unenforced) chmod'ed its
    TMPDIR's run dir, /tmp/harness-<uid>, to 0755 or 0: every later start
    of the user refused to run ("Operation not permitted") until someone
    made it 0700 again by hand. A run dir of the user's is made 0700 at
    the start now. As root only: in a mount namespace's own run dir, so
    that no other harness-exec of the machine meets the loose mode (an
    ordinary user has no mount namespace to make)."""
    if os.getuid() != 0:
        raise Skip("the run dir is the machine's; a private one needs a mount namespace (root)")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    inner = ('mount -t tmpfs -o mode=700 none "$1" || exit 9; '
             'for m in 0755 0; do '
             '"$2" --quiet --mode audit -- /bin/busybox sh -c "chmod $m \\"\\$TMPDIR/../..\\"" ; '
             'stat -c "made %a" "$1"; '
             'timeout -s KILL 10 "$2" --quiet -- /bin/true && echo started; '
             'stat -c "after %a" "$1"; done')
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", inner, "sh",
                        _run_dir(), EXEC], cwd=wd.path, env=env, capture_output=True, text=True,
                       timeout=60)
    check(r.stdout.split("\n")[:-1] == ["made 755", "started", "after 700", "made 0", "started",
                                         "after 700"],
          "the starts after the chmod: %r %r" % (r.stdout, r.stderr[-400:]))
