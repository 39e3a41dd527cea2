"""Attack review 29, part b: what the harness remembers of a decision or
of its caller and reuses, under the embedded default policy in enforce
mode, as root and as an ordinary user.

The kernel layer remembers who a notified thread is (its process, its
parent, its uid, its image: supervisor/kernel/unotify_ident.c), by its
thread id, and checks at each call that it still holds: the task is
still a thread of that process with the same owner, the image's link
reads the same, the parent's pidfd has not exited. None of these sees
a process gone and its number given to another with the same image
while the first one's parent lives: the new process's records named
the old one's parent."""

import json
import os
import subprocess
import threading
import time

from lib import HELPERS, Skip, check, harness


def _take_number(wd, number, stop):
    """Once P has gone, the machine's last number is made number - 1
    (ns_last_pid as root; as an ordinary user, children made and reaped
    outside the session until one is given it, about a second, as the
    agent's own fork loop would), and the agent's shell is told to fork
    (go opened for writing, by the cycling helper the moment it is
    there: each millisecond is one for another process to take it)."""
    go = os.path.join(wd.path, "go")
    done = os.path.join(wd.path, "p.done")
    for _ in range(1000):
        if stop.is_set() or os.path.exists(done):
            break
        time.sleep(0.01)
    if stop.is_set():
        return
    if os.geteuid() == 0:
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(number - 1))
    elif subprocess.run([os.path.join(HELPERS, "pid_cycle"), str(number), go],
                        timeout=60).returncode == 0:
        return
    with open(go, "w") as f:
        f.write("go\n")


def _number_of(wd, name):
    try:
        with open(os.path.join(wd.path, name)) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


P_WRITES = "echo a > made-by-p"
Q_WRITES = "echo b > made-by-q"


def _one_round(wd, p_cmd=P_WRITES, q_cmd=Q_WRITES, on_p=None, **kw):
    """A static shell (no shim: every record is the kernel layer's)
    whose subshell X starts P, which writes its number to p.pid and runs
    p_cmd (exec: its number stays); P exits, X lives on; the agent's own
    shell M then forks Q,
    given P's number, which runs q_cmd. (Q's first notified call is its
    exec, while its image is still M's: busybox.) The Run and the
    numbers of M, X and Q, or None when another process took P's number
    first. on_p(): called once P has said its number (it answers P's
    question); kw: harness()'s."""
    for name in ("p.pid", "q.pid", "m.pid", "x.pid", "p.done", "go"):
        if os.path.lexists(os.path.join(wd.path, name)):
            os.unlink(os.path.join(wd.path, name))
    os.mkfifo(os.path.join(wd.path, "go"))
    p_run = "busybox sh -c \"echo \\$\\$ > p.pid; %s\"" % p_cmd
    script = "\n".join([
        "echo $$ > m.pid",
        "busybox sh -c 'echo $$ > x.pid; %s; echo > p.done; "
        "exec busybox sleep 20' &" % p_run,
        "read go < go",
        "busybox sh -c 'echo $$ > q.pid; %s'" % q_cmd,
        "kill %1 2>/dev/null; wait",
    ])
    stop = threading.Event()
    p_num = [None]

    def feeder():
        for _ in range(500):
            if stop.is_set():
                return
            p_num[0] = _number_of(wd, "p.pid")
            if p_num[0]:
                break
            time.sleep(0.01)
        if p_num[0] and on_p:
            on_p()
        if p_num[0]:
            _take_number(wd, p_num[0], stop)

    th = threading.Thread(target=feeder)
    th.start()
    try:
        r = harness(["busybox", "sh", "-c", script], wd, policy=None, timeout=60, **kw)
    finally:
        stop.set()
        th.join()
    r.expect_status(0)
    m, x, p, q = (_number_of(wd, n) for n in ("m.pid", "x.pid", "p.pid", "q.pid"))
    check(m and x and p and q, "numbers: m %r x %r p %r q %r\n%s" % (m, x, p, q, r.stderr[-2000:]))
    if q != p:
        print("# round: p %d q %d" % (p, q))
        return None
    return r, m, x, q


