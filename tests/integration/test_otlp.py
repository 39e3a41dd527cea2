"""harness-audit export --otlp (issue 14, item 4, after the fact): a real
session's log as OpenTelemetry traces, read by the OpenTelemetry JS
project's decoder generated from opentelemetry-proto (tests/otlp), from
a file and as an OTLP/HTTP collector: one trace, the session's span, a
span per process under its parent's as tree draws them, each refusal an
event of its process, exits and signals as attributes and status; a
collector that is away or refuses is an error."""

import json
import os
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
    return subprocess.run([AUDIT_TOOL] + list(args), capture_output=True, text=True, timeout=60)


def attrs(kvs):
    out = {}
    for kv in kvs or []:
        v = kv["value"]
        if "arrayValue" in v:
            out[kv["key"]] = [x.get("stringValue") for x in v["arrayValue"].get("values", [])]
        else:
            out[kv["key"]] = v.get("stringValue", v.get("intValue"))
    return out


def check_traces(req, log):
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
          attrs(root[0]["attributes"])["process.exit.code"] == "3" and
          root[0]["status"]["code"] == "STATUS_CODE_ERROR", "the session's span %r" % root)
    by_id = {s["spanId"]: s for s in spans}
    check(len(by_id) == len(spans) and all(len(i) == 16 for i in by_id), "span ids unique, 8 bytes")
    procs = [json.loads(line) for line in audit("tree", log, "--json").stdout.splitlines()]
    check(len(spans) == len(procs) + 1, "a span per process: %d spans, %d processes" % (len(spans), len(procs)))
    pid_of = {}
    for s in spans[1:]:
        a = attrs(s["attributes"])
        pid_of[s["spanId"]] = int(a["process.pid"])
        check(int(s["startTimeUnixNano"]) <= int(s["endTimeUnixNano"]), "a span that ends before it starts %r" % s)
    for q in procs:
        span = next(s for s in spans[1:] if pid_of[s["spanId"]] == q["pid"])
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
    check(len(cat) == 1 and cat[0]["name"] == "cat", "the refused read: %r" % cat)
    check(any(attrs(s["attributes"]).get("process.exit.signal") == "SIGKILL" for s in spans), "the killed shell")


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
