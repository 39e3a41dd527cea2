"""Sessions as first-class things (tools/sessions_cli.h): harness-audit
sessions lists what real runs left in the state dir (also a session
whose log was an --audit-log elsewhere), as JSON lines on a pipe and a
table on a terminal; every command takes a log, a session id or
--last, the default: the last session started in the current
directory."""

import json
import os
import pty
import subprocess
import time

from lib import AUDIT_TOOL, EXEC, check


def audit(wd, *args, cwd=None):
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    return subprocess.run([AUDIT_TOOL] + list(args), cwd=cwd or wd.path, env=e,
                          capture_output=True, text=True, timeout=30)


def session(wd, *cmd, log=None):
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    argv = [EXEC, "--quiet", "--ask-timeout", "0"] + (["--audit-log", log] if log else []) + ["--"] + list(cmd)
    return subprocess.run(argv, cwd=wd.path, env=e, capture_output=True, text=True, timeout=60)


def test_sessions_are_listed_and_found(wd):
    first = session(wd, "sh", "-c", "cat ~/.ssh/id_rsa 2>/dev/null; exit 3")
    custom = os.path.join(wd.state, "elsewhere.jsonl")
    second = session(wd, "true", log=custom)
    check(first.returncode == 3 and second.returncode == 0, "%r %r" % (first.stderr, second.stderr))
    r = audit(wd, "sessions")
    check(r.returncode == 0, r.stderr)
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    check(len(rows) == 2, "sessions %r" % rows)
    a, b = rows
    check(a["command"] == ["sh", "-c", "cat ~/.ssh/id_rsa 2>/dev/null; exit 3"] and a["exit_code"] == 3 and
          a["state"] == "ended" and a["cwd"] == wd.path and a["events"] >= 1 and a["duration_s"] >= 0 and
          a["start"] < b["start"], "first %r" % a)
    check(b["command"] == ["true"] and b["exit_code"] == 0 and os.path.realpath(b["log"]) == custom,
          "the --audit-log session %r" % b)
    # the default is the last session started here: the second
    v = audit(wd, "verify")
    check(v.returncode == 0 and "chain intact" in v.stdout and b["id"] in v.stdout, "verify %r %r" % (v.stdout, v.stderr))
    v = audit(wd, "verify", a["id"])
    check(v.returncode == 0 and a["id"] in v.stdout, "verify ID %r" % v.stdout)
    s = audit(wd, "show", "--last", "--event", "session_end")
    check(s.returncode == 0 and json.loads(s.stdout)["exit_code"] == 0, "show --last %r" % s.stdout)
    s = audit(wd, "summary", a["log"])
    check(s.returncode == 0 and "records" in s.stdout, "summary LOG %r" % s.stdout)
    # elsewhere: no session started there
    other = os.path.join(wd.state, "other")
    os.makedirs(other)
    v = audit(wd, "verify", cwd=other)
    check(v.returncode == 2 and "no session was started in" in v.stderr, "%r" % v.stderr)
    h = audit(wd, "sessions", "--here", cwd=other)
    check(h.returncode == 0 and h.stdout == "", "--here elsewhere %r" % h.stdout)
    bad = audit(wd, "verify", "no-such-session")
    check(bad.returncode == 2 and "no such log" in bad.stderr, "%r" % bad.stderr)


def test_sessions_table_on_a_terminal(wd):
    session(wd, "true")
    master, slave = pty.openpty()
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    p = subprocess.run([AUDIT_TOOL, "sessions"], cwd=wd.path, env=e, stdin=slave, stdout=slave,
                       stderr=subprocess.PIPE, timeout=30)
    os.close(slave)
    out = b""
    try:
        while True:
            chunk = os.read(master, 4096)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    os.close(master)
    lines = out.decode().splitlines()
    check(p.returncode == 0 and lines and lines[0].split()[:3] == ["ID", "START", "(UTC)"], "table %r" % lines)
    check(len(lines) == 2 and lines[1].split()[-1] == "true" and " 0 " in lines[1], "row %r" % lines)


