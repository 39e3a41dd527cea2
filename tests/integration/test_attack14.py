"""The fourteenth attack review: where the kernel layer acts for the
agent and what it does is seen, by a service or by the log, as done by
another process than the agent's. Each hole tried as the attacker
would, from inside the default policy, with a static program (raw
system calls), as root and as an ordinary user, and checked for its
effect and its record."""

import os

from lib import EXEC, HELPERS, check, harness, read_log

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


def test_a_send_to_the_agents_own_server_is_not_refused_as_the_harness_s(wd):
    """What the refusal above must not take: a client of a unix server
    the agent runs has harness-exec's pid for its peer too (the
    server's listen is made by the kernel layer's worker), so a sendmsg
    to it was refused as one to the session's server by the first form
    of the check; the session's connection is a socketpair, whose peer
    has no name."""
    r = harness([PROBE, "own-server", "own.sock"], wd, policy=None)
    out = r.stdout.strip()
    print("# %s" % out)
    check(out == "sent 5 got 5", "the agent's own server: %r %r" % (out, r.stderr[-300:]))
    r.none(rule="harness:protect")


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
    such send is, refused (harness:netlink-protocol) and recorded, with
    EPROTONOSUPPORT (a kernel without it: libaudit's callers go on)."""
    ip = _tcp_peer_outside()
    r = harness([PROBE, "tcp-metrics"], wd, policy=None)
    out = r.stdout.strip()
    print("# %s" % out.splitlines()[-1] if out else "# (nothing)")
    check(("peer %s" % ip) not in out,
          "the agent read the host's TCP peers (one made outside the session: %s): %r"
          % (ip, out[-400:]))
    check(out == "socket EPROTONOSUPPORT", "probe: %r %r" % (out[-400:], r.stderr[-400:]))
    rec = r.one(event="socket")
    check(rec["verdict"] == "deny" and rec["rule"] == "harness:netlink-protocol"
          and rec["layer"] == "kernel" and rec["args"].get("family") == "netlink"
          and rec["args"].get("protocol") == "generic", rec)


FILL = r"""
import os
f = open("fill", "wb")
try:
    while True:
        f.write(b"\0" * 65536)
        f.flush()
except OSError as e:
    print("full", e.errno)
n = 0
try:
    while n < 100000:
        open("i%d" % n, "w").close()
        n += 1
except OSError as e:
    print("files", n, e.errno)
"""


def test_a_full_disk_leaves_the_session_its_anchor(wd):
    """A session's anchor (its last record's seq and hash, in its
    session directory) is what tells a log cut or rewritten afterwards
    (an --audit-log in the project, the next session's agent's to
    write) from the real one. It was made at the end, a new file
    renamed into place: an agent that filled the file system of its
    state directory (the same one as its write roots, most often) before
    it exited left its session without one, and then `harness-audit
    verify` took the log cut after any record for intact (a warning:
    "has no anchor"). Now the anchor's file and room are taken when the
    session starts and written in place at the end."""
    import shutil
    import subprocess
    from lib import AUDIT_TOOL, EXEC, PYTHON, Skip
    if os.getuid() != 0:
        raise Skip("mounting a small tmpfs needs root")
    mnt = os.path.join(wd.path, "small")
    os.makedirs(mnt)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt], check=True)
    try:
        proj = os.path.join(mnt, "proj")
        state = os.path.join(mnt, "state")
        os.makedirs(proj)
        os.makedirs(state)
        log = os.path.join(proj, "audit.jsonl")
        env = dict(os.environ, XDG_STATE_HOME=state)
        env.pop("LD_PRELOAD", None)
        env.pop("HARNESS_SOCKET", None)
        p = subprocess.run([EXEC, "--quiet", "--audit-log", log, "--", PYTHON, "-c", FILL],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120)
        print("# %s | %s" % (p.stdout.strip().replace("\n", "; "), p.returncode))
        check(p.stdout.startswith("full 28"), "the disk was not filled: %r %r"
              % (p.stdout, p.stderr[-400:]))
        sessions = os.listdir(os.path.join(state, "harness", "sessions"))
        check(len(sessions) == 1, sessions)
        sid = sessions[0]
        anchor = os.path.join(state, "harness", "sessions", sid, "anchor")
        check(os.path.exists(anchor), "no anchor after a full disk: %r" % p.stderr[-400:])
        recs = read_log(log)
        seq, hx = open(anchor).read().split()
        check(int(seq) == recs[-1]["seq"] and hx == recs[-1]["hash"],
              "the anchor is not the last record: %s %s / %r" % (seq, hx, recs[-1]))
        # The log cut after its tenth record, as a later session's agent
        # could: the chain is intact, the anchor tells.
        for f in os.listdir(proj):
            if f != "audit.jsonl":
                path = os.path.join(proj, f)
                shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
        with open(log, "rb") as f:
            lines = f.readlines()
        with open(log, "wb") as f:
            f.writelines(lines[:10])
        v = subprocess.run([AUDIT_TOOL, "verify", log], env=env, capture_output=True,
                           text=True)
        print("# verify: %s %s" % (v.returncode, (v.stdout + v.stderr).strip()[-200:]))
        check(v.returncode == 1, "a cut log verified: %r %r" % (v.stdout, v.stderr))
    finally:
        subprocess.run(["umount", mnt])


