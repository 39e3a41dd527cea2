"""Loopback by owner (issue 13, point 2): the default policy's loopback
rule says ask, and the session's own servers are allowed by owner
(harness:own-listener: only processes of the session listen on the port,
or are bound to it for UDP), as is the model endpoint the agent's
environment names (harness:model-endpoint). A listener of the user's
outside the session (a proxy, a database, node --inspect) is refused;
the machine's control ports and the cloud metadata services are denied
outright (control-ports). Static programs (no shim) show that the
kernel layer decides it; python goes through the shim first."""

import os
import socket

from lib import HELPERS, PYTHON, Listener, check, harness

STATIC = os.path.join(HELPERS, "static_unotify")


def _addr_records(r, op="connect"):
    return [x for x in r.records if x.get("op") == op and x.get("args", {}).get("addr")]


def test_own_servers_reached_by_their_children(wd):
    """A TCP and a UDP server the agent starts on 127.0.0.1 are reached
    by its children: static (the kernel layer alone) and python (the
    shim, then the kernel)."""
    for mode, op in (("own-tcp", "connect"), ("own-udp", "send")):
        r = harness([STATIC, mode, "x"], wd, policy=None)
        r.expect_status(0)
        check(r.stdout == "ok %s\ngot ping\n" % mode, "%s: %r %r" % (mode, r.stdout, r.stderr[-300:]))
        recs = _addr_records(r, op)
        check(len(recs) == 1 and recs[0]["verdict"] == "allow" and
              recs[0]["rule"] == "harness:own-listener" and recs[0]["layer"] == "kernel",
              "%s: %r" % (mode, recs))
    code = ("import socket, subprocess, sys\n"
            "for fam, host in ((socket.AF_INET, '127.0.0.1'), (socket.AF_INET6, '::1')):\n"
            "    s = socket.socket(fam); s.bind((host, 0)); s.listen(4)\n"
            "    port = s.getsockname()[1]\n"
            "    subprocess.run([sys.executable, '-c', 'import socket; "
            "socket.create_connection((%r, %d)).sendall(b\"hi\")' % (host, port)], check=True)\n"
            "    c, _ = s.accept(); print(host, c.recv(8).decode())\n")
    r = harness([PYTHON, "-c", code], wd, policy=None)
    r.expect_status(0)
    check(r.stdout == "127.0.0.1 hi\n::1 hi\n", "python: %r %r" % (r.stdout, r.stderr[-500:]))
    recs = _addr_records(r)
    check(len(recs) == 2 and all(x["rule"] == "harness:own-listener" and x["verdict"] == "allow"
                                 and x["layer"] == "shim+kernel" for x in recs), recs)


def test_outside_listener_refused_unless_the_policy_allows_loopback(wd):
    """A listener of the user's (the test's, same uid) on 127.0.0.1 is
    refused by default, with the rule in the record; a policy that
    allows 127.0.0.1:* reaches it, as before."""
    lst = Listener(range(30000, 31000))
    try:
        r = harness([STATIC, "connect", str(lst.port)], wd, policy=None)
        check(r.stdout.strip() == "err EACCES", "static: %r" % r.stdout)
        py = harness([PYTHON, "-c", "import socket\ntry:\n socket.create_connection(('127.0.0.1', %d))"
                      "\nexcept OSError as e: print(e.errno)" % lst.port], wd, policy=None)
        check(py.stdout.strip() == "13", "python: %r" % py.stdout)
        check(lst.accepted == 0, "the outside listener was reached %d times" % lst.accepted)
        for run, layer in ((r, "kernel"), (py, "shim")):
            rec = run.one(op="connect", args_addr="127.0.0.1:%d" % lst.port)
            check(rec["verdict"] == "ask" and rec["rule"] == "loopback" and rec["layer"] == layer,
                  rec)
        pol = wd.file("loopback-allowed.yaml",
                      "version: 1\nmode: enforce\ndefaults:\n  net_connect: deny\n"
                      "network:\n  - id: all-loopback\n    allow: ['127.0.0.1:*']\n")
        r = harness([STATIC, "connect", str(lst.port)], wd, policy=pol)
        check(r.stdout.strip() == "ok connect", "allowed by policy: %r" % r.stdout)
        rec = r.one(op="connect", args_addr="127.0.0.1:%d" % lst.port)
        check(rec["verdict"] == "allow" and rec["rule"] == "all-loopback", rec)
    finally:
        lst.close()
    check(lst.accepted == 1, "accepted %d" % lst.accepted)


