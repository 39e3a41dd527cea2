"""The twelfth attack review: the changes of its day attacked (a
"failed" record after a call the kernel refused, the shim's connection
asked by an open of the session socket, a unix bind walking the agent's
own path bytes), each hole tried as the attacker would and checked for
its effect and its record."""

import os
import shutil
import socket
import tempfile

from lib import HELPERS, POLICIES, PYTHON, check, harness

MAGIC = os.path.join(HELPERS, "static_bind_magic")


def _denied_dir():
    # Readable (no mask) and outside every write root of test.yaml.
    d = tempfile.mkdtemp(prefix="hx-r12-deny-", dir="/tmp")
    os.chmod(d, 0o777)
    return d


def _bind_magic(wd, how):
    # In w/: a link to the cwd of one beside secret/ would lead there.
    os.makedirs(os.path.join(wd.path, "w", "d"))
    denied = _denied_dir()
    try:
        r = harness(["/bin/sh", "-c", 'cd w && exec "$0" "$@"', MAGIC, how, denied, "3"], wd)
        made = os.listdir(denied)
    finally:
        shutil.rmtree(denied, ignore_errors=True)
    check(r.stdout.startswith("ok "), repr((r.stdout, r.stderr[-600:])))
    print("# %s: %s" % (how, r.stdout.strip()))
    check(not made, "%s: a socket made in the denied directory: %r (%s)"
          % (how, made, r.stdout.strip()))
    # The bind still works through the link, in the decided directory.
    check(int(r.stdout.split()[1]) > 20, "%s: too few binds to race: %r" % (how, r.stdout))
    return r


def test_a_bind_through_a_magic_link_lands_where_decided(wd):
    """The bind walks the agent's path bytes again after checking that
    they reach the decided directory, with every emulated change of a
    name held off. A /proc magic link on the way (/proc/<pid>/fd/N,
    /proc/<pid>/cwd) is not a name: a second thread that dup2()s another
    directory onto N, or chdir()s, between that check and the bind's
    own walk got the socket made in a directory the policy denies."""
    _bind_magic(wd, "fd")


def test_a_bind_through_the_cwd_link_lands_where_decided(wd):
    """As above, by a link the agent made to /proc/<pid>/cwd (the path
    as named is its own, not /proc's) and a thread's chdir()."""
    _bind_magic(wd, "cwd")


def test_a_bind_refused_for_a_swap_says_the_harness_refused(wd):
    """A bind whose directory was swapped for a link to a denied one
    after its decision is refused by the harness (the decided directory
    no longer there, or not the one the walk reaches), not by the
    kernel: it read "failed" (EACCES) after its "allow", as if the
    kernel had checked the directory's rights, where the record is the
    harness's own "revoked" (harness:changed)."""
    os.mkdir(os.path.join(wd.path, "d"))
    os.symlink("secret", os.path.join(wd.path, "dlink"))
    r = harness([os.path.join(HELPERS, "static_bind_race"), "3"], wd)
    check(r.stdout.startswith("ok "), repr((r.stdout, r.stderr[-600:])))
    wrong = [x for x in r.events(event="failed", op="write", errno="EACCES")]
    revoked = r.events(event="revoked", rule="harness:changed")
    print("# %s, revoked %d" % (r.stdout.strip(), len(revoked)))
    check(wrong or revoked, "the race never reached the bind's checks")
    check(not wrong, "a harness refusal recorded as the kernel's: %r" % wrong[:2])
    for rec in revoked:
        check(rec.get("verdict") == "deny" and rec.get("ref_seq"), "revoked: %r" % rec)


def _udp_listener():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for port in range(20000 + os.getpid() % 500, 21000):
        try:
            s.bind(("127.0.0.1", port))
            break
        except OSError:
            continue
    s.settimeout(0.5)
    return s, s.getsockname()[1]


def test_a_sent_datagram_has_no_failed_record(wd):
    """A "failed" record says the kernel refused a call the policy
    allowed: nothing was done. A sendmmsg whose mmsghdr ends a writable
    page sends its datagram and then cannot have its count written (on
    the next, read-only, page): the kernel answers EFAULT, the kernel
    layer too, after sending. It read "allow", then "failed" EFAULT: a
    datagram that left (any bytes, to an allowed address) read as never
    sent."""
    lst, port = _udp_listener()
    try:
        r = harness([os.path.join(HELPERS, "static_mmsg_fault"), str(port)], wd)
        try:
            got = lst.recv(100)
        except socket.timeout:
            got = None
    finally:
        lst.close()
    check(r.stdout.strip() == "ret -1 errno EFAULT", repr((r.stdout, r.stderr[-600:])))
    check(got == b"exfil", "not sent (nothing to hide): %r" % got)
    sent = r.one(op="send", verdict="allow")
    check(sent.get("args", {}).get("addr", "").endswith(":%d" % port), "record %r" % sent)
    wrong = r.events(event="failed", ref_seq=sent["seq"])
    check(not wrong, "the datagram sent, its record says failed: %r" % wrong)


def _closed_port():
    # Bound, not listening: a connect is refused (ECONNREFUSED).
    s = socket.socket()
    for port in range(20500 + os.getpid() % 400, 21000):
        try:
            s.bind(("127.0.0.1", port))
            return s, port
        except OSError:
            continue
    raise AssertionError("no port")