def test_a_number_given_again_names_its_own_parent(wd):
    for _ in range(30 if os.geteuid() == 0 else 20):
        got = _one_round(wd)
        if got:
            break
    else:
        raise Skip("P's number kept being taken by another process")
    r, m, x, q = got
    # P had the same number: Q's records are those of its own calls.
    recs = [x_ for x_ in r.records if x_.get("pid") == q and
            ("q.pid" in json.dumps(x_.get("args")) or
             "made-by-q" in json.dumps(x_.get("args")))]
    check(len(recs) >= 3, "Q's exec, and its two writes (%d): %r" % (q, recs))
    write = [x_ for x_ in recs
             if x_.get("args", {}).get("path", "").endswith("/made-by-q")]
    check(write, "no record of Q's write: %r" % recs)
    for rec in recs:
        check(rec.get("ppid") == m,
              "Q (%d, a child of M %d) recorded with ppid %r (X is %d): %r"
              % (q, m, rec.get("ppid"), x, rec))
    check(os.path.exists(os.path.join(wd.path, "made-by-q")), "Q wrote nothing")


def test_a_masked_secret_whose_directory_moved_is_recorded_where_it_is(wd):
    """The masks are found at the start and bound over each denied file
    in the agent's mount namespace; the agent may rename a directory
    above one (the new name is still denied: the bind goes with it).
    A static program's refused read there was recorded under the path
    known at the start, which named nothing any more (or, made again,
    another directory's file)."""
    secret = "MOVED-SECRET-29b"
    for d in ("sub", "a b"):
        wd.file(os.path.join(d, ".env"), secret + "\n")
    script = "\n".join([
        "busybox mv sub sub2 && echo MOVED1",
        "busybox mv 'a b' 'c d' && echo MOVED2",
        "busybox mkdir sub",
        "busybox cat sub2/.env",
        "busybox cat 'c d/.env'",
        "true",
    ])
    r = harness(["busybox", "sh", "-c", script], wd, policy=None)
    r.expect_status(0)
    check("MOVED1" in r.stdout and "MOVED2" in r.stdout, "moves: %s\n%s" % (r.stdout, r.stderr[-2000:]))
    check(secret not in r.stdout, "the secret was read: %s" % r.stdout)
    real = os.path.realpath(wd.path)
    masked = [x for x in r.records if x.get("layer") == "mask"]
    paths = sorted(x.get("args", {}).get("path") for x in masked)
    want = sorted([os.path.join(real, "c d", ".env"), os.path.join(real, "sub2", ".env")])
    check(paths == want, "the masks' records name %r, the reads were of %r" % (paths, want))
    check(all(x.get("verdict") == "deny" for x in masked), "verdicts: %r" % masked)


