"""The Landlock backstop (docs/landlock.md): programs that never load the
shim (a static busybox, tests/helpers/static_ll_probe.c) run under the
real harness-exec, and the kernel alone must refuse what the policy
denies. policies/landlock.yaml keeps the fake secret outside every write
root, so its read deny is the kernel's; with test.yaml the secret is
inside the write root $CWD and is held by the shim only (a documented
limit), so the tests that need a kernel read deny use landlock.yaml."""

import ctypes
import os
import socket
import uuid

from lib import (ALLOWED_PORTS, AUDIT_TOOL, DENIED_PORTS, HELPERS, POLICIES,
                 Listener, check, harness, tool)

BUSYBOX = "/bin/busybox"
PROBE = os.path.join(HELPERS, "static_ll_probe")
LL_POLICY = "landlock.yaml"


def landlock_abi():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    v = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint(1))
    return v if v > 0 else 0


def static_busybox():
    """The busybox must be static, or the shim would see it and these
    tests would prove nothing about the kernel."""
    with open(BUSYBOX, "rb") as f:
        elf = f.read(1 << 16)
    check(elf[:4] == b"\x7fELF", "%s is not ELF" % BUSYBOX)
    check(b"/ld-linux" not in elf and b"ld-musl" not in elf,
          "%s has an ELF interpreter: not static (install busybox-static)" % BUSYBOX)
    return BUSYBOX


def needs(abi):
    """False (test passes vacuously, said on stdout) on a kernel too old:
    the harness announces that itself (--doctor)."""
    have = landlock_abi()
    if have < abi:
        print("# skipped: Landlock ABI %d < %d" % (have, abi))
        return False
    return True


def ll_workdir(wd):
    """The layout landlock.yaml expects: $CWD/work writable, $CWD/secret,
    $CWD/cred.txt and $CWD/keys/*.pem denied, $CWD/file readable."""
    os.makedirs(os.path.join(wd.path, "work"), exist_ok=True)
    wd.file("file", "PUBLIC\n")
    wd.file("cred.txt", "CRED-SECRET\n")
    wd.file("keys/a.pem", "PEM-SECRET\n")
    wd.file("keys/a.pub", "PUBKEY\n")


def bb(wd, script, policy=LL_POLICY, **kw):
    return harness([static_busybox(), "sh", "-c", script], wd, policy=policy, **kw)


def test_landlock_static_read_denied(wd):
    if not needs(1):
        return
    ll_workdir(wd)
    r = bb(wd, "cat secret/key; cat cred.txt; cat keys/a.pem; "
               "echo ==; cat file; cat keys/a.pub; ls secret")
    for secret in ("TOP-SECRET", "CRED-SECRET", "PEM-SECRET"):
        check(secret not in r.stdout, "%s read by a static program: %r" % (secret, r.stdout))
    check(r.stderr.count("Permission denied") >= 3, "not refused with EACCES: %r" % r.stderr)
    # What the policy allows still works. The denied directory lies in
    # the write root $CWD, so it is masked (masks.h): not even its names
    # are listed.
    check("PUBLIC\n" in r.stdout and "PUBKEY\n" in r.stdout, "allowed reads failed: %r" % r.stdout)
    check(not r.stdout.rstrip().endswith("key"), "the masked dir was listed: %r" % r.stdout)


def test_landlock_static_read_tricks(wd):
    if not needs(1):
        return
    ll_workdir(wd)
    os.symlink(os.path.join(wd.path, "secret"), os.path.join(wd.path, "innocent"))
    script = ("cat innocent/key; cat /proc/self/root%s/secret/key; "
              "cat /proc/self/cwd/secret/key; cat secret/../secret/key; "
              "ln -s %s/secret work/inner && cat work/inner/key; "
              "cd /proc/self/cwd && cat ./secret/key") % (wd.path, wd.path)
    r = bb(wd, script)
    check("TOP-SECRET" not in r.stdout, "secret read through a path trick: %r" % r.stdout)
    check(r.stderr.count("Permission denied") >= 6, "not every trick refused: %r" % r.stderr)


def test_landlock_static_link_and_rename_denied(wd):
    if not needs(2):
        return
    ll_workdir(wd)
    stolen = os.path.join(wd.path, "work", "stolen")
    moved = os.path.join(wd.path, "work", "x")
    r = bb(wd, "ln secret/key work/stolen; echo ln=$?; mv secret/key work/x; echo mv=$?; "
               "cp secret/key work/copy; echo cp=$?")
    check("ln=0" not in r.stdout and "mv=0" not in r.stdout and "cp=0" not in r.stdout,
          "a link, rename or copy of the secret succeeded: %r %r" % (r.stdout, r.stderr))
    check(not os.path.exists(stolen) and not os.path.exists(moved), "the secret got a new name")
    check(open(os.path.join(wd.path, "secret", "key")).read() == "TOP-SECRET\n", "the secret moved")
    copy = os.path.join(wd.path, "work", "copy")
    check(not os.path.exists(copy) or "TOP-SECRET" not in open(copy).read(), "the secret was copied")


