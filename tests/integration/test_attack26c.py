"""Attack review 26c: records that lie and the tools that read them
(DESIGN classes 3 and 8). A log given to several sessions in turn
(--audit-log, which one session writes at a time) holds each one's
records; the readers took all of them for any one session, and verify,
given the file, checked only the sessions it still named."""

import json
import os
import subprocess

from lib import AUDIT_TOOL, POLICY_TOOL, PYTHON, check, harness, read_log


def _audit(args, wd):
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    return subprocess.run([AUDIT_TOOL] + args, capture_output=True, text=True,
                          cwd=wd.path, env=env, timeout=60)


def _two_sessions(wd):
    """Two sessions, one after the other, on one log in the project: the
    first runs cat, the second echo. Returns (log, first id, second id)."""
    log = os.path.join(wd.path, "shared.jsonl")
    env = {"XDG_STATE_HOME": wd.state}
    a = harness(["sh", "-c", "cat /etc/hostname > /dev/null; echo FIRST"], wd, log=log, env=env)
    a.expect_status(0)
    b = harness(["sh", "-c", "echo SECOND; exit 3"], wd, log=log, env=env)
    b.expect_status(3)
    ids = [r["session"] for r in read_log(log) if r.get("event") == "session_start"]
    check(len(ids) == 2, "two sessions in the log: %r" % ids)
    return log, ids[0], ids[1]


def test_a_session_named_reads_its_own_records_of_a_shared_log(wd):
    """Each session's directory links the --audit-log it wrote, and a
    reader given the session read the whole file: `harness-audit
    sessions` listed the second session with the first's command and
    start (the file's first line) and the first with the second's end
    and exit (its last), and summary, show, tree and export of the
    second showed the first's processes as its own, its `echo` drawn
    under the first's `sh -c cat`. A session named is now its own
    records only."""
    log, first, second = _two_sessions(wd)
    s = _audit(["sessions", "--json"], wd)
    check(s.returncode == 0, "sessions: %r" % s.stderr)
    rows = {j["id"]: j for j in map(json.loads, s.stdout.splitlines())}
    check(first in rows and second in rows, "both sessions listed: %r" % s.stdout)
    check("cat /etc/hostname" in " ".join(rows[first].get("command", [])) and
          "echo SECOND" in " ".join(rows[second].get("command", [])),
          "each session listed with its own command: %r" % s.stdout)
    ends = {r["session"]: r for r in read_log(log) if r.get("event") == "session_end"}
    for sid in (first, second):
        check(rows[sid].get("end") == ends[sid]["time"],
              "session %s listed with its own end: %r" % (sid, rows[sid]))
    for sid, mine, other in ((first, "cat /etc/hostname", "echo SECOND"),
                             (second, "echo SECOND", "cat /etc/hostname")):
        for args in (["show", sid], ["summary", sid], ["tree", sid], ["tree", "--json", sid]):
            o = _audit(args, wd)
            check(o.returncode == 0 and mine in o.stdout and other not in o.stdout,
                  "%s: the other session's records shown: %r %r" % (args, o.stdout[-600:], o.stderr))
        shown = [json.loads(x) for x in _audit(["show", sid], wd).stdout.splitlines()]
        check(shown and all(r["session"] == sid for r in shown),
              "show %s: another session's record" % sid)
        out = os.path.join(wd.state, "%s.otlp" % sid)
        e = _audit(["export", "--otlp", out, sid], wd)
        check(e.returncode == 0, "export %s: %r %r" % (sid, e.stdout, e.stderr))
        pb = open(out, "rb").read()
        check(mine.encode() in pb and other.encode() not in pb,
              "export %s: the other session's processes exported as its own" % sid)
    # The whole file, named by its path, is every session's still.
    o = _audit(["show", log], wd)
    check("cat /etc/hostname" in o.stdout and "echo SECOND" in o.stdout,
          "show LOG: %r" % o.stdout[-400:])


