"""Attacks on the alerts' actions (docs/alerts.md) by the agent they
watch: what the notify hook, which runs outside the sandbox, finds
through its environment; who a pause, a kill and a resume reach; what
the alert records count. Each test plants what a hostile agent would,
makes the alert fire, and checks that the forbidden effect did not
happen and that the log says what did."""

import json
import os
import shutil
import subprocess
import time

from lib import EXEC, PYTHON, Skip, check, harness, preload_library, read_log
from test_alerts import alerts_of, env_of, policy, start
from test_metrics import samples, scrape, wait_for
from test_metrics import start as metrics_start

BUSYBOX = "/bin/busybox"
EVIL = "#!/bin/sh\n: > %s\n"


def test_a_hook_finds_nothing_of_the_agents_through_its_environment(wd):
    # The user's PATH names a directory of the project (a venv's bin,
    # node_modules/.bin: what direnv or `source .venv/bin/activate`
    # give), and BASH_ENV a file in it. The hook's programs are system
    # ones, but the shell it runs looks `cat` up on that PATH, and bash
    # sources BASH_ENV: the agent's code would run outside the sandbox.
    # Neither runs; the hooks still do their work. A program of the
    # agent's named like the hook's own (`sh`) earlier on that PATH
    # neither runs nor keeps the user's from running (it made the hook
    # "not run": the agent silenced it).
    marker = os.path.join(wd.state, "escaped")
    bindir = os.path.join(wd.path, "bin")
    os.makedirs(bindir)
    bash_env = os.path.join(wd.path, "env.sh")
    out = os.path.join(wd.state, "by-path.json")
    out2 = os.path.join(wd.state, "by-bash-env.json")
    out3 = os.path.join(wd.state, "by-shadow.json")
    pol = policy(wd, """  - id: by-path
    when: consecutive_denials
    count: 3
    action: notify
    command: ["/bin/sh", "-c", 'cat > "$0"', "%s"]
  - id: by-bash-env
    when: consecutive_denials
    count: 3
    action: notify
    command: ["/bin/bash", "-c", '/bin/cat > "$0"', "%s"]
  - id: by-shadow
    when: consecutive_denials
    count: 3
    action: notify
    command: ["sh", "-c", 'cat > "$0"', "%s"]
""" % (out, out2, out3))
    agent = "\n".join([
        "import os",
        "for p in (%r, %r, %r):" % (os.path.join(bindir, "cat"), os.path.join(bindir, "sh"),
                                    bash_env),
        "    open(p, 'w').write(%r)" % (EVIL % marker),
        "    os.chmod(p, 0o755)",
        "for i in range(3):",
        "    try: open('secret/key').read()",
        "    except OSError: pass",
    ])
    path = bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin")
    r = harness([PYTHON, "-c", agent], wd, policy=pol,
                env={"PATH": path, "BASH_ENV": bash_env})
    r.expect_status(0)
    al = {a["alert"]: a for a in alerts_of(r.records)}
    check(set(al) == {"by-path", "by-bash-env", "by-shadow"}, "all fired: %r" % al)
    # the shells' redirections make the files first, whatever runs next
    wait_for("the hooks", lambda: all(os.path.exists(f) for f in (out, out2, out3)))
    time.sleep(0.5)
    check(not os.path.exists(marker), "a hook ran the agent's file (PATH, BASH_ENV)")
    for f, name in ((out, "by-path"), (out2, "by-bash-env"), (out3, "by-shadow")):
        got = json.loads(open(f).read())
        check(got["alert"] == name and got["seq"] == al[name]["seq"],
              "hook %s got %r, logged %r" % (name, got, al[name]))
    check(not r.events(event="alert_notify_failed"), "the hooks ran: %r" %
          r.events(event="alert_notify_failed"))


