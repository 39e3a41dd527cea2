"""Alerts (the policy's alerts:, issue 14 item 5): each condition fires on
a scripted agent and its action happens: the notify hook runs outside
the sandbox with the alert as JSON, pause freezes the whole tree until
`harness-exec resume`, ask turns the next call into a question, kill
ends the session; a failed checkpoint and a nearly full disk are
alerts too. Through the shim (python, sh) and without it (static
busybox). That no alert fires on real programs under the default
policy is checked in test_programs.py."""

import json
import os
import subprocess
import time

from lib import EXEC, PYTHON, Skip, check, harness, read_log
from test_metrics import wait_for
from test_worktree import make_repo

BUSYBOX = "/bin/busybox"

BASE = """version: 1
files:
  - id: project
    allow: ["$CWD/**", "$TMPDIR/**", "/dev/null"]
    access: write
  - id: test-secret
    deny: ["$CWD/secret/**"]
exec:
  - id: no-push
    deny: ["git push *"]
alerts:
"""


def policy(wd, alerts):
    p = os.path.join(wd.state, "alerts-%d.yaml" % len(os.listdir(wd.state)))
    with open(p, "w") as f:
        f.write(BASE + alerts)
    return p


def alerts_of(records):
    return [r for r in records if r.get("event") == "alert"]


def env_of(wd):
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    e.pop("HARNESS_SOCKET", None)
    return e


