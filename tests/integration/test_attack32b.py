"""Attack review 32, part b: every way a process opens a connection or
sends a datagram, compared with the bare kernel, under the embedded
default policy in enforce mode, as root and as an ordinary user.

A join of a multicast group is a datagram out of the machine that no
send names: the kernel reports the membership (IGMP for IPv4, MLD for
IPv6) out of the interface the group routes by, eth0, at once and again
within a second, and again at the leave. Any user may join, on any
socket, and the group's address is the agent's to choose: 4 bytes of an
IPv4 group, 14 of an IPv6 one (ff05:: and 112 bits), 16 more for each
source of a source-specific join, as many joins as sockets. The default
policy refuses every multicast send and nothing decided the reports: a
root agent's and an ordinary user's joins (python, and raw from a
static program) put 239.83.69.67 ("SEC") and ff05::5345:4352:4554:...
("SECRET") on eth0, unrecorded."""

import json
import os
import socket

from lib import HELPERS, PYTHON, PacketCapture, Skip, check, harness
from test_attack27a import TRY, _uplink
from test_default_policy import fake_home

# The marker the groups and sources carry: "SEC" of 239.83.69.67 and of
# the static probe's 10.83.69.67, "SECRET" of the IPv6 groups.
MARKS = (bytes([239, 83, 69, 67]), bytes([10, 83, 69, 67]), b"SECRET")

JOINS = r"""
import json, socket, struct
out = {}
""" + TRY + r"""
g4 = socket.inet_aton("239.83.69.67")
g6 = socket.inet_pton(socket.AF_INET6, "ff05::5345:4352:4554:2d70:7974")
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try_("ip_add_membership", lambda: s.setsockopt(
    socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, g4 + bytes(4)))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
try_("ipv6_join_group", lambda: s6.setsockopt(
    socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, g6 + struct.pack("@I", 0)))
# IPv4's options on an IPv6 socket are IPv4's
m = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
try_("ip_on_v6", lambda: m.setsockopt(
    socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
    socket.inet_aton("239.83.69.68") + bytes(4)))
import time; time.sleep(1.5)
print(json.dumps(out))
"""


def _report(d, a):
    """An outgoing IGMP or MLD frame (IPv6 reports follow a hop-by-hop
    header) that carries a marker: its bytes."""
    if a[2] != socket.PACKET_OUTGOING:
        return None
    igmp = a[1] == 0x0800 and len(d) > 20 and d[9] == 2
    mld = a[1] == 0x86DD and len(d) > 40 and d[6] in (0, 58)
    if (igmp or mld) and any(m in d for m in MARKS):
        return d.hex()
    return None


def test_a_multicast_join_sends_nothing_out_of_the_machine(wd):
    """The agent's joins, through python and raw from a static program,
    are refused (EPERM, as the deny list refuses what routes past the
    decided address: unrecorded, a refusal of the kernel's kind) and no
    IGMP or MLD report carrying its groups leaves by the uplink (watched
    as root; as the user, the refusals say it)."""
    dev = _uplink()
    if not dev:
        raise Skip("no interface with a default route")
    home = fake_home(wd)
    static = os.path.join(HELPERS, "static_attack32b")
    # ETH_P_ALL: only the taps of every protocol see what is sent
    cap = PacketCapture(dev, 3, _report)
    try:
        r = harness([PYTHON, "-c", JOINS], wd, policy=None, env={"HOME": home})
        rs = harness([static, "mcast-join"], wd, policy=None, env={"HOME": home})
    finally:
        cap.close()
    check(r.stdout.strip().startswith("{"), "agent did not run: %r %r" % (r.stdout, r.stderr[-500:]))
    check(not cap.seen, "%d membership reports left by %s: %r" % (len(cap.seen), dev, cap.seen[:4]))
    out = json.loads(r.stdout.strip().splitlines()[-1])
    for k, v in out.items():
        check(v == "errno 1", "python's %s: %s, want EPERM (%r)" % (k, v, out))
    lines = dict(line.split(" ", 1) for line in rs.stdout.splitlines() if " " in line)
    check(len(lines) == 7, "the static probe did not run: %r %r" % (rs.stdout, rs.stderr[-500:]))
    for k, v in lines.items():
        check(v == "EPERM", "the static program's %s: %s, want EPERM" % (k, v))
    # Nothing was decided, nothing claims a multicast send was allowed.
    for run in (r, rs):
        allowed = [e for e in run.events(verdict="allow")
                   if e.get("category", "").startswith("net_") and
                   ("239.83." in json.dumps(e) or "ff05:" in json.dumps(e))]
        check(not allowed, "records allow the groups: %r" % allowed[:3])
        check(run.events(event="session_end"), "no session_end: %r" % run.dump())


