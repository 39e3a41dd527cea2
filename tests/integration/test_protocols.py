"""Network rules by protocol (issue 13, point 3): "udp:HOST:PORT" and
"tcp:HOST:PORT" hold for the socket's real protocol, in the shim
(python) and in the kernel layer (a static program), and what one
allows the other does not."""

import os
import socket

from lib import HELPERS, PYTHON, Listener, check, harness

STATIC = os.path.join(HELPERS, "static_unotify")

POLICY = """version: 1
defaults: {exec: allow, file_read: allow, file_write: deny, net_connect: deny,
           net_send: deny}
files:
  - {id: w, access: write, allow: ["$CWD/**", "$TMPDIR/**", "/dev/null"]}
network:
  - id: udp-only
    allow: ["udp:127.0.0.1:%d"]
    match: "udp:127.0.0.1:%d"
    not_match: "tcp:127.0.0.1:%d"
"""

PY = r'''
import socket, sys
port = int(sys.argv[1])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"py", ("127.0.0.1", port)); print("udp ok")
except OSError as e:
    print("udp", e.errno)
t = socket.socket()
try:
    t.connect(("127.0.0.1", port)); print("tcp ok")
except OSError as e:
    print("tcp", e.errno)
'''


def test_udp_rule_allows_udp_only(wd):
    tcp = Listener(range(24000, 24500))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        udp.bind(("127.0.0.1", tcp.port))
        udp.settimeout(2)
        port = tcp.port
        pol = wd.file("p.yaml", POLICY % (port, port, port))
        r = harness([PYTHON, "-c", PY, str(port)], wd, policy=pol)
        check(r.stdout.split() == ["udp", "ok", "tcp", "13"], "python: %r %r" % (r.stdout, r.stderr))
        check(udp.recv(10) == b"py", "the UDP datagram did not arrive")
        sends = r.events(op="send", args_addr="127.0.0.1:%d" % port)
        check(sends and all(x["verdict"] == "allow" and x["rule"] == "udp-only" and
                            x["args"]["proto"] == "udp" for x in sends),
              "send records %r" % sends)
        conn = r.events(op="connect", args_addr="127.0.0.1:%d" % port)
        check(conn and all(x["verdict"] == "deny" for x in conn), "connect records %r" % conn)
        # The kernel layer alone (a static program, raw syscalls).
        r = harness([STATIC, "sendto", str(port)], wd, policy=pol)
        check(r.stdout.strip() == "ok sendto", "static udp: %r" % r.stdout)
        check(udp.recv(10) == b"dgram\n", "the static datagram did not arrive")
        r = harness([STATIC, "connect", str(port)], wd, policy=pol)
        check(r.stdout.strip() == "err EACCES", "static tcp: %r" % r.stdout)
        check(tcp.accepted == 0, "a TCP connection got through")
    finally:
        udp.close()
        tcp.close()


MPTCP_POLICY = """version: 1
defaults: {exec: allow, file_read: allow, file_write: deny, net_connect: deny}
files:
  - {id: w, access: write, allow: ["$CWD/**", "$TMPDIR/**", "/dev/null"]}
network:
  - {id: any, allow: ["127.0.0.1:%d"]}
  - {id: no-tcp, deny: ["tcp:127.0.0.1:%d"]}
"""

MPTCP = r'''
import socket, sys
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
except OSError:
    print("no mptcp"); sys.exit(0)
try:
    s.connect(("127.0.0.1", int(sys.argv[1]))); print("connected")
except OSError as e:
    print("refused", e.errno)
'''


def test_tcp_rules_hold_for_mptcp(wd):
    # MPTCP falls back to plain TCP with any peer: a tcp: rule is its.
    tcp = Listener(range(24500, 25000))
    try:
        pol = wd.file("m.yaml", MPTCP_POLICY % (tcp.port, tcp.port))
        r = harness([PYTHON, "-c", MPTCP, str(tcp.port)], wd, policy=pol)
        if r.stdout.strip() == "no mptcp":
            from lib import Skip
            raise Skip("no MPTCP here")
        check(r.stdout.strip() == "refused 13" and tcp.accepted == 0,
              "mptcp: %r %r" % (r.stdout, r.stderr))
        check(r.one(op="connect")["rule"] == "no-tcp", r.dump())
    finally:
        tcp.close()