def test_a_pause_holds_a_fast_forker(wd):
    # Without a cgroup of its own (an ordinary user) a pause stopped each
    # process with SIGSTOP in four scans of /proc: a chain of processes
    # that each fork the next and exit is never where a scan looks, and
    # SIGCONTs the rest of its group. Every process of the tree, and the
    # chain, must stand still until `harness-exec resume`.
    pol = policy(wd, """  - id: secrets
    when: sensitive_burst
    count: 2
    window: 30s
    action: pause
""")
    stop = os.path.join(wd.state, "stop")
    agent = "\n".join([
        "import os, signal, time",
        "main = os.open('main.count', os.O_WRONLY | os.O_CREAT, 0o644)",
        "chain = os.open('chain.count', os.O_WRONLY | os.O_CREAT, 0o644)",
        "if os.fork() == 0:",
        "    n = 0",
        "    while not os.path.exists(%r):" % stop,
        "        n += 1",
        "        if os.fork():",
        "            os._exit(0)",
        "        os.pwrite(chain, b'%12d' % n, 0)",
        "        try: os.kill(0, signal.SIGCONT)",
        "        except OSError: pass",
        "    os._exit(0)",
        "time.sleep(0.5)",
        "for i in range(2):",
        "    try: open('secret/key').read()",
        "    except OSError: pass",
        "n = 0",
        "while not os.path.exists(%r):" % stop,
        "    n += 1",
        "    os.pwrite(main, b'%12d' % n, 0)",
        "    time.sleep(0.01)",
    ])
    p, log = start(wd, pol, [PYTHON, "-c", agent])
    counts = [os.path.join(wd.path, f) for f in ("main.count", "chain.count")]
    try:
        al = wait_for("the alert", lambda: alerts_of(read_log(log)))
        check(al[0]["actions"] == ["pause"], "alert %r" % al)
        time.sleep(0.5)
        c1 = [open(f).read() for f in counts]
        time.sleep(1.5)
        c2 = [open(f).read() for f in counts]
        check(c1 == c2, "paused: the counts went %r -> %r" % (c1, c2))
        r = subprocess.run([EXEC, "resume"], env=env_of(wd), capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 0, "resume: %r %r" % (r.stdout, r.stderr))
        wait_for("counting again", lambda: [open(f).read() for f in counts][0] != c2[0])
        open(stop, "w").close()
        p.communicate(timeout=30)
    finally:
        open(stop, "w").close()
        if p.poll() is None:
            p.kill()
            p.communicate()
    check(p.returncode == 0, "status %s" % p.returncode)
    recs = read_log(log)
    res = [x for x in recs if x.get("event") == "resumed"]
    check(len(res) == 1 and res[0]["by"] == "harness-exec resume" and res[0]["paused_ms"] >= 2000,
          "resumed %r" % res)
    check(res[0]["paused_by"] != "SIGSTOP", "paused by a mechanism that holds: %r" % res[0])


def test_a_folded_storm_counts_in_full(wd):
    # A program without the shim reading a denied file in a loop: the
    # kernel layer folds the storm into a record and a `repeated: N` one
    # (the log's size), and the alerts counted each record once: 200
    # refused reads were 2 or 3 counts, under any burst's threshold.
    if not os.path.exists(BUSYBOX):
        raise Skip("no static busybox")
    pol = policy(wd, """  - id: secrets
    when: sensitive_burst
    count: 50
    window: 1m
  - id: streak
    when: consecutive_denials
    count: 50
""")
    sh = "i=0; while [ $i -lt 200 ]; do read x < secret/key; i=$((i+1)); done 2>/dev/null; true"
    r = harness([BUSYBOX, "sh", "-c", sh], wd, policy=pol)
    r.expect_status(0)
    reads = [x for x in r.records if x.get("rule") == "test-secret"]
    refused = sum(x.get("repeated", 1) for x in reads)
    check(reads and refused >= 200 and len(reads) < 50,
          "a storm of 200 in few records: %d in %d" % (refused, len(reads)))
    al = {a["alert"]: a for a in alerts_of(r.records)}
    check(set(al) == {"secrets", "streak"}, "both fired: %r\n%s" % (al, r.dump()))
    check(al["secrets"]["value"] >= 50 and al["streak"]["value"] >= 50, "values %r" % al)


