"""Landlock's refusals as audit records (issue 10, class 10;
supervisor/kaudit.h). A static program (busybox) reads a file the
policy denies outside the project: Landlock alone refuses it (no shim,
no mask), and as root the supervisor turns the kernel's audit record of
that refusal into a record of the session's log. Records of other
Landlock domains on the machine (a process outside the session, another
session) must not be logged into this session."""

import ctypes
import fcntl
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time

from lib import EXEC, PYTHON, Skip, alone, check, harness, read_log

BUSYBOX = "/bin/busybox"
LOCK = "/run/harness-kernel-audit.lock"

POLICY = """version: 1
mode: enforce
defaults: {exec: allow, file_read: allow, file_write: deny,
           net_connect: deny, net_send: deny, net_resolve: allow}
files:
  - id: project
    access: write
    allow: ["$CWD/**", "$TMPDIR/**", "/dev/null", "/dev/tty", "/dev/pts/**"]
  - id: test-ssh
    deny: ["%s/**"]
"""

# A process outside every session that restricts itself with Landlock
# (no read allowed, its own denials logged as long as it does not
# exec) and is refused the same secret.
OUTSIDER = r"""
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
attr = ctypes.create_string_buffer(struct.pack("=QQQ", 1 << 2, 0, 0))
fd = libc.syscall(444, attr, ctypes.c_size_t(24), ctypes.c_uint(0))
assert fd >= 0, ctypes.get_errno()
libc.prctl(38, 1, 0, 0, 0)
assert libc.syscall(446, ctypes.c_int(fd), ctypes.c_uint(0)) == 0
for _ in range(3):
    try:
        open(sys.argv[1]).read()
        print("READ")
    except PermissionError:
        print("denied", os.getpid())
"""


def landlock_abi():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    v = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint(1))
    return v if v > 0 else 0


def audit_enabled():
    """Kernel audit's state (AUDIT_GET), or None when it cannot be asked."""
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9)
        s.bind((0, 0))
        s.send(struct.pack("=IHHII", 16, 1000, 1, 1, 0))
        s.settimeout(1)
        d = s.recv(8192)
        s.close()
    except OSError:
        return None
    if struct.unpack("=H", d[4:6])[0] != 1000:
        return None
    return struct.unpack("=I", d[20:24])[0]


