"""harness-audit tree and summary on the logs of real runs (issue 14,
item 2): the process tree from the records' pids and ppids, each
process's exit (process_exit, from the exec gate) or signal, its
refusals under it, --denials keeping only the chains that led to one;
summary's top hosts, path prefixes and rules, and latency percentiles."""

import json
import os
import subprocess

from lib import AUDIT_TOOL, EXEC, check, read_log

BUSYBOX_STATIC = "/bin/busybox"  # busybox-static: no shim, the kernel layer decides


def run(wd, script):
    log = os.path.join(wd.state, "audit.jsonl")
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    p = subprocess.run([EXEC, "--quiet", "--ask-timeout", "0", "--audit-log", log, "--", "sh", "-c", script],
                       cwd=wd.path, env=e, capture_output=True, text=True, timeout=120)
    return p, log


def audit(*args):
    return subprocess.run([AUDIT_TOOL] + list(args), capture_output=True, text=True, timeout=60)


SCRIPT = ("cat ~/.ssh/id_rsa 2>/dev/null; "
          "sh -c '%s sh -c \"echo > /etc/hx-tree\" 2>/dev/null; true'; "
          "sh -c 'ls > /dev/null; kill -9 $$'; "
          "python3 -c 'import socket; socket.create_connection((\"192.0.2.7\", 443), 2)' 2>/dev/null; "
          "exit 3" % BUSYBOX_STATIC)


def test_tree_of_a_real_session(wd):
    p, log = run(wd, SCRIPT)
    check(p.returncode == 3, "exit %s: %s" % (p.returncode, p.stderr))
    recs = read_log(log)
    exits = {r["pid"]: r for r in recs if r["event"] == "process_exit"}
    check(exits, "process_exit records from the exec gate")
    t = audit("tree", log, "--json")
    check(t.returncode == 0, t.stderr)
    procs = [json.loads(line) for line in t.stdout.splitlines()]
    root = procs[0]
    check(root["depth"] == 0 and root["exit_code"] == 3 and root["images"][0][:2] == ["sh", "-c"],
          "the agent's first process: %r" % root)
    by_pid = {q["pid"]: q for q in procs}
    for q in procs:
        if q["depth"]:
            check(q["chain"][:-1] == by_pid[q["chain"][-2]]["chain"] and q["chain"][0] == root["pid"],
                  "a chain from the root: %r" % q)
    cat = [q for q in procs if q["images"] and q["images"][-1][0] == "cat"]
    check(len(cat) == 1 and cat[0]["ppid"] == root["pid"] and cat[0]["refused"] == 1 and
          cat[0]["refusals"][0]["target"].endswith("/.ssh/id_rsa") and cat[0]["exit_code"] == 1,
          "cat's refused read under it, and its exit: %r" % cat)
    static = [q for q in procs if any(r["target"] == "/etc/hx-tree" for r in q["refusals"])]
    check(len(static) == 1 and static[0]["depth"] == 2 and static[0]["exe"] == os.path.realpath(BUSYBOX_STATIC),
          "the static program's refusal (kernel layer) two levels down: %r" % static)
    killed = [q for q in procs if q.get("signal") == "SIGKILL"]
    check(len(killed) == 1 and any(im[:1] == ["sh"] for im in killed[0]["images"]),
          "the shell that killed itself: %r" % killed)
    py = [q for q in procs if any("192.0.2.7" in r["target"] for r in q["refusals"])]
    check(py and py[0]["refusals"][0]["op"] == "connect", "the refused connect: %r" % py)
    # --denials: only the chains to a refusal
    d = audit("tree", log, "--json", "--denials")
    kept = [json.loads(line) for line in d.stdout.splitlines()]
    keep = {q["pid"] for q in kept}
    want = {root["pid"]} | {pid for q in procs if q["refused"] for pid in q["chain"]}
    check(keep == want, "--denials kept %r, the chains to refusals are %r" % (keep, want))
    text = audit("tree", log)
    check(text.returncode == 0 and "`-- " in text.stdout and "! deny read " in text.stdout and
          "SIGKILL" in text.stdout and "exit 3" in text.stdout, text.stdout)


def test_summary_tops_and_latency(wd):
    p, log = run(wd, SCRIPT)
    s = audit("summary", log, "--top", "3")
    check(s.returncode == 0, s.stderr)
    out = s.stdout
    sections = {}
    cur = None
    for line in out.splitlines():
        if not line.startswith(" "):
            cur = line.split(" (")[0].rstrip(":")
            sections[cur] = []
        elif cur:
            sections[cur].append(line.split())
    hosts = sections.get("top hosts", [])
    check(any(h[-1].startswith("192.0.2.7") and h[1] == h[0] for h in hosts), "the refused host: %r" % hosts)
    prefixes = sections.get("top path prefixes", [])
    check(len(prefixes) <= 3 and any(p[-1] == "/etc" and int(p[1]) >= 1 for p in prefixes) and
          any(p[-1].endswith("/.ssh") for p in prefixes), "prefixes: %r" % prefixes)
    rules = sections.get("top rules", [])
    counts = [int(r[0]) for r in rules]
    check(len(rules) == 3 and counts == sorted(counts, reverse=True), "rules, most first: %r" % rules)
    lat = sections.get("decision latency, us", [])
    n = {}
    for r in read_log(log):
        if "latency_ns" in r:
            k = r["category"] + " " + r["layer"]
            n[k] = n.get(k, 0) + 1
    check({"%s %s" % (row[0], row[1]): int(row[2]) for row in lat} == n, "latency groups %r, log %r" % (lat, n))
    for row in lat:
        p50, p90, p99, mx = map(float, row[3:7])
        check(0 < p50 <= p90 <= p99 <= mx, "percentiles in order: %r" % row)