def test_orphans_are_the_agents_tree(wd):
    # Each refused call made by an orphan (a double fork: its parent is
    # gone, harness-exec, the subreaper, is its parent now) was a tree
    # of its own, one denial each: no streak ever reached the count. An
    # orphan is still of the agent's first process's tree.
    pol = policy(wd, """  - id: streak
    when: consecutive_denials
    count: 8
""")
    agent = "\n".join([
        "import os, time",
        "for i in range(10):",
        "    if os.fork() == 0:",
        "        if os.fork() == 0:",
        "            time.sleep(0.1)",
        "            try: open('secret/key').read()",
        "            except OSError: pass",
        "            os._exit(0)",
        "        os._exit(0)",
        "    os.wait()",
        "    time.sleep(0.2)",
    ])
    r = harness([PYTHON, "-c", agent], wd, policy=pol)
    r.expect_status(0)
    reads = [x for x in r.records if x.get("rule") == "test-secret"]
    hx = r.records[0]["pid"]
    root = r.one(event="process_start", ppid=hx)["pid"]
    check(len(reads) == 10 and all(x["ppid"] == hx for x in reads),
          "10 refusals by orphans of harness-exec %d: %r" % (hx, [(x["pid"], x["ppid"]) for x in reads]))
    al = alerts_of(r.records)
    check(len(al) == 1, "one alert: %r\n%s" % (al, r.dump()))
    check(al[0]["tree"] == root and al[0]["value"] == 8 and al[0]["last_pid"] == reads[7]["pid"],
          "the root's tree: %r (root %d)" % (al[0], root))


def test_a_pid_sharing_the_roots_place_does_not_reset_its_streak(wd):
    # The processes' streaks are kept by pid in 4096 places: a process
    # whose pid falls in the agent's first process's place made it
    # forget its count. The agent forks until a child's pid does (a few
    # thousand forks, a second or two), that child tries one refused
    # read, and the root's streak of 20 was never reached.
    pol = policy(wd, """  - id: streak
    when: consecutive_denials
    count: 20
""")
    agent = "\n".join([
        "import os",
        "def deny():",
        "    try: open('secret/key').read()",
        "    except OSError: pass",
        "for i in range(10): deny()",
        "me = os.getpid()",
        "for n in range(40000):",
        "    pid = os.fork()",
        "    if pid == 0:",
        "        if os.getpid() %% 4096 == me %% 4096 and os.getpid() != me:",
        "            deny()",
        "        os._exit(0)",
        "    os.waitpid(pid, 0)",
        "    if pid %% 4096 == me %% 4096: break",
        "for i in range(10): deny()",
    ]) % ()
    r = harness([PYTHON, "-c", agent], wd, policy=pol, timeout=300)
    r.expect_status(0)
    reads = [x for x in r.records if x.get("rule") == "test-secret"]
    root = r.one(event="process_start", ppid=r.records[0]["pid"])["pid"]
    other = [x for x in reads if x["pid"] != root]
    check(len(reads) == 21 and len(other) == 1 and other[0]["pid"] % 4096 == root % 4096,
          "21 refusals, one by a pid in the root's place: %r" % [x["pid"] for x in reads])
    al = alerts_of(r.records)
    check(len(al) == 1 and al[0]["tree"] == root and al[0]["value"] == 20,
          "the root's tree reached 20: %r (root %d)" % (al, root))


BURN = """#include <time.h>
__attribute__((constructor)) static void burn(void)
{
	time_t t = time(0);
	volatile unsigned long x = 0;

	while (time(0) - t < 4)
		x++;
}
"""


def test_the_agents_use_counts_whatever_image_it_runs(wd):
    # harness-exec's helpers were told from the agent by their image (a
    # process running harness-exec's binary was left out of the agent's
    # processes, CPU and memory): an agent that runs that binary with a
    # library of its own preloaded burned a CPU unseen (2.4 s of it
    # while the metrics said 0.0003). Now it counts.
    lib = preload_library(wd.path, "burn", BURN)
    sock = os.path.join(wd.path, "m.sock")
    script = "LD_PRELOAD=%s %s --version >/dev/null & echo up > up; wait" % (lib, EXEC)
    p, log = metrics_start(wd, script, "--metrics", "unix:" + sock)
    try:
        wait_for("the burner", lambda: os.path.exists(os.path.join(wd.path, "up")))
        time.sleep(2.5)
        text = scrape(sock)
    finally:
        out, err = p.communicate(timeout=60)
    check(p.returncode == 0, "exit %s: %s" % (p.returncode, err))
    cpu = list(samples(text, "harness_agent_cpu_seconds_total").values())
    procs = list(samples(text, "harness_agent_processes").values())
    # The burner had 2.5 s; a loaded machine gave it 0.9 s of a CPU
    # (a CI run); unseen, it counted 0.0003.
    check(cpu and cpu[0] >= 0.25, "the agent's CPU: %r" % cpu)
    check(procs and procs[0] >= 2, "the agent's processes (sh and the burner): %r" % procs)
    groups = samples(text, "harness_process_group_processes")
    check(sum(groups.values()) == procs[0], "the groups' processes %r, the agent's %r" % (groups, procs))
    ran = [r for r in read_log(log) if r.get("args", {}).get("path") == os.path.realpath(EXEC)]
    check(ran and ran[0]["verdict"] == "allow", "the exec of harness-exec's binary is in the log")


