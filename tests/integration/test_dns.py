"""The agent's DNS answered by the supervisor (issue 13): a question to
port 53 of any address, from any library (a static busybox, a Go binary
with its own resolver, python through glibc and the shim, raw UDP and
TCP), reaches the supervisor's resolver in its sealed namespace, is
judged by its name, asked upstream (a test resolver on loopback, named
by --dns-upstream) only when allowed, and recorded with its answer;
connects are then judged by the names this session was answered.
Nothing here reaches an outside address: every question is answered
by the supervisor, and the test resolver is the only upstream."""

import json
import os
import random
import shutil
import socket
import string
import struct
import threading

from lib import PYTHON, Listener, Skip, check, go_binary, harness

BUSYBOX = shutil.which("busybox")
ANSWER = "127.0.0.1"

POLICY = """version: 1
defaults: {exec: allow, file_read: allow, file_write: deny,
           net_connect: deny, net_send: deny, net_resolve: deny}
files:
  - {id: w, access: write, allow: ["$CWD/**", "$TMPDIR/**", "/dev/null"]}
network:
  - id: by-name
    allow: ["good.test:*", "*.wild.test:*"]
"""


def query(name, qtype=1, qid=0x1234):
    """A DNS query for name (A by default), as any resolver writes it."""
    q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack("!HH", qtype, 1)


def rcode(msg):
    return msg[3] & 0x0F


class Resolver:
    """The upstream: answers A questions with ANSWER over UDP and TCP on
    127.0.0.1 (a port of its own) and logs each name asked."""

    def __init__(self, answers=None):
        self.names = []
        self.answers = answers or {}
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.port = self.udp.getsockname()[1]
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind(("127.0.0.1", self.port))
        self.tcp.listen(8)
        for s in (self.udp, self.tcp):
            s.settimeout(0.2)
        self._stop = False
        self._t = [threading.Thread(target=self._serve_udp, daemon=True),
                   threading.Thread(target=self._serve_tcp, daemon=True)]
        for t in self._t:
            t.start()

    def _answer(self, msg):
        i, labels = 12, []
        while msg[i]:
            labels.append(msg[i + 1:i + 1 + msg[i]].decode("ascii", "replace"))
            i += 1 + msg[i]
        qtype = struct.unpack("!H", msg[i + 1:i + 3])[0]
        end = i + 5
        self.names.append(".".join(labels).lower())
        a = qtype == 1
        out = msg[:2] + struct.pack("!HHHHH", 0x8180, 1, 1 if a else 0, 0, 0) + msg[12:end]
        if a:
            ip = self.answers.get(self.names[-1], ANSWER)
            out += struct.pack("!HHHLH", 0xC00C, 1, 1, 30, 4) + socket.inet_aton(ip)
        return out

    def _serve_udp(self):
        while not self._stop:
            try:
                msg, peer = self.udp.recvfrom(4096)
                self.udp.sendto(self._answer(msg), peer)
            except (socket.timeout, OSError, IndexError, struct.error):
                continue

    def _serve_tcp(self):
        while not self._stop:
            try:
                c, _ = self.tcp.accept()
            except (socket.timeout, OSError):
                continue
            c.settimeout(2)
            try:
                n = struct.unpack("!H", c.recv(2))[0]
                out = self._answer(c.recv(n))
                c.sendall(struct.pack("!H", len(out)) + out)
            except (OSError, IndexError, struct.error):
                pass
            c.close()

    def close(self):
        self._stop = True
        for t in self._t:
            t.join()
        self.udp.close()
        self.tcp.close()


def _run(wd, res, cmd, policy=POLICY, extra=(), **kw):
    pol = wd.file("dns.yaml", policy)
    run = harness(cmd, wd, policy=pol,
                  extra=["--dns-upstream", "127.0.0.1:%d" % res.port] + list(extra), **kw)
    start = [r for r in run.records if r.get("event") == "session_start"]
    if start and start[0]["kernel"].get("dns") != "supervisor":
        raise Skip("DNS is the system's here: %s" % start[0]["kernel"].get("dns"))
    return run


def _questions(run, name):
    return [r for r in run.records
            if r.get("event") == "dns_query" and r["args"].get("host") == name]


