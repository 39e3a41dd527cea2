"""The escape suite (tests/escape/*.c, static, no shim): each program
tries one technique under the real harness-exec and must print
"BLOCKED ...", having checked itself that the forbidden effect did not
happen. The static deny list is sandbox integrity, not a policy
decision, so every technique stays blocked in audit mode too."""

import os
import shutil
import stat

from lib import BUILD, PYTHON, check, harness

ESCAPE = os.path.join(BUILD, "escape")

# name -> extra arguments (the secret the policy denies, for the ones
# that try to open it through another door).
PROGRAMS = {
    "bpf": [], "caps": [], "chroot": [], "clone3": [], "clone_untraced": [],
    "execveat_memfd": [], "memfd_proc_exec": [], "fds": [], "i386": ["secret/key"],
    "io_uring": ["secret/key"], "keyctl": [], "mount": [],
    "open_by_handle": [], "perf_event": [], "process_vm": [],
    "ptrace": [], "seccomp_listener": [], "setid_bits": [], "setns": [], "setuid": None,
    "tiocsti": [], "userfaultfd": [], "userns": [], "x32": ["secret/key"],
}
# Allowed to skip, with the reason they may give.
MAY_SKIP = {"tiocsti": "no tty"}


def _setuid_copy(wd):
    """A root-owned setuid copy of the setuid probe in the test dir."""
    dst = os.path.join(wd.path, "setuid-copy")
    shutil.copy(os.path.join(ESCAPE, "setuid"), dst)
    if os.geteuid() == 0:
        os.chown(dst, 0, 0)
    os.chmod(dst, 0o4755)
    check(os.stat(dst).st_mode & stat.S_ISUID, "no setuid bit on the copy")
    return dst


def _run_all(wd, mode):
    failures = []
    for name, args in sorted(PROGRAMS.items()):
        prog = os.path.join(ESCAPE, name)
        check(os.path.exists(prog), "%s missing (make builds $(BUILD)/escape)" % prog)
        if args is None:
            args = [_setuid_copy(wd)]
        r = harness([prog] + args, wd, mode=mode, timeout=60)
        out = r.stdout.strip()
        ok = r.status == 0 and out.startswith("BLOCKED ") and "\n" not in out
        if name in MAY_SKIP and out.startswith("SKIPPED ") and MAY_SKIP[name] in out:
            ok = True
        if not ok:
            failures.append("%s [%s]: status %s: %r %r" % (
                name, mode or "enforce", r.status, out, r.stderr[-300:]))
        # The session_start record says which kernel layers held.
        start = r.one(event="session_start")
        k = start.get("kernel") or {}
        if not (k.get("seccomp") and k.get("no_new_privs")):
            failures.append("%s: session_start kernel %r" % (name, k))
    check(not failures, "escapes:\n  " + "\n  ".join(failures))
    # The mount attempt left no mount behind, the secret is unchanged.
    with open(os.path.join(wd.path, "secret", "key")) as f:
        check(f.read() == "TOP-SECRET\n", "secret changed")
    with open("/proc/self/mountinfo") as f:
        check(wd.path not in f.read(), "a mount appeared under the test dir")


def test_escapes_blocked_enforce(wd):
    _run_all(wd, None)


def test_escapes_blocked_audit(wd):
    _run_all(wd, "audit")


PY_PTRACE = r'''
import ctypes, ctypes.util, os, sys
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
r = libc.ptrace(16, os.getppid(), None, None)  # PTRACE_ATTACH
e = ctypes.get_errno()
libc.syscall.restype = ctypes.c_long
u = libc.syscall(425, 4, None)  # io_uring_setup
ue = ctypes.get_errno()
print(r, e, u, ue)
'''


def test_dynamic_program_under_shim_same(wd):
    """A dynamic python3 with the shim loaded meets the same filter."""
    for mode in (None, "audit"):
        r = harness([PYTHON, "-c", PY_PTRACE], wd, mode=mode)
        r.expect_status(0)
        got = r.stdout.split()
        check(got == ["-1", "1", "-1", "38"],
              "ptrace/io_uring from python3 (%s): %r" % (mode, r.stdout))


def test_kernel_record_and_doctor(wd):
    from lib import EXEC, tool
    r = harness(["true"], wd)
    r.expect_status(0)
    k = r.one(event="session_start")["kernel"]
    for key in ("seccomp", "landlock_abi", "no_new_privs", "user_notif",
                "cgroup2", "exec_gate"):
        check(key in k, "kernel record lacks %s: %r" % (key, k))
    wanted = os.environ.get("HX_TEST_NO_EXEC_GATE") != "1"
    check(k["exec_gate"] is wanted, "exec gate claimed: %r" % k)
    d = tool([EXEC, "--doctor"])
    check(d.returncode == 0, "--doctor exit %s" % d.returncode)
    for word in ("seccomp filter", "user-notify", "ADDFD_FLAG_SEND",
                 "SYNC_WAKE_UP", "pidfd_getfd", "landlock", "no_new_privs",
                 "capabilities drop", "exec gate", "cgroup v2"):
        check(word in d.stdout, "--doctor lacks %r:\n%s" % (word, d.stdout))
    # On by default and said so, or missing with the reason.
    check("exec gate              available  on (--no-exec-gate" in d.stdout
          or "exec gate              missing" in d.stdout,
          "exec gate line:\n%s" % d.stdout)


def test_node_child_process(wd):
    """libuv may try io_uring: ENOSYS must make it fall back."""
    node = shutil.which("node")
    if not node:
        return
    js = ("const cp=require('child_process');cp.execSync('true');"
          "const fs=require('fs');fs.writeFileSync('n.txt','x');"
          "fs.promises.readFile('n.txt').then(b=>console.log('ok',b.toString()))")
    r = harness([node, "-e", js], wd)
    r.expect_status(0)
    check(r.stdout.strip() == "ok x", "node: %r %r" % (r.stdout, r.stderr[-500:]))
