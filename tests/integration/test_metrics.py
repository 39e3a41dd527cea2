"""Metrics in Prometheus's format (--metrics, --metrics-file; issue 14,
item 3): the real Prometheus from Debian scrapes a live session and its
query API returns, series by series, what the session's audit log
counts; the textfile ends with the session's last figures; the agent
can neither reach the endpoint nor forge the file, a static program
included; an endpoint off loopback is refused."""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

from lib import BUILD, EXEC, check, read_log

# Debian's, unpacked by scripts/install-deps --prometheus (make test)
PROMETHEUS = os.path.join(BUILD, "prometheus", "usr", "bin", "prometheus")
PROMTOOL = os.path.join(BUILD, "prometheus", "usr", "bin", "promtool")
BUSYBOX = "/bin/busybox"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(wd, script, *extra):
    """harness-exec under the embedded default policy, running script."""
    log = os.path.join(wd.state, "audit.jsonl")
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    argv = [EXEC, "--quiet", "--ask-timeout", "0", "--audit-log", log] + list(extra) + ["--", "sh", "-c", script]
    return subprocess.Popen(argv, cwd=wd.path, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True), log


def wait_for(what, pred, timeout=60):
    until = time.time() + timeout
    while time.time() < until:
        v = pred()
        if v:
            return v
        time.sleep(0.2)
    check(False, "timed out waiting for %s" % what)


def decisions(records):
    """(category, verdict, layer) -> count, as harness_events_total."""
    out = {}
    for r in records:
        if "verdict" in r and r.get("event") != "ask_answer":
            k = (r.get("category", ""), r["verdict"], r.get("layer", ""))
            out[k] = out.get(k, 0) + 1
    return out


def query(port, q):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
    try:
        with urllib.request.urlopen(url, timeout=5) as f:
            body = json.load(f)
    except OSError:
        return None
    check(body.get("status") == "success", "query %s: %r" % (q, body))
    return body["data"]["result"]


def series(result, *keys):
    return {tuple(s["metric"].get(k, "") for k in keys): float(s["value"][1]) for s in result}


