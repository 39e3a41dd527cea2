"""Load: 8 processes x 2,000 events through one supervisor, nothing lost
or duplicated, chain intact."""

import collections
import os
import struct

from lib import AUDIT_TOOL, EXEC, PYTHON, SHIM, check, harness, tool

LOAD = r'''
import os
os.makedirs("load", exist_ok=True)
kids = []
for i in range(8):
    pid = os.fork()
    if pid == 0:
        for j in range(2000):
            fd = os.open("load/%d-%d" % (i, j), os.O_WRONLY | os.O_CREAT, 0o644)
            os.close(fd)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    _, st = os.waitpid(pid, 0)
    assert st == 0
print("done")
'''


def test_eight_processes_two_thousand_events_each(wd):
    wd.file("load.py", LOAD)
    r = harness([PYTHON, "load.py"], wd, timeout=300)
    r.expect_status(0)
    check(r.stdout == "done\n", "output %r" % r.stdout)
    # (kernel_unconfirmed records name their request by ref_seq, no args)
    writes = [x for x in r.events(op="write") if "/load/" in x.get("args", {}).get("path", "")]
    paths = collections.Counter(x["args"]["path"] for x in writes)
    check(len(paths) == 16000, "%d distinct paths logged, want 16000" % len(paths))
    dups = [p for p, n in paths.items() if n != 1]
    check(not dups, "duplicated records: %s" % dups[:5])
    per_pid = collections.Counter(x["pid"] for x in writes)
    check(sorted(per_pid.values()) == [2000] * 8, "per-process counts %r" % per_pid)
    seqs = [x["seq"] for x in r.records]
    check(seqs == list(range(1, len(seqs) + 1)), "sequence numbers are not 1..N")
    v = tool([AUDIT_TOOL, "verify", r.log])
    check(v.returncode == 0, "verify failed: %s %s" % (v.stdout, v.stderr))
    check(all(os.path.exists(os.path.join(wd.path, p)) for p in list(paths)[:50]), "files missing")


def _tls_size(path):
    """PT_TLS's memory size of a 64-bit ELF file, 0 without one."""
    with open(path, "rb") as f:
        elf = f.read()
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        p_type, = struct.unpack_from("<I", elf, phoff + i * phentsize)
        if p_type == 7:  # PT_TLS
            return struct.unpack_from("<Q", elf, phoff + i * phentsize + 0x28)[0]
    return 0


def test_threads_start_without_large_thread_locals(wd):
    # Every thread zeroes its thread-local block when it starts: the
    # supervisor's (15 threads a session) and, for the shim, every
    # thread of every agent process. 150 KB of buffers there cost 700
    # page faults a session; they belong on the stack or the heap.
    for path in (EXEC, SHIM):
        size = _tls_size(path)
        check(size <= 4096, "%s: %d bytes of thread-locals" % (path, size))
