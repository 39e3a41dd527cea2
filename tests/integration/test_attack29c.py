"""Attack review 29, part c: the supervisor's own threads and channels
as the target (stall, starve or confuse them, then see what gets
through), under the embedded default policy in enforce mode, as root
and as an ordinary user.

A file's last release can wait on the agent: a TCP socket with
SO_LINGER set waits, in close(2), for its peer to read what is queued,
for as long as the agent chose (the agent's own loopback server, which
never reads). A supervisor thread that let go of such a socket waited
that long:

- a kernel-layer worker, in its close of an fd it took from the agent
  (pidfd_getfd) after the agent closed its own: eight sendmsg calls
  passing such a socket (SCM_RIGHTS), each on a unix socket whose peer
  went away while the emulated send waited for room, held every worker,
  and every controlled call of the tree waited (55 s of a 60 s linger:
  the child's write below);
- the server's loop, in its close of an fd passed to it on a session
  connection (the shim's own, as any process of the agent holds it), or
  of a connection whose queue held such fds: the loop, and with its
  lock every decision, stopped for the linger (22 s of 20 s, session
  end included).

And a sendmsg on the shim's own connection, which the kernel layer
emulates by its connector (a process of harness-exec's), was recorded
as that process's (pid, ppid harness-exec, exe harness-exec, and its
process_exit): the fourteenth review refused such a send to a peer of
harness-exec's with no name, and our end of a connection has a name
once it has sent (SO_PASSCRED autobinds it) - after its first verdict.

And the shim, which looks at what an exec will run, opened a FIFO with
execute bits and waited there for a writer, for good, where natively
the exec fails EACCES at once.
"""

import os
import subprocess

from lib import EXEC, HELPERS, PYTHON, check, harness

PROBE = os.path.join(HELPERS, "static_attack29c")

# The agent's side: a loopback TCP connection of its own whose peer
# never reads, both queues full, SO_LINGER set to LINGER seconds.
LINGERING = r'''
import array, errno, os, socket, struct, sys, threading, time
LINGER = 3600
keep = []

def bind(srv):
    """Port 0 (the agent's own server, which the kernel layer allows),
    or one test.yaml allows (without the kernel layer the shim asks)."""
    if "--ports" not in sys.argv:
        srv.bind(("127.0.0.1", 0))
        return
    import random
    for port in random.sample(range(20000, 21000), 1000):
        try:
            srv.bind(("127.0.0.1", port))
            return
        except OSError:
            pass

def lingering():
    srv = socket.socket()
    bind(srv)
    srv.listen(1)
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    c.connect(srv.getsockname())
    peer, _ = srv.accept()
    peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.setblocking(False)
    try:
        while True:
            c.send(b"x" * 4096)
    except BlockingIOError:
        pass
    c.setblocking(True)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, LINGER))
    keep.extend([srv, peer])
    return c

def rights(fd):
    return [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))]

def after(name):
    """A controlled call of another process of the tree, afterwards."""
    pid = os.fork()
    if pid == 0:
        try:
            with open(name, "w") as f:
                f.write("x")
            print("WROTE", flush=True)
        except OSError as e:
            print("REFUSED %s" % e.errno, flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
'''

WORKERS = LINGERING + r'''
out = []

def send(x, c):
    try:
        x.sendmsg([b"z" * 4096], rights(c.fileno()))
        out.append("sent")
    except OSError as e:
        out.append("errno %d" % e.errno)

def attempt(wait):
    c = lingering()
    x, y = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    x.setblocking(False)
    try:
        while True:
            x.send(b"y" * 4096)
    except BlockingIOError:
        pass
    x.setblocking(True)
    t = threading.Thread(target=send, args=(x, c), daemon=True)
    t.start()
    time.sleep(wait)  # the worker has taken c and waits for room
    c.close()
    y.close()  # the send fails; the worker's c is the last
    t.join(10)

for i in range(8):
    # EBADF: c was closed before the worker took it (a slow machine):
    # again, with a longer wait.
    for wait in (0.3, 1, 3):
        attempt(wait)
        if out[-1:] != ["errno %d" % errno.EBADF]:
            break
        out.pop()
print("SENDS %s" % " ".join(out), flush=True)
after("after.txt")
'''