def test_static_busybox_lookup_allowed_and_denied(wd):
    if not BUSYBOX:
        raise Skip("no busybox")
    res = Resolver()
    try:
        # busybox's own resolver, in a static binary: no shim, no libc
        # resolver; it asks the address it is given, which is not ours.
        run = _run(wd, res, [BUSYBOX, "nslookup", "good.test", "192.0.2.53"])
        check(run.status == 0 and ANSWER in run.stdout, "allowed name: %r" % run.stdout)
        q = _questions(run, "good.test")
        check(q and all(r["verdict"] == "allow" and r["rule"] == "by-name" for r in q),
              "records %r" % q)
        check(any(r["args"].get("answers") == [ANSWER] and r["args"].get("ttl") == 30
                  for r in q), "no answer recorded: %r" % q)
        check(q[0]["args"]["addr"] == "192.0.2.53:53", "asked server %r" % q[0]["args"])
        check("good.test" in res.names, "the allowed name was not asked upstream")
        # A wildcard rule's name.
        run = _run(wd, res, [BUSYBOX, "nslookup", "b.wild.test", "192.0.2.53"])
        check(run.status == 0 and ANSWER in run.stdout, "wildcard name: %r" % run.stdout)
        run = _run(wd, res, [BUSYBOX, "nslookup", "leak.bad.test", "192.0.2.53"])
        check(run.status != 0 and "NXDOMAIN" in run.stdout + run.stderr,
              "denied name: %r" % run.stdout)
        q = _questions(run, "leak.bad.test")
        check(q and all(r["verdict"] == "deny" for r in q), "records %r" % q)
        check("leak.bad.test" not in res.names, "a denied name reached the upstream")
        # REFUSED instead, when asked for.
        run = _run(wd, res, [BUSYBOX, "nslookup", "leak.bad.test", "192.0.2.53"],
                   extra=["--dns-denied", "refused"])
        check("REFUSED" in run.stdout + run.stderr, "refused: %r" % run.stdout)
    finally:
        res.close()


GO = r'''package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	r := &net.Resolver{PreferGo: true}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d := &net.Dialer{Resolver: r, Timeout: 3 * time.Second}
	for _, h := range os.Args[1:] {
		if _, _, err := net.SplitHostPort(h); err == nil {
			c, err := d.DialContext(ctx, "tcp", h)
			if err == nil {
				c.Close()
			}
			fmt.Println(h, "dial", err == nil)
			continue
		}
		a, err := r.LookupHost(ctx, h)
		fmt.Println(h, a, err != nil)
	}
}
'''


def test_wildcard_rule_judges_the_connect_by_the_answer(wd):
    # Go's own resolver and dialer (static, CGO off): /etc/resolv.conf's
    # server, a connected UDP socket written with write(2), no shim.
    gobin = go_binary(wd, GO, "godns")
    if not gobin:
        raise Skip("no go")
    res, srv = Resolver(), Listener(range(23000, 23500))
    other = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    other.bind(("127.0.0.2", 0))
    other.listen(4)
    try:
        named = "x.wild.test:%d" % srv.port
        bare = "127.0.0.2:%d" % other.getsockname()[1]
        run = _run(wd, res, [gobin, named, bare])
        check(run.stdout.split("\n")[:2] == [named + " dial true", bare + " dial false"],
              "go: %r %r" % (run.stdout, run.stderr))
        check(srv.accepted == 1, "connections: %d" % srv.accepted)
        ok = run.one(op="connect", args_addr="%s:%d" % (ANSWER, srv.port))
        check(ok["verdict"] == "allow" and ok["rule"] == "by-name", "by name: %r" % ok)
        i = ok["args"]["names"].index("x.wild.test")
        check(ok["args"]["names_from"][i] == "dns", "names_from %r" % ok["args"])
        # An address this session was not answered has no name: denied.
        no = run.one(op="connect", args_addr=bare)
        check(no["verdict"] == "deny" and "names" not in no["args"], "%r" % no)
    finally:
        other.close()
        res.close()
        srv.close()


def test_go_and_python_resolvers(wd):
    gobin = go_binary(wd, GO, "godns")
    res = Resolver()
    try:
        if gobin:
            # Go's own resolver (static, CGO off): /etc/resolv.conf's
            # server, a connected UDP socket written with write(2).
            run = _run(wd, res, [gobin, "good.test", "a.wild.test", "no.bad.test"])
            lines = run.stdout.splitlines()
            check(len(lines) == 3 and ANSWER in lines[0] and ANSWER in lines[1]
                  and lines[2].endswith("true"), "go: %r %r" % (run.stdout, run.stderr))
            check("no.bad.test" not in res.names, "go: a denied name went out")
        # python through glibc and the shim.
        py = ("import socket\n"
              "for h in ('good.test', 'no.bad.test', 'c.wild.test'):\n"
              "    try: print(h, socket.getaddrinfo(h, 80)[0][4][0])\n"
              "    except OSError as e: print(h, 'error')\n")
        run = _run(wd, res, [PYTHON, "-c", py])
        check(run.stdout.split("\n")[:3] == ["good.test " + ANSWER, "no.bad.test error",
                                              "c.wild.test " + ANSWER],
              "python: %r %r" % (run.stdout, run.stderr))
        check(_questions(run, "good.test") and _questions(run, "no.bad.test"),
              "python's questions were not recorded")
        check("no.bad.test" not in res.names, "python: a denied name went out")
    finally:
        res.close()