def _stamp(rec):
    import datetime
    return datetime.datetime.strptime(rec["time"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def _within(got, target, seconds, verdict=None):
    """Whether Q's exec came less than seconds after P's claim (its
    record's verdict, when said)."""
    r, q = got[0], got[3]
    claim = [_stamp(x) for x in r.records if x.get("args", {}).get("path") == target
             and x.get("layer") in ("shim", "shim+kernel")
             and (verdict is None or x.get("verdict") == verdict)]
    name = os.path.basename(target)
    q_exec = [_stamp(x) for x in r.records if x.get("pid") == q and x.get("op") == "exec"
              and name in " ".join(x.get("args", {}).get("argv", []))]
    return claim and q_exec and q_exec[0] - claim[0] < seconds


def test_a_claim_of_a_process_gone_stands_for_no_other(wd):
    """The shim asks before a call; the kernel layer's sight of the same
    call by the same thread within 2 s takes the shim's record for its
    own (one record, "shim+kernel"), remembered by thread id. P, a
    static program, sent the request for a write of good-0 and exited
    without making it; Q, given P's number (an agent cycles the whole
    range in about 1.3 s under the exec gate), wrote good-0 from
    busybox: the only record of that write was P's, naming P's program
    through the shim, and P's claim was never said unconfirmed."""
    claimer = os.path.join(HELPERS, "static_claim")
    target = os.path.join(os.path.realpath(wd.path), "good-0")
    p_cmd = "exec %s claim %s > claim.out" % (claimer, target)
    for _ in range(30 if os.geteuid() == 0 else 20):
        got = _one_round(wd, p_cmd, "echo q > good-0")
        # A round counts when Q wrote within the claim's 2 s (an
        # ordinary user's cycle of the numbers may take longer).
        if got and _within(got, target, 1.8):
            break
    else:
        raise Skip("P's number kept being taken by another process")
    r, m, x, q = got
    with open(os.path.join(wd.path, "claim.out")) as f:
        check(f.read().strip() == "verdict 0", "P's claim was not allowed")
    with open(target) as f:
        check(f.read() == "q\n", "Q wrote nothing")
    writes = [x_ for x_ in r.records if x_.get("event") not in ("kernel_unconfirmed",) and
              x_.get("args", {}).get("path") == target]
    claim = [x_ for x_ in writes if x_.get("exe") == os.path.realpath(claimer)]
    check(len(claim) == 1 and claim[0]["layer"] == "shim+kernel",
          "P's claim's record: %r" % writes)
    ran = [x_ for x_ in writes if x_.get("pid") == q and x_.get("exe") == "/usr/bin/busybox"]
    check(len(ran) == 1 and ran[0]["layer"] == "kernel" and ran[0]["verdict"] == "allow",
          "Q's write (pid %d, busybox) has no record of its own: %r" % (q, writes))
    unconf = [x_ for x_ in r.records if x_.get("event") == "kernel_unconfirmed"]
    check(any(u.get("ref_seq") == claim[0]["seq"] for u in unconf),
          "P's claim, never made, is not said unconfirmed: %r" % unconf)


def test_an_answer_once_stands_for_no_process_given_the_askers_number(wd):
    """An answer "once" to the shim's question stands for the kernel
    layer's sight of the very call, for 5 s, by the asker's number. P
    asked (through the session socket, as the shim does) to write
    .vscode/tasks.json (project-autorun: ask), was answered once, and
    exited without writing; Q, given P's number, wrote the file unasked
    under that answer."""
    from test_ask import answer, pending
    claimer = os.path.join(HELPERS, "static_claim")
    os.makedirs(os.path.join(wd.path, ".vscode"))
    target = os.path.join(os.path.realpath(wd.path), ".vscode", "tasks.json")
    p_cmd = "exec %s claim %s > claim.out" % (claimer, target)

    def answer_p():
        for _ in range(200):
            q = pending(wd)
            if q:
                answer(wd, "approve", q[0]["id"], "once")
                return
            time.sleep(0.05)

    for _ in range(30 if os.geteuid() == 0 else 20):
        got = _one_round(wd, p_cmd, "echo q > .vscode/tasks.json; echo rc=$? > q.rc",
                         on_p=answer_p, ask_timeout=2)
        if got and _within(got, target, 4.5, "ask"):
            break
    else:
        raise Skip("P's number kept being taken by another process")
    r, m, x, q = got
    with open(os.path.join(wd.path, "claim.out")) as f:
        check(f.read().strip() == "verdict 0", "P was not answered")
    with open(os.path.join(wd.path, "q.rc")) as f:
        rc = f.read().strip()
    check(rc != "rc=0" and not os.path.exists(target),
          "Q (%d) wrote %s under P's answer once: %s" % (q, target, rc))
    mine = [x_ for x_ in r.records if x_.get("pid") == q and
            x_.get("args", {}).get("path") == target]
    check(mine and all(x_["verdict"] != "allow" for x_ in mine) and
          any(x_.get("ask") for x_ in mine), "Q's write's records: %r" % mine)