def test_a_hook_is_not_pointed_at_a_directory_of_the_agents(wd):
    # A hook whose argument names a directory the agent may write (make
    # -C, git -C, --directory=...) reads what the agent put there, its
    # Makefile: the agent's code, run outside the sandbox. Only files
    # were looked at. Neither hook runs, and the log says why.
    if not shutil.which("make"):
        raise Skip("no make")
    marker = os.path.join(wd.state, "escaped")
    sub = os.path.join(wd.path, "hooks")
    os.makedirs(sub)
    pol = policy(wd, """  - id: by-dir
    when: consecutive_denials
    count: 3
    action: notify
    command: ["make", "-s", "-C", "%s"]
  - id: by-option
    when: consecutive_denials
    count: 3
    action: notify
    command: ["make", "-s", "--directory=%s"]
""" % (sub, sub))
    agent = "\n".join([
        "open(%r, 'w').write('all:\\n\\t: > %s\\n')" % (os.path.join(sub, "Makefile"), marker),
        "for i in range(3):",
        "    try: open('secret/key').read()",
        "    except OSError: pass",
    ])
    r = harness([PYTHON, "-c", agent], wd, policy=pol)
    r.expect_status(0)
    check(len(r.alerts()) == 2, "both fired: %r" % r.alerts())
    time.sleep(1)
    check(not os.path.exists(marker), "a hook ran the agent's Makefile")
    failed = {x["trigger"]: x["error"] for x in r.records if x.get("event") == "alert_notify_failed"}
    check("may write" in failed.get("by-dir", "") and "may write" in failed.get("by-option", ""),
          "refusals recorded: %r" % failed)


def test_one_rules_hooks_do_not_crowd_out_anothers(wd):
    # At most 16 hooks run at once, more are skipped. Hooks that take
    # long (a dialog the user has to close) of rules the agent sets off
    # at will (refusals in a row, once a second each) filled every
    # place, and the hook of the alert that mattered did not run. A
    # rule has one hook running at a time; the others keep theirs.
    out = os.path.join(wd.state, "important.json")
    noisy = "".join("""  - id: noisy-%d
    when: consecutive_denials
    count: 1
    action: notify
    command: ["sleep", "30"]
""" % i for i in range(3))
    pol = policy(wd, noisy + """  - id: important
    when: sensitive_burst
    count: 3
    window: 1m
    action: notify
    command: ["/bin/sh", "-c", '/bin/cat > "$0"', "%s"]
""" % out)
    agent = "\n".join([
        "import subprocess, time",
        "for i in range(7):",
        "    try: subprocess.run(['/usr/bin/git', 'push'], stderr=subprocess.DEVNULL)",
        "    except OSError: pass",
        "    time.sleep(1.05)",
        "for i in range(3):",
        "    try: open('secret/key').read()",
        "    except OSError: pass",
    ])
    r = harness([PYTHON, "-c", agent], wd, policy=pol, timeout=120)
    r.expect_status(0)
    al = alerts_of(r.records)
    imp = [a for a in al if a["alert"] == "important"]
    check(len(imp) == 1 and len(al) >= 17, "the noisy ones (%d) and the important one: %r" %
          (len(al) - len(imp), [a["alert"] for a in al]))
    check(os.path.exists(out) and json.loads(open(out).read())["seq"] == imp[0]["seq"],
          "the important alert's hook ran")
    failed = [x for x in r.records if x.get("event") == "alert_notify_failed"]
    check(failed and all(x["trigger"].startswith("noisy-") and "still runs" in x["error"]
                         for x in failed),
          "the noisy ones held back, in the log: %r" % failed)