def test_prometheus_scrapes_a_live_session(wd):
    check(os.access(PROMETHEUS, os.X_OK), "no %s: make test unpacks it (scripts/install-deps --prometheus)" % PROMETHEUS)
    fifo = os.path.join(wd.path, "go")
    os.mkfifo(fifo)
    prom = os.path.join(wd.path, "m.prom")
    # Three refusals through the shim, one of a static program in the
    # kernel layer, two writes allowed; then it waits in a builtin
    # read, which makes no record, so the counts stand still.
    script = ("for i in 1 2 3; do echo x > /etc/hx-metrics-$i; done 2>/dev/null; "
              "%s sh -c 'echo y > /etc/hx-metrics-static' 2>/dev/null; "
              "echo a > a.txt; echo b > b.txt; read x < go" % BUSYBOX)
    p, log = start(wd, script, "--metrics", "127.0.0.1:0", "--metrics-file", prom)
    data = tempfile.mkdtemp(prefix="hx-prom-")
    prom_proc = None
    try:
        addr = wait_for("session_start", lambda: next(
            (r["metrics"]["listen"] for r in read_log(log) if r.get("event") == "session_start"), None))
        check(addr.startswith("127.0.0.1:"), "listen %r" % addr)
        port = free_port()
        cfg = os.path.join(data, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: harness\n    static_configs:\n"
                    "      - targets: ['%s']\n" % addr)
        prom_proc = subprocess.Popen(
            [PROMETHEUS, "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(data, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # Settled once all four refusals and both writes are in, and
        # then the scrape agrees with the log on every series (the log
        # read again each time: a busy machine logged the writes after
        # a first reading, which no scrape could then agree with).
        wait_for("the four refusals and two writes in the log", lambda: sum(
            n for (c, v, _), n in decisions(read_log(log)).items() if v == "deny") == 4 and
            sum(1 for r in read_log(log) if r.get("op") == "write" and
                r.get("args", {}).get("path", "").endswith(("/a.txt", "/b.txt"))) >= 2)
        want = {}

        def scraped():
            res = query(port, 'harness_events_total{job="harness"}')
            want.update(decisions(read_log(log)))
            return res and series(res, "category", "verdict", "layer") == {k: float(n) for k, n in want.items()}
        wait_for("Prometheus to scrape the session's counts", scraped)
        denied = query(port, 'sum(harness_events_total{verdict="deny"})')
        check(float(denied[0]["value"][1]) == 4, "denials %r" % denied)
        kernel = query(port, 'harness_events_total{verdict="deny",category="file_write"}')
        layers = {s["metric"]["layer"] for s in kernel}
        check("kernel" in layers and ("shim" in layers or "shim+kernel" in layers),
              "the static program's refusal in the kernel layer, the shell's in the shim: %r" % layers)
        by_event = {}
        for r in read_log(log):
            by_event[r["event"]] = by_event.get(r["event"], 0) + 1
        res = query(port, "harness_audit_records_total")
        check(series(res, "event") == {(k,): float(n) for k, n in by_event.items()},
              "records %r against the log's %r" % (res, by_event))
        for q, low in (("harness_session_running", 1), ("harness_agent_processes", 1),
                       ("harness_notified_syscalls_total", 1), ("harness_audit_bytes_total", 1000),
                       ('harness_decision_latency_seconds_count{category="file_write"}', 1)):
            res = query(port, q)
            check(res and min(float(s["value"][1]) for s in res) >= low, "%s: %r" % (q, res))
        sess = query(port, "harness_session_info")
        check(sess and sess[0]["metric"]["session"] in open(log).read() and
              sess[0]["metric"]["mode"] == "enforce", "session_info %r" % sess)
    finally:
        with open(fifo, "w") as f:
            f.write("go\n")
        out, err = p.communicate(timeout=60)
        if prom_proc:
            prom_proc.terminate()
            prom_proc.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)
    check(p.returncode == 0, "exit %s: %s" % (p.returncode, err))
    # The last file has the whole session, session_end counted.
    with open(prom) as f:
        text = f.read()
    lint = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True)
    check(lint.returncode == 0, "promtool: %s %s" % (lint.stdout, lint.stderr))
    check('harness_session_running{session="' in text and "} 0\n" in text.split("harness_session_running{")[1][:80],
          "the file says the session ended: %s" % text[:400])
    check('event="session_end"} 1' in text, "session_end counted in the file")
    final = decisions(read_log(log))
    for (c, v, layer), n in final.items():
        line = 'category="%s",verdict="%s",layer="%s"} %d\n' % (c, v, layer, n)
        check(line in text, "the file lacks %r" % line)
    check(not os.path.exists(prom + ".tmp"), "no temporary file left")


