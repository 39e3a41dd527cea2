"""Commands understood (policy/cmdview.h): an exec is judged by what it
runs in turn, read from its argv (sh -c, bash -lc, env, xargs, find
-exec, git -C, eval), each part classed; a part can make a verdict
stronger, never weaker; an answer on a script covers what it showed,
run in its own process tree, and nothing else. Real programs through
the shim (python's subprocess) and without it (static busybox)."""

import json
import os
import shutil
import subprocess
import tempfile
import time

from lib import EXEC, POLICIES, PYTHON, check, harness

from test_ask import Session, answer, pending, wait_pending

BUSYBOX = "/bin/busybox"
ASK = os.path.join(POLICIES, "ask.yaml")

# Runs each argv (a JSON list of lists; {"exe": PATH, "argv": [...]}
# for an argv[0] that is not the file) and prints "<i> <rc or errno>".
RUNNER = """
import json, subprocess, sys
for i, argv in enumerate(json.loads(sys.argv[1])):
    exe = None
    if isinstance(argv, dict):
        exe, argv = argv["exe"], argv["argv"]
    try:
        r = subprocess.run(argv, executable=exe, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL).returncode
    except OSError as e:
        r = "errno%d" % e.errno
    print(i, r, flush=True)
"""


def run_each(wd, cmds, **kw):
    r = harness([PYTHON, "-c", RUNNER, json.dumps(cmds)], wd, **kw)
    out = dict(line.split() for line in r.stdout.splitlines())
    return r, [out.get(str(i)) for i in range(len(cmds))]


def execs(r, argv):
    return [x for x in r.records if x.get("op") == "exec" and (x.get("args") or {}).get("argv") == argv]


def test_a_command_is_judged_as_what_it_runs(wd):
    """cd sub && git push, bash -lc 'git push', env X=1 git push, xargs
    git push, git -C: judged as git push (the policy asks: refused here,
    nobody answers), before any of it runs; git push as an argument is
    no git push."""
    os.makedirs(os.path.join(wd.path, "sub"))
    cmds = [["sh", "-c", "cd sub && git push origin main"],
            ["bash", "-lc", "git push"],
            ["env", "X=1", "git", "push"],
            ["sh", "-c", "echo origin | xargs git push"],
            ["xargs", "git", "push"],
            ["git", "-C", "sub", "push"],
            ["sh", "-c", "eval 'git push'"],
            ["sh", "-c", "echo git push; touch sub/ran"],
            ["sh", "-c", "touch sub/first; git status >/dev/null 2>&1; git push x"]]
    r, got = run_each(wd, cmds, policy=ASK)
    check(got[:7] == ["errno13"] * 7, "not refused as git push: %r\n%s" % (got, r.dump()))
    check(got[7] == "0" and os.path.exists(os.path.join(wd.path, "sub", "ran")),
          "an argument was judged as a command: %r" % got)
    # the whole script is judged before it runs: nothing of it ran
    check(got[8] == "errno13" and not os.path.exists(os.path.join(wd.path, "sub", "first")), "%r" % got)
    for argv, part in ((cmds[0], "git push origin main"), (cmds[1], "git push"), (cmds[2], "git push"),
                       (cmds[3], "git push [input]"), (cmds[5], "git push")):
        rec = execs(r, argv)
        check(rec and rec[0]["verdict"] == "ask" and rec[0]["rule"] == "ask-push" and
              rec[0]["judged_as"] == part and rec[0]["class"] == "network",
              "%r: %r" % (argv, rec[:1]))
    check(not [x for x in r.records if x.get("op") == "exec" and (x.get("args") or {}).get("argv", [""])[0] == "git"
               and x.get("verdict") == "allow"], "a git ran")


def test_the_kernel_layer_reads_it_too(wd):
    """A static program (no shim) execs a script: the kernel layer judges
    it as the shim would."""
    os.makedirs(os.path.join(wd.path, "sub"))
    r = harness([BUSYBOX, "sh", "-c", "sh -c 'cd sub && git push origin main'; echo rc=$?"], wd, policy=ASK)
    check("rc=126" in r.stdout or "rc=127" in r.stdout, "%r %r" % (r.stdout, r.stderr))
    rec = [x for x in execs(r, ["sh", "-c", "cd sub && git push origin main"]) if x.get("layer") == "kernel"]
    check(rec and rec[0]["verdict"] == "ask" and rec[0]["judged_as"] == "git push origin main",
          "kernel records %r\n%s" % (rec, r.dump()))


