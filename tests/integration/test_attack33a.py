"""Attack review 33, part a: the thirty-second review's fixes attacked
(the masks' covers, the kernel layer's look at the agent's view, the
nested repositories' configuration, the loose object sweep of both
kinds of store), under the embedded default policy, as root and as an
ordinary user.

The end's check of the loose objects the session made had 10 s, and
the sweep's budgets left most of its work uncounted: objects read whole
(each within the check's memory) were never counted, and each kind of
store had a budget of its own. A few MiB of zlib bombs, under names
that sort first, ran the check out of its time; its answer was lost
and the object planted after them stayed. The nested repositories'
configuration was looked for two levels down, depth first, where .git
is a directory: one three levels down, one whose .git is a file and one
listed after a crowded node_modules were never read."""

import json
import os
import zlib

from lib import check, harness
from test_attack30a import EMPTY, PLANT, _forged_records, _user_adds

# Each bomb inflates to BOMB bytes of zeros: a few hundred KiB on disk.
BOMB = 400 * 1000 * 1000
BOMBS = 24

COPY = r"""
import os, shutil, sys
objects, bomb, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    d = os.path.join(objects, "%02x" % (i // 2))
    os.makedirs(d, exist_ok=True)
    shutil.copyfile(bomb, os.path.join(d, "%038x" % (i + 1)))
"""


def _bomb(path):
    """A loose object's stream, "blob BOMB\\0" then zeros: its name a
    lie, read through by a check that reads all it is given."""
    c = zlib.compressobj(1)
    chunk = b"\0" * (16 << 20)
    parts, left = [c.compress(b"blob %d\0" % BOMB)], BOMB
    while left:
        k = min(left, len(chunk))
        parts.append(c.compress(chunk[:k]))
        left -= k
    parts.append(c.flush())
    with open(path, "wb") as f:
        f.write(b"".join(parts))