def start(wd, pol, cmd, *extra, cwd=None):
    log = os.path.join(wd.state, "audit-%d.jsonl" % len(os.listdir(wd.state)))
    argv = [EXEC, "--quiet", "--ask-timeout", "0", "--policy", pol, "--audit-log", log]
    argv += list(extra) + ["--"] + list(cmd)
    p = subprocess.Popen(argv, cwd=cwd or wd.path, env=env_of(wd), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    return p, log


def test_denial_streak_runs_the_hook_outside_the_sandbox(wd):
    # The hook writes where the agent may not (secret/ is denied to it):
    # it runs as harness-exec's child, not under the agent's layers.
    out = os.path.join(wd.path, "secret", "hook.json")
    pol = policy(wd, """  - id: streak
    when: consecutive_denials
    count: 10
    action: notify
    command: ["sh", "-c", 'cat > "$0"; env > "$0.env"', "%s"]
""" % out)
    script = "\n".join([
        "import os",
        "for i in range(12):",
        "    try: open('secret/key').read()",
        "    except OSError: pass",
    ])
    r = harness([PYTHON, "-c", script], wd, policy=pol)
    r.expect_status(0)
    al = alerts_of(r.records)
    check(len(al) == 1, "one alert for 12 denials at 10: %r" % al)
    a = al[0]
    py = [x for x in r.records if x.get("rule") == "test-secret"]
    check(a["alert"] == "streak" and a["when"] == "consecutive_denials" and
          a["value"] == 10 and a["actions"] == ["notify"], "alert %r" % a)
    check(a["tree"] == py[0]["pid"] and a["last_pid"] == py[0]["pid"], "tree %r vs %r" % (a, py[0]))
    check(a["origin"] == "%s:%d" % (pol, BASE.count("\n") + 1), "origin %r" % a["origin"])
    # the 10th denial came before the alert, the 11th after
    check(py[9]["seq"] < a["seq"] < py[10]["seq"], "order %r" % [x["seq"] for x in py])
    wait_for("the hook's output", lambda: os.path.exists(out + ".env"))
    got = json.loads(open(out).read())
    check(got["seq"] == a["seq"], "hook got %r, logged as %r" % (got, a["seq"]))
    check(got["alert"] == "streak" and got["reason"] == a["reason"], "hook JSON %r" % got)
    env = open(out + ".env").read()
    check("HARNESS_ALERT=streak" in env and "HARNESS_SESSION=%s" % a["session"] in env,
          "hook env %r" % env[-500:])
    check("LD_PRELOAD" not in env and "HARNESS_SOCKET" not in env, "no shim in the hook")


def test_a_hook_never_runs_what_the_agent_wrote(wd):
    # The hook runs outside the sandbox: a script it names in the project,
    # or a program found on a PATH entry the agent may write, would be
    # the agent's code run unconfined. The agent plants both, then makes
    # the alerts fire; neither runs, and the log says why.
    marker = os.path.join(wd.state, "escaped")
    bindir = os.path.join(wd.path, "bin")
    os.makedirs(bindir)
    script = os.path.join(wd.path, "hook.sh")
    pol = policy(wd, """  - id: by-script
    when: consecutive_denials
    count: 3
    action: notify
    command: ["sh", "%s"]
  - id: by-path
    when: consecutive_denials
    count: 3
    action: notify
    command: ["hx-notifier"]
""" % script)
    evil = "#!/bin/sh\n: > %s\n" % marker
    agent = "\n".join([
        "import os",
        "for p in (%r, %r):" % (script, os.path.join(bindir, "hx-notifier")),
        "    open(p, 'w').write(%r)" % evil,
        "    os.chmod(p, 0o755)",
        "for i in range(3):",
        "    try: open('secret/key').read()",
        "    except OSError: pass",
    ])
    r = harness([PYTHON, "-c", agent], wd, policy=pol,
                env={"PATH": bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin")})
    r.expect_status(0)
    check(len(r.alerts()) == 2, "both fired: %r" % r.alerts())
    time.sleep(0.5)
    check(not os.path.exists(marker), "a hook ran the agent's file")
    failed = {x["trigger"]: x["error"] for x in r.records if x.get("event") == "alert_notify_failed"}
    check("may write" in failed.get("by-script", "") and "may write" in failed.get("by-path", ""),
          "refusals recorded: %r" % failed)


def test_an_allowed_call_breaks_the_streak(wd):
    pol = policy(wd, """  - id: streak
    when: consecutive_denials
    count: 5
""")
    script = "\n".join([
        "for i in range(12):",
        "    try: open('secret/key').read()",
        "    except OSError: pass",
        "    if i % 4 == 3: open('ok-%d' % i, 'w').close()",
    ])
    r = harness([PYTHON, "-c", script], wd, policy=pol)
    r.expect_status(0)
    check(not alerts_of(r.records), "4 in a row at most: %r" % alerts_of(r.records))


def test_a_tree_of_short_processes_is_one_streak(wd):
    # Each denied exec is a process of its own, one call each: the
    # streak is the shell's tree's.
    pol = policy(wd, """  - id: streak
    when: consecutive_denials
    count: 6
""")
    r = harness(["sh", "-c", "for i in 1 2 3 4 5 6 7; do /usr/bin/git push; done; true"],
                wd, policy=pol)
    r.expect_status(0)
    al = alerts_of(r.records)
    check(len(al) == 1, "one alert: %r\n%s" % (al, r.dump()))
    pushes = [x for x in r.records if x.get("rule") == "no-push"]
    check(len({x["pid"] for x in pushes}) == 7, "7 processes: %r" % [x["pid"] for x in pushes])
    check(al[0]["tree"] == pushes[0]["ppid"] and al[0]["last_pid"] == pushes[5]["pid"],
          "the tree is the shell's: %r" % al)


def test_forked_children_are_one_streak(wd):
    # Each child's start (its HELLO, allowed) is no call of the agent's:
    # it must not break the streak of the tree.
    pol = policy(wd, """  - id: streak
    when: consecutive_denials
    count: 5
""")
    script = "\n".join([
        "import os",
        "for i in range(8):",
        "    pid = os.fork()",
        "    if pid == 0:",
        "        try: open('secret/key').read()",
        "        except OSError: pass",
        "        os._exit(0)",
        "    os.waitpid(pid, 0)",
    ])
    r = harness([PYTHON, "-c", script], wd, policy=pol)
    r.expect_status(0)
    check(len(r.alerts()) == 1, "one alert for 8 forked refusals: %r" % r.alerts())


def test_exec_rate_kills_the_session(wd):
    pol = policy(wd, """  - id: fork-bomb
    when: rate
    category: exec
    count: 30
    window: 10s
    action: kill
""")
    done = os.path.join(wd.path, "done")
    r = harness(["sh", "-c", "i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); done; : > %s" % done],
                wd, policy=pol)
    check(r.status == 128 + 9, "killed: status %s, %s" % (r.status, r.stderr[-500:]))
    check(not os.path.exists(done), "the loop was stopped before its end")
    al = alerts_of(r.records)
    check(len(al) == 1 and al[0]["when"] == "rate" and al[0]["actions"] == ["kill"] and
          al[0]["value"] == 30, "alert %r" % al)
    execs = [x for x in r.records if x.get("event") == "exec" and x.get("seq", 0) > al[0]["seq"]]
    check(len(execs) < 20, "%d execs after the kill" % len(execs))
    check(r.records[-1]["event"] == "session_end", "session_end last")


def test_static_program_burst_pauses_until_resume(wd):
    # A static busybox (no shim: the kernel layer's records) reads the
    # secret 5 times, then counts; pause freezes it until resume.
    if not os.path.exists(BUSYBOX):
        raise Skip("no static busybox")
    pol = policy(wd, """  - id: secrets
    when: sensitive_burst
    count: 5
    window: 30s
    rules: ["test-*"]
    action: pause
""")
    count = os.path.join(wd.path, "count")
    stop = os.path.join(wd.state, "stop")
    sh = ("for i in 1 2 3 4 5 6; do %s cat secret/key 2>/dev/null; done; n=0; "
          "while [ ! -e %s ]; do n=$((n+1)); echo $n > count.tmp; %s mv count.tmp count; "
          "%s sleep 0.05; done" % (BUSYBOX, stop, BUSYBOX, BUSYBOX))
    p, log = start(wd, pol, [BUSYBOX, "sh", "-c", sh], "--trace-reads")
    try:
        al = wait_for("the alert", lambda: alerts_of(read_log(log)))
        check(al[0]["when"] == "sensitive_burst" and al[0]["actions"] == ["pause"], "alert %r" % al)
        time.sleep(0.5)
        c1 = open(count).read() if os.path.exists(count) else ""
        time.sleep(1.5)
        c2 = open(count).read() if os.path.exists(count) else ""
        check(c1 == c2, "paused: count went %r -> %r" % (c1, c2))
        check(p.poll() is None, "the session waits")
        r = subprocess.run([EXEC, "resume"], env=env_of(wd), capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 0 and "resumed" in r.stdout, "resume: %r %r" % (r.stdout, r.stderr))
        wait_for("counting again", lambda: os.path.exists(count) and open(count).read() != c2)
        r = subprocess.run([EXEC, "resume"], env=env_of(wd), capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 1 and "not paused" in r.stderr, "second resume: %r" % (r.stderr,))
        open(stop, "w").close()
        p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    check(p.returncode == 0, "status %s" % p.returncode)
    recs = read_log(log)
    res = [x for x in recs if x.get("event") == "resumed"]
    check(len(res) == 1 and res[0]["by"] == "harness-exec resume" and res[0]["paused_ms"] >= 1500,
          "resumed %r" % res)
    check(len(alerts_of(recs)) == 1, "one alert: the 6th read is counted afresh")


def test_signal_ends_a_paused_session(wd):
    pol = policy(wd, """  - id: secrets
    when: sensitive_burst
    count: 2
    window: 30s
    action: pause
""")
    p, log = start(wd, pol, ["sh", "-c", "cat secret/key; cat secret/key; sleep 60"])
    wait_for("the alert", lambda: alerts_of(read_log(log)))
    t0 = time.time()
    os.kill(p.pid, 15)
    p.communicate(timeout=30)
    check(time.time() - t0 < 10, "SIGTERM ended the paused session in %.1fs" % (time.time() - t0))
    res = [x for x in read_log(log) if x.get("event") == "resumed"]
    check(res and res[0]["by"] == "signal", "resumed by the signal: %r" % res)


def test_ask_turns_the_next_call_into_a_question(wd):
    pol = policy(wd, """  - id: careful
    when: consecutive_denials
    count: 3
    action: ask
""")
    script = "\n".join([
        "import sys",
        "for i in range(3):",
        "    try: open('secret/key').read()",
        "    except OSError: pass",
        "for name in ('first', 'second'):",
        "    try: open(name, 'w').close(); print(name, 'ok')",
        "    except OSError as e: print(name, e.errno)",
    ])
    r = harness([PYTHON, "-c", script], wd, policy=pol)
    r.expect_status(0)
    # ask_timeout 0: nobody answers, the question is a refusal
    check(r.stdout.split("\n")[:2] == ["first 13", "second ok"], "stdout %r" % r.stdout)
    first = [x for x in r.records if x.get("args", {}).get("path", "").endswith("/first")]
    check(first and first[0]["verdict"] == "ask" and first[0]["rule"] == "alert:careful",
          "first write %r" % first)


def test_failed_checkpoint_is_an_alert(wd):
    repo = make_repo(wd)
    pol = policy(wd, """  - id: ckpt
    when: checkpoint_failed
""")
    stop, go = os.path.join(wd.state, "stop"), os.path.join(wd.state, "go")
    # y is written once checkpoint 0 is made and its ref's directory is
    # gone (by the shell itself: no process, so no checkpoint of its
    # own): a busy machine made checkpoint 0 after "echo x", and the
    # checkpoint asked for then had nothing to write ("unchanged").
    script = ("echo x > x; while [ ! -e {go} ]; do sleep 0.1; done; echo y > y; "
              "while [ ! -e {stop} ]; do sleep 0.1; done").format(go=go, stop=stop)
    p, log = start(wd, pol, ["sh", "-c", script], "--worktree", "--session", "ck1", cwd=repo)
    try:
        refs = os.path.join(repo, ".git", "refs", "harness", "ck1", "checkpoints")
        wait_for("checkpoint 0", lambda: os.path.exists(os.path.join(refs, "0")))
        os.rename(refs, refs + ".away")
        open(refs, "w").close()  # no directory for the next ref
        open(go, "w").close()
        wait_for("y written", lambda: [x for x in read_log(log) if x.get("op") == "write" and
                                       x.get("args", {}).get("path", "").endswith("/y")])
        r = subprocess.run([EXEC, "checkpoint", "ck1"], cwd=repo, env=env_of(wd),
                           capture_output=True, text=True, timeout=30)
        check(r.returncode != 0, "the checkpoint failed: %r" % (r.stdout,))
        al = wait_for("the alert", lambda: alerts_of(read_log(log)))
        open(stop, "w").close()
        p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        if os.path.isfile(refs):
            os.unlink(refs)
            os.rename(refs + ".away", refs)
    recs = read_log(log)
    failed = [x for x in recs if x.get("event") == "checkpoint_failed"]
    check(failed and failed[0]["seq"] < al[0]["seq"] and al[0]["when"] == "checkpoint_failed",
          "checkpoint_failed then alert: %r %r" % (failed, al))
    check("Not a directory" in failed[0]["error"] or "directory" in failed[0]["error"],
          "error %r" % failed[0]["error"])


def test_disk_low_fires_once(wd):
    # No file system has 1000 TiB free: low from the first look, said once.
    pol = policy(wd, """  - id: disk
    when: disk_low
    free: 1000T
  - id: share
    when: disk_low
    free: 100%
""")
    r = harness(["sh", "-c", "sleep 2.5"], wd, policy=pol)
    r.expect_status(0)
    al = alerts_of(r.records)
    check(sorted(a["alert"] for a in al) == ["disk", "share"], "each once: %r" % al)
    st = os.statvfs(r.log)
    check(abs(al[0]["value"] - st.f_bavail * st.f_frsize) < (1 << 30), "free bytes %r" % al[0]["value"])
