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


def _take_number(wd, fifo, number, stop):
    """Once the first process has gone, the machine's last number is
    made number - 1 (ns_last_pid as root; as an ordinary user, children
    made and reaped outside the session until one is given it), and the
    agent is told to fork (the FIFO opened for writing)."""
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
    elif subprocess.run([os.path.join(HELPERS, "pid_cycle"), str(number), fifo],
                        timeout=60).returncode == 0:
        return  # it wrote, right after its child took number - 1
    with open(fifo, "w") as f:
        f.write("go\n")


def _number_of(wd, name):
    try:
        with open(os.path.join(wd.path, name)) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _one_round(wd):
    """A static shell (no shim: every record is the kernel layer's)
    whose subshell X starts P, which writes a file; P exits, X lives on;
    the agent's own shell M then forks Q, given P's number, which
    writes another file. (Q's first notified call is its exec, while
    its image is still M's: busybox, P's.) The records of Q's calls,
    or None when another process took P's number first."""
    for name in ("p.pid", "q.pid", "m.pid", "x.pid", "p.done", "go"):
        if os.path.lexists(os.path.join(wd.path, name)):
            os.unlink(os.path.join(wd.path, name))
    fifo = os.path.join(wd.path, "go")
    os.mkfifo(fifo)
    script = "\n".join([
        "echo $$ > m.pid",
        "busybox sh -c 'echo $$ > x.pid; busybox sh -c \"echo \\$\\$ > p.pid; "
        "echo a > made-by-p\"; echo > p.done; exec busybox sleep 20' &",
        "read go < go",
        "busybox sh -c 'echo $$ > q.pid; echo b > made-by-q'",
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
        if p_num[0]:
            _take_number(wd, fifo, p_num[0], stop)

    th = threading.Thread(target=feeder)
    th.start()
    try:
        r = harness(["busybox", "sh", "-c", script], wd, policy=None, timeout=60)
    finally:
        stop.set()
        th.join()
    r.expect_status(0)
    m, x, p, q = (_number_of(wd, n) for n in ("m.pid", "x.pid", "p.pid", "q.pid"))
    check(m and x and p and q, "numbers: m %r x %r p %r q %r\n%s" % (m, x, p, q, r.stderr[-2000:]))
    if q != p:
        return None
    return r, m, x, q


def test_a_number_given_again_names_its_own_parent(wd):
    for _ in range(30 if os.geteuid() == 0 else 12):
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
