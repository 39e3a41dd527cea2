"""Denied operations fail in the program with the right errno, print the
one-line notice, and are logged with their rule; in audit mode the same
run succeeds and logs the would-be denials."""

import os
import re
import uuid

from lib import ALLOWED_PORTS, DENIED_PORTS, HELPERS, PYTHON, Listener, check, harness

NOTICE = re.compile(r"^harness: denied .+ \(rule [^)]+\)$", re.M)


def notice(r, what):
    check(NOTICE.search(r.stderr), "no denial notice for %s in stderr: %r" % (what, r.stderr))


def outside_path():
    return "/var/tmp/hx-denied-%s" % uuid.uuid4().hex


def test_write_outside_roots(wd):
    target = outside_path()
    r = harness(["sh", "-c", "echo x > %s" % target], wd)
    check(r.status != 0, "write outside the roots succeeded")
    check(not os.path.exists(target), "the file was created")
    check("Permission denied" in r.stderr, "errno is not EACCES: %r" % r.stderr)
    notice(r, "write")
    d = r.one(op="write", args_path=target)
    check(d["verdict"] == "deny" and d["rule"] == "default:file_write" and d["enforced"] is True, "record %r" % d)


def test_read_denied_secret(wd):
    r = harness(["cat", "secret/key"], wd)
    check(r.status != 0 and "TOP-SECRET" not in r.stdout, "secret was read: %r" % r.stdout)
    check("Permission denied" in r.stderr, "errno is not EACCES: %r" % r.stderr)
    notice(r, "read")
    d = r.one(op="read", args_path=os.path.join(wd.path, "secret", "key"))
    check(d["verdict"] == "deny" and d["rule"] == "test-secret", "record %r" % d)


def test_read_denied_secret_through_symlink(wd):
    os.symlink(os.path.join(wd.path, "secret"), os.path.join(wd.path, "innocent"))
    r = harness(["cat", "innocent/key"], wd)
    check("TOP-SECRET" not in r.stdout, "secret read through a symlink")
    d = r.one(op="read", verdict="deny")
    check(d["rule"] == "test-secret", "record %r" % d)


CONNECT = r'''
import errno, socket, sys
s = socket.socket()
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"leak")
    print("connected")
except OSError as e:
    print("errno", errno.errorcode[e.errno])
'''


def test_connect_denied(wd):
    wd.file("c.py", CONNECT)
    lis = Listener(DENIED_PORTS)
    try:
        r = harness([PYTHON, "c.py", str(lis.port)], wd)
    finally:
        lis.close()
    check(r.stdout == "errno EACCES\n", "connect not denied with EACCES: %r" % r.stdout)
    check(lis.accepted == 0 and lis.received == b"", "bytes reached the listener")
    notice(r, "connect")
    d = r.one(op="connect", args_addr="127.0.0.1:%d" % lis.port)
    check(d["verdict"] == "deny" and d["rule"] == "denied-ports", "record %r" % d)


def test_exec_denied(wd):
    p = wd.file("forbidden.sh", "#!/bin/sh\necho RAN\n")
    os.chmod(p, 0o755)
    r = harness(["sh", "-c", "./forbidden.sh; echo status=$?"], wd)
    check("RAN" not in r.stdout, "denied program ran")
    check("status=126" in r.stdout, "shell did not see EACCES: %r" % r.stdout)
    notice(r, "exec")
    d = r.one(op="exec", args_path=p)
    check(d["verdict"] == "deny" and d["rule"] == "forbidden-tool", "record %r" % d)


def test_git_push_denied_status_allowed(wd):
    script = ("git init -q -b main repo && cd repo && git status --short && "
              "git push origin main; echo push=$?")
    r = harness(["sh", "-c", script], wd)
    check("push=126" in r.stdout, "git push was not stopped by the harness: %r" % r.stdout)
    notice(r, "git push")
    st = r.one(op="exec", args_argv0="git", args_argv1="status")
    check(st["verdict"] == "allow", "git status: %r" % st)
    push = r.one(op="exec", args_argv0="git", args_argv1="push")
    check(push["verdict"] == "deny" and push["rule"] == "no-push", "git push: %r" % push)
    check(push["args"]["argv"] == ["git", "push", "origin", "main"], "argv %r" % push["args"]["argv"])


def test_ask_is_denied_with_its_own_verdict(wd):
    os.makedirs(os.path.join(wd.path, "ask"))
    r = harness(["sh", "-c", "echo x > ask/file"], wd)
    check(r.status != 0 and not os.path.exists(os.path.join(wd.path, "ask", "file")), "ask write went through")
    d = r.one(op="write", args_path=os.path.join(wd.path, "ask", "file"))
    check(d["verdict"] == "ask" and d["rule"] == "test-ask", "record %r" % d)


