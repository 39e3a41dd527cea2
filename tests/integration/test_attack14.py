"""The fourteenth attack review: where the kernel layer acts for the
agent and what it does is seen, by a service or by the log, as done by
another process than the agent's. Each hole tried as the attacker
would, from inside the default policy, with a static program (raw
system calls), as root and as an ordinary user, and checked for its
effect and its record."""

import os

from lib import EXEC, HELPERS, check, harness

PROBE = os.path.join(HELPERS, "static_attack14")


def test_a_request_sent_through_the_kernel_layer_is_not_the_harness_s(wd):
    """The session socket's server names each message's sender by the
    kernel's per-message credentials (SCM_CREDENTIALS), so that a forked
    child sharing its parent's connection is named as itself. A sendmsg
    is emulated by the kernel layer, and a unix socket's by its
    connector, a process of harness-exec's: a static program's request
    sent by sendmsg on its connection was recorded as that process's
    (its pid, ppid harness-exec, exe harness-exec, and a process_exit of
    it at the end), the agent itself nowhere in the log. Now an emulated
    send to a socket whose peer is harness-exec itself is refused, and
    the record names the agent (harness:protect, as a send to the session
    socket by its path now is too)."""
    target = os.path.join(wd.path, ".git", "hooks", "pre-commit")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    r = harness([PROBE, "wire-sendmsg", target], wd, policy=None)
    out = r.stdout.strip()
    print("# %s" % out)
    check(out.startswith("pid "), "probe: %r %r" % (out, r.stderr[-400:]))
    me = int(out.split()[1])
    session = [x for x in r.records if x.get("event") == "session_start"]
    sup = session[0]["pid"] if session else None
    for rec in r.records:
        if rec.get("event") in ("session_start", "session_end", "execvp"):
            continue
        if rec.get("pid") is None:
            continue
        check(rec.get("ppid") != sup or rec.get("pid") == me,
              "a record names a process of harness-exec's, not the agent: %r" % rec)
        check(rec.get("exe") != EXEC, "a record names harness-exec as the actor: %r" % rec)
    check(" send EACCES" in out, "the emulated send reached the session's server: %r" % out)
    rec = r.one(event="sendmsg")
    check(rec["pid"] == me and rec["verdict"] == "deny"
          and rec["rule"] == "harness:protect" and rec["layer"] == "kernel", rec)