def test_landlock_static_writes_bounded(wd):
    if not needs(1):
        return
    target = "/var/tmp/hx-ll-%s" % uuid.uuid4().hex
    try:
        wd.file("file", "PUBLIC\n")
        r = bb(wd, "echo x > %s; echo w=$?; echo out > out; cat out; cat file; "
                   "echo t > $TMPDIR/t && cat $TMPDIR/t" % target, policy="test.yaml")
        check(not os.path.exists(target), "a static program wrote outside the write roots")
        check("w=0" not in r.stdout, "the write outside the roots reported success: %r" % r.stdout)
        check("out\nPUBLIC\nt\n" in r.stdout, "allowed reads and writes failed: %r %r" % (r.stdout, r.stderr))
        check(open(os.path.join(wd.path, "out")).read() == "out\n", "$CWD/out not written")
    finally:
        if os.path.exists(target):
            os.unlink(target)


def test_landlock_protects_harness_files(wd):
    """The audit log, the policy file and the session directory: not
    readable or writable by a static program (invariant 5)."""
    if not needs(1):
        return
    log = os.path.join(wd.state, "ll-audit.jsonl")
    policy = os.path.join(POLICIES, "test.yaml")
    # Subshells: a failed redirection on ':' ends a POSIX shell.
    r = bb(wd, "cat %s; (echo forged >> %s); (: > %s); cat %s; "
               "ls $(dirname $HARNESS_SOCKET) >/dev/null && echo listed; "
               "cat $(dirname $HARNESS_SOCKET)/* 2>&1 | head -c 300"
           % (log, log, log, policy), policy="test.yaml", log=log)
    check("session_start" not in r.stdout, "the audit log was read: %r" % r.stdout[:300])
    check("test-secret" not in r.stdout, "the policy file was read: %r" % r.stdout[:300])
    check("listed" in r.stdout, "the session dir could not be listed: %r" % r.stderr)
    v = tool([AUDIT_TOOL, "verify", log])
    check(v.returncode == 0, "audit chain broken after the attempts: %s %s" % (v.stdout, v.stderr))
    check(r.records and r.records[0]["event"] == "session_start", "log lost its start")
    check(r.records[-1]["event"] == "session_end", "log lost its end")


def test_landlock_signal_scope(wd):
    if not needs(6):
        return
    r = harness([PROBE, "signal-parent"], wd, timeout=30)
    r.expect_status(0)
    lines = r.stdout.splitlines()
    check("comm harness-exec" in lines, "the probe's parent is not harness-exec: %r" % lines)
    check("SIGSTOP EPERM" in lines, "SIGSTOP reached harness-exec: %r" % lines)
    check("SIGKILL EPERM" in lines, "SIGKILL reached harness-exec: %r" % lines)
    # Controls: signals inside the sandbox still work.
    check("self ok" in lines and "child ok" in lines, "signals inside the sandbox broke: %r" % lines)
    check(r.records[-1]["event"] == "session_end", "harness-exec did not finish its log")


def test_landlock_abstract_unix_scope(wd):
    if not needs(6):
        return
    name = "hx-ll-%s" % uuid.uuid4().hex
    lis = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lis.bind("\0" + name)
    lis.listen(4)
    lis.setblocking(False)
    try:
        r = harness([PROBE, "abstract", name], wd)
        try:
            c, _ = lis.accept()
            c.close()
            reached = True
        except BlockingIOError:
            reached = False
    finally:
        lis.close()
    check(r.stdout == "connect EPERM\n", "abstract socket outside the sandbox reached: %r" % r.stdout)
    check(not reached, "a connection reached the outside listener")
    self_ = harness([PROBE, "abstract-self"], wd)
    check(self_.stdout == "self-connect ok\n", "abstract sockets inside the sandbox broke: %r" % self_.stdout)


def test_landlock_tcp_ports(wd):
    """test.yaml allows TCP only to 20000-20999: a bounded set, so the
    kernel refuses other ports, whatever the host."""
    if not needs(4):
        return
    denied = Listener(DENIED_PORTS)
    allowed = Listener(ALLOWED_PORTS)
    try:
        r = harness(["sh", "-c", "%s tcp %d; %s tcp %d" % (PROBE, denied.port, PROBE, allowed.port)], wd)
    finally:
        denied.close()
        allowed.close()
    check(r.stdout == "tcp EACCES\ntcp ok\n", "ports not bounded by the kernel: %r" % r.stdout)
    check(denied.accepted == 0 and denied.received == b"", "bytes reached the denied port")
    check(allowed.accepted == 1, "the allowed port was not reached")
