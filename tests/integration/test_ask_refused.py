"""A call the harness itself refuses is never asked, and no yes lifts the
refusal (supervisor/pipeline.c: the harness's judges hold for a call
the policy asks about as for one it allows). Before, the judges looked
only at calls the policy allowed: a call it asked about was put to a
person as the policy's question, and their yes (or a grant of the
session) let through what the harness refuses whatever the rule says:
a write through a hard link into a file outside the session, a hook of
a repository the agent made. Each attack runs under the approvals
tests' policy (test_ask: $CWD/ask/** is asked), a person standing by
who approves every question, through the shim (python) and without it
(a static busybox: the kernel layer alone)."""

import os
import subprocess
import time

from lib import PYTHON, check
from test_ask import Session, answer, pending

BUSYBOX = "/bin/busybox"


def _approving(wd, s, timeout=30):
    """Runs s to its end, approving every question it asks (a person
    who says yes to all); the questions' ids."""
    asked = []
    end = time.time() + timeout
    while s.p.poll() is None and time.time() < end:
        for q in pending(wd):
            if q["id"] not in asked:
                asked.append(q["id"])
                answer(wd, "approve", q["id"])
        time.sleep(0.05)
    s.finish()
    return asked


def _writers(path):
    return {"python": [PYTHON, "-c",
                       "import sys; open(sys.argv[1], 'a').write('agent')", path],
            "busybox": [BUSYBOX, "sh", "-c", 'echo agent >> "$1"', "sh", path]}


def _refused_unasked(s, asked, rule, path):
    recs = [r for r in s.records if (r.get("args") or {}).get("path") == path and
            r.get("verdict")]
    check(not asked and not s.asked(),
          "a person was asked about a call the harness refuses: %r" %
          [(r.get("rule"), r.get("verdict")) for r in s.asked()])
    check(recs and all(r["verdict"] == "deny" and r["rule"] == rule for r in recs),
          "the write's records: %r" % [(r.get("rule"), r.get("verdict"), r.get("layer"))
                                       for r in recs])


def test_a_write_through_a_hard_link_out_of_the_session_is_not_asked(wd):
    """$CWD/ask/shared is, by a hard link made before the session, the
    same file as one outside the project (a snapshot made by cp -al, a
    package store): harness:shared-file. A yes to the policy's question
    about ask/shared wrote the other file."""
    outside = wd.path + "-home"  # beside the project, removed with it
    os.makedirs(outside, exist_ok=True)
    os.makedirs(os.path.join(wd.path, "ask"), exist_ok=True)
    for name, argv in _writers(os.path.join(wd.path, "ask", "shared")).items():
        store = os.path.join(outside, "pkg-" + name)
        link = os.path.join(wd.path, "ask", "shared")
        with open(store, "w") as f:
            f.write("store\n")
        if os.path.lexists(link):
            os.unlink(link)
        os.link(store, link)
        time.sleep(0.02)  # made before the session began
        s = Session(wd, argv)
        asked = _approving(wd, s)
        with open(store) as f:
            check(f.read() == "store\n", "%s wrote the store's file through its link" % name)
        _refused_unasked(s, asked, "harness:shared-file", link)


def test_a_hook_of_a_repository_the_agent_made_is_not_asked(wd):
    """ask/r is a repository: its hooks run at the user's next commit
    there, outside the session (harness:git-config). A yes to the
    policy's question about ask/r/.git/hooks/pre-commit wrote the hook."""
    repo = os.path.join(wd.path, "ask", "r")
    subprocess.run(["git", "init", "-q", repo], check=True)
    hook = os.path.join(repo, ".git", "hooks", "pre-commit")
    for name, argv in _writers(hook).items():
        s = Session(wd, argv)
        asked = _approving(wd, s)
        check(not os.path.exists(hook), "%s wrote the hook" % name)
        _refused_unasked(s, asked, "harness:git-config", hook)
