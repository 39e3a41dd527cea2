"""Attack review 30, part b: process numbers given again, as a class,
under the embedded default policy in enforce mode, as root and as an
ordinary user.

What the harness does to a process it names by its number (a signal, a
kill, a scan of its descendants) must reach the process it decided for,
never one given that number since: an agent cycles all 32,768 numbers in
about 1.3 s (tests/helpers/pid_cycle does it from outside as the user;
root writes /proc/sys/kernel/ns_last_pid)."""

import os
import subprocess
import time

from lib import HELPERS, Skip, check
from test_mcp import Raw


def _wait_for(cond, seconds=30):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(0.005)
    return None


def _number(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _gone(pid):
    return not os.path.exists("/proc/%d" % pid)


def _position(wd, number):
    """The machine's last number made number - 1 while number is in use
    (ns_last_pid as root is written later, once it is free): as an
    ordinary user, children made and reaped until one is given it, as
    the agent's own fork loop would. False when that failed."""
    if os.geteuid() == 0:
        return True
    said = os.path.join(wd.state, "cycled")
    open(said, "w").close()
    p = subprocess.run([os.path.join(HELPERS, "pid_cycle"), str(number), said], timeout=120)
    return p.returncode == 0


def _victim(number):
    """A process outside the session (the test's), given number; None
    when another took it first."""
    if os.geteuid() == 0:
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(number - 1))
    v = subprocess.Popen(["sleep", "60"], start_new_session=True)
    if v.pid == number:
        return v
    v.kill()
    v.wait()
    print("# round: wanted %d, the victim is %d" % (number, v.pid))
    return None


# The code_run's first process N: a child of its own session keeps the
# output open (so the call runs on for a while after N), and leaves N's
# group (setsid): once N has exited and been reaped, nothing holds its
# number.
LEADER = ("echo $$ > leader.pid; setsid sleep 5 & "
          "read x < go; exit 0")


def _one_round(wd):
    """One session, one code_run cancelled once its number is another's:
    (whether that other process outlived the cancel, the records), or
    None when the round does not count."""
    for name in ("leader.pid", "go"):
        if os.path.lexists(os.path.join(wd.path, name)):
            os.unlink(os.path.join(wd.path, name))
    os.mkfifo(os.path.join(wd.path, "go"))
    c = Raw(wd)
    victim = None
    try:
        c.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "code_run",
                           "arguments": {"command": LEADER, "timeout_ms": 60000}}})
        n = _wait_for(lambda: _number(os.path.join(wd.path, "leader.pid")))
        check(n, "the code_run did not start")
        positioned = _position(wd, n)
        with open(os.path.join(wd.path, "go"), "w") as f:
            f.write("go\n")
        check(_wait_for(lambda: _gone(n), 10), "the code_run's first process lives on")
        victim = _victim(n) if positioned else None
        # The client cancels the call while its output is still drained
        # (no answer to a cancelled call); the ping's answer comes after
        # the cancel was served.
        c.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 1}})
        c.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        while c.recv().get("id") != 2:
            pass
        if victim:
            try:
                victim.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        alive = victim and victim.poll() is None
        recs = c.close()
    finally:
        if c.p.poll() is None:
            c.p.kill()
            c.p.wait()
        if victim and victim.poll() is None:
            victim.kill()
            victim.wait()
    tc = [r for r in recs if r.get("event") == "tool_call" and r.get("call_id") == "mcp-1"]
    check(len(tc) == 1, "the call's records: %r" % tc)
    # A round counts when the cancel came while the call ran.
    if not victim or tc[0].get("outcome") != "cancelled":
        print("# round: victim %r, outcome %r" % (victim and victim.pid, tc[0].get("outcome")))
        return None
    return alive, victim.pid, victim.returncode


def test_a_cancelled_code_runs_number_given_to_another_is_not_killed(wd):
    """harness-mcp kills a cancelled code_run: its descendants, its
    process group, itself, by the number the worker said when it
    started. Once the worker had reaped it (its output still drained,
    held by a child that setsid'd), a process of the user's outside the
    session given that number was killed, and its group with it. (The
    call's record says cancelled: each round counted checks it.)"""
    # (as the user, each round's number may be taken by any process
    # made on the machine meanwhile)
    for _ in range(6 if os.geteuid() == 0 else 16):
        got = _one_round(wd)
        if got:
            break
    else:
        raise Skip("the code_run's number kept being taken by another process")
    alive, pid, rc = got
    check(alive, "the cancel killed the user's process %d outside the session (%r)" % (pid, rc))


