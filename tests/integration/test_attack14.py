"""The fourteenth attack review: where the kernel layer acts for the
agent and what it does is seen, by a service or by the log, as done by
another process than the agent's. Each hole tried as the attacker
would, from inside the default policy, with a static program (raw
system calls), as root and as an ordinary user, and checked for its
effect and its record."""

import os

from lib import EXEC, HELPERS, check, harness

PROBE = os.path.join(HELPERS, "static_attack14")


def test_a_request_sent_through_the_kernel_layer_is_not_the_harness_s(wd):
    """The session socket's server names each message's sender by the
    kernel's per-message credentials (SCM_CREDENTIALS), so that a forked
    child sharing its parent's connection is named as itself. A sendmsg
    is emulated by the kernel layer, and a unix socket's by its
    connector, a process of harness-exec's: a static program's request
    sent by sendmsg on its connection was recorded as that process's
    (its pid, ppid harness-exec, exe harness-exec, and a process_exit of
    it at the end), the agent itself nowhere in the log. Now an emulated
    send to a socket whose peer is harness-exec itself is refused, and
    the record names the agent (harness:protect, as a send to the session
    socket by its path now is too)."""
    target = os.path.join(wd.path, ".git", "hooks", "pre-commit")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    r = harness([PROBE, "wire-sendmsg", target], wd, policy=None)
    out = r.stdout.strip()
    print("# %s" % out)
    check(out.startswith("pid "), "probe: %r %r" % (out, r.stderr[-400:]))
    me = int(out.split()[1])
    session = [x for x in r.records if x.get("event") == "session_start"]
    sup = session[0]["pid"] if session else None
    for rec in r.records:
        if rec.get("event") in ("session_start", "session_end", "execvp"):
            continue
        if rec.get("pid") is None:
            continue
        check(rec.get("ppid") != sup or rec.get("pid") == me,
              "a record names a process of harness-exec's, not the agent: %r" % rec)
        check(rec.get("exe") != EXEC, "a record names harness-exec as the actor: %r" % rec)
    check(" send EACCES" in out, "the emulated send reached the session's server: %r" % out)
    rec = r.one(event="sendmsg")
    check(rec["pid"] == me and rec["verdict"] == "deny"
          and rec["rule"] == "harness:protect" and rec["layer"] == "kernel", rec)


def _tcp_peer_outside():
    """A TCP connection of this process's, outside the session, to a
    loopback address of its own: the kernel keeps its metrics (the peer
    address) after it closes. Returns that address."""
    import random
    import socket
    ip = "127.%d.%d.%d" % (random.randint(1, 254), random.randint(1, 254),
                           random.randint(2, 254))
    srv = socket.socket()
    srv.bind((ip, 0))
    srv.listen(1)
    c = socket.create_connection((ip, srv.getsockname()[1]))
    a, _ = srv.accept()
    for _ in range(20):
        c.sendall(b"x" * 1000)
        a.recv(2000)
        a.sendall(b"y")
        c.recv(10)
    c.close()
    a.close()
    srv.close()
    return ip


def test_netlink_protocols_the_policy_refuses_are_refused_without_an_address(wd):
    """A netlink message to the kernel is decided by its address (only
    NETLINK_ROUTE's allowed: sock_diag lists the host's sockets, generic
    netlink reaches every kernel family), but a send without an address
    (write, send) is not notified: a static program asked generic
    netlink's tcp_metrics by write(2) for the peers of this machine's
    TCP connections, any process's, outside the session too (the
    addresses the user's programs talked to). Now the making of a netlink
    socket of a protocol other than route's (and uevent's, which takes
    nothing from a process) is decided as the send to the kernel every
    such send is, refused (harness:netlink-protocol) and recorded."""
    ip = _tcp_peer_outside()
    r = harness([PROBE, "tcp-metrics"], wd, policy=None)
    out = r.stdout.strip()
    print("# %s" % out.splitlines()[-1] if out else "# (nothing)")
    check(("peer %s" % ip) not in out,
          "the agent read the host's TCP peers (one made outside the session: %s): %r"
          % (ip, out[-400:]))
    check(out == "socket EACCES", "probe: %r %r" % (out[-400:], r.stderr[-400:]))
    rec = r.one(event="socket")
    check(rec["verdict"] == "deny" and rec["rule"] == "harness:netlink-protocol"
          and rec["layer"] == "kernel" and rec["args"].get("family") == "netlink"
          and rec["args"].get("protocol") == "generic", rec)
