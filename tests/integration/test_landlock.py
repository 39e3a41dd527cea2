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
import subprocess
import threading
import time
import uuid

from lib import (ALLOWED_PORTS, AUDIT_TOOL, DENIED_PORTS, EXEC, HELPERS, POLICIES, PYTHON,
                 Listener, check, harness, tool)
from test_default_policy import fake_home

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


def test_landlock_described_with_verbose_only(wd):
    """--verbose says what the kernel holds (the ruleset's text, made
    then only: it cost every start about 0.15 ms); a start without it
    says nothing of it."""
    if not needs(1):
        return
    ll_workdir(wd)
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    out = {}
    for flag in ("--verbose", "--no-exec-gate"):  # the second: any other
        out[flag] = subprocess.run(
            [EXEC, flag, "--policy", os.path.join(POLICIES, LL_POLICY), "--", "true"],
            cwd=wd.path, env=env, capture_output=True, text=True, timeout=60).stderr
    lines = [l for l in out["--verbose"].splitlines() if l.startswith("landlock: ")]
    check(any(l.startswith("landlock: abi ") and " rules" in l for l in lines) and
          any("read denied by kernel" in l and "/secret" in l for l in lines),
          "no ruleset described: %r" % out["--verbose"])
    check("landlock: " not in out["--no-exec-gate"],
          "described without --verbose: %r" % out["--no-exec-gate"])


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


# --- new files in the directories the sibling walk carves ($HOME) ---

def _claude_home(wd):
    """A HOME with a key (denied) and Claude Code's ~/.claude.json."""
    home = fake_home(wd)
    with open(os.path.join(home, ".claude.json"), "w") as f:
        f.write('{"old": 1}\n')
    return home


def _in_home(wd, script, home, **kw):
    """A static busybox (no shim) under the default policy and Claude
    Code's profile, which lets it write ~/.claude.json and its temporary
    files ~/.claude.json.tmp.*."""
    return harness([static_busybox(), "sh", "-c", script], wd, policy=None,
                   extra=["--profile", "claude"], env={"HOME": home}, **kw)


def test_landlock_file_renamed_into_home_is_readable(wd):
    """Claude Code's pattern: a temporary file in $HOME renamed over
    ~/.claude.json, then read back. Landlock grants $HOME child by child
    (to deny ~/.ssh), so the new inode had no rule: EACCES, and Claude
    retried six times. The supervisor makes the file as one of its pooled
    inodes granted for reading (supervisor/ipool.h)."""
    if not needs(1):
        return
    home = _claude_home(wd)
    script = ('echo \'{"new": 1}\' > ~/.claude.json.tmp.1 && mv ~/.claude.json.tmp.1 ~/.claude.json '
              '&& cat ~/.claude.json; echo second > ~/.claude.json.tmp.2; cat ~/.claude.json.tmp.2; '
              'cat ~/.ssh/id_rsa; echo done')
    r = _in_home(wd, script, home)
    check(r.stdout == '{"new": 1}\nsecond\ndone\n',
          "a file made in $HOME could not be read back: %r %r" % (r.stdout, r.stderr))
    check("Permission denied" in r.stderr, "the key was not refused: %r" % r.stderr)
    check(open(os.path.join(home, ".claude.json")).read() == '{"new": 1}\n', "not renamed")
    check(r.one(event="session_start")["kernel"].get("landlock_pool", 0) > 0, "no pool")
    end = r.one(event="session_end")
    # Three: the two files made, and the copy of the checked bytes a
    # rename onto ~/.claude.json installs (harness:agent-config).
    check(end["kernel_notify"].get("pooled_files") == 3, "session_end: %r" % end)
    # The same through the shim, read back by a raw openat (as Bun's are).
    code = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "libc.syscall.restype = ctypes.c_long\n"
            "h = os.environ['HOME']\n"
            "with open(h + '/.claude.json.tmp.3', 'w') as f:\n"
            "    f.write('{\"py\": 1}')\n"
            "    os.fchmod(f.fileno(), 0o600)\n"  # decided on the fd's name
            "    print(os.readlink('/proc/self/fd/%d' % f.fileno()) == h + '/.claude.json.tmp.3')\n"
            "os.rename(h + '/.claude.json.tmp.3', h + '/.claude.json')\n"
            "for p in ('/.claude.json', '/.ssh/id_rsa'):\n"
            "    fd = libc.syscall(257, -100, (h + p).encode(), os.O_RDONLY, 0)\n"
            "    print(p, os.read(fd, 100) if fd >= 0 else 'err %d' % ctypes.get_errno())\n")
    r = harness([PYTHON, "-c", code], wd, policy=None, extra=["--profile", "claude"],
                env={"HOME": home})
    check(r.stdout == "True\n/.claude.json b'{\"py\": 1}'\n/.ssh/id_rsa err 13\n",
          "raw openat in $HOME: %r %r" % (r.stdout, r.stderr))


