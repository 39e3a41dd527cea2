"""The twenty-second attack review: what an exec is decided with against
what it runs with, and the questions on the terminal. An outside
attacker's agent under the embedded default policy (or the ask policy of
test_ask), in enforce mode."""

import os
import time

from lib import HELPERS, check, harness, preload_library

STATIC19A = os.path.join(HELPERS, "static_attack19a")

EVIL_SHIM = r'''
#include <unistd.h>
__attribute__((constructor)) static void injected(void)
{
	write(2, "INJECTED\n", 9);
}
'''


def _env_of(x, name):
    env = x.get("args", x).get("env") or []
    return [e for e in env if e.split("=", 1)[0] in (name, "-" + name)]


def _evil_shim(wd):
    """A library of the agent's in the project, named as harness's shim
    is (libharness-shim.so): its constructor says INJECTED."""
    d = os.path.join(wd.path, "lib")
    os.makedirs(d, exist_ok=True)
    return preload_library(d, "libharness-shim", EVIL_SHIM)


def test_a_library_named_like_the_shim_is_in_the_environment_shown(wd):
    """An exec's environment as it differs from the session's is shown
    in its question, recorded and held by the exec gate, less harness's
    own names: the shim's entry in LD_PRELOAD. That entry was told by
    its file name alone, so LD_PRELOAD=PROJECT/lib/libharness-shim.so,
    a library of the agent's, was harness's own: a raw execve (no shim
    to rebuild LD_PRELOAD) of "git push origin main" was asked about
    with no LD_PRELOAD shown, and once approved ran the agent's code
    inside git. Only the shim harness gives the agent is its own now:
    the question shows the library."""
    from test_ask import Session, answer, wait_pending
    from test_attack19a import _two_dirs_and_a_git
    evil = _evil_shim(wd)
    a, b, git = _two_dirs_and_a_git(wd)
    s = Session(wd, [STATIC19A, "askenv", a, "-", "LD_PRELOAD=" + evil, git,
                     "push", "origin", "main"])
    q = wait_pending(wd, s)
    shown = _env_of(q, "LD_PRELOAD")
    answer(wd, "deny", q["id"])
    s.finish()
    check(shown == ["LD_PRELOAD=" + evil] and evil in q.get("what", ""),
          "the question does not show the agent's library: %r" % q)
    asked = [x for x in s.asked() if x.get("op") == "exec"]
    check(asked and _env_of(asked[0], "LD_PRELOAD") == ["LD_PRELOAD=" + evil],
          "the record does not name the library: %r" % asked)
    check("INJECTED" not in s.stderr and
          not os.path.exists(os.path.join(a, "pushed")),
          "the denied exec ran: %r" % s.stderr[-400:])


def test_a_library_named_like_the_shim_is_in_the_exec_record(wd):
    """The same without a question: a static program's exec of /bin/true
    with LD_PRELOAD naming the agent's library ran its code under a
    record with no LD_PRELOAD in its environment."""
    evil = _evil_shim(wd)
    a = os.path.join(wd.path, "a")
    os.makedirs(a, exist_ok=True)
    r = harness([STATIC19A, "askenv", a, "-", "LD_PRELOAD=" + evil, "/bin/true"],
                wd, policy=None)
    execs = [x for x in r.records if x.get("event") == "execve" and
             x.get("layer") == "kernel" and
             x.get("args", {}).get("path") == "/bin/true"]
    check(execs, "no record of the exec:\n%s" % r.dump())
    check(_env_of(execs[0], "LD_PRELOAD") == ["LD_PRELOAD=" + evil],
          "the exec ran the agent's library (%s) under a record without it: %r" %
          ("INJECTED" in r.stderr, execs[0].get("args")))