def test_a_root_agent_reads_no_vpn_key(wd):
    """A root agent has no capability, but root owns the machine's
    secrets, so their mode (0600 root) lets it read them: the default's
    system-secrets names the password hashes, host keys, TLS keys, Wi-Fi
    and VPN secrets it must not read. WireGuard's configuration (its
    private key) was not among them, nor OpenVPN's, netplan's (Wi-Fi
    passwords), iwd's, RHEL's TLS keys, systemd's credentials,
    Tailscale's node key, cloud-init's user data or k3s's server token:
    a static program read /etc/wireguard/wg0.conf. Each is named now
    (the class, a file only root may read by its mode, is left open:
    README)."""
    from lib import Skip
    if os.getuid() != 0:
        raise Skip("a root agent's: /etc is root's")
    made = not os.path.exists("/etc/wireguard")
    os.makedirs("/etc/wireguard", mode=0o700, exist_ok=True)
    conf = "/etc/wireguard/hx-attack14.conf"
    try:
        with open(conf, "w") as f:
            f.write("[Interface]\nPrivateKey = hx-attack14-not-a-key\n")
        os.chmod(conf, 0o600)
        r = harness([PROBE, "read", conf], wd, policy=None)
        out = r.stdout.strip()
        print("# %s" % out)
        check(out == "%s EACCES" % conf, "the VPN's key was read: %r %r"
              % (out, r.stderr[-300:]))
        rec = [x for x in r.records if x.get("rule") == "system-secrets"]
        check(rec and rec[0]["verdict"] == "deny", "no refusal record:\n%s" % r.dump())
    finally:
        os.unlink(conf) if os.path.exists(conf) else None
        if made:
            os.rmdir("/etc/wireguard")


def _forge_compacted(path):
    """What a later session's agent can write over a log in the project:
    one "compacted" record continuing the chain where the real one
    ended (its prev the last record's hash, which the log shows), with
    counts of its choosing."""
    import hashlib
    import json
    with open(path, "rb") as f:
        recs = [json.loads(l) for l in f.read().splitlines()]
    last = recs[-1]
    rec = {"time": last["time"], "seq": last["seq"] + 1, "session": last["session"],
           "event": "compacted", "category": "process",
           "summary": {"denied": 0}, "prev": last["hash"]}
    body = json.dumps(rec, separators=(",", ":"))
    h = hashlib.sha256((body[:-1] + "}").encode()).hexdigest()
    with open(path, "wb") as f:
        f.write((body[:-1] + ',"hash":"%s"}\n' % h).encode())
    return len(recs)


