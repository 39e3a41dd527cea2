"""Unix-socket connects and sends in the kernel layer (issue 3, item 4):
decided on the supervisor's copy of the address and made by the
connector process (supervisor/connector.h), never left to the kernel's
second read of the target's memory, so a racing thread cannot redirect
them; the server sees the connector's credentials (no capability), not
the supervisor's. The shim's own connect to the session socket is
answered with a socketpair, race-free as well."""

import array
import os
import socket

from lib import HELPERS, PYTHON, Listener, check, harness

STATIC = os.path.join(HELPERS, "static_unotify")


def denied_path(tag):
    # Outside $CWD, /run and /var/run: no unix rule of test.yaml allows it.
    return "/tmp/hx-deny-%d-%s.sock" % (os.getpid(), tag)


def unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def test_static_unix_connect_made_by_connector(wd):
    path = os.path.join(wd.path, "ok.sock")
    lst = Listener(path=path)
    try:
        r = harness([STATIC, "uconnect", path], wd)
    finally:
        lst.close()
    check(r.stdout.strip() == "ok uconnect", repr((r.stdout, r.stderr)))
    check(lst.accepted == 1 and lst.received == b"ping\n",
          "listener: %d %r" % (lst.accepted, lst.received))
    peer = lst.peers[0]
    check(peer["uid"] == os.getuid(), "peer uid %r" % peer)
    check(peer["comm"] == "harness-unix", "the server sees the connector: %r" % peer)
    check(peer["capeff"] == 0, "the connector holds no capability: %r" % peer)
    rec = r.events(layer="kernel", event="connect")
    check(rec and rec[0]["verdict"] == "allow", r.dump())


def test_static_unix_connect_denied(wd):
    path = denied_path("c")
    lst = Listener(path=path)
    try:
        r = harness([STATIC, "uconnect", path], wd)
    finally:
        lst.close()
        unlink(path)
    check(r.stdout.strip() == "err EACCES", repr((r.stdout, r.stderr)))
    check(lst.accepted == 0, "the denied listener was reached")
    rec = r.events(layer="kernel", event="connect")
    check(rec and rec[0]["verdict"] == "deny", r.dump())


def _race(wd, mode, tag):
    """STATIC MODE OK DENIED 2: connects race a thread that redirects
    them; none may reach DENIED, some must reach OK."""
    ok = os.path.join(wd.path, "ok.sock")
    bad = denied_path(tag)
    good, evil = Listener(path=ok), Listener(path=bad)
    try:
        r = harness([STATIC, mode, ok, bad, "2"], wd, timeout=60)
    finally:
        good.close()
        evil.close()
        unlink(bad)
    check(r.stdout.startswith("ok " + mode), repr((r.stdout, r.stderr)))
    check(evil.accepted == 0, "a racing thread reached the denied socket %d times" % evil.accepted)
    check(good.accepted > 0, "the allowed socket was never reached: %r" % r.stdout)


def test_unix_connect_path_swap_never_reaches_denied(wd):
    _race(wd, "utoctou", "race")


def test_session_socket_path_swap_never_reaches_denied(wd):
    # The session socket's connect is answered without the kernel reading
    # the address again: swapping it for a denied path gains nothing.
    bad = denied_path("own")
    evil = Listener(path=bad, kind=socket.SOCK_SEQPACKET)
    try:
        r = harness(["sh", "-c", 'exec "$0" utoctou "$HARNESS_SOCKET" "$1" 2 seqpacket',
                     STATIC, bad],
                    wd, timeout=60)
    finally:
        evil.close()
        unlink(bad)
    check(r.stdout.startswith("ok utoctou"), repr((r.stdout, r.stderr)))
    check(evil.accepted == 0, "a racing thread reached the denied socket %d times" % evil.accepted)
    conns = int(r.stdout.split("conns=")[1].split()[0])
    check(conns > 0, "connects to the session socket worked: %r" % r.stdout)


