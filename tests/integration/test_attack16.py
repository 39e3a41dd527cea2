"""Sixteenth attack review: the session's own ptys were exempt from the
device-inode rule by comparing a pty's device with the agent's
/dev/pts; in audit mode (or where no devpts of its own could be mounted)
the agent's /dev/pts is the host's, so every terminal of the machine
was the agent's to chmod, chown and touch."""

import os

from lib import check, harness

CHANGES = r'''
import os, sys
def call(name, f, *a):
    try:
        f(*a); print(name, "OK")
    except OSError as e:
        print(name, e.errno)
t = sys.argv[1]
call("chmod", os.chmod, t, 0o666)
call("chown", os.chown, t, os.getuid(), os.getgid())
call("utime", os.utime, t, (1, 1))
fd = os.open(t, os.O_RDWR | os.O_NOCTTY)
call("fchmod", os.fchmod, fd, 0o666)
'''


def test_a_host_terminal_is_not_the_agents_in_audit_mode(wd):
    # A terminal of the user's outside the session (another login's).
    m, s = os.openpty()
    try:
        name = os.ttyname(s)
        os.chmod(name, 0o620)
        before = os.stat(name)
        r = harness(["python3", "-c", CHANGES, name], wd, policy=None,
                    extra=["--mode", "audit"])
        print("# " + r.stdout.replace("\n", "; "))
        after = os.stat(name)
        check((after.st_mode, after.st_uid, int(after.st_mtime)) ==
              (before.st_mode, before.st_uid, int(before.st_mtime)),
              "%s changed: %o -> %o, mtime %d" % (name, before.st_mode, after.st_mode,
                                                  int(after.st_mtime)))
        check(all(not l.endswith(" OK") for l in r.stdout.splitlines()), r.stdout)
        rec = r.one(event="chmod", args_path=name)
        check(rec["rule"] == "harness:device-inode", rec)
    finally:
        os.close(m)
        os.close(s)
