"""The kernel's OOM killer chooses the largest process, weighted by its
oom_score_adj. An agent that exhausts memory with many processes, each
a little smaller than harness-exec, made harness-exec the choice: the
session then ended with neither its anchor nor session_end. The agent's
processes are now first in line (oom_score_adj 500 at least; harness-exec
keeps its own), and no process of the session writes an oom_score_adj,
its own or harness-exec's, by any name, in enforce or audit mode (rule
harness:oom-score)."""

import os
import signal
import subprocess
import time

from lib import EXEC, HELPERS, Skip, Started, check, harness, read_log

# The agent (python, through the shim): its own value, then every name
# of an oom_score_adj written; each outcome on a line. It then waits for
# the test to read harness-exec's value (the file "read" appears).
WRITES = r'''
import os, sys, time
def write(name, path, value):
    try:
        with open(path, "w") as f:
            f.write(value)
        print(name, "OK")
    except OSError as e:
        print(name, e.errno)
print("own", open("/proc/self/oom_score_adj").read().strip())
os.symlink("/proc/self/oom_score_adj", "link")
fd = os.open("/proc/self/oom_score_adj", os.O_RDONLY)
write("self", "/proc/self/oom_score_adj", "0")
write("thread-self", "/proc/thread-self/oom_score_adj", "0")
write("task", "/proc/self/task/%d/oom_score_adj" % os.getpid(), "0")
write("pid", "/proc/%d/oom_score_adj" % os.getpid(), "0")
write("legacy", "/proc/self/oom_adj", "0")
write("link", "link", "0")
write("fd", "/proc/self/fd/%d" % fd, "0")
os.chdir("/proc/self")
write("relative", "oom_score_adj", "0")
write("harness-exec", "/proc/%d/oom_score_adj" % os.getppid(), "1000")
print("after", open("/proc/self/oom_score_adj").read().strip())
sys.stdout.flush()
open(sys.argv[1] + "/ready", "w").write(str(os.getppid()))
for _ in range(200):
    if os.path.exists(sys.argv[1] + "/read"):
        break
    time.sleep(0.05)
'''

NAMES = ("self", "thread-self", "task", "pid", "legacy", "link", "fd", "relative",
         "harness-exec")


def _adj(pid):
    return int(open("/proc/%d/oom_score_adj" % pid).read())


def _writes_refused(wd, mode):
    before = _adj(os.getpid())
    s = Started(["python3", "-c", WRITES, wd.path], wd, policy=None, mode=mode)
    ready = os.path.join(wd.path, "ready")
    for _ in range(200):
        if os.path.exists(ready) and open(ready).read():
            break
        time.sleep(0.05)
    ppid = int(open(ready).read())
    supervisor = _adj(ppid)
    open(os.path.join(wd.path, "read"), "w").close()
    r = s.join()
    out = dict(l.split(" ", 1) for l in r.stdout.splitlines())
    print("# %s: %r; harness-exec %d" % (mode, out, supervisor))
    check(int(out["own"]) >= 500 and out["after"] == out["own"],
          "%s: the agent's oom_score_adj %r, then %r" % (mode, out["own"], out["after"]))
    for name in NAMES:
        check(out.get(name) == "13", "%s: the write by %s: %r" % (mode, name, out.get(name)))
    # harness-exec's own: its parent's, never raised.
    want = before
    check(supervisor == want, "%s: harness-exec's oom_score_adj %d, not %d"
          % (mode, supervisor, want))
    refused = [x for x in r.records if x.get("rule") == "harness:oom-score"]
    check(len(refused) == len(NAMES) and all(x["verdict"] == "deny" for x in refused),
          "%s: %d refusals recorded: %r" % (mode, len(refused),
                                            [x["args"]["path"] for x in refused]))
    start = r.one(event="session_start")
    check(start["kernel"]["oom_score_adj"] == {"harness": want, "agent": max(500, want)},
          "%s: session_start says %r" % (mode, start["kernel"]["oom_score_adj"]))


