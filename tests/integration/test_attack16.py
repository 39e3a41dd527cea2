"""Sixteenth attack review: the session's own ptys were exempt from the
device-inode rule by comparing a pty's device with the agent's
/dev/pts; in audit mode (or where no devpts of its own could be mounted)
the agent's /dev/pts is the host's, so every terminal of the machine
was the agent's to chmod, chown and touch, unrecorded."""

import os

from lib import check, harness
from test_device_inode import CALL

CHANGES = CALL + r'''
t = sys.argv[1]
call("chmod", os.chmod, t, 0o666)
call("chown", os.chown, t, os.getuid(), os.getgid())
call("utime", os.utime, t, (1, 1))
fd = os.open(t, os.O_RDWR | os.O_NOCTTY)
call("fchmod", os.fchmod, fd, 0o666)
'''


FD_CHANGE = r'''
import os
try:
    os.fchmod(0, 0o666); print("fchmod OK")
except OSError as e:
    print("fchmod", e.errno)
'''


def _terminal():
    """A terminal of the user's outside the session (another login's)."""
    m, s = os.openpty()
    name = os.ttyname(s)
    os.chmod(name, 0o620)
    return m, s, name


def _same(name, before):
    after = os.stat(name)
    return (after.st_mode, after.st_uid, int(after.st_mtime)) == \
        (before.st_mode, before.st_uid, int(before.st_mtime))


def test_a_host_terminal_is_not_the_agents(wd):
    # A terminal the agent was given from outside (its stdin here: the
    # user's own, or another login's), not a pty of its own devpts.
    m, s, name = _terminal()
    try:
        before = os.stat(name)
        r = harness(["python3", "-c", FD_CHANGE], wd, policy=None,
                    wrap=["sh", "-c", 'exec "$@" <"$0"', name])
        check(r.stdout.strip() != "fchmod OK" and _same(name, before),
              "%s changed: %r" % (name, r.stdout))
        rec = r.one(event="fchmod")
        check(rec["rule"] in ("harness:terminal-inode", "harness:other-terminal") and
              rec["verdict"] == "deny" and rec["enforced"] is True, rec)
    finally:
        os.close(m)
        os.close(s)


def test_a_host_terminal_changed_in_audit_mode_is_recorded(wd):
    # In audit mode the agent's /dev/pts is the host's: the ptys it
    # opens are there (Codex sets their mode at every command), beside
    # the user's other terminals, which it may write to as well. The
    # policy is not enforced on them then, and each change is recorded
    # as the refusal enforce mode would make (harness:terminal-inode).
    # Before, the pty exemption took every terminal of the machine for
    # the agent's own: nothing was recorded.
    m, s, name = _terminal()
    try:
        r = harness(["python3", "-c", CHANGES, name], wd, policy=None,
                    extra=["--mode", "audit"])
        print("# " + r.stdout.replace("\n", "; "))
        rec = r.one(event="chmod", args_path=name)
        check(rec["rule"] == "harness:terminal-inode" and rec["verdict"] == "deny" and
              rec.get("enforced") is False, rec)
    finally:
        os.chmod(name, 0o620)
        os.close(m)
        os.close(s)