RAW = r'''
import socket, struct, sys
q = bytes.fromhex(sys.argv[1])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(3)
u.sendto(q, ("198.51.100.7", 53))
print("udp", u.recvfrom(4096)[0].hex())
t = socket.create_connection(("203.0.113.9", 53), timeout=3)
t.sendall(struct.pack("!H", len(q)) + q)
n = struct.unpack("!H", t.recv(2))[0]
print("tcp", t.recv(n).hex())
'''


def test_exfiltration_through_names_never_leaves(wd):
    res = Resolver()
    try:
        labels = ["".join(random.choice(string.ascii_lowercase + string.digits)
                          for _ in range(3)) for _ in range(60)]
        name = ".".join(labels) + ".bad.test"
        run = _run(wd, res, [PYTHON, "-c", RAW, query(name).hex()])
        out = dict(line.split() for line in run.stdout.splitlines())
        check(set(out) == {"udp", "tcp"}, "raw client: %r %r" % (run.stdout, run.stderr))
        for how in ("udp", "tcp"):
            check(rcode(bytes.fromhex(out[how])) == 3, "%s: not NXDOMAIN" % how)
        check(not any(n.endswith("bad.test") for n in res.names),
              "the secret reached the upstream: %r" % res.names)
        q = _questions(run, name)
        check(len(q) == 2 and all(r["verdict"] == "deny" for r in q), "records %r" % q)
        addrs = sorted(r["args"]["addr"] for r in q)
        check(addrs == ["198.51.100.7:53", "203.0.113.9:53"], "asked servers %r" % addrs)
    finally:
        res.close()


SEALED = r'''
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(2)
u.sendto(bytes.fromhex(sys.argv[1]), ("192.0.2.1", 53))
u.recvfrom(4096)
# The same socket, now to a port that listens outside the session.
u.sendto(b"leak", ("127.0.0.1", int(sys.argv[2])))
print("sent")
'''

OPEN_POLICY = POLICY + """  - id: loopback-udp
    allow: ["127.0.0.1:*"]
"""


def test_a_sealed_socket_reaches_nothing_else(wd):
    # Allowed by policy, but the socket was sealed by its question to
    # port 53: nothing it sends can leave the supervisor's namespace.
    res = Resolver()
    out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    out.bind(("127.0.0.1", 0))
    out.settimeout(1)
    try:
        run = _run(wd, res, [PYTHON, "-c", SEALED, query("good.test").hex(),
                             str(out.getsockname()[1])], policy=OPEN_POLICY)
        check(run.stdout.strip() == "sent", "client: %r %r" % (run.stdout, run.stderr))
        try:
            got = out.recv(100)
        except socket.timeout:
            got = None
        check(got is None, "a sealed socket sent %r outside" % got)
    finally:
        out.close()
        res.close()


WALLED = POLICY + """  - id: no-addresses
    deny: ["0.0.0.0/0:*", "[::/0]:*"]
"""


def test_port_53_is_answered_whatever_the_address_rules(wd):
    # Nothing sent to port 53 reaches its address, so no address rule
    # (a deny of every address here, the default's loopback ask) keeps
    # the agent's questions from the supervisor, who judges the names.
    if not BUSYBOX:
        raise Skip("no busybox")
    res = Resolver()
    try:
        run = _run(wd, res, [BUSYBOX, "nslookup", "good.test", "127.0.0.53"], policy=WALLED)
        check(run.status == 0 and ANSWER in run.stdout, "lookup: %r" % run.stdout)
        c = [r for r in run.records if r.get("op") in ("connect", "send")
             and r["args"].get("addr") == "127.0.0.53:53"]
        check(c and all(r["verdict"] == "allow" and r["rule"] == "harness:resolver" and
                        r["args"].get("answered_by") == "harness" for r in c),
              "port 53: %r" % c)
    finally:
        res.close()


ONE = r'''
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(3)
u.sendto(bytes.fromhex(sys.argv[1]), ("192.0.2.1", 53))
print(u.recvfrom(4096)[0].hex())
'''


