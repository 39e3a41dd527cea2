"""A destination the supervisor never decided: an IPv6 routing header
(IPV6_RTHDR, a segment routing header, type 4, which any user may set
on a socket) makes the kernel send to its segment, not to the address
connect or sendto named and the policy judged. Found by an attack
review: a datagram to the agent's own UDP port on [::1] (allowed, rule
harness:own-listener, and so recorded) left by eth0 for another host,
which the policy denies, from raw python (the shim does not see
setsockopt). IPv4 source routes (IP_OPTIONS, IP_RETOPTS with LSRR or
SSRR) the kernel refuses without CAP_NET_RAW, which the agent never
has; the test holds it to that."""

import json
import os
import socket

from lib import PYTHON, PacketCapture, check, harness
from test_default_policy import fake_home


def _other_v6():
    """An IPv6 address of this host other than ::1 (reached through lo,
    where the test sees it), or a documentation one."""
    try:
        with open("/proc/net/if_inet6") as f:
            for line in f:
                hexa, _, _, scope, _, dev = line.split()
                if dev != "lo" and scope == "00":
                    return socket.inet_ntop(socket.AF_INET6, bytes.fromhex(hexa)), True
    except OSError:
        pass
    return "2001:db8::1", False


AGENT = r"""
import json, socket, sys
out = {}
hop = sys.argv[1]
LSRR = bytes([1, 131, 7, 4]) + socket.inet_aton("127.0.0.2")
SRH = bytes([0, 2, 4, 0, 0, 0, 0, 0]) + socket.inet_pton(socket.AF_INET6, hop)

def try_(name, f):
    try:
        f()
        out[name] = "ok"
    except OSError as e:
        out[name] = "errno %d" % e.errno

me = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
me.bind(("::1", 0))
port = me.getsockname()[1]
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
try_("plain", lambda: s.sendto(b"plain", ("::1", port)))
try_("rthdr", lambda: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RTHDR, SRH))
try_("rthdr_send", lambda: s.sendto(b"routed", ("::1", port)))
c = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
try_("rthdr_cmsg", lambda: c.sendmsg([b"cmsg"], [(socket.IPPROTO_IPV6, socket.IPV6_RTHDR, SRH)],
                                     0, ("::1", port)))
t = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
try_("rthdr_tcp", lambda: t.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RTHDR, SRH))
me4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
me4.bind(("127.0.0.1", 0))
v4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try_("lsrr", lambda: v4.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, LSRR))
try_("lsrr_cmsg", lambda: v4.sendmsg([b"x"], [(socket.IPPROTO_IP, 7, LSRR)], 0,
                                     me4.getsockname()))
me.settimeout(0.3)
got = []
try:
    while True:
        got.append(me.recv(100).decode())
except OSError:
    pass
out["received"] = got
out["port"] = port
print(json.dumps(out))
"""


def test_routing_headers_never_send_past_the_decided_address(wd):
    home = fake_home(wd)
    hop, local = _other_v6()
    # IPv6 packets on lo to hop, this host's
    to_hop = socket.inet_pton(socket.AF_INET6, hop)
    cap = PacketCapture("lo" if local else None, 0x86DD,
                        lambda d, a: 1 if len(d) >= 40 and d[24:40] == to_hop else None)
    try:
        r = harness([PYTHON, "-c", AGENT, hop], wd, policy=None, env={"HOME": home})
    finally:
        cap.close()
    check(r.stdout.strip().startswith("{"), "agent did not run: %r %r" % (r.stdout, r.stderr[-500:]))
    out = json.loads(r.stdout.strip().splitlines()[-1])
    check(out["plain"] == "ok" and "plain" in out["received"],
          "a send to the agent's own port failed: %r" % out)
    check(not cap.seen, "%d packets left for %s: %r" % (len(cap.seen), hop, out))
    for k in ("rthdr", "rthdr_tcp", "lsrr", "lsrr_cmsg"):
        check(out[k] == "errno 1", "%s: %s, want EPERM (%r)" % (k, out[k], out))
    check(out["rthdr_cmsg"] != "ok", "a routing header in a send's control message: %r" % out)
    check(out["rthdr_send"] == "ok" and "routed" in out["received"],
          "the send after the refused header did not reach the decided address: %r" % out)
    # Every send the records allow reached the address they name.
    rec = r.one(event="sendto", args_addr="[::1]:%d" % out["port"])
    check(rec["verdict"] == "allow" and rec["rule"] == "harness:own-listener", "record %r" % rec)