def test_no_oom_score_adj_written_by_the_agent(wd):
    _writes_refused(wd, None)


def test_no_oom_score_adj_written_by_the_agent_in_audit_mode(wd):
    # Audit mode enforces nothing of the policy, but the session's
    # standing with the OOM killer is the harness's.
    _writes_refused(wd, "audit")


def test_no_oom_score_adj_written_by_a_static_program(wd):
    # busybox is static: the shim is not in it; the kernel layer decides.
    for mode in (None, "audit"):
        r = harness(["/bin/busybox", "sh", "-c",
                     "echo 0 > /proc/self/oom_score_adj; echo 0 > /proc/self/oom_adj;"
                     " cat /proc/self/oom_score_adj"], wd, policy=None, mode=mode)
        check(r.stdout.strip() == "500", "%s: busybox's value: %r %r"
              % (mode, r.stdout, r.stderr))
        refused = [x for x in r.records if x.get("rule") == "harness:oom-score"]
        check(len(refused) == 2 and all(x["layer"] == "kernel" for x in refused),
              "%s: the kernel layer's refusals: %r" % (mode, refused))


# The flood (a static program): children of 3 MiB each, smaller than
# harness-exec's resident set (about 5 MiB), made until the memory
# limit has killed five of them.
FLOOD = os.path.join(HELPERS, "static_oom_flood")


def _memory_cgroup(limit):
    """A memory cgroup (v1) below ours, limited to limit bytes, or Skip."""
    if os.getuid() != 0:
        raise Skip("a memory cgroup of the test's own needs root")
    mine = [l.rstrip("\n").split(":", 2) for l in open("/proc/self/cgroup")]
    for _, ctl, path in mine:
        if "memory" in ctl.split(","):
            base = "/sys/fs/cgroup/memory" + path
            if os.path.isdir(base):
                cg = os.path.join(base, "hx-oom-%d" % os.getpid())
                os.mkdir(cg)
                open(cg + "/memory.limit_in_bytes", "w").write(str(limit))
                if os.path.exists(cg + "/memory.memsw.limit_in_bytes"):
                    open(cg + "/memory.memsw.limit_in_bytes", "w").write(str(limit))
                return cg
    for _, ctl, path in mine:
        if ctl == "":
            base = "/sys/fs/cgroup" + path
            if "memory" in open(base + "/cgroup.controllers").read().split():
                cg = os.path.join(base, "hx-oom-%d" % os.getpid())
                try:
                    open(base + "/cgroup.subtree_control", "w").write("+memory")
                    os.mkdir(cg)
                except OSError as e:
                    raise Skip("no memory controller for a child cgroup: %s" % e)
                open(cg + "/memory.max", "w").write(str(limit))
                open(cg + "/memory.swap.max", "w").write("0")
                return cg
    raise Skip("no memory cgroup controller here")


def test_a_memory_flood_ends_the_agents_processes_not_harness_exec(wd):
    cg = _memory_cgroup(160 << 20)
    log = os.path.join(wd.state, "flood.jsonl")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    try:
        p = subprocess.run(
            ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg, EXEC, "--quiet",
             "--audit-log", log, "--", FLOOD, "5", "3072"],
            cwd=wd.path, env=env, capture_output=True, text=True, timeout=120)
    finally:
        for _ in range(50):
            try:
                os.rmdir(cg)
                break
            except OSError:
                time.sleep(0.1)
    print("# %r %r" % (p.stdout, p.stderr[-300:]))
    check(p.returncode == 0, "harness-exec ended %d (%s): %s"
          % (p.returncode, p.returncode < 0 and signal.Signals(-p.returncode).name,
             p.stderr[-300:]))
    check(p.stdout.startswith("killed ") and int(p.stdout.split()[1]) >= 5,
          "the flood did not reach the limit: %r" % p.stdout)
    recs = read_log(log)
    check(recs[-1]["event"] == "session_end", "the log ends with %r" % recs[-1]["event"])