DEFERRED = r"""
import json, socket
out = {}
la = socket.socket(); la.bind(("127.0.0.1", 0)); la.listen(4)
lb = socket.socket(); lb.bind(("127.0.0.1", 0)); lb.listen(4)
A, B = la.getsockname()[1], lb.getsockname()[1]
out["ports"] = [A, B]
def deferred(proto=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
    s.setsockopt(socket.IPPROTO_TCP, 34, 1)  # TCP_FASTOPEN_NO_COOKIE
    s.setsockopt(socket.IPPROTO_TCP, 30, 1)  # TCP_FASTOPEN_CONNECT
    s.connect(("127.0.0.1", A))
    return s
def send(name, s, to):
    try:
        out[name] = s.sendto(name.encode(), to)
    except OSError as e:
        out[name] = "errno %d" % e.errno
s1, s2 = deferred(), deferred()
out["state"] = s1.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0]
send("send-b", s1, ("127.0.0.1", B))
send("send-far", s2, ("10.0.0.1", 80))
try:  # MPTCP's deferred connect (its first subflow's), where the kernel has it
    s3 = deferred(262)
except OSError:
    s3 = None
if s3:
    send("send-mptcp", s3, ("127.0.0.1", B))
def got(l):
    l.settimeout(1.0)
    try:
        c, _ = l.accept()
        c.settimeout(1.0)
        return c.recv(100).decode()
    except OSError:
        return "-"
out["a"] = sorted([got(la), got(la)] + ([got(la)] if s3 else []))
out["b"] = got(lb)
print(json.dumps(out))
"""


def _sends_named(run, ports):
    """Records of a send naming B's port or 10.0.0.1."""
    return [e for e in run.records if e.get("category") == "net_send" and
            any(x in (e.get("args") or {}).get("addr", "")
                for x in (":%d" % ports[1], "10.0.0.1"))]


def test_a_send_on_a_deferred_fast_open_connect_names_its_peer(wd):
    """A Fast Open connect deferred to the first send (TCP_FASTOPEN_CONNECT;
    TCP_FASTOPEN_NO_COOKIE defers one on loopback without a server's
    cookie) leaves the socket in SYN_SENT, where getpeername says
    ENOTCONN: its first send makes the SYN to the address connected, with
    the bytes, whatever address it names. The shim and the kernel layer
    judged and recorded the address named: "sendto 127.0.0.1:B allow
    harness:own-listener" for bytes that reached A, and a send naming
    10.0.0.1:80 was refused where the kernel sends it to A. Now such a
    send is the connected peer's, neither judged nor recorded, as on a
    connected socket (the connect to A was); python and a static
    program."""
    home = fake_home(wd)
    r = harness([PYTHON, "-c", DEFERRED], wd, policy=None, env={"HOME": home})
    check(r.stdout.strip().startswith("{"), "agent did not run: %r %r" % (r.stdout, r.stderr[-500:]))
    out = json.loads(r.stdout.strip().splitlines()[-1])
    if out["state"] != 2:  # SYN_SENT
        raise Skip("a Fast Open connect is not deferred here (net.ipv4.tcp_fastopen): %r" % out)
    want = ["send-b", "send-far"] + (["send-mptcp"] if "send-mptcp" in out else [])
    check(out["a"] == sorted(want) and out["b"] == "-",
          "the bytes did not all reach the connected A: %r" % out)
    check(out["send-b"] == 6 and out["send-far"] == 8 and out.get("send-mptcp", 10) == 10,
          "sends: %r" % out)
    check(not _sends_named(r, out["ports"]), "records name another address than the bytes went to: %r"
          % _sends_named(r, out["ports"])[:3])
    check(r.events(event="connect", verdict="allow", args_addr="127.0.0.1:%d" % out["ports"][0]),
          "no allowed connect to A: %s" % r.dump())

    rs = harness([os.path.join(HELPERS, "static_attack32b"), "tfo-sends"], wd, policy=None,
                 env={"HOME": home})
    lines = dict(line.split(" ", 1) for line in rs.stdout.splitlines() if " " in line)
    check("A" in lines and "a" in lines, "the static probe did not run: %r %r" % (rs.stdout, rs.stderr[-500:]))
    a, b = (int(x) for x in lines["A"].split(" B "))
    check(lines["send-b"] == "4" and lines["send-far"] == "6", "static sends: %r" % lines)
    check(sorted(lines["a"].split()) == ["to-b", "to-far"] and lines["b"] == "-",
          "the static program's bytes did not all reach A: %r" % lines)
    check(not _sends_named(rs, [a, b]), "records name another address than the bytes went to: %r"
          % _sends_named(rs, [a, b])[:3])