def _run(wd, script, extra=(), args=(), policy=None):
    """The script (under the default policy); a session that does not
    end within the timeout is a stalled thread (a linger is an hour)."""
    try:
        return harness([PYTHON, "-c", script] + list(args), wd, policy=policy,
                       extra=extra, timeout=60)
    except subprocess.TimeoutExpired as e:
        import glob
        for lg in glob.glob(os.path.join(wd.state, "*.jsonl")):
            with open(lg) as f:
                tail = f.read()[-3000:]
            print("\n".join("# " + line for line in tail.splitlines()))
        print("# output: %r %r" % (e.stdout, e.stderr))
        check(False, "the session did not end: a thread of the supervisor "
              "or the agent's waits on what the agent made")


def _after_is_written(r, wd):
    r.expect_status(0)
    check("WROTE" in r.stdout, "the later write: %r %r" % (r.stdout, r.stderr[-500:]))
    path = os.path.join(wd.path, "after.txt")
    check(os.path.exists(path), "after.txt not written")
    rec = r.one(event="open", args_path=os.path.realpath(path))
    check(rec["verdict"] == "allow", rec)
    check(r.records[-1].get("event") == "session_end",
          "the log does not end with session_end: %r" % r.records[-1])


def test_a_socket_lingering_in_a_workers_hands_holds_no_call(wd):
    """Eight emulated sends each leave a worker holding the last
    reference to a socket that lingers for an hour: each close is a
    wait the watchdog cuts, so the sends fail as natively (EPIPE), the
    tree's later calls are decided, and the session ends."""
    r = _run(wd, WORKERS)
    out = r.stdout
    check("SENDS " in out and out.count("errno 32") == 8,
          "each send fails EPIPE as natively: %r %r" % (out, r.stderr[-500:]))
    _after_is_written(r, wd)


LOOP_PASSED = LINGERING + r'''
def request(path):
    """A request of the wire's (common/wire.h): the write of path."""
    def tlv(tag, val):
        return struct.pack("<HH", tag, len(val)) + val
    body = (tlv(2, struct.pack("<I", os.getpid())) + tlv(4, struct.pack("<I", 13))
            + tlv(5, struct.pack("<I", 2)) + tlv(6, path.encode()))
    return struct.pack("<HHIII", 1, 3, 16 + len(body), 7, 0) + body

shim = None
for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    try:
        s = socket.socket(fileno=os.dup(fd))
    except OSError:
        continue
    if s.family == socket.AF_UNIX and s.type == socket.SOCK_SEQPACKET:
        shim = s
        break
    s.close()
if shim is None:
    print("NOSHIM", flush=True)
    sys.exit(0)
c = lingering()
pid = os.fork()
if pid == 0:
    # Requests the server decides and records first, so that it reads
    # the socket once this process is gone (an exit lingers for
    # nothing) and the parent has closed its own: the server's is the
    # last reference.
    for i in range(32):
        shim.send(request("/etc/hx-29c-%d" % i))
    try:
        if "queued" in sys.argv:
            # A harmless fd first (a protocol error: the server closes
            # the connection), the socket still queued behind it.
            shim.sendmsg([b"first"], rights(0))
        shim.sendmsg([b"hello"], rights(c.fileno()))
    except BrokenPipeError:
        os._exit(3)
    os._exit(0)
c.close()
_, st = os.waitpid(pid, 0)
if os.WEXITSTATUS(st) == 3:
    print("LATE", flush=True)  # read and closed before: try again
    sys.exit(0)
time.sleep(0.5)
print("PASSED", flush=True)
after("after.txt")
'''


def _loop(wd, how):
    # Without the kernel layer the agent's sendmsg reaches the server
    # itself (with it, such a send is refused: the test below); the
    # shim then asks about a loopback connect, which test.yaml allows
    # to some ports.
    for _ in range(5):
        r = _run(wd, LOOP_PASSED, extra=["--no-kernel-notify"],
                 args=["--ports", how], policy="test.yaml")
        if "LATE" not in r.stdout:
            break
    check("PASSED" in r.stdout, "%r %r" % (r.stdout, r.stderr[-500:]))
    _after_is_written(r, wd)
    return r


