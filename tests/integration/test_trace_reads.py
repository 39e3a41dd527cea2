"""--trace-reads: every open is decided in the kernel layer, so a read
the shim never sees (a static program) is judged like a write, also
inside a write root, where Landlock cannot carve out a deny."""

import os

from lib import BUILD, PYTHON, check, harness

BUSYBOX = "/bin/busybox"


def test_static_read_inside_write_root_denied_with_trace_reads(wd):
    secret = os.path.join(wd.path, "secret", "key")
    r = harness([BUSYBOX, "cat", "secret/key"], wd, extra=["--trace-reads"])
    check("TOP-SECRET" not in r.stdout, "secret read by a static program: %r" % r.stdout)
    d = r.one(op="read", args_path=secret)
    check(d["verdict"] == "deny" and d["rule"] == "test-secret" and d["layer"] == "kernel",
          "record %r" % d)


def test_reads_logged_once_without_bypass_flag(wd):
    p = wd.file("in.txt", "data\n")
    r = harness(["cat", "in.txt"], wd, extra=["--trace-reads"])
    r.expect_status(0)
    check(r.stdout == "data\n", "output changed: %r" % r.stdout)
    recs = r.events(op="read", args_path=p)
    check(len(recs) == 1, "%d records for one read\n%s" % (len(recs), r.dump()))
    check(recs[0]["verdict"] == "allow" and not recs[0].get("shim_bypass"), recs[0])


OPENAT2 = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
how = (ctypes.c_uint64 * 3)(os.O_RDONLY, 0, 0)
fd = libc.syscall(437, -100, b"/etc/hostname", ctypes.byref(how), 24)
print("fd" if fd >= 0 else "errno %d" % ctypes.get_errno())
'''


def test_read_only_openat2_outside_write_roots_is_a_read(wd):
    wd.file("o2.py", OPENAT2)
    r = harness([PYTHON, "o2.py"], wd)
    check(r.stdout == "fd\n", "read-only openat2 refused: %r %r" % (r.stdout, r.stderr))


def test_audit_mode_logging_reads_traces_static_programs(wd):
    # An audit of reads (audit mode, log_reads: true) must see programs
    # that skip the shim too: the kernel layer then decides every open.
    secret = os.path.join(wd.path, "secret", "key")
    plain = wd.file("plain.txt", "plain\n")
    r = harness([BUSYBOX, "sh", "-c", "cat secret/key plain.txt"], wd,
                policy="audit-reads.yaml", mode="audit")
    r.expect_status(0)
    check("TOP-SECRET" in r.stdout, "audit mode lets the read happen: %r" % r.stdout)
    d = r.one(op="read", args_path=secret)
    check(d["verdict"] == "deny" and d["layer"] == "kernel" and d.get("enforced") is False,
          "record %r" % d)
    a = r.one(op="read", args_path=plain)
    check(a["verdict"] == "allow" and a["layer"] == "kernel", "record %r" % a)


STATIC_ERRNO = os.path.join(BUILD, "helpers", "static_errno")


def test_directory_opens_are_reads(wd):
    """O_TMPFILE is 020000000 | O_DIRECTORY: an O_RDONLY|O_DIRECTORY open
    (ls, find, readdir) is a read, not an anonymous file. With
    --trace-reads it is decided and allowed as a read outside the write
    roots; without it the filter does not notify it at all."""
    calls = []
    for _ in range(50):
        calls += ["open", "/etc", "RDONLY|DIRECTORY", ","]
    r = harness([STATIC_ERRNO] + calls[:-1], wd, extra=["--trace-reads"])
    check(r.stdout == "OK\n" * 50, "--trace-reads: %r %r" % (r.stdout[:200], r.stderr[-300:]))
    d = r.one(args_path="/etc")
    check(d["op"] == "read" and d["verdict"] == "allow", "record %r" % d)
    r = harness([STATIC_ERRNO] + calls[:-1], wd)
    check(r.stdout == "OK\n" * 50, "enforce: %r" % r.stdout[:200])
    n = r.one(event="session_end")["kernel_notify"]["notifications"]
    check(n < 10, "%d notifications for 50 directory opens" % n)
    r.none(args_path="/etc")
