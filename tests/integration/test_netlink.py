"""Netlink and the other families the policy has no patterns for: a
route query to the kernel (getifaddrs, if_nameindex, `ip addr`, Node's
os.networkInterfaces()) is allowed and logged as net_send of family
netlink; a message to another process, a multicast, another netlink
protocol or an unknown family is denied by name, never "malformed"."""

import os
import shutil
import socket

from lib import BUILD, PYTHON, Listener, check, harness

STATIC = os.path.join(BUILD, "helpers", "static_errno")


def _route_sends(r):
    return [x for x in r.events(op="send") if x["args"].get("family") == "netlink"]


def test_netlink_route_query_from_real_programs(wd):
    node = shutil.which("node")
    ip = shutil.which("ip")
    cmds = [[PYTHON, "-c", "import socket; print(len(socket.if_nameindex()) > 0)"]]
    if node:
        cmds.append([node, "-e", "console.log(Object.keys(require('os').networkInterfaces()).includes('lo'))"])
    if ip:
        cmds.append([ip, "-o", "addr"])
    for cmd in cmds:
        r = harness(cmd, wd)
        r.expect_status(0)
        if cmd[0] == ip:
            check(" lo " in r.stdout, "ip -o addr: %r" % r.stdout)
        else:
            check(r.stdout.strip() == "True" if cmd[0] == PYTHON else r.stdout.strip() == "true",
                  "%s: %r %r" % (cmd[0], r.stdout, r.stderr[-300:]))
        sends = _route_sends(r)
        # iproute2 binds and send()s without an address (to the kernel,
        # not notified); glibc's getifaddrs/if_nameindex sendto nl_pid 0.
        check(sends or cmd[0] == ip, "%s: no netlink send record\n%s" % (cmd[0], r.dump()))
        for s in sends:
            check(s["verdict"] == "allow" and s["rule"] == "harness:netlink-route" and
                  s["category"] == "net_send" and s["args"]["protocol"] == "route" and
                  s["args"]["addr"] == "netlink:0" and not s.get("shim_bypass"),
                  "%s: %r" % (cmd[0], s))
        r.none(rule="harness:malformed")


# A socket of a refused protocol is refused when it is made (its sends
# without an address are never notified: test_attack14), with the
# errno of a kernel without it, and the same record.
ROWS = [  # (argv, answer, rule)
    (["netlink", "route", "0"], None, "harness:netlink-route"),
    (["netlink", "route", "1"], "EACCES", "harness:netlink-peer"),
    (["netlink", "generic", "0"], "EPROTONOSUPPORT", "harness:netlink-protocol"),
    (["netlink", "diag", "0"], "EPROTONOSUPPORT", "harness:netlink-protocol"),
    (["netlink", "audit", "0"], "EPROTONOSUPPORT", "harness:netlink-protocol"),
]


def test_netlink_decisions_static(wd):
    argv = [STATIC]
    for a, _, _ in ROWS:
        argv += a + [","]
    r = harness(argv[:-1], wd)
    got = r.stdout.split("\n")[:-1]
    check(len(got) == len(ROWS), "answers %r %r" % (r.stdout, r.stderr[-300:]))
    for (a, want, rule), g in zip(ROWS, got):
        if want is None:
            check(g.startswith("OK ") and int(g[3:]) > 0, "%s: %r" % (a, g))
        else:
            check(g == want, "%s: %r, want %s" % (a, g, want))
        proto = {"diag": "sock_diag"}.get(a[1], a[1])
        rec = [x for x in r.events(op="send", rule=rule) if x["args"].get("protocol") == proto]
        check(rec and rec[0]["args"]["family"] == "netlink", "%s: no record\n%s" % (a, r.dump()))
    r.none(rule="harness:malformed")


def test_other_family_denied_by_name(wd):
    """An address of a family no rule names is denied as such: AF_UNSPEC
    on a UDP socket, which the kernel would send to as IPv4."""
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    u.settimeout(0.3)
    port = u.getsockname()[1]
    try:
        r = harness([STATIC, "sendto", "unspec:%d" % port], wd)
        try:
            got = u.recv(16)
        except socket.timeout:
            got = None
    finally:
        u.close()
    check(r.stdout == "EACCES\n" and got is None, "%r %r" % (r.stdout, got))
    d = r.one(op="send", rule="harness:family")
    check(d["args"]["family"] == "unspec" and d["verdict"] == "deny", d)
    r.none(rule="harness:malformed")


def test_unix_datagram_to_a_logger_socket_is_a_path(wd):
    """syslog's /dev/log is a unix datagram path: decided as a path, its
    symlink resolved (here a project socket behind a link named log)."""
    sock = os.path.join(wd.path, "dev-log")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sock)
    os.symlink("dev-log", os.path.join(wd.path, "log"))
    code = ("import logging, logging.handlers\n"
            "h = logging.handlers.SysLogHandler(address='log')\n"
            "logging.getLogger().addHandler(h)\n"
            "logging.getLogger().error('hello syslog')\n")
    try:
        r = harness([PYTHON, "-c", code], wd)
        s.settimeout(5)
        data = s.recv(4096)
    finally:
        s.close()
    r.expect_status(0)
    check(b"hello syslog" in data, repr(data))
    c = r.one(op="connect", args_addr="unix:" + os.path.join(wd.path, "log"))
    check(c["verdict"] == "allow" and c["args"]["addr_resolved"] == sock, c)
