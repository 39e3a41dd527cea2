"""harness-audit export --otlp (issue 14, item 4, after the fact): a real
session's log as OpenTelemetry traces, read by the OpenTelemetry JS
project's decoder generated from opentelemetry-proto (tests/otlp), from
a file and as an OTLP/HTTP collector: one trace, the session's span, a
span per process under its parent's as tree draws them, each refusal an
event of its process, exits and signals as attributes and status; a
collector that is away or refuses is an error."""

import json
import os
import re
import subprocess

from lib import AUDIT_TOOL, BUILD, EXEC, ROOT, check, read_log

COLLECTOR = os.path.join(ROOT, "tests", "otlp", "collector.js")
NODE_ENV = dict(os.environ, NODE_PATH=os.path.join(BUILD, "otlp", "node_modules"))
BUSYBOX_STATIC = "/bin/busybox"
SCRIPT = ("cat ~/.ssh/id_rsa 2>/dev/null; "
          "sh -c '%s sh -c \"echo > /etc/hx-otlp\" 2>/dev/null; true'; "
          "sh -c 'ls > /dev/null; kill -9 $$'; exit 3" % BUSYBOX_STATIC)


def session(wd):
    log = os.path.join(wd.state, "audit.jsonl")
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    p = subprocess.run([EXEC, "--quiet", "--ask-timeout", "0", "--audit-log", log, "--", "sh", "-c", SCRIPT],
                       cwd=wd.path, env=e, capture_output=True, text=True, timeout=120)
    check(p.returncode == 3, "exit %s: %s" % (p.returncode, p.stderr))
    return log


def audit(*args):
    """harness-audit on a log of this suite's (in a test's state
    directory, XDG_STATE_HOME of its session: its anchor is there)."""
    env = dict(os.environ, XDG_STATE_HOME=os.path.dirname(args[-1]))
    return subprocess.run([AUDIT_TOOL] + list(args), capture_output=True, text=True, timeout=60, env=env)


def attrs(kvs):
    out = {}
    for kv in kvs or []:
        v = kv["value"]
        if "arrayValue" in v:
            out[kv["key"]] = [x.get("stringValue") for x in v["arrayValue"].get("values", [])]
        else:
            out[kv["key"]] = v.get("stringValue", v.get("intValue"))
    return out


def check_traces(req, log, exit_code=3, refused_read=True, killed=True):
    recs = read_log(log)
    start = next(r for r in recs if r["event"] == "session_start")
    check(len(req["resourceSpans"]) == 1, "one resource")
    rs = req["resourceSpans"][0]
    res = attrs(rs["resource"]["attributes"])
    check(res["service.name"] == "harness" and res["harness.session.id"] == start["session"] and
          res["harness.policy.sha256"] == start["policy_sha256"] and res["harness.mode"] == "enforce",
          "resource %r" % res)
    spans = rs["scopeSpans"][0]["spans"]
    check(len({s["traceId"] for s in spans}) == 1 and len(spans[0]["traceId"]) == 32, "one trace")
    root = [s for s in spans if not s.get("parentSpanId")]
    check(len(root) == 1 and root[0]["name"] == "harness session" and
          attrs(root[0]["attributes"])["process.exit.code"] == str(exit_code) and
          root[0]["status"]["code"] == "STATUS_CODE_ERROR", "the session's span %r" % root)
    by_id = {s["spanId"]: s for s in spans}
    check(len(by_id) == len(spans) and all(len(i) == 16 for i in by_id), "span ids unique, 8 bytes")
    procs = [json.loads(line) for line in audit("tree", "--json", log).stdout.splitlines()]
    check(len(spans) == len(procs) + 1, "a span per process: %d spans, %d processes" % (len(spans), len(procs)))
    pid_of = {}
    others = [s for s in spans if s is not root[0]]
    for s in others:
        a = attrs(s["attributes"])
        pid_of[s["spanId"]] = int(a["process.pid"])
        check(int(s["startTimeUnixNano"]) <= int(s["endTimeUnixNano"]), "a span that ends before it starts %r" % s)
    for q in procs:
        span = next(s for s in others if pid_of[s["spanId"]] == q["pid"])
        parent = by_id[span["parentSpanId"]]
        if q["depth"]:
            check(pid_of[parent["spanId"]] == q["chain"][-2], "the parent of %d" % q["pid"])
        else:
            check(parent is root[0], "a first process under the session")
        events = [(e["name"], attrs(e["attributes"])) for e in span.get("events", [])]
        check(len(events) == q["refused"] and all(
            ev[1]["harness.target"] == r["target"] and ev[1]["harness.rule"] == r["rule"] and
            ev[0] == "harness.refused" for ev, r in zip(events, q["refusals"])),
            "the refusals of %d as events: %r %r" % (q["pid"], events, q["refusals"]))
        a = attrs(span["attributes"])
        if q.get("signal"):
            check(a["process.exit.signal"] == q["signal"] and span["status"]["code"] == "STATUS_CODE_ERROR",
                  "signal %r" % a)
        elif "exit_code" in q:
            check(a["process.exit.code"] == str(q["exit_code"]), "exit %r %r" % (a, q))
        if q["images"]:
            check(a["process.command_args"] == q["images"][-1], "argv %r" % a)
    cat = [s for s in spans if any(e["name"] == "harness.refused" and
                                   attrs(e["attributes"])["harness.target"].endswith("/.ssh/id_rsa")
                                   for e in s.get("events", []))]
    check(not refused_read or (len(cat) == 1 and cat[0]["name"] == "cat"), "the refused read: %r" % cat)
    check(not killed or any(attrs(s["attributes"]).get("process.exit.signal") == "SIGKILL" for s in spans),
          "the killed shell")