STRIP = r'''
import hashlib, json, re, sys
log, drop = sys.argv[1], sys.argv[2]
out, prev = [], "0" * 64
for line in open(log, "rb").read().splitlines():
    if drop != "all" and json.loads(line)["session"] != drop:
        body = line[:line.rindex(b',"hash"')]
        j = body.rindex(b'"prev":"')
        body = body[:j] + b'"prev":"' + prev.encode() + b'"' + body[j + 74:]
        body = re.sub(rb'"seq":\d+', b'"seq":%d' % (len(out) + 1), body, count=1)
        prev = hashlib.sha256(body + b"}").hexdigest()
        out.append(body + b',"hash":"' + prev.encode() + b'"}')
open(log, "wb").write(b"".join(x + b"\n" for x in out))
print("kept", len(out))
'''


def test_a_log_stripped_of_a_whole_session_does_not_verify(wd):
    """A later session's agent, whose project holds an earlier
    session's --audit-log, took every record of one session out of it
    and computed the chain again (or emptied the file): verify of the
    file by its path said "ok" (the anchors checked were those of the
    sessions the log still named, none for an empty one), and learn and
    export took it as verified. Every anchored session whose directory
    links the file is now checked too: its last record must be there."""
    log, first, second = _two_sessions(wd)
    whole = open(log, "rb").read()
    v = _audit(["verify", log], wd)
    check(v.returncode == 0, "verify before: %r %r" % (v.stdout, v.stderr))
    for drop, gone in ((first, first), ("all", first), (second, second)):
        open(log, "wb").write(whole)
        r = harness([PYTHON, "-c", STRIP, log, drop], wd, env={"XDG_STATE_HOME": wd.state})
        check("kept" in r.stdout, "the rewrite (%s): %r %r" % (drop, r.stdout, r.stderr[-300:]))
        check(not any(x.get("session") == gone for x in read_log(log)),
              "session %s still in the log" % gone)
        v = _audit(["verify", log], wd)
        check(v.returncode == 1 and "cut, or rewritten" in v.stdout,
              "verify of the log without %s: %r %r" % (drop, v.stdout, v.stderr))
        e = _audit(["export", "--otlp", os.path.join(wd.state, "x.otlp"), log], wd)
        check(e.returncode == 2 and "does not verify" in e.stderr,
              "export of the log without %s: %r %r" % (drop, e.stdout, e.stderr))
        env = dict(os.environ, XDG_STATE_HOME=wd.state)
        env.pop("LD_PRELOAD", None)
        p = subprocess.run([POLICY_TOOL, "learn", log], capture_output=True, text=True,
                           env=env, timeout=60)
        check(p.returncode != 0 and "does not verify" in p.stderr,
              "learn of the log without %s: %r %r" % (drop, p.stdout[-300:], p.stderr))
    # Spliced: the file replaced by another session's whole log (its
    # chain and anchor intact), a new file renamed over the name.
    other = harness(["sh", "-c", "true"], wd, env={"XDG_STATE_HOME": wd.state})
    tmp = log + ".new"
    open(tmp, "wb").write(open(other.log, "rb").read())
    os.rename(tmp, log)
    v = _audit(["verify", log], wd)
    check(v.returncode == 1 and "cut, or rewritten" in v.stdout,
          "verify of another session's log in its place: %r %r" % (v.stdout, v.stderr))
    open(log, "wb").write(whole)
    v = _audit(["verify", log], wd)
    check(v.returncode == 0, "verify of the log as written: %r %r" % (v.stdout, v.stderr))


FAILS_THEN_WRITES = r'''
import os, sys
open("x.bin", "wb").write(b"\x00\x01 not a program\n")
os.chmod("x.bin", 0o755)
try:
    os.execv("./x.bin", ["./x.bin", "claimed"])
except OSError as e:
    print("exec refused", e.errno, flush=True)
open("c", "w").write("by python\n")
os.execv("/bin/busybox", ["busybox", "sh", "-c", "echo evil > b"])
'''