def test_landlock_home_stays_carved_for_files_made_outside(wd):
    """What the pool does not lift: a file another process makes in $HOME
    during the session has no rule, a denied one (~/.netrc, absent at
    start) as much as any other, so a program without the shim cannot
    read it (a mask, which can only cover what exists at start, would
    have let ~/.netrc through)."""
    if not needs(1):
        return
    home = _claude_home(wd)
    go = os.path.join(home, ".claude.json.tmp.go")

    def outside():
        for _ in range(600):
            if os.path.exists(go):
                break
            time.sleep(0.05)
        for name, text in ((".netrc", "machine x password NETRC-SECRET\n"),
                           ("notes.txt", "OUTSIDE-NOTE\n")):
            with open(os.path.join(home, name), "w") as f:
                f.write(text)
    t = threading.Thread(target=outside)
    t.start()
    script = ("echo > ~/.claude.json.tmp.go; i=0; "
              "while [ ! -e ~/.netrc ] || [ ! -e ~/notes.txt ]; do "
              "sleep 0.05; i=$((i+1)); [ $i -gt 400 ] && break; done; "
              "cat ~/.netrc; cat ~/notes.txt; cat ~/.ssh/id_rsa; echo done")
    try:
        r = _in_home(wd, script, home)
    finally:
        t.join()
    check(r.stdout.endswith("done\n"), "the session broke: %r %r" % (r.stdout, r.stderr))
    for secret in ("NETRC-SECRET", "OUTSIDE-NOTE", "PRIVATE-KEY"):
        check(secret not in r.stdout, "%s read by a static program: %r" % (secret, r.stdout))
    check(r.stderr.count("Permission denied") >= 3, "not refused: %r" % r.stderr)


def test_landlock_pool_gives_no_way_to_the_key(wd):
    """A pooled name can be made to lead to the key: a symlink, a hard
    link, a rename either way, a create through a symlink. Each is
    refused by the policy (or Landlock), and the key is never read."""
    if not needs(2):
        return
    home = _claude_home(wd)
    key = os.path.join(home, ".ssh", "id_rsa")
    script = ("cd ~; ln -s .ssh/id_rsa .claude.json.tmp.s; cat .claude.json.tmp.s; "
              "echo x >> .claude.json.tmp.s; "
              "ln .ssh/id_rsa .claude.json.tmp.h; cat .claude.json.tmp.h; "
              "mv .ssh/id_rsa .claude.json.tmp.m; cat .claude.json.tmp.m; "
              "echo mine > .claude.json.tmp.p; mv .claude.json.tmp.p .ssh/p; "
              "mv .ssh/id_rsa .claude.json.tmp.p; cat .claude.json.tmp.p; "
              "cat .ssh/id_rsa; echo done")
    r = _in_home(wd, script, home)
    check("PRIVATE-KEY" not in r.stdout and r.stdout.endswith("mine\ndone\n"),
          "the key was read through a pooled name: %r %r" % (r.stdout, r.stderr))
    check(open(key).read() == "PRIVATE-KEY\n", "the key changed")
    check(not os.path.exists(os.path.join(home, ".ssh", "p")), "moved into ~/.ssh")
    for name in ("h", "m"):
        check(not os.path.exists(os.path.join(home, ".claude.json.tmp." + name)),
              "the key got a pooled name: %s" % name)


def test_landlock_pool_used_up_fails_safe(wd):
    """Past the pool (a fixed number per directory, made before Landlock
    is applied), new files in $HOME are unreadable again, as before."""
    if not needs(1):
        return
    home = _claude_home(wd)
    script = ("for i in $(seq 80); do echo f$i > ~/.claude.json.tmp.$i; done; "
              "for i in $(seq 80); do cat ~/.claude.json.tmp.$i 2>/dev/null; done; echo done")
    r = _in_home(wd, script, home)
    n = r.one(event="session_start")["kernel"].get("landlock_pool", 0)
    got = r.stdout.split()
    check(0 < n < 80 and got[-1] == "done", "pool %d: %r %r" % (n, r.stdout, r.stderr[-300:]))
    check(got[:-1] == ["f%d" % i for i in range(1, n + 1)],
          "want the first %d readable, the rest refused: %r" % (n, got))
    check(all(os.path.exists(os.path.join(home, ".claude.json.tmp.%d" % i)) for i in range(1, 81)),
          "a creation past the pool failed")
    check(r.one(event="session_end")["kernel_notify"].get("pooled_files") == n, r.dump())
