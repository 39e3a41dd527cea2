"""The twenty-fourth attack review, part a: records that say one thing
while another happened, and effects that leave no record. An outside
attacker's agent under the embedded default policy, in enforce and in
audit mode."""

import os
import subprocess

from lib import HELPERS, check, harness

PROBE = os.path.join(HELPERS, "static_ll_probe")


def _state(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("State:"):
                    return line.split()[1]
    except OSError:
        return None
    return None


def test_audit_mode_signals_nothing_outside_the_session(wd):
    """Audit mode made no Landlock domain at all, so its signal scope
    was gone with the file rules: the agent stopped and killed
    harness-exec (SIGSTOP held the session for good; SIGKILL ended it
    with no session_end and no anchor, so its log could be cut later),
    and stopped a process of the user's outside the session, and no
    record said so (a signal is never notified). What protects the
    harness and what is outside the session stays held in audit mode,
    as the deny list and prlimit64 do: the scope alone is applied."""
    r = harness([PROBE, "signal-parent"], wd, policy=None, mode="audit",
                timeout=30)
    lines = r.stdout.splitlines()
    # (Its comm is harness:protect's in audit mode: "comm ?".)
    check("SIGSTOP EPERM" in lines, "SIGSTOP reached harness-exec: %r" % lines)
    check("SIGKILL EPERM" in lines, "SIGKILL reached harness-exec: %r" % lines)
    check("self ok" in lines and "child ok" in lines,
          "signals inside the sandbox broke: %r" % lines)
    check(r.records and r.records[-1]["event"] == "session_end",
          "harness-exec did not finish its log\n%s" % r.dump())
    # A process of the user's outside the session, by its pid.
    victim = subprocess.Popen(["sleep", "60"])
    try:
        r = harness(["sh", "-c", "kill -STOP %d; echo rc=$?" % victim.pid], wd,
                    policy=None, mode="audit", timeout=30)
        check(_state(victim.pid) != "T",
              "an audit-mode agent stopped a process outside the session\n%s" % r.dump())
        check("rc=0" not in r.stdout, "the signal was sent: %r" % r.stdout)
        r.expect_status(0)
    finally:
        victim.kill()
        victim.wait()