def _mark_round(wd):
    """M, dash without the shim, starts P (dash with it: its HELLO) in
    the background, waits for it; then forks Q, given P's number, whose
    first call is a write. (Q's number is read in Q itself, from
    /proc/self/stat: no program is run before its write.) The Run and
    Q's number, or None when another process took P's number first."""
    import threading
    from test_attack29b import _number_of, _take_number
    for name in ("p.pid", "q.pid", "p.done", "go", "q.maps"):
        if os.path.lexists(os.path.join(wd.path, name)):
            os.unlink(os.path.join(wd.path, name))
    os.mkfifo(os.path.join(wd.path, "go"))
    wd.file("p.sh", "read a b < /proc/self/stat\necho $a > p.pid\n"
            "echo a > made-by-p\necho > p.done\n")
    script = "\n".join([
        "(LD_PRELOAD=$HXSHIM exec /usr/bin/dash p.sh) &",
        "wait",
        "read go < go",
        "(read a b < /proc/self/stat; echo $a > q.pid; echo b > made-by-q;"
        " grep -c libharness-shim /proc/self/maps > q.maps)",
        "true",
    ])
    outer = ("export HXSHIM=\"$LD_PRELOAD\"; "
             "exec busybox env -u LD_PRELOAD /usr/bin/dash -c \"$0\"")
    stop = threading.Event()

    def feeder():
        for _ in range(500):
            if stop.is_set():
                return
            n = _number_of(wd, "p.pid")
            if n:
                _take_number(wd, n, stop)
                return
            time.sleep(0.01)

    th = threading.Thread(target=feeder)
    th.start()
    try:
        from lib import harness
        r = harness(["busybox", "sh", "-c", outer, script], wd, policy=None, timeout=60)
    finally:
        stop.set()
        th.join()
    r.expect_status(0)
    p, q = _number_of(wd, "p.pid"), _number_of(wd, "q.pid")
    check(p and q, "numbers: p %r q %r\n%s" % (p, q, r.stderr[-2000:]))
    if q != p:
        print("# round: p %d q %d" % (p, q))
        return None
    return r, q


def test_a_shims_mark_stands_for_no_process_given_its_number(wd):
    """The kernel layer marks a raw call of a process with the shim
    loaded (a dynamic program's syscall() past it) shim_bypass; whether
    the shim is loaded was remembered by number and image (its HELLO,
    or its maps read once). P, dash with the shim, said HELLO and
    exited; Q, given P's number and running dash without the shim (a
    fork of a dash started without LD_PRELOAD), wrote a file, a call the
    shim never saw because it was not there: its record said the shim
    had been skipped."""
    for _ in range(30 if os.geteuid() == 0 else 20):
        got = _mark_round(wd)
        if got:
            break
    else:
        raise Skip("P's number kept being taken by another process")
    r, q = got
    with open(os.path.join(wd.path, "q.maps")) as f:
        check(f.read().strip() == "0", "Q had the shim loaded")
    hello = [x for x in r.records if x.get("pid") == q and x.get("event") == "process_start"
             and x.get("layer") == "shim" and x.get("exe") == "/usr/bin/dash"]
    check(hello, "P (%d) never said HELLO: %r" % (q, [x for x in r.records if x.get("pid") == q]))
    write = [x for x in r.records if x.get("pid") == q and x.get("args", {}).get("path", "")
             .endswith(("/made-by-q", "/q.pid"))]
    check(len(write) == 2, "Q's writes: %r" % write)
    for rec in write:
        check(rec.get("layer") == "kernel" and not rec.get("shim_bypass"),
              "Q (%d), without the shim, recorded as its bypass: %r" % (q, rec))
    check(os.path.exists(os.path.join(wd.path, "made-by-q")), "Q wrote nothing")
