"""Attack review 28, part b: the calls the kernel layer emulates for
the agent, compared with what the bare kernel does for the same call,
under the embedded default policy in enforce mode, as root and as an
ordinary user.

A blocking send on a connected stream (TCP, unix) is emulated on the
agent's socket from the supervisor's copy of its bytes: the worker sent
at most 64 KiB, without blocking, and waited for room itself with no
bound but the watchdog's. So a blocking sendmsg of 1 MiB to a reading
peer returned 65536 where the kernel sends every byte (a program that
does not loop lost the rest), and a send with SO_SNDTIMEO to a peer
that reads nothing never returned: the kernel answers EAGAIN (or the
count taken) once the timeout passes; under harness the agent's thread
waited for good, a worker with it."""

import json

from lib import PYTHON, check, harness
from test_default_policy import fake_home

# What each agent script below tries, and the errno it met, in out.
TRY = r"""
import errno
def try_(name, f):
    try:
        out[name] = f()
    except OSError as e:
        out[name] = "errno " + errno.errorcode.get(e.errno, str(e.errno))
"""


STREAM = r"""
import hashlib, json, os, socket, struct, sys, threading, time
out = {}
""" + TRY + r"""
MIB = 1 << 20
data = os.urandom(MIB)

def drain(s, got):
    h = hashlib.sha256()
    n = 0
    while True:
        d = s.recv(1 << 16)
        if not d:
            break
        h.update(d)
        n += len(d)
    got.append((n, h.hexdigest()))

def pairs():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    c = socket.create_connection(srv.getsockname())
    s, _ = srv.accept()
    yield "tcp", c, s
    yield "unix", *socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)

def bounded(name, f, limit=15):
    # A send that never returns is reported, not waited for.
    t = threading.Thread(target=try_, args=(name, f), daemon=True)
    t0 = time.time()
    t.start()
    t.join(limit)
    if t.is_alive():
        out[name] = "hung"
    out[name + "_s"] = round(time.time() - t0, 1)

for kind, c, s in pairs():
    got = []
    r = threading.Thread(target=drain, args=(s, got))
    r.start()
    bounded(kind + "_all", lambda: c.sendmsg([data[:MIB // 2], data[MIB // 2:]]))
    c.shutdown(socket.SHUT_WR)
    r.join(15)
    out[kind + "_got"] = got[0][0] if got else None
    out[kind + "_same"] = bool(got) and got[0][1] == hashlib.sha256(data).hexdigest()

for kind, c, s in pairs():
    # The peer reads nothing: the kernel gives up at SO_SNDTIMEO.
    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 0, 300000))
    bounded(kind + "_timeo1", lambda: c.sendmsg([bytes(8 * MIB)]))
    # Full to the last byte (send: not notified), then one more.
    c.setblocking(False)
    try:
        while True:
            c.send(bytes(4096))
    except BlockingIOError:
        pass
    c.setblocking(True)
    bounded(kind + "_timeo2", lambda: c.sendmsg([bytes(4096)]))
print(json.dumps(out))
sys.stdout.flush()
os._exit(0)
"""


def _agent(wd, script):
    home = fake_home(wd)
    r = harness([PYTHON, "-c", script], wd, policy=None, env={"HOME": home}, timeout=180)
    check(r.stdout.strip().startswith("{"), "agent did not run: %r %r" % (r.stdout, r.stderr[-500:]))
    return r, json.loads(r.stdout.strip().splitlines()[-1])


def test_a_blocking_stream_send_is_whole_and_keeps_its_timeout(wd):
    r, out = _agent(wd, STREAM)
    mib = 1 << 20
    for kind in ("tcp", "unix"):
        # Every byte, in order, as a blocking send of the kernel's.
        check(out[kind + "_all"] == mib, "%s: a blocking sendmsg of 1 MiB returned %r (%r)"
              % (kind, out[kind + "_all"], out))
        check(out[kind + "_got"] == mib and out[kind + "_same"],
              "%s: the peer got %r bytes, same %r" % (kind, out[kind + "_got"], out[kind + "_same"]))
        # SO_SNDTIMEO: the first send returns what was taken, the next
        # EAGAIN, each after about 0.3 s (not the 15 s of "hung").
        first, second = out[kind + "_timeo1"], out[kind + "_timeo2"]
        check(isinstance(first, int) and 0 < first < 8 * mib,
              "%s: the first send to a full peer with SO_SNDTIMEO: %r (%r)" % (kind, first, out))
        check(second == "errno EAGAIN", "%s: the second send to a full peer: %r (%r)" % (kind, second, out))
        check(out[kind + "_timeo1_s"] < 5 and out[kind + "_timeo2_s"] < 5,
              "%s: the sends with SO_SNDTIMEO waited %r and %r s"
              % (kind, out[kind + "_timeo1_s"], out[kind + "_timeo2_s"]))
    # The connect that named the peer is the send's record; the sends
    # to it are refused nowhere, and none names another address.
    conn = r.events(event="connect", verdict="allow")
    check(conn and all(c["rule"] == "harness:own-listener" for c in conn), "connects %r" % conn[:3])
    check(not r.events(verdict="deny", category="net_send"),
          "a send was refused: %r" % r.events(verdict="deny", category="net_send")[:3])