def test_query_filters_real_records(wd):
    home = os.path.join(wd.state, "home")
    os.makedirs(os.path.join(home, ".ssh"))
    with open(os.path.join(home, ".ssh", "id_rsa"), "w") as f:
        f.write("KEY\n")
    e = dict(os.environ, XDG_STATE_HOME=wd.state, HOME=home)
    e.pop("LD_PRELOAD", None)
    p = subprocess.run([EXEC, "--quiet", "--ask-timeout", "0", "--", "sh", "-c",
                        "echo x > out.txt; cat ~/.ssh/id_rsa; git --version"],
                       cwd=wd.path, env=e, capture_output=True, text=True, timeout=60)
    check("KEY" not in p.stdout, "the key was read")

    def q(*args):
        r = audit(wd, "query", *args)
        return r.returncode, [json.loads(line) for line in r.stdout.splitlines()]

    rc, denied = q("--verdict", "deny")
    check(rc == 0 and denied and all(r["verdict"] == "deny" for r in denied) and
          any(r["rule"] == "ssh" for r in denied), "--verdict deny %r" % denied)
    rc, key = q("--path", "**/.ssh/**", "--category", "file_read")
    check(rc == 0 and key and all(r["args"]["path"].endswith("/.ssh/id_rsa") for r in key), "--path %r" % key)
    rc, out = q("--path", "%s/*.txt" % wd.path, "--verdict", "allow")
    check(rc == 0 and out and all(r["args"]["path"] == os.path.join(wd.path, "out.txt") for r in out),
          "--path GLOB %r" % out)
    rc, git = q("--exe", "*/git", "--event", "process_start")
    check(rc == 0 and len(git) == 1 and git[0]["args"]["argv"][:2] == ["git", "--version"], "--exe %r" % git)
    rc, sh = q("--pid", str(git[0]["ppid"]))
    check(rc == 0 and sh and all(r["pid"] == git[0]["ppid"] for r in sh), "--pid %r" % sh)
    rc, recent = q("--since", "1h", "--until", "2999")
    rc_all, every = q()
    check(rc == 0 and len(recent) == len(every) > 3, "--since %d of %d" % (len(recent), len(every)))
    rc, none = q("--until", "2000-01-01")
    check(rc == 1 and none == [], "nothing before 2000: %r" % none)
    bad = audit(wd, "query", "--verdict")
    check(bad.returncode == 2 and "needs a value" in bad.stderr, bad.stderr)
    bad = audit(wd, "query", "--since", "yesterday")
    check(bad.returncode == 2 and "an age" in bad.stderr, bad.stderr)