def test_unparsable_and_destructive_are_asked_by_default(wd):
    """The default policy asks for a script that cannot be read ahead
    and for what a checkpoint cannot bring back (removal outside the
    workspace); inside the workspace it is the agent's work."""
    victim = tempfile.mkdtemp(prefix="hx-victim-", dir=os.path.expanduser("~"))
    try:
        open(os.path.join(victim, "keep"), "w").close()
        os.makedirs(os.path.join(wd.path, "build"))
        home, name = os.path.split(victim)
        cmds = [["sh", "-c", 'X="echo hi"; eval "$X"'],
                ["sh", "-c", "echo ${X:-$(id)}"],
                ["rm", "-rf", victim],
                ["sh", "-c", "cd %s/.. && rm -rf %s" % (victim, name)],
                [BUSYBOX, "sh", "-c", "rm -rf %s" % victim],
                ["find", victim, "-delete"],
                ["rm", "-r", victim],
                # the file that runs is rm, whatever argv[0] says
                {"exe": "/bin/rm", "argv": ["ls", "-rf", victim]},
                ["sh", "-c", "ls | wc -l"],
                ["rm", "-rf", "build"],
                # rm -rf hl/NAME is beneath where hl leads, not in $CWD:
                # the script is fine when read (no hl yet), its rm is not
                ["sh", "-c", "ln -s %s hl && rm -rf hl/%s" % (home, name)]]
        r, got = run_each(wd, cmds, policy=None)
        check(got == ["errno13"] * 8 + ["0", "0", "126"], "%r\n%s" % (got, r.dump()))
        via_link = execs(r, ["rm", "-rf", "hl/" + name])
        check(via_link and via_link[0]["class"] == "destructive" and via_link[0]["rule"] == "destructive",
              "rm through the link: %r" % via_link[:1])
        check(os.path.exists(os.path.join(victim, "keep")), "the victim was removed")
        check(not os.path.exists(os.path.join(wd.path, "build")), "rm -rf build did not run")
        for argv, rule in ((cmds[0], "unparsable"), (cmds[1], "unparsable"), (cmds[2], "destructive"),
                           (cmds[3], "destructive"), (cmds[5], "destructive")):
            rec = execs(r, argv)
            check(rec and rec[0]["rule"] == rule and rec[0]["class"] == rule and rec[0]["verdict"] == "ask",
                  "%r: %r" % (argv, rec[:1]))
        check(execs(r, cmds[9])[0]["class"] == "mutating", "rm -rf build: %r" % execs(r, cmds[9]))
        check(execs(r, ["ls", "-rf", victim])[0]["class"] == "destructive", "argv[0] ls of rm")
    finally:
        shutil.rmtree(victim, ignore_errors=True)


def test_an_answer_on_a_script_covers_what_it_showed(wd):
    """Allowed once, sh -c 'cd sub && git push origin main; sh more.sh'
    runs its git push unasked (the same process tree, the words shown,
    in the directory shown); what more.sh runs in that tree is asked
    (git push --force: words not shown; the same git push in another
    directory), and so is a git push outside the tree."""
    os.makedirs(os.path.join(wd.path, "sub"))
    wd.file("sub/more.sh", "git push --force origin main 2>/dev/null; echo b=$?\n"
                           "cd .. && git push origin main 2>/dev/null; echo c=$?\n")
    script = "cd sub && git push origin main 2>/dev/null; echo a=$?; sh more.sh"
    s = Session(wd, [PYTHON, "-c", RUNNER, json.dumps([["sh", "-c", script], ["git", "push", "origin", "main"]])],
                timeout=30)
    q = wait_pending(wd, s)
    check(q["op"] == "exec" and q["argv"] == ["sh", "-c", script] and q.get("judged_as") == "git push origin main" and
          "which runs git push origin main" in q["what"], "question %r" % q)
    answer(wd, "approve", q["id"])
    later = []
    for _ in range(3):
        q2 = wait_pending(wd, s)
        later.append((q2["argv"], q2.get("cwd")))
        answer(wd, "deny", q2["id"])
    s.finish()
    sub = os.path.join(wd.path, "sub")
    check(later == [(["git", "push", "--force", "origin", "main"], sub), (["git", "push", "origin", "main"], wd.path),
                    (["git", "push", "origin", "main"], wd.path)], "asked after the script's answer: %r" % later)
    check(s.stdout.split() == ["0", "0", "1", "errno13"], "%r %r" % (s.stdout, s.stderr[-1500:]))
    covered = [r for r in s.records if (r.get("grant") or "").startswith("script ")]
    check(covered and all(r["args"]["argv"] == ["git", "push", "origin", "main"] and r["verdict"] == "allow" and
                          r["cwd"] == sub for r in covered), "covered %r" % covered)
    check(len(s.asked()) == 4, "questions %r" % [r["args"].get("argv") for r in s.asked()])


def test_a_parsed_part_never_allows(wd):
    """A policy that denies exec but allows git status: sh -c 'git
    status' is sh's exec, denied; the parse adds meaning, not
    permission."""
    pol = os.path.join(wd.state, "p.yaml")
    with open(pol, "w") as f:
        f.write("version: 1\nmode: enforce\ndefaults:\n  exec: deny\n  file_read: allow\n"
                "  file_write: deny\nfiles:\n  - allow: [\"/dev/null\"]\n    access: write\nexec:\n  - allow: [\"%s *\", \"/usr/bin/git status\"]\n"
                % os.path.realpath(PYTHON))
    r, got = run_each(wd, [["sh", "-c", "git status"], ["git", "status"]], policy=pol)
    check(got[0] == "errno13", "sh -c 'git status' allowed by its part: %r\n%s" % (got, r.dump()))
    rec = execs(r, ["sh", "-c", "git status"])
    check(rec and rec[0]["rule"] == "default:exec", "%r\n%s" % (rec[:1], r.dump()))