def test_agent_cannot_reach_or_forge_the_metrics(wd):
    port = free_port()
    prom = os.path.join(wd.path, "m.prom")
    sock = os.path.join(wd.path, "m.sock")
    script = (
        "sleep 0.5; "
        "python3 -c 'import socket,sys\n"
        "for a in (\"127.0.0.1\", \"0.0.0.0\"):\n"
        "  s = socket.socket()\n"
        "  try:\n"
        "    s.connect((a, %d)); s.send(b\"GET /metrics HTTP/1.0\\r\\n\\r\\n\"); print(\"REACHED\", s.recv(64))\n"
        "  except OSError as e: print(\"refused\", a, e.errno)\n"
        "'; "
        "%s wget -q -O - http://127.0.0.1:%d/metrics && echo REACHED-STATIC; "
        "echo forged > m.prom; %s sh -c 'echo forged > m.prom; rm -f m.prom; ln -s /etc/passwd m.prom.tmp; "
        "'; mv a.txt m.prom; true" % (port, BUSYBOX, port, BUSYBOX))
    wd.file("a.txt", "a\n")
    p, log = start(wd, script, "--metrics", "127.0.0.1:%d" % port, "--metrics-file", prom)
    out, err = p.communicate(timeout=90)
    check(p.returncode == 0, "exit %s: %s" % (p.returncode, err))
    check("REACHED" not in out, "the agent read its metrics: %r" % out)
    recs = read_log(log)
    conns = [r for r in recs if r.get("category") == "net_connect" and str(port) in json.dumps(r.get("args", {}))]
    check(conns and all(r["verdict"] == "deny" and r["rule"] == "harness:protect" for r in conns),
          "every connect to the endpoint refused as harness:protect: %r" % conns)
    check(any(r.get("layer") == "kernel" for r in conns), "the static wget's too: %r" % conns)
    with open(prom) as f:
        text = f.read()
    check("forged" not in text and "harness_session_running" in text, "the file is the harness's: %r" % text[:200])
    check(os.path.realpath(prom) == prom and not os.path.islink(prom + ".tmp"), "no link planted")
    writes = [r for r in recs if r.get("rule") == "harness:protect" and "m.prom" in json.dumps(r.get("args", {}))]
    check(len(writes) >= 4, "the writes, removal, link and rename refused and recorded: %r" % writes)
    # the Unix endpoint, in the project: the agent cannot touch it
    # either, and it serves on until the session ends
    os.mkfifo(os.path.join(wd.path, "go"))
    p, log = start(wd, "echo x > m.sock; rm -f m.sock; %s rm -f m.sock; read x < go" % BUSYBOX,
                   "--metrics", "unix:" + sock)
    try:
        wait_for("the three refusals", lambda: len(
            [r for r in read_log(log) if r.get("rule") == "harness:protect" and "m.sock" in json.dumps(r)]) >= 3)
        c = socket.socket(socket.AF_UNIX)
        c.settimeout(5)
        c.connect(sock)
        c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        got = b""
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            got += chunk
        c.close()
        check(got.startswith(b"HTTP/1.1 200 OK") and
              b'verdict="deny"' in got, "the endpoint after the attempts: %r" % got[:300])
        check(oct(os.stat(sock).st_mode & 0o777) == "0o600", "only its owner connects")
    finally:
        with open(os.path.join(wd.path, "go"), "w") as f:
            f.write("go\n")
        out, err = p.communicate(timeout=60)
    check(p.returncode == 0, "exit %s: %s" % (p.returncode, err))
    check(not os.path.exists(sock), "the socket is removed at the end")


def test_endpoint_off_loopback_refused(wd):
    for addr in ("0.0.0.0:9464", "192.0.2.1:9464"):
        p, _ = start(wd, "true", "--metrics", addr)
        out, err = p.communicate(timeout=30)
        check(p.returncode == 2 and "not a loopback address" in err, "%s: %s %r" % (addr, p.returncode, err))


def scrape(sock):
    """The endpoint's exposition, over its Unix socket."""
    c = socket.socket(socket.AF_UNIX)
    c.settimeout(5)
    c.connect(sock)
    c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    got = b""
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        got += chunk
    c.close()
    return got.decode()


