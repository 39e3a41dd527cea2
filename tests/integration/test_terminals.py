"""Other terminals (issue 10, class 4; supervisor/terminals.h): the
user's other terminal sessions are ptys of the same uid. The agent gets
a devpts instance of its own, so from inside no name reaches them, for
static programs too (the kernel's namespace, not a rule), and a write
attempt is refused and logged (rule harness:other-terminal); the ptys
the session makes itself, and its own terminal, keep working."""

import os
import pty
import subprocess

from lib import EXEC, Skip, check, harness

BUSYBOX = "/bin/busybox"

# The pty a Go program (creack/pty) or posix_openpt + ptsname makes:
# /dev/ptmx, TIOCGPTN, TIOCSPTLCK, then the slave opened by its name;
# and Python's pty.openpty (glibc's openpty: TIOCGPTPEER).
OWN_PTYS = r"""
import fcntl, os, pty, struct
m, s = pty.openpty()
os.write(s, b"a")
print("openpty", os.read(m, 1).decode(), os.ttyname(s))
fd = os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)
n = struct.unpack("I", fcntl.ioctl(fd, 0x80045430, b"\0" * 4))[0]
fcntl.ioctl(fd, 0x40045431, struct.pack("i", 0))
sl = os.open("/dev/pts/%d" % n, os.O_RDWR | os.O_NOCTTY)
os.write(sl, b"b")
print("byname", os.read(fd, 1).decode())
"""

ATTACK = r"""
import errno, os, sys
for name, fl in (("r", os.O_RDONLY), ("w", os.O_WRONLY), ("rw", os.O_RDWR)):
    try:
        fd = os.open(sys.argv[1], fl | os.O_NOCTTY)
        print("OPENED", name)
        if fl != os.O_RDONLY:
            os.write(fd, b"INJECTED-DYN\n")
        else:
            os.set_blocking(fd, False)
            print("READ", os.read(fd, 100))
    except OSError as e:
        print("refused", name, errno.errorcode[e.errno])
"""


def isolated(r):
    if "other terminals stay reachable" in r.stderr:
        raise Skip("no devpts of the agent's own here: %s" % r.stderr.strip())


def outside_pty():
    """A terminal of another session: the test holds both ends, and types
    a line that the agent must not be able to read."""
    m, s = pty.openpty()
    os.write(m, b"TYPED-PASSWORD\n")
    return m, s, os.ttyname(s)


def drained(fd):
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 4096)
    except BlockingIOError:
        return b""


def test_other_terminal_unreachable_static(wd):
    m, s, name = outside_pty()
    try:
        r = harness([BUSYBOX, "sh", "-c",
                     "(cat %s & sleep 0.3; kill $! 2>/dev/null); echo r=$?; "
                     "echo INJECTED-STATIC > %s; echo w=$?; ls /dev/pts" % (name, name)],
                    wd, policy=None)
        isolated(r)
        check("w=0" not in r.stdout, "a static program wrote another terminal: %r" % r.stdout)
        check("TYPED-PASSWORD" not in r.stdout, "read what was typed elsewhere: %r" % r.stdout)
        got = drained(m)
        check(b"INJECTED" not in got, "the other terminal got %r" % got)
        # What was typed there is still there: nobody inside read it.
        check(b"TYPED-PASSWORD" in drained(s), "the typed line was taken")
        rec = r.one(op="write", args_path=name)
        check(rec["verdict"] == "deny" and rec["rule"] == "harness:other-terminal" and
              rec["layer"] == "kernel", "record: %r" % rec)
        check("harness: denied write %s (rule harness:other-terminal;" % name in r.stderr,
              "no notice: %r" % r.stderr)
        end = r.one(event="session_end")
        check(end.get("terminals") == "own devpts", "session_end: %r" % end.get("terminals"))
        # The agent's /dev/pts is its own: the other one is not listed.
        listed = r.stdout.split("w=")[-1].split()[1:]
        check(os.path.basename(name) not in listed or listed == ["ptmx"],
              "the other pty is listed inside: %r" % listed)
    finally:
        os.close(m)
        os.close(s)


def test_other_terminal_unreachable_dynamic(wd):
    m, s, name = outside_pty()
    try:
        r = harness(["python3", "-c", ATTACK, name], wd, policy=None)
        isolated(r)
        check("OPENED" not in r.stdout, "another terminal opened: %r" % r.stdout)
        check("refused r ENOENT" in r.stdout, "read: %r" % r.stdout)
        # Refused as the kernel would answer in the agent's view, where
        # no such pty exists (ENOENT), or EACCES.
        for m_ in ("w", "rw"):
            check("refused %s ENOENT" % m_ in r.stdout or "refused %s EACCES" % m_ in r.stdout,
                  "write: %r" % r.stdout)
        check(b"INJECTED" not in drained(m), "the other terminal got the write")
        check(b"TYPED-PASSWORD" in drained(s), "the typed line was taken")
        recs = [x for x in r.events(op="write", args_path=name)]
        check(len(recs) >= 2 and all(x["verdict"] == "deny" and
                                     x["rule"] == "harness:other-terminal" for x in recs),
              "records: %r" % recs)
    finally:
        os.close(m)
        os.close(s)


def test_own_ptys_work(wd):
    r = harness(["python3", "-c", OWN_PTYS], wd, policy=None)
    isolated(r)
    r.expect_status(0)
    check("openpty a /dev/pts/" in r.stdout, "openpty: %r %r" % (r.stdout, r.stderr))
    check("byname b" in r.stdout, "a pty opened by its name: %r %r" % (r.stdout, r.stderr))
    check(not r.events(verdict="deny"), "a denial: %r" % r.events(verdict="deny"))


def test_own_terminal_works(wd):
    """Under a real terminal (script(1)): the agent writes its own through
    /dev/tty, /dev/stdout and /dev/stderr, from a static program and
    from Python; the terminal is a pty of the host's devpts that no name
    of the agent's view reaches."""
    if not os.path.exists("/usr/bin/script"):
        raise Skip("no script(1)")
    log = os.path.join(wd.state, "tty.jsonl")
    inner = ("echo T1 > /dev/tty; echo T2 > /dev/stdout; echo T3 > /dev/stderr; "
             "python3 -c 'open(\"/dev/stdout\", \"w\").write(\"T4\\n\"); "
             "import os; print(\"T5\", os.isatty(0))'")
    cmd = "%s --quiet --audit-log %s -- %s sh -c '%s'" % (
        EXEC, log, BUSYBOX, inner.replace("'", "'\\''"))
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    p = subprocess.run(["script", "-qec", cmd, "/dev/null"], cwd=wd.path, env=env,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    out = p.stdout.replace("\r", "")
    if "other terminals stay reachable" in out:
        raise Skip("no devpts of the agent's own here")
    for t in ("T1", "T2", "T3", "T4", "T5 True"):
        check(t in out, "%s missing: %r" % (t, out))
    check("denied" not in out, "a refusal: %r" % out)
