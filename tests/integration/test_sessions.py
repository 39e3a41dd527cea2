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