def test_export_to_a_file_is_read_by_the_otlp_decoder(wd):
    log = session(wd)
    out = os.path.join(wd.state, "traces.pb")
    e = audit("export", "--otlp", out, log)
    check(e.returncode == 0 and os.path.getsize(out) > 100, e.stderr)
    d = subprocess.run(["node", COLLECTOR, "decode", out], env=NODE_ENV, capture_output=True, text=True, timeout=60)
    check(d.returncode == 0, "the decoder: %s" % d.stderr)
    check_traces(json.loads(d.stdout), log)


def serve(wd, status=None):
    got = os.path.join(wd.state, "collector-%s.jsonl" % (status or 200))
    p = subprocess.Popen(["node", COLLECTOR, "serve", got] + ([str(status)] if status else []), env=NODE_ENV,
                         stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline()), got


def test_export_to_a_collector(wd):
    log = session(wd)
    p, port, got = serve(wd)
    try:
        e = audit("export", "--otlp", "http://127.0.0.1:%d" % port, log)
        check(e.returncode == 0 and "200" in e.stdout, "%s %s" % (e.stdout, e.stderr))
        lines = [json.loads(line) for line in open(got)]
        check(len(lines) == 1 and lines[0]["ok"], "the collector got %r" % lines)
        check_traces(lines[0]["body"], log)
    finally:
        p.terminate()
        p.wait(timeout=30)
    # a collector that refuses the request, one that is not there
    p, port, got = serve(wd, 500)
    try:
        e = audit("export", "--otlp", "http://127.0.0.1:%d/v1/traces" % port, log)
        check(e.returncode == 1 and "500" in e.stderr, "%s %s" % (e.returncode, e.stderr))
    finally:
        p.terminate()
        p.wait(timeout=30)
    e = audit("export", "--otlp", "http://127.0.0.1:%d" % port, log)
    check(e.returncode == 2 and "connect" in e.stderr, "%s %r" % (e.returncode, e.stderr))


def live(wd, extra=(), env=None, script="ls > /dev/null; sleep 3; cat ~/.ssh/id_rsa 2>/dev/null; exit 3"):
    log = os.path.join(wd.state, "live.jsonl")
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    e.update(env or {})
    p = subprocess.run([EXEC, "--ask-timeout", "0", "--audit-log", log] + list(extra) + ["--", "sh", "-c", script],
                       cwd=wd.path, env=e, capture_output=True, text=True, timeout=120)
    return p, log


