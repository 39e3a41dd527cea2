"""The policy's limits section (issue 3, item 1): rlimits set in the
agent's first process, inherited by every process, impossible to raise
(no CAP_SYS_RESOURCE), enforced by the kernel for static programs too."""

import ctypes
import os
import subprocess

from lib import EXEC, PYTHON, Skip, alone, check, harness

BUSYBOX = "/bin/busybox"

SHOW = r'''
import resource as r
for name in ("RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE"):
    print(name, *r.getrlimit(getattr(r, name)))
try:
    r.setrlimit(r.RLIMIT_NOFILE, (4096, 4096))
    print("raised", *r.getrlimit(r.RLIMIT_NOFILE))
except (ValueError, OSError) as e:
    print("raise refused")
'''


def policy_limits(start):
    """session_start's limits without the process count, which every
    session has (test_audit_attacks.py checks it)."""
    lim = dict(start["kernel"]["limits"])
    for k in ("processes", "processes_by", "nproc_rlimit", "nproc_counts"):
        lim.pop(k, None)
    return lim


def test_limits_set_and_not_raisable(wd):
    r = harness([PYTHON, "-c", SHOW], wd, policy="limits.yaml")
    r.expect_status(0)
    got = r.stdout.split("\n")
    check(got[:5] == ["RLIMIT_CPU 30 30", "RLIMIT_FSIZE 65536 65536",
                      "RLIMIT_NOFILE 64 64", "RLIMIT_CORE 0 0", "raise refused"],
          "limits: %r" % r.stdout)
    start = r.one(event="session_start")
    lim = policy_limits(start)
    check(lim == {"cpu": 30, "file_size": 65536, "open_files": 64, "core": 0},
          "session_start: %r" % start["kernel"].get("limits"))


def test_file_size_limit_holds_for_a_static_program(wd):
    r = harness([BUSYBOX, "dd", "if=/dev/zero", "of=big", "bs=1024", "count=200"], wd,
                policy="limits.yaml")
    check(r.status != 0, "dd wrote 200 KiB past a 64 KiB limit")
    size = os.path.getsize(os.path.join(wd.path, "big"))
    check(size <= 65536, "file grew to %d bytes" % size)


def test_audit_mode_applies_no_limit(wd):
    # Audit mode enforces nothing of the policy: it records what happens.
    r = harness([PYTHON, "-c", SHOW], wd, policy="limits.yaml", mode="audit")
    r.expect_status(0)
    check("RLIMIT_NOFILE 64 64" not in r.stdout, "limit applied in audit mode: %r" % r.stdout)
    start = r.one(event="session_start")
    check(policy_limits(start) == {}, "session_start: %r" % start["kernel"].get("limits"))
    # Except the process count, which protects the harness itself
    # (test_audit_attacks.py).
    check(start["kernel"]["limits"].get("processes") == 4096,
          "no process count in audit mode: %r" % start["kernel"]["limits"])


def filled_then(wd, fill, outside):
    """A session whose python fill takes all it may of a per-user count
    and waits: (how many it took, what outside() then gives)."""
    p = subprocess.Popen([EXEC, "--quiet", "--audit-log", os.path.join(wd.state, "fill.jsonl"),
                          "--", PYTHON, "-c", fill], cwd=wd.path, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=dict(os.environ, XDG_STATE_HOME=wd.state))
    try:
        n = int(p.stdout.readline())
        return n, outside()
    finally:
        p.communicate("\n", timeout=30)


INOTIFY_FILL = r'''
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while libc.inotify_init() >= 0:
    n += 1
print(n, flush=True)
sys.stdin.readline()
'''


@alone
def test_inotify_instances_are_shared_with_the_user_by_half(wd):
    """The kernel's count of a user's inotify instances is the user's,
    whatever the process: an agent that opened all 128 left every
    inotify_init of the user's other programs failing with EMFILE (an
    editor's file watching, a build's) until the session ended (twenty-
    fourth attack review, part b). In the agent's own user namespace (an
    ordinary user's, enforce mode) the namespace's count is bound to
    half of the host's."""
    if os.geteuid() == 0:
        raise Skip("root's agent has no user namespace: not bounded (README)")
    with open("/proc/sys/fs/inotify/max_user_instances") as f:
        host = int(f.read())
    libc = ctypes.CDLL(None, use_errno=True)

    def outside():
        fd = libc.inotify_init()
        if fd >= 0:
            os.close(fd)
        return fd, ctypes.get_errno()
    n, (fd, err) = filled_then(wd, INOTIFY_FILL, outside)
    check(0 < n <= host // 2, "the agent opened %d of the user's %d" % (n, host))
    check(fd >= 0, "an inotify_init outside the session failed: errno %d" % err)


SIGNAL_FILL = r'''
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
n = 0
# sigqueue, not kill: the kernel lets a kill() past the limit.
while n < 1 << 20 and libc.sigqueue(os.getpid(), int(signal.SIGRTMIN), None) == 0:
    n += 1
print(n, flush=True)
sys.stdin.readline()
'''

OUTSIDE_QUEUES = r'''
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
if libc.sigqueue(os.getpid(), int(signal.SIGRTMIN), None) == 0:
    print("queued")
'''


@alone
def test_queued_signals_are_shared_with_the_user_by_half(wd):
    """The kernel counts a user's queued signals whatever the process
    (RLIMIT_SIGPENDING against the user's count): an agent that queued
    real-time signals to itself, blocked, until EAGAIN left every
    sigqueue of the user's other programs (and their POSIX timers'
    signals) failing until it exited. The agent's limit is half the
    user's, so half stays theirs (message queue bytes, RLIMIT_MSGQUEUE,
    the same)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_SIGPENDING)
    n, out = filled_then(wd, SIGNAL_FILL, lambda: subprocess.run(
        [PYTHON, "-c", OUTSIDE_QUEUES], capture_output=True, text=True))
    check(0 < n <= soft // 2 + 1, "the agent queued %d of the user's %d" % (n, soft))
    check(out.stdout.strip() == "queued", "a signal outside the session: %r" % out.stderr[-300:])
    r = harness([PYTHON, "-c", "import resource as r; print(r.getrlimit(r.RLIMIT_MSGQUEUE))"],
                wd, policy=None)
    mq = resource.getrlimit(resource.RLIMIT_MSGQUEUE)
    if mq[1] != resource.RLIM_INFINITY:
        check(r.stdout.strip() == str((mq[1] // 2, mq[1] // 2)), "%r %r" % (r.stdout, mq))