def test_audit_mode_allows_and_logs(wd):
    target = outside_path()
    p = wd.file("forbidden.sh", "#!/bin/sh\necho RAN\n")
    os.chmod(p, 0o755)
    wd.file("c.py", CONNECT)
    lis = Listener(DENIED_PORTS)
    script = "echo x > %s; cat secret/key; ./forbidden.sh; %s c.py %d" % (target, PYTHON, lis.port)
    try:
        r = harness(["sh", "-c", script], wd, mode="audit")
    finally:
        lis.close()
    try:
        r.expect_status(0)
        check(os.path.exists(target), "audit mode blocked the write")
        check("TOP-SECRET" in r.stdout and "RAN" in r.stdout and "connected" in r.stdout,
              "audit mode blocked something: %r" % r.stdout)
        check(lis.accepted == 1, "audit mode blocked the connect")
        check(not NOTICE.search(r.stderr), "audit mode printed a denial: %r" % r.stderr)
        for want in (dict(op="write", args_path=target, rule="default:file_write"),
                     dict(op="read", args_path=os.path.join(wd.path, "secret", "key"), rule="test-secret"),
                     dict(op="exec", args_path=p, rule="forbidden-tool"),
                     dict(op="connect", args_addr="127.0.0.1:%d" % lis.port, rule="denied-ports")):
            d = r.one(**want)
            check(d["verdict"] == "deny" and d["enforced"] is False, "record %r" % d)
    finally:
        if os.path.exists(target):
            os.unlink(target)


CLAIM_POLICY = """version: 1
files:
  - {id: w, access: write, allow: ["$CWD/**", "$TMPDIR/**"]}
network:
  - {id: claimed-host, allow: "claimed:*"}
"""


def test_a_reported_name_maps_nothing_the_supervisor_did_not_see(wd):
    """A shim report that a name is an address must not make a rule by
    that name allow the address (issue 10, class 3)."""
    pol = wd.file("claim.yaml", CLAIM_POLICY)
    lst = Listener(ALLOWED_PORTS)
    try:
        # A client of the session socket reports "claimed is 127.0.0.1"
        # (as a hostile shim could), then connects there.
        r = harness([os.path.join(HELPERS, "static_wire_client"), "claim", "claimed",
                     "127.0.0.1", str(lst.port)], wd, policy=pol)
    finally:
        lst.close()
    check(r.stdout.strip() == "denied 13", "stdout %r %r" % (r.stdout, r.stderr))
    check(lst.accepted == 0, "the listener was reached")
    rec = [x for x in r.events(op="connect") if x["args"].get("addr") == "127.0.0.1:%d" % lst.port]
    check(rec and all(x["verdict"] == "deny" and x["rule"] == "default:net_connect" for x in rec),
          r.dump())


def test_notice_escapes_the_agents_bytes(wd):
    # The supervisor prints kernel-layer refusals on harness-exec's own
    # stderr, the user's terminal, whatever the agent did with its own:
    # a path carrying escape sequences (clear the screen, retitle the
    # window, a fake line after a carriage return) was printed raw.
    esc = "\x1b]0;pwned\x07\x1b[2J\rharness: session ok"
    path = outside_path() + esc
    r = harness(["/usr/bin/busybox", "sh", "-c", 'exec 2>/dev/null; echo x > "$1"',
                 "sh", path], wd)
    check(not os.path.exists(path), "the denied write happened")
    check("\x1b" not in r.stderr and "\x07" not in r.stderr and "\r" not in r.stderr,
          "raw control bytes on the terminal: %r" % r.stderr)
    check("\\x1b]0;pwned\\x07\\x1b[2J\\x0dharness: session ok" in r.stderr,
          "the notice does not show them escaped: %r" % r.stderr)
    notice(r, "a write of an escaped path")
    rec = r.one(op="write", args_path=path)
    check(rec["verdict"] == "deny" and rec["layer"] == "kernel", r.dump())


def test_a_refused_rename_names_both_paths(wd):
    # The notice of a refused rename or link named its first path only
    # ("denied rename PROJECT/a" when the refused side was the other):
    # now both, from the shim (python) and from the kernel layer (a
    # static busybox, whose notice harness-exec prints).
    src = wd.file("a", "x\n")
    dst = outside_path()
    for cmd in ([PYTHON, "-c", "import os, sys\ntry: os.rename(sys.argv[1], sys.argv[2])\nexcept OSError: pass",
                 src, dst],
                ["/usr/bin/busybox", "sh", "-c", 'exec 2>/dev/null; mv "$1" "$2"', "sh", src, dst]):
        r = harness(cmd, wd)
        check(os.path.exists(src) and not os.path.exists(dst), "the rename happened: %r" % cmd)
        check("harness: denied rename %s -> %s (rule " % (src, dst) in r.stderr,
              "the notice does not name both paths: %r" % r.stderr)