def samples(text, name):
    """{labels dict as a sorted tuple: value} of one metric."""
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{"):
            labels, value = line[len(name) + 1:].rsplit("} ", 1)
            out[tuple(sorted(tuple(kv.split("=", 1)) for kv in labels.split(",")))] = float(value)
    return {tuple((k, v.strip('"')) for k, v in key if k != "session"): n for key, n in out.items()}


def by_group(text):
    """(pgid, category, verdict) -> n of harness_process_group_events_total."""
    return {(dict(k)["pgid"], dict(k)["category"], dict(k)["verdict"]): n
            for k, n in samples(text, "harness_process_group_events_total").items()}


def test_counts_by_process_group(wd):
    """Two jobs in process groups of their own (as Claude Code runs each
    tool call) are counted apart, and a live group's processes are
    shown; 40 more groups fold into "other" and no count is lost."""
    sock = os.path.join(wd.path, "m.sock")
    prom = os.path.join(wd.path, "m.prom")
    for f in ("go", "more"):
        os.mkfifo(os.path.join(wd.path, f))
    denied = "for i in %s; do echo x > /etc/hx-pg-$i; done 2>/dev/null"
    script = ("%s setsid sh -c 'echo $$ > a.pid; %s; read x < go' & "
              "%s setsid sh -c 'echo $$ > b.pid; %s'; read x < more; "
              "i=0; while [ $i -lt 40 ]; do %s setsid sh -c 'echo x > /etc/hx-pg' 2>/dev/null; "
              "i=$((i+1)); done; wait"
              % (BUSYBOX, denied % "1 2 3", BUSYBOX, denied % "1 2 3 4 5", BUSYBOX))
    p, log = start(wd, script, "--metrics", "unix:" + sock, "--metrics-file", prom)
    try:
        wait_for("the 8 refusals", lambda: len([r for r in read_log(log) if r.get("verdict") == "deny"]) >= 8)
        a, b = (open(os.path.join(wd.path, n)).read().strip() for n in ("a.pid", "b.pid"))
        live = scrape(sock)
        with open(os.path.join(wd.path, "more"), "w") as f:
            f.write("more\n")
        wait_for("the 48 refusals", lambda: len([r for r in read_log(log) if r.get("verdict") == "deny"]) >= 48)
    finally:
        with open(os.path.join(wd.path, "go"), "w") as f:
            f.write("go\n")
        out, err = p.communicate(timeout=60)
    check(p.returncode == 0, "exit %s: %s" % (p.returncode, err))
    recs = read_log(log)
    deny = [r for r in recs if r.get("verdict") == "deny"]
    # the two jobs, as the log has them (the shell of each refused)
    groups = by_group(live)
    for g, n in ((a, 3), (b, 5)):
        mine = [r for r in deny if str(r["pid"]) == g]
        check(len(mine) == n, "the log: %d refusals of %s: %r" % (n, g, mine))
        check(groups.get((g, "file_write", "deny")) == n, "group %s: %r, not %d" % (g, groups, n))
    procs = samples(live, "harness_process_group_processes")
    check(procs.get((("pgid", a),), 0) >= 1, "group %s waits, alive: %r" % (a, procs))
    check((("pgid", b),) not in procs, "group %s has ended: %r" % (b, procs))
    with open(prom) as f:
        text = f.read()
    groups = by_group(text)
    pgids = {g for g, _, _ in groups}
    check(len(pgids - {"other"}) <= 32 and "other" in pgids, "at most 32 groups and other: %r" % sorted(pgids))
    # Nothing is lost: the groups add up to the session's totals.
    totals = {}
    for (c, v, _), n in samples_events(text).items():
        totals[(c, v)] = totals.get((c, v), 0) + n
    summed = {}
    for (_, c, v), n in groups.items():
        summed[(c, v)] = summed.get((c, v), 0) + n
    check(summed == totals, "groups %r against the totals %r" % (summed, totals))
    check(totals.get(("file_write", "deny")) == len([r for r in deny if r.get("category") == "file_write"]),
          "the totals are the log's")


def samples_events(text):
    return {(dict(k)["category"], dict(k)["verdict"], dict(k)["layer"]): n
            for k, n in samples(text, "harness_events_total").items()}


def test_the_way_to_a_unix_endpoint_cannot_be_replaced(wd):
    # The endpoint's file was protected (by its path), not the way to
    # it: the agent re-pointed a symlink on that path, or moved the
    # directory it leads to, and the next scrape went where the agent
    # chose (its own socket: its own figures).
    os.makedirs(os.path.join(wd.path, "real"))
    os.makedirs(os.path.join(wd.path, "other"))
    os.symlink("real", os.path.join(wd.path, "link"))
    sock = os.path.join(wd.path, "link", "m.sock")
    script = ("rm link; ln -sfn other link; mv real real2; %s rm link; %s mv real real2; true"
              % (BUSYBOX, BUSYBOX))
    p, log = start(wd, script, "--metrics", "unix:" + sock)
    out, err = p.communicate(timeout=60)
    check(p.returncode == 0, "exit %s: %s" % (p.returncode, err))
    link = os.path.join(wd.path, "link")
    check(os.path.islink(link) and os.readlink(link) == "real" and os.path.isdir(os.path.join(wd.path, "real")),
          "the way to the endpoint changed: %r" % sorted(os.listdir(wd.path)))
    refused = [r for r in read_log(log)
               if r.get("rule") == "harness:protect" and r["event"].startswith(("rename", "unlink"))]
    check(len(refused) >= 3, "the refusals are not recorded: %r" % refused)
