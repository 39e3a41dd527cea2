"""The eleventh attack review (issue 10, class 8): records that say one
thing while another happened, and a reviewer misled. The agent's own
strings (paths, argv, the names of the programs it makes) carrying
terminal controls, bidi overrides and newlines, read back through
harness-audit's and harness-policy's human outputs."""

import json
import os
import pty
import select
import shutil
import subprocess

from lib import (ALLOWED_PORTS, AUDIT_TOOL, HELPERS, POLICIES, POLICY_TOOL, PYTHON, Listener,
                 check, harness, read_log)

ESC = "\x1b"
# Erases the line and moves up (a cursor move over an earlier line), an
# OSC 8 link, a window title (BEL-ended), a C1 CSI, a right-to-left
# override, a zero-width space, and a newline that starts a forged line.
EVIL = ("x" + ESC + "[2K" + ESC + "[1A" + ESC + "]8;;file:evil" + ESC
        + "\\ok" + ESC + "]8;;" + ESC + "\\" + ESC + "]0;title\x07\u009b31m"
        + "\u202egnp.exe\u200b\r\n  seq 1 pid 1 open /forged deny: rule forged")

# What must not reach a terminal from the agent's text.
BAD = [b"\x1b", b"\x07", b"\r", b"\xc2\x9b", b"\xe2\x80\xae", b"\xe2\x80\x8b"]


def _bad_bytes(out):
    """The controls in out, and a line the agent's newline began."""
    bad = [b for b in BAD if b in out]
    if any(line.lstrip().startswith(b"seq 1 pid 1 open /forged") for line in out.split(b"\n")):
        bad.append(b"a forged line")
    return bad