def test_a_file_a_static_program_wrote_names_that_program_in_the_manifest(wd):
    """The manifest names each changed file's writer by the argv of its
    pid's last process_start, which a program with the shim says when it
    starts. A static program says none: a file it wrote after an exec
    was named by the argv of the image it replaced (python's `-c ...`
    beside busybox's exe), and a checkpoint's cause likewise. The
    record of the exec that ran now names what runs, until a
    process_start; an exec the kernel refused (a `failed` record) names
    nothing."""
    from test_worktree import make_repo, session_dir, wt_run
    if not os.path.exists("/bin/busybox"):
        from lib import Skip
        raise Skip("no /bin/busybox (busybox-static)")
    repo = make_repo(wd, files={"a": "a0\n", "b": "b0\n", "c": "c0\n"})
    r = wt_run(wd, repo, [PYTHON, "-c", FAILS_THEN_WRITES], "s26c")
    r.expect_status(0)
    check("exec refused" in r.stdout, "the first exec: %r %r" % (r.stdout, r.stderr[-300:]))
    recs = read_log(r.log)
    check(any(x.get("event") == "failed" for x in recs), "no failed record of the refused exec")
    man = json.load(open(os.path.join(session_dir(wd, "s26c"), "manifest.json")))
    by = {f["path"]: f["writer"] for f in man["files"]}
    check(by["b"]["exe"].endswith("busybox") and
          by["b"]["argv"] == ["busybox", "sh", "-c", "echo evil > b"],
          "b's writer: %r" % by["b"])
    check(by["c"]["argv"][:2] == [PYTHON, "-c"] or by["c"]["argv"][1:2] == ["-c"],
          "c's writer named by an exec that did not run: %r" % by["c"])
    for f in man["files"]:
        rec = [x for x in recs if x.get("seq") == f["writer"]["seq"]][0]
        check(rec["pid"] == f["writer"]["pid"] and rec.get("exe") == f["writer"]["exe"],
              "writer of %s: %r, its record %r" % (f["path"], f["writer"], rec))


def test_a_live_trace_of_a_shared_log_is_its_sessions_own(wd):
    """--otlp-endpoint follows the session's log from its first byte: on
    an --audit-log an earlier session wrote, the live trace took that
    session's session_start (its trace_id: the collector got this
    session's spans in the earlier session's trace) and sent the
    earlier session's processes again as this one's. It follows the
    session's own records now."""
    from test_otlp import serve, spans_of
    log, first, _ = _two_sessions(wd)
    c, port, got = serve(wd)
    try:
        e = dict(os.environ, XDG_STATE_HOME=wd.state)
        e.pop("LD_PRELOAD", None)
        from lib import EXEC
        p = subprocess.run([EXEC, "--quiet", "--audit-log", log, "--otlp-endpoint",
                            "http://127.0.0.1:%d" % port, "--", "sh", "-c", "echo THIRD; exit 4"],
                           cwd=wd.path, env=e, capture_output=True, text=True, timeout=120)
        check(p.returncode == 4, "the third session: %s %r" % (p.returncode, p.stderr))
        lines = [json.loads(line) for line in open(got)]
    finally:
        c.terminate()
        c.wait(timeout=30)
    check(lines and all(x["ok"] for x in lines), "batches %r" % [x.get("error") for x in lines])
    starts = [r for r in read_log(log) if r.get("event") == "session_start"]
    check(len(starts) == 3, "three sessions in the log")
    sent = spans_of(lines).values()
    text = json.dumps(list(sent))
    check(all(s["traceId"] == starts[2]["trace_id"] for s in sent),
          "spans sent in another session's trace: %r" % sorted({s["traceId"] for s in sent}))
    check("echo THIRD" in text and "cat /etc/hostname" not in text and "echo SECOND" not in text,
          "the live trace: %r" % sorted(s["name"] for s in sent))


def test_a_zombie_leaders_calls_name_their_program_and_bypass(wd):
    """A process whose first thread has exited (pthread_exit in main: a
    zombie leader) runs on in its other threads, and /proc/PID/exe reads
    nothing: every record of its calls named no program, and a raw
    syscall of the shim-loaded process, which skips the shim, was not
    marked shim_bypass (the mark wants the program known). The image is
    now read through one of its running threads (they share it)."""
    from lib import HELPERS
    raw = os.path.join(HELPERS, "raw_syscall")
    r = harness([raw, "rawz.txt", "zombie"], wd)
    check(r.stdout.strip() == "ok", repr((r.stdout, r.stderr)))
    rec = [x for x in r.records if x.get("event") == "openat" and x.get("layer") == "kernel"]
    check(len(rec) == 1, r.dump())
    check(rec[0].get("exe") == os.path.realpath(raw) and rec[0].get("shim_bypass") is True,
          "the zombie leader's raw call: %r" % rec[0])
    check(rec[0]["tid"] != rec[0]["pid"], "not the second thread's call: %r" % rec[0])
    r = harness([PYTHON, "-c", ZOMBIE_PY], wd)
    check("done" in r.stdout, repr((r.stdout, r.stderr)))
    mine = [x for x in r.records if x.get("op") == "write" and
            x.get("args", {}).get("path", "").endswith("zl-out")]
    check(mine and all(x.get("exe", "").startswith("/usr/bin/python") for x in mine),
          "the zombie leader's write named no program: %s" % r.dump())