def spans_of(lines):
    out = {}
    for line in lines:
        for s in line["body"]["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            check(s["spanId"] not in out, "span %s sent twice" % s["spanId"])
            out[s["spanId"]] = s
    return out


def test_live_export_as_the_session_runs(wd):
    """--otlp-endpoint: spans of ended processes go out while the agent
    runs, the rest and the session's span at the end; together they are
    the trace harness-audit export makes of the same log."""
    c, port, got = serve(wd)
    try:
        p, log = live(wd, ["--otlp-endpoint", "http://127.0.0.1:%d" % port])
        check(p.returncode == 3, "exit %s: %s" % (p.returncode, p.stderr))
        lines = [json.loads(line) for line in open(got)]
    finally:
        c.terminate()
        c.wait(timeout=30)
    check(len(lines) >= 2 and all(x["ok"] for x in lines), "batches %r" % [x.get("error") for x in lines])
    first = lines[0]["body"]["resourceSpans"][0]["scopeSpans"][0]["spans"]
    check(all(s["name"] != "harness session" for s in first) and any(s["name"] == "ls" for s in first),
          "the first batch, sent while the agent slept, has ls: %r" % [s["name"] for s in first])
    sent = spans_of(lines)
    out = os.path.join(wd.state, "after.pb")
    check(audit("export", "--otlp", out, log).returncode == 0, "export")
    d = subprocess.run(["node", COLLECTOR, "decode", out], env=NODE_ENV, capture_output=True, text=True, timeout=60)
    after = spans_of([{"body": json.loads(d.stdout)}])
    check(sorted(sent) == sorted(after), "live %r, after %r" % (sorted(sent), sorted(after)))
    start = next(r for r in read_log(log) if r["event"] == "session_start")
    check(all(s["traceId"] == start["trace_id"] for s in sent.values()), "the session's random trace id")
    check_traces({"resourceSpans": [{"resource": lines[-1]["body"]["resourceSpans"][0]["resource"],
                                     "scopeSpans": [{"spans": list(sent.values())}]}]}, log,
                 exit_code=3, refused_read=True, killed=False)


def test_live_export_from_the_environment_and_a_collector_away(wd):
    c, port, got = serve(wd)
    try:
        p, _ = live(wd, env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:%d" % port}, script="true")
        check(p.returncode == 0 and not p.stderr.strip().startswith("harness-exec: traces"), p.stderr)
        check(any(x["ok"] for x in map(json.loads, open(got))), "OTEL_EXPORTER_OTLP_ENDPOINT followed")
    finally:
        c.terminate()
        c.wait(timeout=30)
    p, _ = live(wd, ["--otlp-endpoint", "http://127.0.0.1:%d" % port], script="ls > /dev/null; exit 4")
    check(p.returncode == 4 and "dropped" in p.stderr and "connect" in p.stderr,
          "the command's status, and what could not be sent said: %s %r" % (p.returncode, p.stderr))
    # A collector never reached is tried once more at the end, not for
    # seconds (each session's end waited 3 s for it).
    tries = re.search(r"(\d+) tries failed", p.stderr)
    check(tries and int(tries.group(1)) <= 2, "the last batch was retried: %r" % p.stderr)
    p, _ = live(wd, ["--otlp-endpoint", "https://collector.example:4318"], script="true")
    check(p.returncode == 2 and "http://" in p.stderr, "%s %r" % (p.returncode, p.stderr))


def log_in_the_project(wd):
    """A session's --audit-log in the project (logs/run.jsonl: the next
    session's agent's to rewrite) that refused a read; (log, the
    environment harness-audit finds its anchor by)."""
    os.makedirs(os.path.join(wd.path, "logs"))
    log = os.path.join(wd.path, "logs", "run.jsonl")
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    p = subprocess.run([EXEC, "--quiet", "--ask-timeout", "0", "--audit-log", log, "--",
                        "sh", "-c", "cat ~/.ssh/id_rsa 2>/dev/null; cat /etc/hostname >/dev/null"],
                       cwd=wd.path, env=e, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, p.stderr)
    return log, e


def test_a_log_that_does_not_verify_is_not_exported(wd):
    """harness-audit export read any log: a session's --audit-log in the
    project, rewritten by the next session's agent (the refused read's
    record gone, the chain computed again: the hash has no key), went
    to the collector as it then read (seventeenth attack review, left
    open until now). The log is now checked as verify checks it (chain
    and anchor) and not exported unless --unverified, which marks the
    resource; one that verifies is marked so."""
    from test_attack11 import FORGE
    log, e = log_in_the_project(wd)

    def export(*extra):
        out = os.path.join(wd.state, "t.pb")
        if os.path.exists(out):
            os.unlink(out)
        x = subprocess.run([AUDIT_TOOL, "export", "--otlp", out] + list(extra) + [log],
                           capture_output=True, text=True, timeout=60, env=e)
        if not os.path.exists(out):
            return x, None
        d = subprocess.run(["node", COLLECTOR, "decode", out], env=NODE_ENV, capture_output=True,
                           text=True, timeout=60)
        res = json.loads(d.stdout)["resourceSpans"][0]["resource"]["attributes"]
        return x, {kv["key"]: kv["value"] for kv in res}

    x, res = export()
    check(x.returncode == 0 and res and res["harness.log.verified"] == {"boolValue": True},
          "the log as written: %r %r" % (x.stderr, res))
    subprocess.run([EXEC, "--quiet", "--audit-log", os.path.join(wd.state, "second.jsonl"), "--",
                    "/usr/bin/python3", "-c", FORGE, log], cwd=wd.path, env=e, check=True,
                   capture_output=True, timeout=120)
    check(not any(x.get("event") == "execve" and "cat" in json.dumps(x.get("args", {}))
                  for x in read_log(log)), "the rewrite left the evidence")
    x, res = export()
    check(x.returncode == 2 and res is None and "does not verify" in x.stderr
          and "not exported" in x.stderr, "the rewritten log: %r %r" % (x.stderr, res))
    x, res = export("--unverified")
    check(x.returncode == 0 and res and res["harness.log.verified"] == {"boolValue": False}
          and "does not verify" in x.stderr, "--unverified: %r %r" % (x.stderr, res))


FLOOD = ("import os\n"
         "for _ in range(400):\n"
         "    try:\n"
         "        open(os.path.expanduser('~/.ssh/id_rsa')).close()\n"
         "    except OSError:\n"
         "        pass\n")


def test_a_flood_of_refusals_says_how_many_calls_its_event_stands_for(wd):
    """Past the audit rate one process's refusals of one file are one
    group of an audit_overflow record: its span's event for them says
    how many calls it stands for (harness.count), and the span's
    harness.refused and harness-audit tree count every call. Before, the
    event stood for 1 and said nothing of the rest."""
    from lib import POLICY_TOOL, PYTHON
    text = subprocess.run([POLICY_TOOL, "default"], capture_output=True, text=True, check=True).stdout
    low = text.replace("\naudit:\n", "\naudit:\n  rate: 50\n  burst: 100\n", 1)
    check(low != text, "the default has no audit: section")
    policy = os.path.join(wd.state, "low-rate.yaml")
    with open(policy, "w") as f:
        f.write(low)
    log = os.path.join(wd.state, "audit.jsonl")
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    p = subprocess.run([EXEC, "--quiet", "--policy", policy, "--audit-log", log, "--", PYTHON, "-c", FLOOD],
                       cwd=wd.path, env=e, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "exit %s: %s" % (p.returncode, p.stderr))
    groups = [g for r in read_log(log) if r["event"] == "audit_overflow" for g in r["groups"]
              if g.get("verdict") == "deny"]
    check(groups and max(g["count"] for g in groups) > 1, "no refusal coalesced: %r" % groups)
    out = os.path.join(wd.state, "traces.pb")
    x = audit("export", "--otlp", out, log)
    check(x.returncode == 0, x.stderr)
    d = subprocess.run(["node", COLLECTOR, "decode", out], env=NODE_ENV, capture_output=True, text=True, timeout=60)
    check(d.returncode == 0, "the decoder: %s" % d.stderr)
    spans = json.loads(d.stdout)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    py = [s for s in spans if any(attrs(e["attributes"])["harness.target"].endswith("/.ssh/id_rsa")
                                  for e in s.get("events", []))]
    check(len(py) == 1, "one span refused the key: %r" % [s["name"] for s in py])
    counts = [int(attrs(e["attributes"]).get("harness.count", 1)) for e in py[0]["events"]]
    refused = int(attrs(py[0]["attributes"])["harness.refused"])
    check(max(counts) > 1 and sum(counts) == refused == 400,
          "the events stand for %r calls, the span says %d refused, of 400" % (counts, refused))
    procs = [json.loads(line) for line in audit("tree", "--json", log).stdout.splitlines()]
    mine = [q for q in procs if q["refused"]]
    check(len(mine) == 1 and sum(r["count"] for r in mine[0]["refusals"]) == mine[0]["refused"] == 400,
          "tree: %r" % [(q["pid"], q["refused"], [r["count"] for r in q["refusals"]]) for q in mine])