def _on_a_tty(argv, cwd=None, env=None):
    """argv's output as a terminal gets it (query and sessions draw
    tables on one)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdout=slave, stderr=slave, stdin=subprocess.DEVNULL,
                         cwd=cwd, env=env, close_fds=True)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 30)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait(timeout=30)
    os.close(master)
    return out.replace(b"\r\n", b"\n")  # the terminal's own


def _evil_session(wd):
    """A session whose agent names EVIL in a refused write, an allowed
    write, an exec's argv and the program's own path (through the shim),
    and again from a static program (the kernel layer)."""
    d = os.path.join(wd.path, "bin" + ESC + "[31m")
    os.makedirs(d)
    prog = os.path.join(d, "t" + ESC + "]0;title\x07")
    shutil.copy("/bin/true", prog)
    code = ("import os, subprocess, sys\n"
            "evil = sys.argv[1]\n"
            "for p in ('secret/' + evil, 'w' + evil):\n"
            "    try: open(p, 'w')\n"
            "    except OSError as e: print('refused', e.errno)\n"
            "subprocess.run([sys.argv[2], 'arg' + evil])\n")
    r = harness([PYTHON, "-c", code, EVIL, prog], wd)
    check("refused 13" in r.stdout, "the write was not refused: %r %r" % (r.stdout, r.stderr))
    rec = r.one(op="write", args_path=os.path.join(wd.path, "secret", EVIL))
    check(rec["verdict"] == "deny", "record %r" % rec)
    busybox = "/bin/busybox"
    if os.path.exists(busybox):
        r2 = harness([busybox, "sh", "-c", 'echo > "secret/k$1"; echo done', "sh", EVIL],
                     wd, log=r.log + ".static")
        check("done" in r2.stdout, r2.stderr)
        r2.one(op="write", layer="kernel", verdict="deny")
    return r


def test_human_outputs_carry_no_terminal_controls(wd):
    """harness-audit summary printed a record's path, its exe and
    host as the record decoded them: a refused write to a name holding
    ESC [1A ESC [2K (move up, erase the line), an OSC 8 link or a
    right-to-left override rewrote what the reviewer saw on a terminal,
    and a newline in the name printed a refusal line of the agent's
    choosing ("seq 1 pid 1 open /forged deny: rule forged"); the query
    table printed the rule and event as they were, harness-policy test
    its examples, harness-policy grants its globs and argv. Every human
    output now escapes what a record holds as the notices do (a byte
    outside printable ASCII as \\xNN)."""
    r = _evil_session(wd)
    logs = [r.log] + ([r.log + ".static"] if os.path.exists(r.log + ".static") else [])
    for log in logs:
        for cmd in (["summary"], ["summary", "--top", "20"], ["tree"], ["tree", "--denials"]):
            p = subprocess.run([AUDIT_TOOL] + cmd + [log], capture_output=True)
            check(p.returncode == 0, "%s: %r" % (cmd, p.stderr))
            check(not _bad_bytes(p.stdout), "harness-audit %s printed %r:\n%r"
                  % (" ".join(cmd), _bad_bytes(p.stdout), p.stdout[-3000:]))
            check(b"\\x1b[2K" in p.stdout or cmd[0] == "tree" and b"\\x1b" in p.stdout,
                  "harness-audit %s: the refusal is not shown escaped:\n%r"
                  % (" ".join(cmd), p.stdout[-3000:]))
        out = _on_a_tty([AUDIT_TOOL, "query", log, "--verdict", "deny"])
        check(not _bad_bytes(out), "harness-audit query on a terminal printed %r:\n%r"
              % (_bad_bytes(out), out[-3000:]))
        check(b"\\x1b[2K" in out, "query: the refusal is not shown:\n%r" % out[-3000:])
    # harness-policy test: the examples of a changed decision.
    pol = os.path.join(wd.state, "open.yaml")
    src = open(os.path.join(POLICIES, "test.yaml")).read()
    open(pol, "w").write(src.replace('deny: ["$CWD/secret/**"]', 'deny: ["$CWD/nothing/**"]'))
    p = subprocess.run([POLICY_TOOL, "test", pol, r.log], capture_output=True,
                       env=dict(os.environ, XDG_STATE_HOME=wd.state))  # its anchors
    check(b"secret/x" in p.stdout, "harness-policy test shows no change: %r %r"
          % (p.stdout, p.stderr))
    check(not _bad_bytes(p.stdout), "harness-policy test printed %r:\n%r"
          % (_bad_bytes(p.stdout), p.stdout[-3000:]))


def test_grants_list_carries_no_terminal_controls(wd):
    """harness-policy grants printed a grant's argv and globs as they
    are; a grant answered "always" for an agent's command keeps the
    agent's words."""
    import json
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    p = subprocess.run([POLICY_TOOL, "grants", "path"], capture_output=True, text=True,
                       env=env, cwd=wd.path)
    check(p.returncode == 0 and p.stdout.strip(), "grants path: %r" % (p,))
    grants = p.stdout.strip()
    os.makedirs(os.path.dirname(grants), exist_ok=True)
    with open(grants, "w") as f:
        f.write(json.dumps({"id": "g1", "verdict": "allow", "kind": "exec",
                            "path": "/usr/bin/echo", "argv": ["echo", EVIL]}) + "\n")
        f.write(json.dumps({"id": "g2", "verdict": "allow", "kind": "file",
                            "access": "write", "glob": "/tmp/" + EVIL}) + "\n")
        f.write(json.dumps({"id": "g3", "verdict": "deny", "kind": "net",
                            "target": EVIL + ":443"}) + "\n")
    out = _on_a_tty([POLICY_TOOL, "grants"], cwd=wd.path, env=env)
    check(b"g1" in out and b"g2" in out and b"g3" in out, "grants list: %r" % out)
    check(not _bad_bytes(out), "harness-policy grants printed %r:\n%r" % (_bad_bytes(out), out))


def test_a_request_names_its_object_by_its_own_fields(wd):
    """A program that speaks the protocol itself sent a connect to
    127.0.0.1 that also carried the host "api.github.com", and a write
    to ~/.ssh that carried the host "harmless.example", as no shim
    sends: each record kept the host beside the address or path, and
    harness-audit summary listed the connect among the top hosts as
    api.github.com, tree showed the refusal as "deny write
    harmless.example". The decoder now refuses a field the op does not
    name its object by (a host off a lookup, an address off the
    network, a path or argv on it): a protocol error, the connection
    closed, and the connect itself is the kernel layer's record of the
    address."""
    client = os.path.join(HELPERS, "static_wire_client")
    lis = Listener(ALLOWED_PORTS)
    try:
        r = harness([client, "named", "connect", "api.github.com", "127.0.0.1",
                     str(lis.port)], wd)
    finally:
        lis.close()
    check("verdict" not in r.stdout, "the request was decided: %r" % r.stdout)
    for rec in r.records:
        check(rec.get("args", {}).get("host") != "api.github.com",
              "a record names the claimed host: %r" % rec)
    r.one(event="protocol_error", error="unexpected field")
    s = subprocess.run([AUDIT_TOOL, "summary", r.log], capture_output=True, text=True)
    check("api.github.com" not in s.stdout, "summary: %s" % s.stdout)
    ssh = os.path.join(wd.path, "secret", "k")
    r = harness([client, "named", "write", "harmless.example", ssh], wd)
    check("verdict" not in r.stdout, "the request was decided: %r" % r.stdout)
    r.none(args_host="harmless.example")
    t = subprocess.run([AUDIT_TOOL, "tree", r.log], capture_output=True, text=True)
    check("harmless.example" not in t.stdout, "tree: %s" % t.stdout)


def test_a_write_through_a_link_is_found_where_it_landed(wd):
    """In audit mode (the security team's first run) the agent wrote a
    file outside the project through a symbolic link in it (lk ->
    OUT/victim) and through a link's ".." (l/../y with l -> OUT/sub):
    the records had OUT in path_resolved only, and harness-audit query
    --path 'OUT/**' found nothing, summary counted the writes under the
    project's prefix, tree showed them as the project's lk and y, and an
    enforced refusal's notice said "denied write PROJECT/w", a file the
    policy allows. Each now matches and shows the path the call acted
    on too."""
    out = os.path.join(wd.state, "out")
    os.makedirs(os.path.join(out, "sub"))
    os.symlink(os.path.join(out, "victim"), os.path.join(wd.path, "lk"))
    os.symlink(os.path.join(out, "sub"), os.path.join(wd.path, "l"))
    runs = [("sh", ["sh", "-c", "echo one > lk; echo two > l/../y"])]
    if os.path.exists("/bin/busybox"):
        runs.append(("busybox", ["/bin/busybox", "sh", "-c", "echo three >> lk; echo four > l/../z"]))
    for name, cmd in runs:
        r = harness(cmd, wd, mode="audit")
        check(r.status == 0, "%s: %r" % (name, r.stderr))
        q = subprocess.run([AUDIT_TOOL, "query", r.log, "--path", out + "/**"],
                           capture_output=True, text=True)
        found = [line for line in q.stdout.splitlines() if line]
        check(len(found) >= 2, "%s: query --path %s/** found %r" % (name, out, found))
        s = subprocess.run([AUDIT_TOOL, "summary", r.log], capture_output=True, text=True)
        check(out in s.stdout.split("top path prefixes")[-1],
              "%s: summary's prefixes: %s" % (name, s.stdout))
        t = subprocess.run([AUDIT_TOOL, "tree", r.log], capture_output=True, text=True)
        check("(resolved %s/victim)" % out in t.stdout, "%s: tree: %s" % (name, t.stdout))
    check(open(os.path.join(out, "victim")).read().startswith("one"), "the write did not land")
    # Enforced, the refusal's notice names where the write would land,
    # not the project's name for it (which the policy allows).
    if os.path.exists("/bin/busybox"):
        r = harness(["/bin/busybox", "sh", "-c", "echo five > l/../w; true"], wd)
        check("denied write %s/w (resolved %s/w)" % (wd.path, out) in r.stderr,
              "the notice: %r" % r.stderr[-600:])
        check(not os.path.exists(os.path.join(out, "w")), "the write landed")


def test_learn_allows_no_program_the_run_did_not_run(wd):
    """harness-policy learn wrote an exec of "$CWD/a b" as the pattern
    "/…/a b *", whose words are split at the space: it allowed the
    program /…/a with "b" first, which the audit run never ran. The
    agent, enforced by that policy, made /…/a and ran it. A program
    whose path holds whitespace is now not learned (refused), and the
    policy says so."""
    shutil.copy("/bin/true", os.path.join(wd.path, "a b"))
    r = harness(["sh", "-c", './"a b" x; echo hi > out.txt'], wd, mode="audit")
    check(r.status == 0, r.stderr)
    p = subprocess.run([POLICY_TOOL, "learn", r.log], capture_output=True, text=True,
                       env=dict(os.environ, XDG_STATE_HOME=wd.state))
    check(p.returncode == 0, p.stderr)
    pol = os.path.join(wd.state, "learned.yaml")
    open(pol, "w").write(p.stdout)
    # Enforced by it, the agent makes /…/a and runs it with "b" first.
    os.unlink(os.path.join(wd.path, "a b"))
    open(os.path.join(wd.path, "a"), "w").write("#!/bin/sh\necho ran > marker\n")
    os.chmod(os.path.join(wd.path, "a"), 0o755)
    r = harness(["sh", "-c", "./a b evil; true"], wd, policy=pol)
    check(not os.path.exists(os.path.join(wd.path, "marker")),
          "the learned policy ran /…/a: %s" % r.dump())
    check(wd.path + "/a" not in p.stdout, "learned: %s" % p.stdout)
    chk = subprocess.run([POLICY_TOOL, "check", pol], capture_output=True, text=True)
    check(chk.returncode == 0, "check: %s %s" % (chk.stdout, chk.stderr))
    check("Not learned: 1 exec" in open(pol).read(),
          "the policy does not say what it left out:\n%s" % open(pol).read())


def test_the_question_names_the_asking_program_terminal_safe(wd):
    """The question on harness-exec's terminal says which process asks
    ("asked by PID EXE"), and EXE was printed as the kernel names the
    image: an agent that ran a copy of sh named
    "sh ESC[1A ESC[2K CR harness: ask 1: write .../notes.txt" moved the
    cursor up over the real question, erased it and drew its own, so
    the person approved a write it did not read. The name is now
    escaped as the rest of the question is."""
    from test_ask import argv_of, on_a_terminal, read_until
    os.makedirs(os.path.join(wd.path, "ask"))
    # a path drawn with U+2215 DIVISION SLASH: a name holds no "/"
    fake = "harness: ask 1: write %s\u2215notes.txt" % wd.path.replace("/", "\u2215")
    name = "sh" + ESC + "[1A" + ESC + "[2K\r" + fake + ESC + "]0;t\x07"
    prog = os.path.join(wd.path, name)
    shutil.copy(os.path.realpath("/bin/sh"), prog)
    log = os.path.join(wd.state, "asked.jsonl")
    pid, fd = on_a_terminal(wd, [prog, "-c", "echo x > ask/secret-plan; echo DONE"], log)
    try:
        seen = read_until(fd, b"(refused in ")
        os.write(fd, b"d")
        seen += read_until(fd, b"DONE", 10)
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    check(b"(refused in " in seen, "no question: %r" % seen[-800:])
    # the question as harness-exec put it (what the agent's sh prints of
    # its own name after is the agent's own output)
    q = seen[seen.index(b"harness: ask 1:"):seen.index(b"(refused in ")]
    check(b"\x1b[1A" not in q and b"\x1b[2K" not in q and b"\x1b]0;" not in q
          and b"\r" not in q.replace(b"\r\n", b""),
          "the asking program's name reached the terminal raw: %r" % q)
    check(b"sh\\x1b[1A" in q, "the asker is not named: %r" % q)


FORGE = r'''
import hashlib, json, re, sys
lines = open(sys.argv[1], "rb").read().splitlines()
out, prev = [], "0" * 64
for line in lines:
    r = json.loads(line)
    if r.get("event") == "execve" and "cat" in json.dumps(r.get("args", {})):
        continue  # the evidence goes
    body = line[:line.rindex(b',"hash"')]
    j = body.rindex(b'"prev":"')
    body = body[:j] + b'"prev":"' + prev.encode() + b'"' + body[j + 74:]
    body = re.sub(rb'"seq":\d+', b'"seq":%d' % (len(out) + 1), body, count=1)
    prev = hashlib.sha256(body + b"}").hexdigest()
    out.append(body + b',"hash":"' + prev.encode() + b'"}')
open(sys.argv[1], "wb").write(b"\n".join(out) + b"\n")
print("rewrote", len(lines), len(out))
'''


def test_a_log_rewritten_by_a_later_session_does_not_verify(wd):
    """A session's --audit-log in the project is the agent's to write
    in the next session (only the running session's log is protected):
    that agent deleted the exec records it wanted gone from the first
    session's log and computed the chain again (the hash has no key),
    renumbering seq, and harness-audit verify SESSION said "ok, chain
    intact". Each session now leaves an anchor in its own directory
    (the last record's seq and hash; the state dir is protected from
    every session), and verify checks the log against it: rewritten,
    or cut at a record boundary, it fails."""
    os.makedirs(os.path.join(wd.path, "logs"))
    log = os.path.join(wd.path, "logs", "first.jsonl")
    env = {"XDG_STATE_HOME": wd.state}
    r = harness(["sh", "-c", "cat /etc/hostname > /dev/null"], wd, log=log, env=env)
    r.expect_status(0)
    sid = r.one(event="session_start")["session"]
    venv = dict(os.environ, XDG_STATE_HOME=wd.state)
    v = subprocess.run([AUDIT_TOOL, "verify", sid], capture_output=True, text=True, env=venv)
    check(v.returncode == 0, "verify before: %r %r" % (v.stdout, v.stderr))
    whole = open(log, "rb").read()
    # The next session's agent rewrites the first one's log.
    r2 = harness([PYTHON, "-c", FORGE, log], wd, env=env)
    check("rewrote" in r2.stdout, "the rewrite: %r %r" % (r2.stdout, r2.stderr))
    check(not any(x.get("event") == "execve" and "cat" in json.dumps(x.get("args", {}))
                  for x in read_log(log)), "the evidence is still there")
    for arg in (sid, log):
        v = subprocess.run([AUDIT_TOOL, "verify", arg], capture_output=True, text=True, env=venv)
        check(v.returncode == 1 and "seq" in v.stdout,
              "verify %s after the rewrite: %r %r" % (arg, v.stdout, v.stderr))
    # Cut at a record boundary: the session's last records gone.
    open(log, "wb").write(b"\n".join(whole.splitlines()[:-2]) + b"\n")
    v = subprocess.run([AUDIT_TOOL, "verify", sid], capture_output=True, text=True, env=venv)
    check(v.returncode == 1, "verify of the cut log: %r %r" % (v.stdout, v.stderr))
    open(log, "wb").write(whole)
    v = subprocess.run([AUDIT_TOOL, "verify", sid], capture_output=True, text=True, env=venv)
    check(v.returncode == 0, "verify of the log as written: %r %r" % (v.stdout, v.stderr))


def test_two_sessions_do_not_interleave_one_log(wd):
    """Two sessions started with one --audit-log wrote their records
    into it interleaved, each chained to its own last: the log no
    longer verified ("prev mismatch"), the same verdict a tampered one
    gets, so a real edit could be passed off as the two sessions'. The
    second session now refuses to start while the first writes the
    log, and the log verifies."""
    from lib import Started
    log = os.path.join(wd.state, "shared.jsonl")
    first = Started(["sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do cat /etc/hostname > /dev/null; "
                     "sleep 0.1; done"], wd, log=log)
    import time
    for _ in range(1000):
        if os.path.exists(log) and os.path.getsize(log) > 0:
            break
        time.sleep(0.02)
    second = harness(["sh", "-c", "for i in 1 2 3; do cat /etc/hostname > /dev/null; done; echo ran"],
                     wd, log=log)
    r = first.join()
    r.expect_status(0)
    check("ran" not in second.stdout and second.status != 0,
          "the second session ran on the first's log: %r %r" % (second.stdout, second.stderr[-400:]))
    check("another session is writing it" in second.stderr, second.stderr[-400:])
    v = subprocess.run([AUDIT_TOOL, "verify", log], capture_output=True, text=True)
    check(v.returncode == 0, "verify: %r %r" % (v.stdout, v.stderr))
    # Once the first has ended, the log is the next session's to continue.
    third = harness(["true"], wd, log=log)
    third.expect_status(0)
    v = subprocess.run([AUDIT_TOOL, "verify", log], capture_output=True, text=True)
    check(v.returncode == 0, "verify after a third session: %r %r" % (v.stdout, v.stderr))


def test_the_question_shows_every_word_of_a_long_command(wd):
    """The question's line was cut at 2,048 bytes without a word: an
    agent asked about "git push origin feature -o ci.skip=<2,500 x>
    --force main" showed the person "git push origin feature -o
    ci.skip=xxxx..." to the end of the line, and "--force main", what
    the answer approved, was never on the terminal. A word is now cut
    at 120 bytes with how much was left out (on the terminal's longer
    line, at a quarter of it), and a line that does not fit says so."""
    from test_ask import on_a_terminal, read_until, pending
    log = os.path.join(wd.state, "long.jsonl")
    git = [shutil.which("git") or "/usr/bin/git", "push", "origin", "feature", "-o",
           "ci.skip=" + "x" * 2500, "--force", "main"]
    pid, fd = on_a_terminal(wd, [PYTHON, "-c", "import subprocess, sys; subprocess.run(sys.argv[1:])"]
                            + git, log)
    try:
        seen = read_until(fd, b"(refused in ")
        listed = pending(wd)
        os.write(fd, b"d")
        read_until(fd, b"\n", 5)
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    check(b"(refused in " in seen, "no question: %r" % seen[-400:])
    q = seen[seen.index(b"harness: ask 1:"):seen.index(b"(refused in ")]
    check(b"--force main" in q, "the question hides the end of the command: %r" % q[-400:])
    # The terminal's line shows such a word whole (a cut one would take
    # the question's allow keys away: test_attack22.py); pending's line
    # of 2,048 bytes cuts it, saying so.
    check(b"ci.skip=" + b"x" * 2500 in q, "the terminal cut the word: %r" % q[-400:])
    what = listed[0].get("what", "") if listed else ""
    check("--force main" in what and "[2388 more bytes]" in what,
          "pending's line: %r" % what[-400:])


APPEND = r'''
import hashlib, json, os, sys
log, what = sys.argv[1], sys.argv[2]
last = json.loads(open(log, "rb").read().splitlines()[-1])
rec = {"time": last["time"], "seq": last["seq"] + 1, "session": sys.argv[3], "pid": last["pid"],
       "ppid": 1, "tid": last["pid"], "exe": "/usr/bin/dash", "event": "openat", "op": "write",
       "args": {"path": what, "flags": "O_WRONLY|O_CREAT|O_APPEND", "mode": "0644"},
       "cwd": "/", "category": "file_write", "risk": "high", "verdict": "allow",
       "enforced": False, "rule": "default:file_write", "layer": "kernel", "prev": last["hash"]}
body = json.dumps(rec, separators=(",", ":"))
rec["hash"] = hashlib.sha256(body.encode()).hexdigest()
open(log, "a").write(json.dumps(rec, separators=(",", ":")) + "\n")
print("appended")
'''


def test_learn_takes_no_record_added_after_the_run(wd):
    """The security team's audit run logged to the project
    (--audit-log); the next session's agent appended a record of its
    own to that log, a write to ~/.ssh/authorized_keys "allowed, not
    enforced", with the chain computed on (the hash has no key), under
    the run's session id or a made-up one. harness-audit verify said
    "ok", and harness-policy learn wrote the policy that allows
    $HOME/.ssh/**. verify now fails a record of a session after its
    anchor, and learn learns only from logs that verify and whose
    sessions each left an anchor (--unverified to override); so does
    harness-policy test replay them."""
    os.makedirs(os.path.join(wd.path, "logs"))
    log = os.path.join(wd.path, "logs", "audit-run.jsonl")
    home = os.path.expanduser("~")
    r = harness(["sh", "-c", "echo hi > out.txt"], wd, mode="audit", log=log)
    r.expect_status(0)
    sid = r.one(event="session_start")["session"]
    whole = open(log, "rb").read()
    learn_env = dict(os.environ, XDG_STATE_HOME=wd.state)
    p = subprocess.run([POLICY_TOOL, "learn", log], capture_output=True, text=True, env=learn_env)
    check(p.returncode == 0 and ".ssh" not in p.stdout, "learn before: %r" % (p.stderr,))
    p = subprocess.run([POLICY_TOOL, "test", "default", log], capture_output=True, text=True, env=learn_env)
    check(p.returncode in (0, 1) and "does not verify" not in p.stderr, "policy test before: %r" % (p.stderr,))
    for as_session in (sid, "20261206T000000Z-abcdef"):
        open(log, "wb").write(whole)
        r2 = harness([PYTHON, "-c", APPEND, log, os.path.join(home, ".ssh", "authorized_keys"),
                      as_session], wd)
        check("appended" in r2.stdout, "the append: %r %r" % (r2.stdout, r2.stderr))
        p = subprocess.run([POLICY_TOOL, "learn", log], capture_output=True, text=True, env=learn_env)
        check(".ssh" not in p.stdout, "as %s: the learned policy allows the added write:\n%s"
              % (as_session, p.stdout))
        check(p.returncode == 2 and "does not verify" in p.stderr, "learn: %r" % (p.stderr,))
        # Nor does policy test show the added record as the run's.
        p = subprocess.run([POLICY_TOOL, "test", "default", log], capture_output=True, text=True,
                           env=learn_env)
        check(p.returncode == 2 and "does not verify" in p.stderr and "authorized_keys" not in p.stdout,
              "policy test: %r %r" % (p.stdout[-300:], p.stderr))
        v = subprocess.run([AUDIT_TOOL, "verify", sid], capture_output=True, text=True,
                           env=learn_env)
        if as_session == sid:
            check(v.returncode == 1 and "appended" in v.stdout,
                  "verify after the append: %r" % (v.stdout,))
        else:  # a session of no anchor: said
            check("has no anchor" in v.stderr, "verify: %r %r" % (v.stdout, v.stderr))


def test_tree_names_the_program_not_its_argv0(wd):
    """harness-audit tree drew a process by its argv, whose argv[0] is
    the caller's word: `exec -a git /bin/echo status` (curl, in the
    attack) was drawn as "git status", a command the reviewer passes
    over, and so did the query table. The executable now leads the line
    when argv[0] is not it."""
    bash = shutil.which("bash") or "/bin/bash"
    r = harness([bash, "-c", "exec -a git /bin/echo status"], wd)
    r.expect_status(0)
    t = subprocess.run([AUDIT_TOOL, "tree", r.log], capture_output=True, text=True)
    lines = [line.split(None, 1)[1] for line in t.stdout.splitlines() if line[:1].isdigit()]
    check(lines and lines[0].startswith(os.path.realpath("/bin/echo") + ": git status"),
          "tree: %s" % t.stdout)
    # the query table: the exec's record by its path too
    out = _on_a_tty([AUDIT_TOOL, "query", r.log, "--category", "exec"])
    check(b"/bin/echo: git status" in out, "query: %r" % out)


def test_an_exported_span_names_the_program_not_its_argv0(wd):
    """An OTLP export named a process's span by its argv[0]: `exec -a
    git /bin/echo status` was a span "git" at the collector. The
    executable now follows when its name is not argv[0]'s."""
    from test_otlp import COLLECTOR, NODE_ENV
    bash = shutil.which("bash") or "/bin/bash"
    r = harness([bash, "-c", "exec -a git /bin/echo status"], wd)
    r.expect_status(0)
    out = os.path.join(wd.state, "traces.pb")
    e = subprocess.run([AUDIT_TOOL, "export", "--otlp", out, r.log], capture_output=True, text=True,
                       env=dict(os.environ, XDG_STATE_HOME=wd.state))
    check(e.returncode == 0, e.stderr)
    d = subprocess.run(["node", COLLECTOR, "decode", out], env=NODE_ENV, capture_output=True,
                       text=True, timeout=60)
    check(d.returncode == 0, "the decoder: %s" % d.stderr)
    names = [s["name"] for rs in json.loads(d.stdout)["resourceSpans"]
             for ss in rs["scopeSpans"] for s in ss["spans"]]
    check("git (%s)" % os.path.realpath("/bin/echo") in names, "spans: %r" % names)