def test_a_log_replaced_by_a_forged_compaction_does_not_verify(wd):
    """harness-audit compact replaces an old session's log in the state
    directory by one record that continues its chain, and the anchor
    check takes a compacted record whose prev is the anchor's hash for
    the session's records. A log elsewhere (an --audit-log in the
    project, the next session's agent's to write) is never compacted,
    but the check took such a record there too: the whole log of a
    session that was refused a read of /etc/shadow, replaced by one
    made-up "compacted" record (its prev read from the log itself),
    verified "ok", anchor and all, and summary said 0 denied. Now a
    compacted record vouches for its session only in the session's own
    log in the state directory."""
    import subprocess
    from lib import AUDIT_TOOL
    log = os.path.join(wd.path, "audit.jsonl")
    r = harness([PROBE, "read", "/etc/shadow"], wd, policy=None, log=log)
    check(r.stdout.strip() == "/etc/shadow EACCES", r.stdout)
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    v = subprocess.run([AUDIT_TOOL, "verify", log], env=env, capture_output=True, text=True)
    check(v.returncode == 0, "the real log: %r %r" % (v.stdout, v.stderr))
    n = _forge_compacted(log)
    v = subprocess.run([AUDIT_TOOL, "verify", log], env=env, capture_output=True, text=True)
    print("# %d records -> 1 forged: verify %d %s" % (n, v.returncode,
                                                    (v.stdout + v.stderr).strip()[-160:]))
    check(v.returncode == 1, "a forged compaction verified: %r %r" % (v.stdout, v.stderr))


def _append_spelled(path, target, spelling):
    """Appends to a finished session's log a record of that session (its
    last record's seq + 1 and hash) allowing, unenforced, a write of
    target, as the eleventh review's attack did, in a spelling the
    chain's JSON reader takes and another reader may not: a space after
    the brace, or a member name with an escape."""
    import hashlib
    import json
    with open(path, "rb") as f:
        recs = [json.loads(l) for l in f.read().splitlines()]
    tmpl = next(r for r in recs if r.get("event") == "open")
    last = recs[-1]
    rec = dict(tmpl)
    rec.pop("hash", None)
    rec.pop("pattern", None)
    rec.update(seq=last["seq"] + 1, prev=last["hash"], verdict="deny", enforced=False,
               rule="default:file_write",
               args={"path": target, "flags": "O_WRONLY|O_APPEND", "mode": "0600"})
    body = json.dumps(rec, separators=(",", ":"))
    if spelling == "space":
        body = "{ " + body[1:]
    else:  # the session's name spelled with an escape, last (the one read)
        body = body[:-1] + ',"sess\\u0069on":"%s"}' % rec["session"]
        body = body.replace('"session":"%s"' % rec["session"], '"session":"x"', 1)
    h = hashlib.sha256((body[:-1] + "}").encode()).hexdigest()
    with open(path, "ab") as f:
        f.write((body[:-1] + ',"hash":"%s"}\n' % h).encode())


def test_a_record_appended_in_another_spelling_does_not_verify(wd):
    """The eleventh review's attack on learn (a record added to an audit
    run's log in the project afterwards, "allowed, not enforced: write
    ~/.ssh/authorized_keys") is held by the session's anchor: no record
    of the session may follow its last. The anchor check read each line
    with a scanner of its own, which skips a line it does not follow and
    matches member names as bytes, where the chain's check and every
    tool read JSON: a record appended with a space after its brace, or
    with its session named by "sess\\u0069on", verified "ok", and
    harness-policy learn allowed $HOME/.ssh/**. Now the anchor check
    reads each record as the chain's check does."""
    import subprocess
    from lib import AUDIT_TOOL, POLICY_TOOL
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    target = os.path.join(os.path.expanduser("~"), ".ssh", "authorized_keys")
    for spelling in ("space", "escape"):
        log = os.path.join(wd.path, "audit-%s.jsonl" % spelling)
        r = harness(["/bin/sh", "-c", "echo hi > out.txt"], wd, policy=None, mode="audit",
                    log=log)
        r.expect_status(0)
        _append_spelled(log, target, spelling)
        v = subprocess.run([AUDIT_TOOL, "verify", log], env=env, capture_output=True,
                           text=True)
        learned = subprocess.run([POLICY_TOOL, "learn", log], env=env, capture_output=True,
                                 text=True)
        print("# %s: verify %d; learn %d%s" % (spelling, v.returncode, learned.returncode,
              ", .ssh learned" if ".ssh" in learned.stdout else ""))
        check(v.returncode == 1, "%s: a record appended after the anchor verified: %r %r"
              % (spelling, v.stdout, v.stderr))
        check(".ssh" not in learned.stdout, "%s: learn took the appended record: %r"
              % (spelling, learned.stdout[-400:]))