ZOMBIE_PY = r'''
import ctypes, os, threading, time
def leader_alive():
    try:  # the leader may turn zombie between any two looks
        return bool(os.readlink("/proc/%d/exe" % os.getpid()))
    except OSError:
        return False
def t():
    while leader_alive():
        time.sleep(0.01)
    os.close(os.open("zl-out", os.O_WRONLY | os.O_CREAT, 0o644))
    print("done", flush=True)
    os._exit(0)
threading.Thread(target=t).start()
ctypes.CDLL(None).pthread_exit(None)
'''


ASKS = r'''
import socket, sys
s = socket.socket()
s.settimeout(30)
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
    print("A: connected", flush=True)
except OSError as e:
    print("A: refused", e.errno, flush=True)
'''

SPEAKS = r'''
import socket, struct, sys
state, sid = sys.argv[1], sys.argv[2]
d = state + "/harness/sessions/" + sid
for name, msg in (("ask", b"approve 1 once 0"), ("sock", b"\x01" * 16)):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(d + "/" + name)
        s.send(msg)
        s.settimeout(3)
        print(name, "reached", s.recv(200), flush=True)
    except OSError as e:
        print(name, "refused", e.errno, flush=True)
'''


def test_another_sessions_sockets_are_not_the_agents_in_audit_mode(wd):
    """Each session listens on sockets of its own (the shim's, the
    questions', a worktree's control socket) in its directory or, when
    that path is too long, in the run dir. They were refused to other
    sessions' agents as a neighbour's socket, which audit mode does not
    enforce: an audit session's agent connected to a running session's
    question socket and approved that session's pending connect (its
    ask_answer record said only "control pid N"), and could speak the
    shim's protocol into that session's log. They are harness:protect
    now, enforced in both modes."""
    import time
    from lib import Started, ALLOWED_PORTS
    port = ALLOWED_PORTS[0] if ALLOWED_PORTS else 9
    env = {"XDG_STATE_HOME": wd.state}
    log_a = os.path.join(wd.state, "asker.jsonl")
    a = Started([PYTHON, "-c", ASKS, str(port)], wd, policy=None, log=log_a, env=env,
                ask_timeout=6)
    sid = None
    for _ in range(200):
        recs = read_log(log_a) if os.path.exists(log_a) else []
        if any(x.get("verdict") == "ask" for x in recs):
            sid = recs[0]["session"]
            break
        time.sleep(0.05)
    check(sid, "the first session did not ask")
    b = harness([PYTHON, "-c", SPEAKS, wd.state, sid], wd, policy=None, mode="audit", env=env)
    ra = a.join()
    check("ask refused" in b.stdout and "sock refused" in b.stdout,
          "another session's sockets reached: %r %r" % (b.stdout, b.stderr[-300:]))
    mine = [x for x in b.records if x.get("op") == "connect" and sid in json.dumps(x.get("args", {}))]
    check(len(mine) >= 2 and all(x.get("rule") == "harness:protect" and x.get("enforced") is not False
                                 for x in mine), "the audit session's records: %r" % mine)
    check("A: connected" not in ra.stdout, "the question was approved from outside: %r" % ra.stdout)
    check(not any(x.get("event") == "ask_answer" and x.get("verdict") == "allow" for x in ra.records),
          "an allow in the first session's log: %s" % ra.dump())
    check(not any(x.get("event") == "protocol_error" for x in ra.records),
          "the other agent spoke into the first session's log: %s" % ra.dump())