def test_compact_keeps_what_it_removed_provable(wd):
    """Retention (harness-audit compact): ended sessions' logs become one
    compacted record that continues their chain; a running session, a
    log elsewhere and a log whose chain is broken are left; past the
    aggregate age the sessions are removed, never the running one."""
    a = session(wd, "sh", "-c", "cat ~/.ssh/id_rsa 2>/dev/null; exit 4")
    b = session(wd, "true")
    elsewhere = session(wd, "true", log=os.path.join(wd.state, "mine.jsonl"))
    bad = session(wd, "true")
    check(a.returncode == 4 and b.returncode == 0 and elsewhere.returncode == 0 and bad.returncode == 0,
          "%r" % a.stderr)
    rows = {r["id"]: r for r in map(json.loads, audit(wd, "sessions", "--json").stdout.splitlines())}
    ids = sorted(rows, key=lambda i: rows[i]["start"])
    ida, idb, ide, idbad = ids
    before = {}
    for i in (ida, idb):
        lines = open(rows[i]["log"]).read().splitlines()
        before[i] = (len(lines), json.loads(lines[0])["hash"], json.loads(lines[-1])["hash"])
    # a broken chain: one byte of a record changed
    p = rows[idbad]["log"]
    text = open(p).read()
    with open(p, "w") as f:
        f.write(text.replace('"verdict":"allow"', '"verdict":"allov"', 1))
    # a running session: it waits for us
    fifo = os.path.join(wd.path, "go")
    os.mkfifo(fifo)
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    live = subprocess.Popen([EXEC, "--quiet", "--", "sh", "-c", "read x < go"], cwd=wd.path, env=e)
    try:
        deadline = time.time() + 30
        while len(audit(wd, "sessions", "--json").stdout.splitlines()) < 5 and time.time() < deadline:
            time.sleep(0.1)
        dry = audit(wd, "compact", "--keep", "0s", "--dry-run")
        check("would compact %s" % ida in dry.stdout and all(
            open(rows[i]["log"]).read().count("\n") == before[i][0] for i in (ida, idb)), "dry: %r" % dry.stdout)
        c = audit(wd, "compact", "--keep", "0s")
        check(c.returncode == 0 and "compacted %s" % ida in c.stdout and "compacted %s" % idb in c.stdout and
              "left %s: its log is elsewhere" % ide in c.stdout and
              "left %s: its chain does not verify" % idbad in c.stdout and ": running" in c.stdout, c.stdout)
        for i in (ida, idb):
            lines = open(rows[i]["log"]).read().splitlines()
            check(len(lines) == 1, "one record: %r" % lines)
            rec = json.loads(lines[0])
            n, first, last = before[i]
            check(rec["event"] == "compacted" and rec["prev"] == last and rec["seq"] == n + 1 and
                  rec["removed"]["records"] == n and rec["removed"]["first_hash"] == first and
                  rec["removed"]["last_hash"] == last, "the removed chain: %r" % rec["removed"])
            v = audit(wd, "verify", i)
            check(v.returncode == 0 and "chain intact" in v.stdout and "compacted" in v.stdout and not v.stderr,
                  "verify %r %r" % (v.stdout, v.stderr))
        ca = json.loads(open(rows[ida]["log"]).read())
        check(ca["summary"]["counts"]["file_read"]["deny"] == 1 and ca["session_end"]["exit_code"] == 4,
              "what the session did stays: %r" % ca["summary"])
        listed = {r["id"]: r for r in map(json.loads, audit(wd, "sessions", "--json").stdout.splitlines())}
        check(listed[ida]["state"] == "compacted" and listed[ida]["exit_code"] == 4, "%r" % listed[ida])
        # an edited compacted record is caught like any other
        with open(rows[idb]["log"]) as f:
            t = f.read()
        with open(rows[idb]["log"], "w") as f:
            f.write(t.replace('"records":', '"records":1', 1))
        check(audit(wd, "verify", idb).returncode == 1, "an edited compacted record verifies")
        r = audit(wd, "compact", "--keep", "0s", "--aggregate", "0s")
        check("removed %s" % ida in r.stdout and not os.path.exists(os.path.dirname(rows[ida]["log"])),
              "removed past the aggregate age: %r" % r.stdout)
        running = [i for i in listed if listed[i]["state"] == "running"]
        check(len(running) == 1 and os.path.exists(os.path.join(wd.state, "harness", "sessions", running[0])),
              "the running session is never touched")
    finally:
        with open(fifo, "w") as f:
            f.write("x\n")
        live.wait(timeout=60)
    check(live.returncode == 0, "the running session ended well: %s" % live.returncode)


def test_session_end_says_where_the_start_went(wd):
    # session_end's timeline_ms (supervisor/phases.h): the phases in the
    # order they happen, and the agent's own time between its release
    # and its exit (a 300 ms sleep there, nowhere else).
    log = os.path.join(wd.state, "t.jsonl")
    r = session(wd, "sh", "-c", "sleep 0.3", log=log)
    check(r.returncode == 0, r.stderr)
    with open(log) as f:
        end = [json.loads(line) for line in f][-1]
    t = end.get("timeline_ms")
    check(end["event"] == "session_end" and isinstance(t, dict), repr(end))
    check(list(t) == ["policy", "setup", "sandbox", "entered", "released",
                     "exited", "end"], repr(t))
    v = list(t.values())
    check(all(0 < a < b for a, b in zip(v, v[1:])), "not in order: %r" % t)
    check(t["exited"] - t["released"] >= 300, "the agent's sleep is not between released and exited: %r" % t)
