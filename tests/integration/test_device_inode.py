"""A device node the agent may write to is the host's: /dev/null,
/dev/zero, /dev/tty are the devices rule's to write, and a metadata
change was decided like the write it is. A root agent owns them by uid,
so `chmod 600 /dev/null` in the session made the machine's /dev/null
unwritable for every other user (and a mode of 01340 was seen left on
this machine by a test). Each change of a device node's mode, owner,
times or attributes is refused (rule harness:device-inode), by path and
through an fd, and recorded; the kernel layer checks the inode it acts
on again. A pty of the session's own devpts instance stays the
agent's."""

import os
import stat

from lib import check, harness

# Each call's outcome on a line: "NAME OK" or "NAME ERRNO".
CALL = r'''
import os, sys
def call(name, f, *a):
    try:
        f(*a); print(name, "OK")
    except OSError as e:
        print(name, e.errno)
'''

CHANGES = CALL + r'''
path = sys.argv[1]
call("chmod", os.chmod, path, 0o600)
call("chown", os.chown, path, os.getuid(), os.getgid())
call("utime", os.utime, path, (1, 1))
call("setxattr", os.setxattr, path, "user.x", b"1")
fd = os.open(path, os.O_WRONLY)
call("fchmod", os.fchmod, fd, 0o600)
call("fchown", os.fchown, fd, os.getuid(), os.getgid())
call("futime", os.utime, fd, (1, 1))
if len(sys.argv) > 2:  # a pty of the agent's own, by its fd
    m, s = os.openpty()
    call("pty-fchmod", os.fchmod, s, 0o666)
'''


def _inode(path):
    st = os.stat(path)
    return (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, int(st.st_mtime))


def test_no_metadata_change_of_a_device_node(wd):
    for path in ("/dev/null", "/dev/zero"):
        before = _inode(path)
        r = harness(["python3", "-c", CHANGES, path, "pty"], wd, policy=None)
        after = _inode(path)
        print("# %s: %s" % (path, r.stdout.replace("\n", "; ")))
        check(after == before, "%s changed: %r -> %r" % (path, before, after))
        done = [l for l in r.stdout.splitlines() if l.endswith(" OK")]
        check(done == ["pty-fchmod OK"], "%s: %r went through" % (path, done))
        refused = [x for x in r.records if x.get("rule") == "harness:device-inode"]
        calls = {x["event"] for x in refused}
        check({"chmod", "chown", "fchmod", "fchown"} <= calls and
              all(x["verdict"] == "deny" for x in refused),
              "%s: the refusals' records: %r" % (path, sorted(calls)))
        # A pty of the session's own devpts is the agent's (programs
        # chmod the ptys they open: Codex could not start a command).
        check(r.one(event="fchmod", args_path="/dev/pts/0")["verdict"] == "allow",
              "the agent's own pty")
    # A static program, through the shim-less kernel layer alone.
    before = _inode("/dev/null")
    r = harness(["/bin/busybox", "chmod", "600", "/dev/null"], wd, policy=None)
    check(_inode("/dev/null") == before and r.status != 0, "busybox: %r" % r.stderr)
    check(r.one(event="chmod", args_path="/dev/null")["rule"] == "harness:device-inode",
          "busybox's record")


def test_no_metadata_change_of_a_device_node_in_audit_mode(wd):
    # Audit mode enforces nothing of the policy, but the host's device
    # nodes are kept as the harness's own files are.
    before = _inode("/dev/null")
    r = harness(["python3", "-c", CHANGES, "/dev/null"], wd, policy=None,
                extra=["--mode", "audit"])
    check(_inode("/dev/null") == before, "/dev/null changed in audit mode")
    rec = r.one(event="chmod", args_path="/dev/null")
    check(rec["rule"] == "harness:device-inode" and rec.get("enforced") is True, rec)


NAMES = CALL + r'''
call("unlink", os.unlink, "/dev/full")
call("rename", os.rename, "/dev/full", "/dev/full.x")
call("link", os.link, "/dev/full", "/dev/full.y")
call("over", os.rename, "/dev/zero", "/dev/full")
'''


def test_a_device_node_keeps_its_names(wd):
    # As root the node was the agent's to remove by its uid: python's
    # unlink took the machine's /dev/full away.
    before = os.stat("/dev/full")
    try:
        r = harness(["python3", "-c", NAMES], wd, policy=None)
        print("# " + r.stdout.replace("\n", "; "))
        check(all(not l.endswith(" OK") for l in r.stdout.splitlines()), r.stdout)
        after = os.stat("/dev/full")
        check(stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and
              os.stat("/dev/zero").st_rdev == os.makedev(1, 5), "/dev/full or /dev/zero changed")
        if os.geteuid() == 0:
            rec = r.one(event="unlink", args_path="/dev/full")
            check(rec["rule"] == "harness:device-inode", rec)
    finally:
        for name, minor in (("full", 7), ("zero", 5)):
            path = "/dev/" + name
            if os.geteuid() != 0 or (os.path.exists(path) and
                                      os.stat(path).st_rdev == os.makedev(1, minor)):
                continue
            if os.path.exists(path):
                os.unlink(path)
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
            os.chmod(path, 0o666)


OWN_PTY_BY_NAME = CALL + r'''
k = int(sys.argv[1])
held = [os.openpty() for _ in range(k + 1)]
names = [os.ttyname(s) for _, s in held]
print("names", " ".join(names))
call("chmod", os.chmod, "/dev/pts/%d" % k, 0o620)
'''


def test_a_ptys_name_is_judged_as_the_agent_sees_it(wd):
    """The device judge looks at a name in the agent's view: /dev/pts/K
    of its own devpts is its own pty, which programs chmod by name, even
    while harness-exec's /dev/pts/K is a pty of the host's (opened here
    and held), which it may not touch (harness:terminal-inode). The
    judge looked through /proc/<pid>/root at every call; it keeps one
    handle of the agent's root now, and must still see the agent's."""
    import pty
    master, slave = pty.openpty()
    try:
        k = int(os.ttyname(slave).rsplit("/", 1)[1])
        before = _inode("/dev/pts/%d" % k)
        r = harness(["python3", "-c", OWN_PTY_BY_NAME, str(k)], wd, policy=None)
        end = [x for x in r.records if x.get("event") == "session_end"]
        if end and end[0].get("terminals") != "own devpts":
            from lib import Skip
            raise Skip("no devpts of the session's own here: %r" % end[0].get("terminals"))
        print("# %s" % r.stdout.replace("\n", "; "))
        check(_inode("/dev/pts/%d" % k) == before, "the host's pty %d changed" % k)
        check("/dev/pts/%d" % k in r.stdout.split() and "chmod OK" in r.stdout,
              "the agent's own pty %d by name: %r" % (k, (r.stdout, r.stderr[-300:])))
        rec = r.one(event="chmod", args_path="/dev/pts/%d" % k)
        check(rec["verdict"] == "allow" and rec.get("rule") != "harness:terminal-inode",
              "its record: %r" % rec)
    finally:
        os.close(master)
        os.close(slave)