def test_a_name_is_judged_as_asked(wd):
    # One label "evil.wild" under "test": its text "evil\.wild.test"
    # ends like a name under wild.test, which it is not (a different
    # view of the name than the one asked); refused, never sent.
    res = Resolver()
    try:
        q = struct.pack("!HHHHHH", 7, 0x0100, 1, 0, 0, 0) + b"\x09evil.wild\x04test\x00" + \
            struct.pack("!HH", 1, 1)
        run = _run(wd, res, [PYTHON, "-c", ONE, q.hex()])
        check(run.stdout.strip() and rcode(bytes.fromhex(run.stdout.strip())) == 3,
              "reply: %r %r" % (run.stdout, run.stderr))
        check(not res.names, "the name went upstream: %r" % res.names)
        q = [r for r in run.records if r.get("event") == "dns_query"]
        check(q and q[0]["verdict"] == "deny" and q[0]["rule"] == "harness:malformed",
              "record %r" % q)
    finally:
        res.close()


def test_an_address_is_no_name(wd):
    # A question for "2001:db8:..." would carry 16 chosen bytes out to
    # the upstream under the address rules (harness:resolver's own
    # [::/0]:53 matched it); no resolver asks for a literal.
    res = Resolver()
    try:
        q = query("2001:db8:dead:beef:cafe:babe:1:2", qtype=16)
        run = _run(wd, res, [PYTHON, "-c", ONE, q.hex()])
        check(run.stdout.strip() and rcode(bytes.fromhex(run.stdout.strip())) == 3,
              "reply: %r %r" % (run.stdout, run.stderr))
        check(not res.names, "the literal went upstream: %r" % res.names)
        r = [x for x in run.records if x.get("event") == "dns_query"]
        check(r and r[0]["verdict"] == "deny" and r[0]["rule"] == "harness:malformed",
              "record %r" % r)
    finally:
        res.close()


ZERO = r'''
import socket, sys
a = socket.getaddrinfo("zero.wild.test", int(sys.argv[1]), socket.AF_INET)[0][4]
print(a[0])
s = socket.socket()
try:
    s.connect(a); print("connected")
except OSError as e:
    print("refused", e.errno)
'''


def test_an_answer_of_0_0_0_0_reaches_no_outside_service(wd):
    # 0.0.0.0 (a filtering resolver's or a hosts file's "blocked") is
    # connected to loopback by the kernel: judged as loopback, never by
    # the allowed name it was the answer of.
    res, srv = Resolver({"zero.wild.test": "0.0.0.0"}), Listener(range(23500, 24000))
    try:
        run = _run(wd, res, [PYTHON, "-c", ZERO, str(srv.port)])
        check(run.stdout.split("\n")[0] == "0.0.0.0", "lookup: %r %r" % (run.stdout, run.stderr))
        check("refused 13" in run.stdout and srv.accepted == 0,
              "0.0.0.0 reached the outside listener: %r" % run.stdout)
        c = run.events(op="connect", args_addr="0.0.0.0:%d" % srv.port)
        check(c and all(x["verdict"] == "deny" and "names" not in x["args"] for x in c),
              "records %r" % c)
    finally:
        res.close()
        srv.close()


SLOW = r'''
import socket, struct, sys, time
q = bytes.fromhex(sys.argv[1])
slow = socket.create_connection(("192.0.2.1", 53), timeout=5)
slow.sendall(b"\x00")  # a length that never ends
t = time.monotonic()
fast = socket.create_connection(("192.0.2.1", 53), timeout=5)
fast.sendall(struct.pack("!H", len(q)) + q)
n = struct.unpack("!H", fast.recv(2))[0]
print("answered", len(fast.recv(n)) > 12, round(time.monotonic() - t, 1) < 1.5)
slow.settimeout(5)
print("closed", slow.recv(10) == b"", round(time.monotonic() - t) <= 3)
'''


def test_a_dribbling_connection_holds_no_question_back(wd):
    res = Resolver()
    try:
        run = _run(wd, res, [PYTHON, "-c", SLOW, query("good.test").hex()])
        check(run.stdout.split("\n")[:2] == ["answered True True", "closed True True"],
              "tcp: %r %r" % (run.stdout, run.stderr))
    finally:
        res.close()


PORT_POLICY = POLICY + """  - id: web-only
    allow: ["port.test:80"]
"""


