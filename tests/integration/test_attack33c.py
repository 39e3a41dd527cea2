"""Attack review 33, part c: the exec gate and the process tree's
bookkeeping as the target, under the embedded default policy, as root
and as an ordinary user, from a static program's raw execve.

When several threads of a process exec at once, the kernel runs one
(de_thread: it takes the leader's pid) and kills the others, some while
the kernel layer decides their call, some once it has been answered.
Each exec allowed and recorded but not run must be followed by a
"failed" record, and the one that ran by none: a log read as "allowed,
no failure after" says that program ran."""

import os

from lib import HELPERS, check, harness

ATTACK = os.path.join(HELPERS, "static_attack33c")


def _allowed_execs(r, argv0):
    return [x for x in r.records if x.get("event") == "execve" and x.get("verdict") == "allow"
            and (x.get("args", {}).get("argv") or [None])[0] == argv0]


def _failed_refs(r):
    return {x.get("ref_seq"): x for x in r.records if x.get("event") == "failed"}


def test_an_exec_a_sibling_thread_won_is_recorded_as_not_run(wd):
    """Twenty processes, each with sixteen threads that execve
    /bin/echo at once: an exec the kernel layer allowed whose thread
    de_thread killed before the answer reached it (the thread reaped
    before its approval was made: no exit of it took that approval)
    had no "failed" record, read as run (3 runs in 6, before)."""
    r = harness([ATTACK, "texec", "20", "16"], wd, policy=None)
    r.expect_status(0)
    ran = set(r.stdout.split())
    check(len(ran) == 20, "one echo a process: %r" % r.stdout)
    allowed = _allowed_execs(r, "echo")
    check(allowed, "no allowed echo:\n%s" % r.dump())
    failed = _failed_refs(r)
    for x in allowed:
        tag = x["args"]["argv"][1]
        if tag in ran:
            check(x["seq"] not in failed, "%s ran, recorded failed: %r" % (tag, failed.get(x["seq"])))
        else:
            check(x["seq"] in failed, "%s did not run, no failed record: %r" % (tag, x))
            f = failed[x["seq"]]
            check((f.get("pid"), f.get("tid")) == (x.get("pid"), x.get("tid")),
                  "failed record of another thread: %r for %r" % (f, x))


def test_a_leaders_exec_a_thread_won_is_recorded_as_not_run(wd):
    """Twenty processes whose leader execs sleep 31 while a thread execs
    sleep 30, left running to the session's end: where the thread won,
    the leader's allowed exec (no exit is reported for a leader an exec
    replaces) had its "failed" record only at that process's exit or
    next exec (here the kill at the session's end), after what the
    session did meanwhile. It is written by the loop's thread, so on a
    loaded machine it may follow the root's exec of echo marker (made
    once every sleep ran); it must come before the root's exit, which
    begins the session's end and its kill."""
    r = harness([ATTACK, "lexec", "20"], wd, policy=None)
    r.expect_status(0)
    ran = {}
    for line in r.stdout.splitlines()[:-1]:
        _, pid, arg = line.split()
        ran[int(pid)] = arg
    check(r.stdout.splitlines()[-1:] == ["marker"], "no marker: %r" % r.stdout)
    mark = _allowed_execs(r, "echo")[-1]
    marker = min(x["seq"] for x in r.records if x.get("event") == "process_exit"
                 and x.get("pid") == mark["pid"] and x["seq"] > mark["seq"])
    check(len(ran) == 20, "one sleep a process: %r" % r.stdout)
    failed = _failed_refs(r)
    for x in _allowed_execs(r, "sleep"):
        pid, arg = x["pid"], x["args"]["argv"][1]
        if ran.get(pid) == arg:
            check(x["seq"] not in failed, "%d ran %s, recorded failed" % (pid, arg))
        else:
            check(x["seq"] in failed, "%d did not run %s (ran %s), no failed record: %r"
                  % (pid, arg, ran.get(pid), x))
            check(failed[x["seq"]]["seq"] < marker, "%d did not run %s: recorded only"
                  " after the root's exit: %r" % (pid, arg, failed[x["seq"]]))


def test_an_exec_killed_by_another_during_the_gates_look_is_no_attack(wd):
    """A static program's child execs sleep (with 800 KiB of
    environment: the gate's read of it takes a while) and is SIGKILLed
    by its parent as soon as its cmdline says sleep, 400 times: when the
    kill came during the exec gate's look, what it read failed (the
    dying process's memory going) and the gate recorded an attack, "the
    environment was swapped, killed by harness" (exec_gate mismatch,
    env_changed, path ""), where the parent killed an exec run as
    decided (2 to 9 in 600, before). What happened is the process's
    process_exit record: SIGKILL."""
    r = harness([ATTACK, "killgate", "400"], wd, policy=None)
    r.expect_status(0)
    check(r.stdout.split() == ["killed", "400"], "stdout %r" % r.stdout)
    bogus = [x for x in r.records if x.get("exec_gate")]
    check(not bogus, "%d exec gate findings of execs run as decided: %r"
          % (len(bogus), bogus[:2]))
    sleeps = [x["pid"] for x in _allowed_execs(r, "sleep")]  # a pid may come again
    exits = {x["pid"]: x.get("signal") for x in r.records if x.get("event") == "process_exit"}
    check(len(sleeps) == 400 and all(exits.get(p) == "SIGKILL" for p in sleeps),
          "%d sleeps, exits %r" % (len(sleeps), sorted(set(exits.get(p) for p in sleeps), key=str)))