def test_shared_port_is_not_the_sessions(wd):
    """SO_REUSEPORT lets the agent listen on the very port an outside
    listener of its uid holds, and the kernel would hand it part of the
    connects: every socket on the port must be the session's."""
    out = socket.socket()
    out.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    out.bind(("127.0.0.1", 0))
    out.listen(8)
    port = out.getsockname()[1]
    code = ("import socket\n"
            "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)\n"
            "s.bind(('127.0.0.1', %d)); s.listen(4)\n"
            "try:\n socket.create_connection(('127.0.0.1', %d)); print('connected')\n"
            "except OSError as e: print(e.errno)\n" % (port, port))
    try:
        r = harness([PYTHON, "-c", code], wd, policy=None)
    finally:
        out.close()
    check(r.stdout.strip() == "13", "a shared port: %r %r" % (r.stdout, r.stderr[-300:]))
    check(r.one(op="connect", args_addr="127.0.0.1:%d" % port)["rule"] == "loopback", "rule")


def test_nothing_listening_is_refused_as_the_kernel_would(wd):
    """No listener: ECONNREFUSED (a loop waiting for its server to come
    up goes on), no refusal notice, the record says ask."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]  # bound, not listening: nothing takes a connect
    try:
        r = harness([STATIC, "connect", str(port)], wd, policy=None)
        py = harness([PYTHON, "-c", "import socket\ntry:\n socket.create_connection(('127.0.0.1', %d))"
                      "\nexcept OSError as e: print(e.errno)" % port], wd, policy=None)
    finally:
        s.close()
    check(r.stdout.strip() == "err ECONNREFUSED", "static: %r" % r.stdout)
    check(py.stdout.strip() == "111", "python: %r" % py.stdout)
    for run in (r, py):
        rec = run.one(op="connect", args_addr="127.0.0.1:%d" % port)
        check(rec["verdict"] == "ask" and rec["rule"] == "loopback", rec)
        check("harness: denied" not in run.stderr, "a notice: %r" % run.stderr[-300:])


def test_control_ports_and_metadata_denied(wd):
    """Docker's API port and the cloud metadata address are denied by
    their own rule, before any connect: EACCES at once (an attempted
    connect to 169.254.169.254 would time out or be unreachable here),
    and no ECONNREFUSED for a control port nothing listens on."""
    for argv, addr in (([STATIC, "connect4", "169.254.169.254", "80"], "169.254.169.254:80"),
                       ([STATIC, "connect", "2375"], "127.0.0.1:2375")):
        r = harness(argv, wd, policy=None)
        check(r.stdout.strip() == "err EACCES", "%s: %r" % (addr, r.stdout))
        rec = r.one(op="connect", args_addr=addr)
        check(rec["verdict"] == "deny" and rec["rule"] == "control-ports" and
              rec["layer"] == "kernel", rec)
    code = ("import socket, time\nt = time.monotonic()\n"
            "s = socket.socket(); s.settimeout(5)\n"
            "try:\n s.connect(('169.254.169.254', 80)); print('connected')\n"
            "except OSError as e: print(e.errno, round(time.monotonic() - t, 1))\n")
    r = harness([PYTHON, "-c", code], wd, policy=None)
    check(r.stdout.split()[0] == "13" and float(r.stdout.split()[1]) < 1, "python: %r" % r.stdout)
    check(r.one(op="connect", args_addr="169.254.169.254:80")["rule"] == "control-ports", "rule")


def test_model_endpoint_of_the_environment(wd):
    """The loopback port ANTHROPIC_BASE_URL names (a user's local model
    server or proxy, outside the session) is reached, by address or as
    localhost; another port of the same listener kind is not."""
    model = Listener(range(30000, 31000))
    other = Listener(range(31000, 32000))
    try:
        for url in ("http://127.0.0.1:%d/v1" % model.port, "http://localhost:%d" % model.port):
            r = harness([STATIC, "connect", str(model.port)], wd, policy=None,
                        env={"ANTHROPIC_BASE_URL": url})
            check(r.stdout.strip() == "ok connect", "%s: %r" % (url, r.stdout))
            rec = r.one(op="connect", args_addr="127.0.0.1:%d" % model.port)
            check(rec["verdict"] == "allow" and rec["rule"] == "harness:model-endpoint" and
                  rec.get("pattern") == "ANTHROPIC_BASE_URL", rec)
        r = harness([STATIC, "connect", str(other.port)], wd, policy=None,
                    env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % model.port})
        check(r.stdout.strip() == "err EACCES", "another port: %r" % r.stdout)
    finally:
        model.close()
        other.close()
    check(model.accepted == 2 and other.accepted == 0,
          "accepted %d, %d" % (model.accepted, other.accepted))