def test_a_socket_passed_to_the_server_holds_no_call(wd):
    """A lingering socket passed on the shim's own connection: the
    server lets it go on a thread of its own, which exits (the kernel
    makes no exiting task linger); the loop decides on."""
    r = _loop(wd, "read")
    rec = r.one(event="protocol_error")
    check(rec.get("error") == "unexpected control message", rec)


def test_a_socket_queued_on_a_closed_connection_holds_no_call(wd):
    """The same socket still queued on a connection the server closes:
    the connection's release lets it go, on that thread too."""
    _loop(wd, "queued")


def test_a_request_sent_by_sendmsg_after_a_verdict_is_not_the_harness_s(wd):
    """A request sent by sendmsg on a connection that has had a verdict
    (our end has a name by then): refused as a send to the session
    socket, recorded as the agent's, never as the connector's."""
    target = os.path.join(wd.path, ".git", "hooks", "pre-commit")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    r = harness([PROBE, "wire-sendmsg-again", target], wd, policy=None)
    out = r.stdout.strip()
    print("# %s" % out)
    check(out.startswith("pid "), "probe: %r %r" % (out, r.stderr[-400:]))
    me = int(out.split()[1])
    check(" first " in out and " first -1 " not in out, "no first verdict: %r" % out)
    check(" send EACCES" in out, "the emulated send reached the server: %r" % out)
    session = [x for x in r.records if x.get("event") == "session_start"]
    sup = session[0]["pid"] if session else None
    for rec in r.records:
        if rec.get("event") in ("session_start", "session_end", "execvp"):
            continue
        if rec.get("pid") is None:
            continue
        check(rec.get("ppid") != sup or rec.get("pid") == me,
              "a record names a process of harness-exec's: %r" % rec)
        check(rec.get("exe") != EXEC, "a record names harness-exec as the actor: %r" % rec)
    rec = r.one(event="sendmsg")
    check(rec["pid"] == me and rec["verdict"] == "deny"
          and rec["rule"] == "harness:protect" and rec["layer"] == "kernel", rec)
    check(not os.path.exists(target), "the hook was made")


FIFO_EXEC = r'''
import os, sys
os.mkfifo("p")
os.chmod("p", 0o755)
pid = os.fork()
if pid == 0:
    try:
        os.execv("./p", ["p"])
    except OSError as e:
        print("EXEC %d" % e.errno, flush=True)
    os._exit(0)
os.waitpid(pid, 0)
with open("after.txt", "w") as f:
    f.write("x")
print("WROTE", flush=True)
'''


def test_an_exec_of_a_fifo_fails_at_once_as_natively(wd):
    """The shim looks at what an exec will run (does it load the shim?)
    by opening it: a FIFO with execute bits held that open, waiting for
    a writer, for good (the kernel refuses the exec of anything but a
    regular file, EACCES, before it opens it). It looks at a regular
    file only now, opened without blocking."""
    r = _run(wd, FIFO_EXEC)
    check("EXEC 13" in r.stdout, "the exec: %r %r" % (r.stdout, r.stderr[-500:]))
    _after_is_written(r, wd)


def test_connections_the_server_refuses_are_recorded(wd):
    """A static program holds as many connections to the session socket
    as the server takes (its bound keeps our fd table for our own
    opens): a later process's shim cannot reach the supervisor and
    refuses its calls ("supervisor unreachable", fail closed), which
    left no record at all; the refusals are a record now, and counted
    in session_end."""
    out = os.path.join(wd.path, "later.txt")
    r = harness([PROBE, "hold-conns", "20000", "echo x > %s" % out], wd,
                policy=None, timeout=100)
    first = r.stdout.split("\n")[0]
    print("# %s" % first)
    check(first.startswith("held ") and first.endswith(" ECONNREFUSED"),
          "the server's bound was not met: %r %r" % (r.stdout, r.stderr[-300:]))
    check(not os.path.exists(out), "the later write was made")
    recs = r.events(event="connection_refused")
    check(recs and all(x["verdict"] == "deny" and x["rule"] == "harness:connections"
                       for x in recs), "no record of the refusals: %s" % r.dump())
    end = r.one(event="session_end")
    check(end.get("connections_refused", 0) >= sum(x["count"] for x in recs) >= 1, end)