def test_a_refusal_names_the_name_it_was_answered_for(wd):
    # The notice of a static program's refused connect says which name
    # the address was answered for: what a rule would name.
    if not BUSYBOX:
        raise Skip("no busybox")
    from lib import HELPERS
    res = Resolver()
    try:
        script = ("%s nslookup port.test 192.0.2.1 >/dev/null 2>&1; %s connect4 %s 81"
                  % (BUSYBOX, os.path.join(HELPERS, "static_unotify"), ANSWER))
        run = _run(wd, res, ["sh", "-c", script], policy=PORT_POLICY)
        check("err EACCES" in run.stdout, "connect: %r" % run.stdout)
        check("denied connect %s:81 (port.test)" % ANSWER in run.stderr,
              "notice: %r" % run.stderr)
        c = run.one(op="connect", args_addr="%s:81" % ANSWER)
        check(c["args"]["names"] == ["port.test"] and c["args"]["names_from"] == ["dns"],
              "record %r" % c)
    finally:
        res.close()


NODE = r"""
const dns = require('dns');
const r = new dns.Resolver();
r.setServers(['192.0.2.9']);
const out = [];
r.resolve4('good.test', (e, a) => {
  out.push('resolve4 ' + (e ? e.code : a.join(',')));
  r.resolve4('no.bad.test', (e2, a2) => {
    out.push('denied ' + (e2 ? e2.code : a2.join(',')));
    dns.lookup('c.wild.test', {family: 4}, (e3, a3) => {
      out.push('lookup ' + (e3 ? e3.code : a3));
      console.log(out.join('\n'));
    });
  });
});
"""


def test_node_c_ares_and_getaddrinfo(wd):
    # Node's own resolver (c-ares: it takes a reply only from the server
    # it asked) and its dns.lookup (getaddrinfo through the shim).
    node = shutil.which("node")
    if not node:
        raise Skip("no node")
    res = Resolver()
    try:
        run = _run(wd, res, [node, "-e", NODE])
        check(run.stdout.split("\n")[:3] == ["resolve4 " + ANSWER, "denied ENOTFOUND",
                                             "lookup " + ANSWER],
              "node: %r %r" % (run.stdout, run.stderr[-300:]))
        check("no.bad.test" not in res.names, "a denied name went out")
    finally:
        res.close()


CONNECT_53 = r"""
import socket, sys
s = socket.socket()
s.settimeout(1)
try:
    s.connect((sys.argv[1], 53))
    print("CONNECTED")
except OSError as e:
    print("refused", e.errno)
"""


def test_a_start_without_the_dns_namespace_opens_no_port_53(wd):
    """harness-exec compiles the policy while the DNS namespace comes up,
    as if it will: the resolver rule then allows port 53 on any address
    (every lookup is the supervisor's). When it does not come up (here a
    user namespace that allows no network namespace), the policy is
    compiled again with the system's resolvers only: a connect to another
    address's port 53 is the default's deny, not harness:resolver's."""
    if not shutil.which("unshare"):
        raise Skip("no unshare")
    outside = "192.0.2.53"  # TEST-NET-1: in no resolv.conf
    with open("/etc/resolv.conf") as f:
        if outside in f.read():
            raise Skip("%s is a resolver here" % outside)
    # As an ordinary user, uid 0 in the namespace is that user, and
    # /tmp/harness-0 (the run directory of uid 0) root's: a tmpfs of its
    # own over it, in a mount namespace of its own.
    setup = ('{ [ ! -d /tmp/harness-0 ] || [ -O /tmp/harness-0 ] || '
             'mount -t tmpfs -o mode=0700 hx /tmp/harness-0; } && '
             'echo 0 > /proc/sys/user/max_net_namespaces && exec "$@"')
    r = harness([PYTHON, "-c", CONNECT_53, outside], wd, policy=None,
                wrap=["unshare", "-Urm", "sh", "-c", setup, "sh"])
    if "unshare failed" in r.stderr or "Permission denied" in r.stderr.split("\n")[0]:
        raise Skip("no user namespace here: %s" % r.stderr.strip())
    start = r.one(event="session_start")
    check("no network namespace" in json.dumps(start.get("kernel", {}).get("dns", start.get("dns", ""))),
          "the DNS namespace came up: %s" % r.dump())
    check("CONNECTED" not in r.stdout, "connected to %s:53: %s" % (outside, r.dump()))
    conn = [x for x in r.records if x.get("event") == "connect" and outside in json.dumps(x)]
    check(conn and conn[0]["verdict"] == "deny" and conn[0]["rule"] != "harness:resolver",
          "port 53 of %s: %s" % (outside, conn))