def audit_before():
    """Kernel audit's state before a test's sessions (root only)."""
    needs_root()
    # Another harness session (a second suite on this machine; this
    # suite's others are kept out: alone) holds kernel audit on while
    # it runs: "before" is then not the machine's.
    with open(LOCK, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise Skip("another harness session holds kernel audit")
        before = audit_enabled()
    if before is None:
        raise Skip("AUDIT_GET refused")
    return before


def audit_after(before, held):
    """Kernel audit as it was before, once no session holds the lock
    (held: what to raise when one does)."""
    with open(LOCK, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise held
        check(audit_enabled() == before, "kernel audit %r after the sessions, %r before"
              % (audit_enabled(), before))


def needs_root():
    if os.geteuid() != 0:
        raise Skip("reading the kernel's audit records needs CAP_AUDIT_READ (root)")
    if landlock_abi() < 7:
        raise Skip("Landlock ABI %d < 7: no audit records" % landlock_abi())


class Secret:
    """A denied directory outside the project (so neither masked nor
    inside a write root: Landlock's alone), readable by mode."""

    def __init__(self, wd):
        self.dir = tempfile.mkdtemp(prefix="hx-kaudit-")
        os.chmod(self.dir, 0o755)
        self.path = os.path.join(self.dir, "id_rsa")
        with open(self.path, "w") as f:
            f.write("KAUDIT-SECRET\n")
        os.chmod(self.path, 0o644)
        self.policy = os.path.join(wd.state, "kaudit-%d.yaml" % len(os.listdir(wd.state)))
        with open(self.policy, "w") as f:
            f.write(POLICY % self.dir)

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def landlock_records(records):
    return [r for r in records if r.get("layer") == "landlock"]


def test_kaudit_static_read_recorded(wd):
    needs_root()
    s = Secret(wd)
    try:
        r = harness([BUSYBOX, "sh", "-c", "cat %s; echo rc=$?" % s.path], wd, policy=s.policy)
        check("KAUDIT-SECRET" not in r.stdout, "the secret was read: %r" % r.stdout)
        check("rc=1" in r.stdout and "Permission denied" in r.stderr,
              "not refused with EACCES: %r %r" % (r.stdout, r.stderr))
        start = r.one(event="session_start")
        la = start["kernel"].get("landlock_audit", {})
        check(la.get("recorded") is True, "session_start says no records: %r" % la)
        recs = landlock_records(r.records)
        check(len(recs) == 1, "want one landlock record, got %d:\n%s" % (len(recs), r.dump()))
        rec = recs[0]
        want = {"event": "openat", "op": "read", "category": "file_read", "verdict": "deny",
                "enforced": True, "rule": "test-ssh", "layer": "landlock"}
        for k, v in want.items():
            check(rec.get(k) == v, "record %s=%r, want %r: %r" % (k, rec.get(k), v, rec))
        check(rec["args"].get("path") == s.path, "path %r" % rec["args"])
        check(rec["args"].get("access") == ["fs.read_file"], "access %r" % rec["args"])
        check(rec["args"].get("result") == -13, "result %r" % rec["args"])
        check(rec.get("exe") == os.path.realpath(BUSYBOX), "exe %r" % rec.get("exe"))
        check(isinstance(rec.get("pid"), int) and rec["pid"] > 0, "pid %r" % rec.get("pid"))
        check(rec.get("seq", 0) > start["seq"], "no seq: %r" % rec)
        check("harness: denied read %s (rule test-ssh" % s.path in r.stderr,
              "no notice on stderr: %r" % r.stderr)
        end = r.one(event="session_end")
        check(end["verdicts"]["deny"] >= 1, "the refusal is not counted: %r" % end["verdicts"])
        check(end.get("landlock_audit", {}).get("records") == 1, "session_end: %r" % end.get("landlock_audit"))
    finally:
        s.cleanup()


@alone
def test_kaudit_storm_coalesced(wd):
    """One process refused the same read in a loop: one record, then a
    count, not one line each. (Alone: the kernel's audit backlog is the
    machine's, and another session's storm beside it drops records of
    this one before the supervisor reads them.)"""
    needs_root()
    s = Secret(wd)
    try:
        r = harness([BUSYBOX, "sh", "-c",
                     "i=0; while [ $i -lt 300 ]; do read x < %s; i=$((i+1)); done 2>/dev/null; echo done"
                     % s.path], wd, policy=s.policy)
        check("done" in r.stdout, "loop did not finish: %r %r" % (r.stdout, r.stderr))
        recs = landlock_records(r.records)
        check(recs, "no landlock record:\n%s" % r.dump())
        check(len(recs) <= 6, "%d records for one repeated refusal" % len(recs))
        first = recs[0]
        check("repeated" not in first, "the first is not a plain record: %r" % first)
        total = 1 + sum(x.get("repeated", 0) for x in recs[1:] if x.get("ref_seq") == first["seq"])
        # The kernel's own queue (backlog 64) may drop some of a storm.
        check(total >= 60, "only %d of 300 refusals counted: %r" % (total, recs))
        check(r.stderr.count("harness: denied read %s" % s.path) == 1,
              "the notice is not printed once: %r" % r.stderr[:500])
    finally:
        s.cleanup()


def test_kaudit_other_domains_not_logged(wd):
    """While a session runs, a Landlock-restricted process outside it and
    a second session are refused too: each session logs its own."""
    needs_root()
    s = Secret(wd)
    s2 = Secret(wd)
    try:
        log_a = os.path.join(wd.state, "kaudit-a.jsonl")
        log_b = os.path.join(wd.state, "kaudit-b.jsonl")
        env = dict(os.environ, XDG_STATE_HOME=wd.state)
        env.pop("LD_PRELOAD", None)
        a = subprocess.Popen([EXEC, "--quiet", "--audit-log", log_a, "--policy", s.policy, "--",
                              BUSYBOX, "sh", "-c",
                              "cat %s; sleep 1.5; cat %s; echo A-done" % (s.path, s.path)],
                             cwd=wd.path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.4)
        out = subprocess.run([PYTHON, "-c", OUTSIDER, s.path], capture_output=True, text=True,
                             timeout=30)
        check(out.stdout.count("denied") == 3, "the outsider was not refused: %r %r"
              % (out.stdout, out.stderr))
        outsider = int(out.stdout.split()[1])
        b = subprocess.run([EXEC, "--quiet", "--audit-log", log_b, "--policy", s2.policy, "--",
                            BUSYBOX, "sh", "-c", "cat %s; cat %s" % (s2.path, s2.path)],
                           cwd=wd.path, env=env, capture_output=True, text=True, timeout=60)
        so, se = a.communicate(timeout=60)
        check("A-done" in so, "session A failed: %r %r" % (so, se))
        ra, rb = landlock_records(read_log(log_a)), landlock_records(read_log(log_b))
        check(len(ra) == 2, "session A: want its 2 refusals, got %r" % ra)
        check(all(x["args"]["path"] == s.path and x["pid"] != outsider for x in ra),
              "session A logged another domain's refusal: %r" % ra)
        # B ended while A ran: A's second read, after it, is recorded
        # (kernel audit stayed on for A).
        check(len(rb) == 2, "session B: want its 2 refusals, got %r" % rb)
        check(all(x["args"]["path"] == s2.path for x in rb), "B: %r" % rb)
        pids_a = {x["pid"] for x in ra}
        check(not pids_a & {x["pid"] for x in rb}, "a pid in both sessions: %r %r" % (ra, rb))
        check(len({x["landlock_domain"] for x in ra + rb}) == 2, "one domain for two sessions")
    finally:
        s.cleanup()
        s2.cleanup()


@alone
def test_kaudit_state_restored(wd):
    """Kernel audit is put back as it was once the last session ends."""
    before = audit_before()
    s = Secret(wd)
    try:
        r = harness([BUSYBOX, "cat", s.path], wd, policy=s.policy)
        check(landlock_records(r.records), "no landlock record:\n%s" % r.dump())
        la = r.one(event="session_start")["kernel"]["landlock_audit"]
        check(la.get("enabled_by_harness", False) == (before == 0), "enabled_by_harness %r with "
              "audit %r before" % (la, before))
        # No other harness session may hold it meanwhile (the lock).
        audit_after(before, Skip("another harness session holds kernel audit"))
        r = harness([BUSYBOX, "cat", s.path], wd, policy=s.policy, extra=["--no-kernel-audit"])
        if before == 0:
            check(not landlock_records(r.records), "records with --no-kernel-audit")
            la = r.one(event="session_start")["kernel"]["landlock_audit"]
            check(la.get("recorded") is False and "no-kernel-audit" in la.get("why", ""), "%r" % la)
    finally:
        s.cleanup()


@alone
def test_kaudit_state_restored_when_unused(wd):
    """Kernel audit is asked for while the policy is read (before the
    mode is known): a policy in audit mode, and a set-up that fails
    after that, leave it as it was and the lock free."""
    before = audit_before()
    s = Secret(wd)
    try:
        with open(s.policy) as f:
            text = f.read().replace("mode: enforce", "mode: audit")
        audit_policy = s.policy + ".audit.yaml"
        with open(audit_policy, "w") as f:
            f.write(text)
        r = harness([BUSYBOX, "cat", s.path], wd, policy=audit_policy)
        check(r.status == 0 and "KAUDIT-SECRET" in r.stdout, "audit mode refused: %s" % r.dump())
        la = r.one(event="session_start")["kernel"].get("landlock_audit", {})
        check(la.get("recorded") is False and "audit mode" in la.get("why", ""), "%r" % la)
        failed = harness([BUSYBOX, "true"], wd, policy=s.policy,
                         env={"HARNESS_SHIM": os.path.join(wd.path, "no-such-shim.so")})
        check(failed.status != 0 and "cannot use the shim" in failed.stderr,
              "set-up did not fail: %d %r" % (failed.status, failed.stderr))
        audit_after(before, AssertionError("the lock is still held after the sessions"))
    finally:
        s.cleanup()


def test_kaudit_user_unrecorded(wd):
    """As an ordinary user the refusal holds, and the session says the
    record is missing, and why (what --doctor and the README say)."""
    if os.geteuid() == 0:
        raise Skip("as root the refusal is recorded (test_kaudit_static_read_recorded)")
    s = Secret(wd)
    try:
        r = harness([BUSYBOX, "cat", s.path], wd, policy=s.policy)
        check("KAUDIT-SECRET" not in r.stdout and "Permission denied" in r.stderr,
              "not refused: %r %r" % (r.stdout, r.stderr))
        la = r.one(event="session_start")["kernel"].get("landlock_audit", {})
        check(la.get("recorded") is False, "claims records: %r" % la)
        check("CAP_AUDIT_READ" in la.get("why", "") or "ABI" in la.get("why", ""), "why: %r" % la)
        check(not landlock_records(r.records), "a landlock record as a user?")
        doc = subprocess.run([EXEC, "--doctor"], capture_output=True, text=True, timeout=60).stdout
        line = [l for l in doc.splitlines() if "landlock records" in l]
        check(line and "missing" in line[0] and "no audit record" in line[0], "doctor: %r" % line)
    finally:
        s.cleanup()