def test_a_cut_session_is_not_listed_running_by_a_process_that_took_its_number(wd):
    """`harness-audit sessions` read a session without session_end as
    running when a process of its harness-exec's pid was named
    "harness-exec" and the session's socket was there: a harness-exec
    killed (SIGKILL leaves the socket file) whose number a process took
    and named so (its comm is its own to set: PR_SET_NAME, or the name
    of the file it runs) listed the cut session as running. A process
    that started after the session's start is not its harness-exec.
    Root only: the number is given through ns_last_pid."""
    import shutil
    import signal
    import time
    from lib import Skip, Started
    if os.geteuid() != 0:
        raise Skip("ns_last_pid needs root")
    log = os.path.join(wd.state, "cut.jsonl")
    t = Started(["sleep", "30"], wd, log=log, env={"XDG_STATE_HOME": wd.state})
    start = None
    for _ in range(200):
        if os.path.exists(log) and os.path.getsize(log):
            start = read_log(log)[0]
            break
        time.sleep(0.05)
    check(start and start.get("event") == "session_start", "no session_start")
    time.sleep(3)  # the newcomer starts later than the session by more than the slack
    os.kill(start["pid"], signal.SIGKILL)
    t.join()
    check(os.path.exists(start["socket"]), "the socket file went with its harness-exec")
    fake = os.path.join(wd.state, "harness-exec")
    shutil.copy("/bin/sleep", fake)
    p = None
    for _ in range(200):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(start["pid"] - 1))
        q = subprocess.Popen([fake, "30"])
        if q.pid == start["pid"]:
            p = q
            break
        q.kill()
        q.wait()
    if p is None:
        raise Skip("the number was taken by others first")
    try:
        for _ in range(2000):  # its exec may still be under way
            comm = open("/proc/%d/comm" % p.pid).read().strip()
            if comm == "harness-exec":
                break
            time.sleep(0.01)
        check(comm == "harness-exec", "the newcomer's name: %r" % comm)
        s = _audit(["sessions", "--json"], wd)
        row = [json.loads(x) for x in s.stdout.splitlines() if start["session"] in x]
        check(row and row[0]["state"] == "cut", "the killed session listed: %r" % row)
    finally:
        p.kill()
        p.wait()


PLANT = r'''
import hashlib, json, os
sid = os.path.basename(os.path.dirname(os.environ["TMPDIR"]))
prev, out = "0" * 64, []
for i, ev in enumerate(({"event": "session_start", "command": ["make", "test"], "cwd": os.getcwd()},
                        {"event": "session_end", "exit_code": 0}), 1):
    rec = {"time": "2026-01-01T00:00:0%dZ" % i, "seq": i, "session": "19990101T000000Z-000000"}
    rec.update(ev)
    rec["prev"] = prev
    body = json.dumps(rec, separators=(",", ":"))[:-1]
    prev = hashlib.sha256((body + "}").encode()).hexdigest()
    out.append(body + ',"hash":"%s"}' % prev)
open(sid, "w").write("\n".join(out) + "\n")
try:
    open(os.path.expanduser("~/.ssh/id_rsa")).read()
except OSError:
    pass
print("planted", sid)
'''


def test_a_file_named_like_the_session_is_not_read_for_it(wd):
    """Every harness-audit command takes a log path or a session id,
    and a file of that name in the current directory won: the agent,
    whose TMPDIR names its session, left in the project a log of its
    own making named like its session (a chain that verifies, of a
    made-up session), and `harness-audit summary ID`, `show`, `tree`,
    `verify` and `export` run there read it: "denied (0)" and a
    `make test`, in place of the session's refused read of
    ~/.ssh/id_rsa. A session of that name is now read first (the file
    is still ./ID)."""
    r = harness([PYTHON, "-c", PLANT], wd, policy=None, env={"XDG_STATE_HOME": wd.state})
    check("planted" in r.stdout, repr((r.stdout, r.stderr[-300:])))
    sid = r.stdout.split()[-1]
    check(sid == r.one(event="session_start")["session"], "the TMPDIR's session: %s" % sid)
    check(os.path.exists(os.path.join(wd.path, sid)), "no file planted")
    s = _audit(["summary", sid], wd)
    check(s.returncode == 0 and "denied (0)" not in s.stdout and "ssh" in s.stdout,
          "summary of the session read the planted file: %r" % s.stdout[-500:])
    v = _audit(["verify", sid], wd)
    check(v.returncode == 0 and "19990101" not in v.stdout + v.stderr,
          "verify of the session: %r %r" % (v.stdout, v.stderr))
    shown = [json.loads(x) for x in _audit(["show", sid], wd).stdout.splitlines()]
    check(shown and all(x["session"] == sid for x in shown), "show of the session: %r" % shown[:2])
    p = _audit(["summary", "./" + sid], wd)
    check(p.returncode == 0 and "denied (0)" in p.stdout, "the file by its path: %r" % p.stdout)