def _dgram(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(5)
    return s


def test_unix_datagram_sendto_allowed_and_denied(wd):
    path = os.path.join(wd.path, "d.sock")
    s = _dgram(path)
    try:
        r = harness([STATIC, "usendto", path], wd)
        check(r.stdout.strip() == "ok usendto", repr((r.stdout, r.stderr)))
        check(s.recv(64) == b"dgram\n", "datagram delivered")
    finally:
        s.close()
    bad = denied_path("d")
    s = _dgram(bad)
    try:
        r = harness([STATIC, "usendto", bad], wd)
        check(r.stdout.strip() == "err EACCES", repr((r.stdout, r.stderr)))
        s.settimeout(0.2)
        try:
            got = s.recv(64)
        except socket.timeout:
            got = None
        check(got is None, "the denied socket received %r" % got)
    finally:
        s.close()
        unlink(bad)


def test_unix_datagram_passes_fds(wd):
    path = os.path.join(wd.path, "r.sock")
    s = _dgram(path)
    try:
        r = harness([STATIC, "urights", path], wd)
        check(r.stdout.strip() == "ok urights", repr((r.stdout, r.stderr)))
        fds = array.array("i")
        msg, anc, _, _ = s.recvmsg(64, socket.CMSG_SPACE(4 * fds.itemsize))
        check(msg == b"fd\n", repr(msg))
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
        check(len(fds) == 1, "one fd passed: %r" % anc)
        with os.fdopen(fds[0], "rb") as f:
            check(f.read(6) == b"piped\n", "the passed fd is the agent's pipe")
    finally:
        s.close()


def test_blocked_unix_connect_does_not_stall_others(wd):
    # A connect blocked on a full backlog holds its own worker only.
    full = os.path.join(wd.path, "full.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(full)
    s.listen(0)  # never accepted
    ok = os.path.join(wd.path, "ok.sock")
    lst = Listener(path=ok)
    try:
        r = harness([STATIC, "ustall", full, ok], wd, timeout=60)
    finally:
        lst.close()
        s.close()
    check(r.stdout.strip() == "ok ustall", "the second connect: %r %r" % (r.stdout, r.stderr))
    check(lst.accepted == 1, "accepted %d" % lst.accepted)


KILL_CONNECTOR = r'''
"$0" uconnect ok.sock
for p in /proc/[0-9]*; do
    [ "$(cat $p/comm 2>/dev/null)" = harness-unix ] || continue
    echo found
    kill -9 "${p#/proc/}" 2>/dev/null && echo killed
    kill -STOP "${p#/proc/}" 2>/dev/null && echo stopped
    [ -n "$(cat "$p/maps" 2>/dev/null)" ] && echo read-maps
done
"$0" uconnect ok.sock
'''


def test_connector_out_of_the_agents_reach(wd):
    # Landlock's signal scope (ABI 6) and a non-dumpable process: the
    # agent can neither kill, stop nor inspect the connector. A
    # connector that has just exited (a zombie: no memory) opens its
    # maps for anyone and shows nothing: an empty read is no reach.
    from test_landlock import needs
    if not needs(6):
        return
    path = os.path.join(wd.path, "ok.sock")
    lst = Listener(path=path)
    try:
        r = harness(["/bin/busybox", "sh", "-c", KILL_CONNECTOR, STATIC], wd)
    finally:
        lst.close()
    lines = r.stdout.split()
    check("found" in lines, "no connector seen: %r %r" % (r.stdout, r.stderr))
    check(not {"killed", "stopped", "read-maps"} & set(lines), "reached the connector: %r" % lines)
    check(lines.count("uconnect") == 2 and lst.accepted == 2, "connects: %r" % r.stdout)


def test_symlink_to_a_denied_socket_is_denied(wd):
    bad = denied_path("link")
    evil = Listener(path=bad)
    os.symlink(bad, os.path.join(wd.path, "link.sock"))
    try:
        r = harness([STATIC, "uconnect", "link.sock"], wd)
        py = harness(["python3", "-c", "import socket; s = socket.socket(socket.AF_UNIX); "
                      "s.connect('link.sock')"], wd)
    finally:
        evil.close()
        unlink(bad)
    check(r.stdout.strip() == "err EACCES", repr((r.stdout, r.stderr)))
    check(py.status != 0, "python reached it through the symlink: %r" % py.stderr)
    check(evil.accepted == 0, "the denied socket was reached through a symlink")
    rec = r.one(layer="kernel", event="connect")
    check(rec["verdict"] == "deny" and rec["args"].get("addr_resolved") == bad, rec)
    check(rec["args"]["addr"] == "unix:" + os.path.join(wd.path, "link.sock"), rec)


def test_relative_socket_path_is_the_agents(wd):
    # Relative to the agent's cwd, not the supervisor's or the connector's.
    os.mkdir(os.path.join(wd.path, "sub"))
    path = os.path.join(wd.path, "sub", "rel.sock")
    lst = Listener(path=path)
    try:
        r = harness(["/bin/busybox", "sh", "-c", 'cd sub && exec "$0" uconnect rel.sock', STATIC],
                    wd)
    finally:
        lst.close()
    check(r.stdout.strip() == "ok uconnect", repr((r.stdout, r.stderr)))
    check(lst.accepted == 1, "accepted %d" % lst.accepted)
    rec = r.one(layer="kernel", event="connect")
    check(rec["args"]["addr"] == "unix:" + path, rec)


def test_socket_path_relinked_in_a_loop_never_reaches_denied(wd):
    # The connector reaches the inode decided on (an O_PATH fd opened
    # without following symlinks), not whatever the path names later.
    _race(wd, "ulinkrace", "relink")


MANAGER = r'''
import os, socket
from multiprocessing import Manager
m = Manager()
d = m.dict()
d["k"] = "v"
print("manager", dict(d))
os.makedirs("sub", exist_ok=True)
for path in ("sub/rel.sock", os.path.abspath("sub/abs.sock")):
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    print("name", s.getsockname() == path)
'''


def test_a_unix_socket_is_bound_to_the_name_the_agent_gave(wd):
    """The kernel layer bound a unix socket from its own cwd set to the
    decided directory, so the kernel kept the last name alone as its
    address: getsockname said "listener-x" for "/tmp/pymp-y/listener-x",
    and Python's multiprocessing, which hands that address to its
    clients, failed (a Manager() raised FileNotFoundError). The bind
    now walks the agent's own bytes, as the kernel would."""
    r = harness([PYTHON, "-c", MANAGER], wd, policy=None)
    check(r.stdout == "manager {'k': 'v'}\nname True\nname True\n", repr((r.stdout, r.stderr[-600:])))
    for name in ("rel.sock", "abs.sock"):
        rec = r.one(event="bind", args_path=os.path.join(wd.path, "sub", name))
        check(rec["verdict"] == "allow", rec)


def test_a_bind_walks_no_directory_swapped_in_after_its_decision(wd):
    """The bind walks the agent's path again (above): a thread that
    swaps the decided directory for a symlink to a denied one (here
    secret/) between the decision and the bind must never get the
    socket made there. Every emulated change of a name waits while a
    bind walks, and the directory the walk reaches is checked to be
    the decided one."""
    os.mkdir(os.path.join(wd.path, "d"))
    secret = os.path.join(wd.path, "secret")  # the suite's, denied
    os.symlink("secret", os.path.join(wd.path, "dlink"))
    before = sorted(os.listdir(secret))
    r = harness([os.path.join(HELPERS, "static_bind_race"), "3"], wd)
    check(r.stdout.startswith("ok "), repr((r.stdout, r.stderr[-600:])))
    ok = int(r.stdout.split()[1])
    check(ok > 50, "too few binds to race: %r" % r.stdout)
    check(sorted(os.listdir(secret)) == before, "a socket made in the denied directory: %r" % os.listdir(secret))
    print("# %s" % r.stdout.strip())
