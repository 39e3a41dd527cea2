"""Fail closed: when harness-exec itself is killed, the agent's whole
tree goes with it, nothing it tries meanwhile succeeds, and the audit
log stays intact up to its last record."""

import json
import os
import signal
import subprocess
import time

from lib import AUDIT_TOOL, EXEC, check, harness, tool

AGENT = r'''
i=0
/bin/busybox sleep 60 &
sleep 60 &
( sleep 60 ) &
echo started
while :; do i=$((i+1)); echo x > "w-$i" 2>/dev/null || exit 3; sleep 0.01 || exit 4; done
'''


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def descendants(root):
    kids, frontier = set(), {root}
    while frontier:
        nxt = set()
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % pid) as f:
                    ppid = int(f.read().split(") ")[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid in frontier and int(pid) not in kids:
                nxt.add(int(pid))
        kids |= nxt
        frontier = nxt
    return kids


def test_killing_harness_exec_kills_the_tree(wd):
    log = os.path.join(wd.state, "audit.jsonl")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    p = subprocess.Popen([EXEC, "--quiet", "--audit-log", log, "--", "sh", "-c", AGENT],
                         cwd=wd.path, env=env, stdout=subprocess.PIPE, text=True)
    tree = set()
    try:
        check(p.stdout.readline() == "started\n", "agent did not start")
        time.sleep(0.3)
        tree = descendants(p.pid)
        check(len(tree) >= 4, "agent tree too small: %r" % tree)
        p.send_signal(signal.SIGKILL)
        p.wait()
        written = len([n for n in os.listdir(wd.path) if n.startswith("w-")])
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and any(alive(x) for x in tree):
            time.sleep(0.02)
        left = [x for x in tree if alive(x)]
        check(not left, "still alive 1 s after harness-exec was killed: %r" % left)
        time.sleep(0.2)
        after = len([n for n in os.listdir(wd.path) if n.startswith("w-")])
        check(after <= written + 1, "writes went on after the kill: %d -> %d" % (written, after))
    finally:
        if p.poll() is None:
            p.kill()
        for x in tree | descendants(p.pid):
            try:
                os.kill(x, signal.SIGKILL)
            except OSError:
                pass
    v = tool([AUDIT_TOOL, "verify", log])
    check(v.returncode == 0, "audit log broken after the kill: %s %s" % (v.stdout, v.stderr))
    # Which mechanism held: a cgroup where one is writable (root here),
    # else the exec gate's kill-on-exit (an ordinary user).
    kernel = json.loads(open(log).readline())["kernel"]
    check(kernel["tree_kill"] in ("cgroup", "exec-gate"), "tree_kill %r" % kernel)
    session = json.loads(open(log).readline())["session"]
    for mnt in cgroup2_mounts():
        for root, dirs, _ in os.walk(mnt):
            check("harness-" + session not in dirs, "session cgroup left in %s" % root)
            break


def test_a_killed_sessions_tmpdir_goes_at_the_next_start(wd):
    """A harness-exec killed never runs its cleanup: its agent's TMPDIR
    (/tmp/harness-<uid>/<id>, with what the agent left there) stayed for
    good. The next session's start removes it, since no harness-exec
    holds its lock; a live session's is left alone."""
    log = os.path.join(wd.state, "audit.jsonl")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    agent = "mkdir $TMPDIR/d && echo x > $TMPDIR/d/f && echo started && sleep 60"
    p = subprocess.Popen([EXEC, "--quiet", "--audit-log", log, "--", "sh", "-c", agent],
                         cwd=wd.path, env=env, stdout=subprocess.PIPE, text=True)
    live = subprocess.Popen([EXEC, "--quiet", "--", "sh", "-c", 'echo "$TMPDIR"; sleep 60'],
                            cwd=wd.path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        check(p.stdout.readline() == "started\n", "agent did not start")
        live_tmp = live.stdout.readline().strip()
        check(os.path.isdir(live_tmp), "second agent did not start: %r" % live_tmp)
        run_dir = "/tmp/harness-%d" % os.getuid()
        tmp_root = os.path.join(run_dir, json.loads(open(log).readline())["session"])
        check(os.path.exists(os.path.join(tmp_root, "tmp", "d", "f")), "no TMPDIR %s" % tmp_root)
        p.send_signal(signal.SIGKILL)
        p.wait()
        check(os.path.isdir(tmp_root), "the kill itself removed %s" % tmp_root)
        r = harness(["/bin/true"], wd)
        check(r.status == 0, r.dump())
        check(not os.path.exists(tmp_root), "%s left after the next start" % tmp_root)
        check(os.path.isdir(live_tmp), "a live session's TMPDIR was removed: %s" % live_tmp)
    finally:
        for x in (p, live):
            if x.poll() is None:
                x.terminate()
            x.wait()


def cgroup2_mounts():
    with open("/proc/self/mountinfo") as f:
        return [l.split()[4] for l in f if " - cgroup2 " in l]


def test_daemon_does_not_outlive_the_session(wd):
    """A process that detaches (setsid, background, stdio closed) is
    still ended when the command harness-exec ran exits."""
    r = harness(["sh", "-c", "setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!"], wd)
    r.expect_status(0)
    pid = int(r.stdout.strip())
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and alive(pid):
        time.sleep(0.05)
    check(not alive(pid), "the detached daemon %d outlived the session" % pid)