MOVE_REFS = r'''
sh -c 'echo evil > a'
sleep 1
G=$(git rev-parse --git-common-dir)
C=$(git rev-parse HEAD)
for n in 1 99; do
    mkdir -p "$G/refs/harness/$S/checkpoints"
    echo "$C" > "$G/refs/harness/$S/checkpoints/$n.tmp" && mv "$G/refs/harness/$S/checkpoints/$n.tmp" "$G/refs/harness/$S/checkpoints/$n"
done
echo moved
'''


def test_checkpoints_are_read_as_the_session_recorded_them(wd):
    """harness-audit diff and harness-exec restore found checkpoint N by
    its ref, refs/harness/SESSION/checkpoints/N, in the repository the
    agent writes: in audit mode (which enforces the worktree's git
    rules as nothing) the agent pointed checkpoint 1, the one that held
    its change, at the base commit and added a checkpoint 99 there, and
    `harness-audit diff SESSION` (base to the last) and `diff SESSION 1`
    showed nothing, and `restore SESSION 1` brought back the base. They
    read each checkpoint's commit from the session's checkpoints.jsonl
    (the state directory) now."""
    from test_worktree import make_repo, wt_run
    repo = make_repo(wd, files={"a": "a0\n"})
    r = wt_run(wd, repo, ["sh", "-c", MOVE_REFS], "s26cr", mode="audit",
               extra=["--keep-worktree"], env={"S": "s26cr"})
    check("moved" in r.stdout, "the refs: %r %r" % (r.stdout, r.stderr[-400:]))
    # The agent's moves are refused now, in audit mode too (rule
    # harness:other-session, twenty-eighth attack review, part d): the
    # readers are tried on refs moved from outside, as any other writer
    # of the repository may.
    check(not [x for x in r.records if x.get("op") in ("write", "rename") and
               "refs/harness/" in str(x.get("args")) and x.get("verdict") != "deny"] and
          [x for x in r.records if x.get("rule") == "harness:other-session"],
          "the agent moved its checkpoints' refs")
    base = subprocess.run(["git", "-C", repo, "rev-parse", "main"], capture_output=True,
                          text=True).stdout.strip()
    for n in (1, 99):
        subprocess.run(["git", "-C", repo, "update-ref", "refs/harness/s26cr/checkpoints/%d" % n,
                        base], check=True)
    refs = subprocess.run(["git", "-C", repo, "for-each-ref", "refs/harness/s26cr"],
                          capture_output=True, text=True).stdout
    check("checkpoints/99" in refs, "no ref added: %r" % refs)
    for args in (["diff", "s26cr"], ["diff", "s26cr", "1"]):
        d = _audit(args, wd)
        check(d.returncode == 0 and "+evil" in d.stdout, "%s: %r %r" % (args, d.stdout, d.stderr))
    from lib import EXEC
    wt = os.path.join(repo, ".git", "harness", "worktrees", "s26cr")
    open(os.path.join(wt, "a"), "w").write("later\n")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    p = subprocess.run([EXEC, "restore", "s26cr", "1"], capture_output=True, text=True, env=env,
                       timeout=60)
    check(p.returncode == 0, "restore: %r" % p.stderr)
    check(open(os.path.join(wt, "a")).read() == "evil\n",
          "restore 1 brought back another commit: %r" % open(os.path.join(wt, "a")).read())
    n = _audit(["diff", "s26cr", "99"], wd)
    check(n.returncode != 0, "a checkpoint the session never made: %r" % n.stdout)