def test_zlib_bombs_do_not_run_the_sweep_past_its_time(wd):
    """The agent copied 24 bombs (400 MB of zeros each, under names in
    00/ to 0b/) into the user's nested sub and planted code under the
    empty blob's id (e6/): the check took more than 10 s, nothing was
    removed and the user's checkout of an empty file, added and
    committed after the session, gave the planted code. The sweep has
    one bound of bytes and of time a process now (5 s): the session's
    objects it has not read through by then are set aside
    (<name>.harness-unread), where git does not read them."""
    from test_attack29a import _nested
    from lib import PYTHON
    sub, _ = _nested(wd)
    objects = os.path.join(os.path.realpath(sub), ".git", "objects")
    bomb = os.path.join(wd.state, "bomb")
    _bomb(bomb)
    script = "%s -c '%s' %s %s %d && %s -c '%s' %s %s && echo PLANTED" % (
        PYTHON, COPY, objects, bomb, BOMBS, PYTHON, PLANT, objects, EMPTY)
    r = harness(["sh", "-c", script], wd, policy=None)
    check("PLANTED" in r.stdout, "the agent did not plant: %s %s" % (r.stdout, r.stderr[-1500:]))
    check("more than 10 s" not in r.stderr, "the check ran out of time: %s" % r.stderr[-800:])
    left = [i for i in range(BOMBS) if os.path.exists(
        os.path.join(objects, "%02x" % (i // 2), "%038x" % (i + 1)))]
    check(not left, "bombs left in %r" % left)
    # 9.6 GB in all: the last ones past either bound, set aside unread
    last = os.path.join(objects, "%02x" % ((BOMBS - 1) // 2))
    check(os.path.exists(os.path.join(last, "%038x.harness-unread" % BOMBS)),
          "the last bomb was not set aside: %r" % os.listdir(last))
    got = _user_adds(sub)
    check(got["empty.py"] == "", "the user's empty file, checked out: %r" % got)
    recs = _forged_records(r)
    check(recs == [(objects, BOMBS + 1)], "forged_objects records: %r" % recs)


def test_the_hooks_of_a_deep_a_linked_or_a_crowded_nested_repository_are_not_written(wd):
    """The nested repositories' configuration was read two levels down,
    depth first, 4,096 directories at most, where .git is a directory:
    a clone three levels down (a/b/deep, as src/github.com/org/repo), a
    repository whose .git is a file (git init --separate-git-dir, as a
    submodule's or a linked worktree's) and one beside a node_modules of
    4,100 packages listed before it had their hooks (core.hooksPath
    .githooks) written by a static busybox, which the user's next commit
    there runs. Now a level at a time, the shallow first, three levels,
    a gitfile followed: each refused, harness:git-config."""
    from test_sessions_apart import BUSYBOX
    from test_worktree import git
    real = os.path.realpath(wd.path)
    for i in range(4100):
        os.makedirs(os.path.join(real, "node_modules", "p%d" % i))
    repos = {"a/b/deep": [], "linked": ["--separate-git-dir", os.path.join(wd.state, "lg")],
             "crowded": []}
    for rel, extra in repos.items():
        d = os.path.join(real, rel)
        os.makedirs(os.path.join(d, ".githooks"))
        git(d, "init", "-q", *extra)
        git(d, "config", "core.hooksPath", ".githooks")
    check(os.path.isfile(os.path.join(real, "linked", ".git")), "linked/.git is no file")
    script = "".join("printf '#!/bin/sh\\necho PWNED\\n' > %s/.githooks/pre-commit; " % rel
                     for rel in repos) + "echo ok > plain.txt"
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None)
    check(os.path.exists(os.path.join(real, "plain.txt")), "stderr %r" % r.stderr[-800:])
    for rel in repos:
        path = os.path.join(real, rel, ".githooks", "pre-commit")
        check(not os.path.exists(path), "%s's hook written" % rel)
        recs = [x for x in r.records if x.get("args", {}).get("path") == path]
        check(recs and all(x["verdict"] == "deny" and x["rule"] == "harness:git-config"
                           for x in recs), "%s: records %r" % (rel, recs))


def test_a_directory_renamed_above_a_mask_between_the_look_and_the_act_reaches_nothing(wd):
    """The kernel layer looks at each path of an allowed call in the
    agent's view (a mask on its way refuses it), then acts in its own,
    where no mask is. A static program's thread renamed sub (holding a
    masked .env/) to x and back while another opened x/.env/key
    O_RDWR|O_CREAT, linked it to copy or moved it to moved: a try
    looked at while x was not there, done once it was, opened, linked
    or moved the secret (the record an allowed write). Before: each op
    printed the secret within some hundreds of tries. Now the act is
    made in the agent's view too, where the mask follows the directory."""
    import subprocess
    from lib import EXEC, HELPERS
    from test_attack32c import BUSYBOX, _records
    from test_default_policy import fake_home
    home = fake_home(wd)
    real = os.path.realpath(wd.path)
    wd.file("sub/.env/key", "SECRET-D1\n")
    h = os.path.join(HELPERS, "static_attack33a")
    extra = ["--no-kernel-audit"] if os.geteuid() == 0 else []
    for op in ("rw", "ln", "mv"):
        log = os.path.join(wd.state, "race-%s.jsonl" % op)
        r = subprocess.run([EXEC, "--quiet", "--audit-log", log] + extra +
                           ["--", BUSYBOX, "sh", "-c", "%s %s 1500; [ -d x ] && mv x sub; echo done"
                            % (h, op)],
                           cwd=wd.path, env=dict(os.environ, HOME=home), capture_output=True,
                           text=True, timeout=120)
        check(r.stdout.endswith("done\n") and "tries" in r.stdout,
              "%s: the session: %r %r" % (op, r.stdout, r.stderr[-800:]))
        check("SECRET" not in r.stdout, "%s: the secret was read: %r" % (op, r.stdout))
        with open(os.path.join(real, "sub", ".env", "key")) as f:
            check(f.read() == "SECRET-D1\n", "%s: the user's .env/key changed" % op)
        for name in ("copy", "moved"):
            check(not os.path.lexists(os.path.join(real, name)), "%s: %s was made" % (op, name))
        recs = _records(log)
        # each allowed try on the secret's way was revoked or failed
        ended = {e.get("ref_seq") for e in recs if e["event"] in ("revoked", "failed")}
        bad = [e for e in recs if e.get("layer") == "kernel" and e.get("verdict") == "allow" and
               "/.env/key" in json.dumps(e.get("args", {})) and e["seq"] not in ended]
        check(not bad, "%s: allowed and done: %r" % (op, bad[:2]))


def test_a_nested_configuration_that_is_a_fifo_or_includes_itself_does_not_hold_the_start(wd):
    """The start reads each nested repository's configuration: one that
    is a fifo held it in its open for good, and one that includes itself
    30 times was parsed again for each include, four deep (837,930
    parses): the session never started. Now a configuration, an include
    or a .git file is read only when a regular file, a file including
    itself (or one above it) is parsed once, and 8,192 files at most: the
    session starts, and the hooks of the repository beside them are
    still refused (harness:git-config)."""
    import time
    from test_sessions_apart import BUSYBOX
    from test_worktree import git
    real = os.path.realpath(wd.path)
    os.makedirs(os.path.join(real, "fifo", ".git"))
    os.mkfifo(os.path.join(real, "fifo", ".git", "config"))
    for rel in ("loop", "late"):
        d = os.path.join(real, rel)
        os.makedirs(os.path.join(d, ".githooks"))
        git(d, "init", "-q")
        git(d, "config", "core.hooksPath", ".githooks")
    with open(os.path.join(real, "loop", ".git", "config"), "a") as f:
        f.write("[include]\n" + "\tpath = config\n" * 30)
    t0 = time.monotonic()
    r = harness([BUSYBOX, "sh", "-c", "echo x > late/.githooks/pre-commit; echo ok > plain.txt"],
                wd, policy=None, timeout=60)
    took = time.monotonic() - t0
    check(os.path.exists(os.path.join(real, "plain.txt")) and took < 30,
          "the session: %.1f s, %r" % (took, r.stderr[-800:]))
    path = os.path.join(real, "late", ".githooks", "pre-commit")
    check(not os.path.exists(path), "late's hook written")
    recs = [x for x in r.records if x.get("args", {}).get("path") == path]
    check(recs and all(x["verdict"] == "deny" and x["rule"] == "harness:git-config"
                       for x in recs), "late: records %r" % recs)