def test_failed_records_are_coalesced_past_the_rate(wd):
    """What ran a program or reached the network is written past the
    log's rate (only max_size bounds it), refusals are coalesced. A
    "failed" record has no verdict, and a record of category net_* with
    none was taken for one that went ahead: a loop of connects the
    policy allows to a port that refuses wrote every one's "failed"
    record past the rate too, doubling what a flood of connects
    writes."""
    base = open(os.path.join(POLICIES, "test.yaml")).read()
    policy = os.path.join(wd.state, "rate12.yaml")
    with open(policy, "w") as f:
        f.write(base.replace("  log_reads: false\n", "  log_reads: false\n  rate: 20\n  burst: 20\n"))
    hold, port = _closed_port()
    code = ("import socket\n"
            "n = 0\n"
            "for i in range(400):\n"
            "    s = socket.socket()\n"
            "    try:\n"
            "        s.connect(('127.0.0.1', %d))\n"
            "    except ConnectionRefusedError:\n"
            "        n += 1\n"
            "    s.close()\n"
            "print('refused', n)\n" % port)
    try:
        r = harness([PYTHON, "-c", code], wd, policy=policy)
    finally:
        hold.close()
    check(r.stdout.strip() == "refused 400", repr((r.stdout, r.stderr[-600:])))
    allowed = r.events(op="connect", verdict="allow")
    failed = r.events(event="failed", op="connect")
    coalesced = sum(g.get("count", 0) for o in r.events(event="audit_overflow")
                    for g in o.get("groups", []) if g.get("event") == "failed")
    print("# allowed %d, failed written %d, coalesced %d" % (len(allowed), len(failed), coalesced))
    check(len(allowed) == 400, "allowed connects written: %d" % len(allowed))
    check(len(failed) + coalesced == 400, "failed: %d + %d" % (len(failed), coalesced))
    check(len(failed) < 200, "%d failed records written past the rate" % len(failed))


def test_a_connect_broken_off_that_goes_on_has_no_failed_record(wd):
    """A blocking TCP connect broken off by a signal fails with EINTR,
    natively and in the kernel layer (its watchdog ends the worker's
    connect on the agent's socket), and the connection goes on: the
    SYN is out, the handshake ends later and the agent sends on it. It
    read "allow", then "failed" EINTR, as if no connection was made,
    where EINPROGRESS, the same state, is no failure."""
    import time
    from lib import Started
    lst = socket.socket()
    for port in range(20100 + os.getpid() % 300, 21000):
        try:
            lst.bind(("127.0.0.1", port))
            break
        except OSError:
            continue
    lst.listen(0)
    # Its accept queue full: the agent's SYN is dropped, its connect waits.
    fill = []
    for _ in range(2):
        f = socket.socket()
        f.setblocking(False)
        try:
            f.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fill.append(f)
    got, conns = [], []
    try:
        t = Started([os.path.join(HELPERS, "static_connect_eintr"), str(port)], wd)
        time.sleep(1.5)  # its connect broken off by now
        # Then every connection taken at once: the queue has room again.
        lst.settimeout(0.2)
        end = time.time() + 12
        while time.time() < end and len(conns) < 3:
            try:
                conns.append(lst.accept()[0])
            except socket.timeout:
                pass
        for c in conns:
            c.settimeout(1)
            try:
                got.append(c.recv(10))
            except OSError:
                got.append(None)
            c.close()
        r = t.join(30)
    finally:
        lst.close()
        for f in fill:
            f.close()
    check(r.stdout.splitlines()[:2] == ["connect EINTR", "sent 4"], repr((r.stdout, r.stderr[-600:])))
    check(b"late" in got, "the connection did not go on: %r %r" % (got, r.stdout))
    rec = r.one(op="connect", verdict="allow")
    wrong = r.events(event="failed", op="connect")
    check(not wrong, "a connection made, its record says failed: %r" % wrong)
    check(rec.get("args", {}).get("addr", "").endswith(":%d" % port), "record %r" % rec)


def test_a_rename_refused_for_a_swap_leaves_nothing_moved(wd):
    """The twelfth review's suspected item: a rename decided for a file
    finds a directory moved in by another thread; the move is refused,
    and what it moved put back, which a third thread's new file at the
    old name (an O_CREAT open) blocked, the directory left where the
    policy refuses it while the record said refused. Here the directory
    holds inner/x and the destination is out, beneath which the policy
    refuses writes (out/inner/**): a directory at out after any rename
    is the hole."""
    policy = os.path.join(wd.state, "swap.yaml")
    with open(os.path.join(POLICIES, "test.yaml")) as f:
        text = f.read()
    with open(policy, "w") as f:
        f.write(text.replace("files:\n", "files:\n"
                             "  - id: swap-out\n"
                             "    deny: [\"$CWD/w/out/inner/**\"]\n"
                             "    access: write\n", 1))
    os.makedirs(os.path.join(wd.path, "w"))
    r = harness([os.path.join(HELPERS, "static_rename_swap"), "w", "8", "out"], wd,
                policy=policy, timeout=120)
    out = r.stdout.split()
    check(len(out) == 8 and out[0] == "renames", repr((r.stdout, r.stderr[-600:])))
    print("# " + r.stdout.strip())
    n, done, moved, kept = (int(out[i]) for i in (1, 3, 5, 7))
    check(done > 20, "too few renames went through to race: %r" % r.stdout)
    check(moved == 0 and kept == 0 and not os.path.isdir(os.path.join(wd.path, "w", "out")),
          "a directory ended where the policy refuses it: %r" % r.stdout)
