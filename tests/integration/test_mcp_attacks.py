"""harness-mcp under attack: the client is the model, so every argument
is hostile, and so is every process a code_run starts. Each test makes
the attack, then checks that the forbidden effect did not happen and
that the records say what happened."""

import json
import os
import time

from lib import POLICIES, check, read_log
from test_mcp import Raw, calls

TEST_POLICY = ["--policy", os.path.join(POLICIES, "test.yaml")]


def structured(reply):
    check("result" in reply, "no result: %r" % reply)
    return reply["result"].get("structuredContent") or {}


def work_records(recs):
    """The records of the sandbox's processes but the worker itself
    (the supervisor's own and the worker's are not a call's work)."""
    sup = calls(recs)[0]["pid"]
    starts = [r for r in recs if r["event"] == "process_start"]
    worker = starts[0]["pid"]
    check(starts[0]["args"]["argv"][0].endswith("harness-mcp-worker"), "first process %r" % starts[0])
    return [r for r in recs if r.get("pid") not in (sup, worker) and r["event"] != "tool_call"]


def test_code_run_leaves_nothing_running_and_every_record_is_its_calls(wd):
    # A background job in a session of its own (the shell that started
    # it exits: an orphan, reparented to harness-exec), and on a timed
    # out call a double-forked daemon (setsid, fork, the middle one
    # exits): neither is in the call's process group nor below its
    # first process any more. Each waits, then writes and reads a
    # denied secret, after the call's tool_call record said it ended.
    c = Raw(wd, TEST_POLICY)
    bg = structured(c.call(1, "code_run", {
        "command": "(setsid sh -c 'sleep 1; echo late > late-bg.txt; cat secret/key' "
                   ">/dev/null 2>&1 &); echo started"}))
    daemon = ("import os, time\n"
              "if os.fork() == 0:\n"
              "    os.setsid()\n"
              "    if os.fork() == 0:\n"
              "        time.sleep(1.5)\n"
              "        open('late-daemon.txt', 'w').write('x')\n"
              "        open('secret/key').read()\n"
              "    os._exit(0)\n"
              "os.wait()\n"
              "time.sleep(300)\n")
    to = structured(c.call(2, "code_run", {"language": "python", "code": daemon, "timeout_ms": 500}))
    later = structured(c.call(3, "code_run", {"command": "sleep 3; ls"}))
    recs = c.close()
    check(bg.get("stdout") == "started\n" and to.get("timed_out"), "calls %r %r" % (bg, to))
    for name in ("late-bg.txt", "late-daemon.txt"):
        check(not os.path.exists(os.path.join(wd.path, name)),
              "%s written after its call ended (the next call saw %r)" % (name, later.get("stdout")))
    tc = calls(recs)
    check([t["outcome"] for t in tc] == ["ok", "timed_out", "ok"], "outcomes %r" % tc)
    check(tc[0].get("leftovers_killed", 0) >= 1 and tc[1].get("leftovers_killed", 0) >= 1,
          "what the calls left running is not in their records: %r" % tc[:2])
    check(bg.get("leftovers_killed", 0) >= 1, "nor in the result: %r" % bg)
    # Every record of the calls' processes is linked to a call, and no
    # late write happened under any call.
    unlinked = [r for r in work_records(recs) if not r.get("call_id")]
    check(not unlinked, "work linked to no call: %s" % json.dumps(unlinked[:3]))
    late = [r for r in recs if "late-" in r.get("args", {}).get("path", "")]
    check(not late, "late work: %s" % json.dumps(late[:2]))


# clone(CLONE_PARENT): the child's parent is its parent's parent, here
# the worker, so /proc says it is a code_run's first process; with
# setsid it leaves the call's group too. From a raw syscall (no libc
# fork handlers): the child only writes, sleeps, writes and exits.
CLONE_PARENT = r"""
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
CLONE_PARENT, SIGCHLD = 0x00008000, 17
pid = libc.syscall(56, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0)
if pid == 0:
    os.setsid()
    os.close(os.open('cloned-early.txt', os.O_WRONLY | os.O_CREAT, 0o644))
    time.sleep(1.5)
    fd = os.open('cloned.txt', os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b'x')
    os._exit(0)
print(pid)
"""


def test_clone_parent_child_is_still_its_calls(wd):
    c = Raw(wd, TEST_POLICY)
    first = structured(c.call(1, "code_run", {"language": "python", "code": CLONE_PARENT}))
    other = structured(c.call(2, "code_run", {"command": "sleep 3; echo other"}))
    recs = c.close()
    check(first.get("exit_code") == 0 and other.get("stdout") == "other\n", "calls %r %r" % (first, other))
    check(not os.path.exists(os.path.join(wd.path, "cloned.txt")),
          "the CLONE_PARENT child outlived its call and wrote")
    tc = calls(recs)
    check(tc[0].get("leftovers_killed", 0) >= 1, "record %r" % tc[0])
    child = int(first["stdout"].split()[0])
    mine = [r for r in recs if r.get("pid") == child]
    check(any(r["event"] == "open" for r in mine) and all(r.get("call_id") == tc[0]["call_id"] for r in mine),
          "the cloned child's records are not its call's: %s" % json.dumps(mine[:3]))
    unlinked = [r for r in work_records(recs) if not r.get("call_id")]
    check(not unlinked, "work linked to no call: %s" % json.dumps(unlinked[:3]))


# A token of a shape the redactor knows (test_redact.py's).
GHP = "ghp_" + "R3dact0123456789abcdefghijKLMNOPQRSTuv"


def test_no_secret_in_any_part_of_a_result(wd):
    # The result's filter replaced secrets in a few members only (a
    # file's text, a command's output, a match's line). A model gets the
    # same bytes back as base64 (file_read's encoding), as the line a
    # failing hunk found (file_patch's error), or as a name (list_dir).
    wd.file("conf.py", "a = 1\ntoken = '%s'\nb = 2\n" % GHP)
    wd.file("names/%s.txt" % GHP, "x\n")
    c = Raw(wd)
    b64 = structured(c.call(1, "file_read", {"path": "conf.py", "encoding": "base64"}))
    hunk = c.call(2, "file_patch", {"path": "conf.py",
                                    "patch": "@@ -1,3 +1,3 @@\n a = 1\n-token = 'x'\n+token = 'y'\n b = 2\n"})
    names = c.call(3, "list_dir", {"path": "names"})
    plain = structured(c.call(4, "file_read", {"path": "conf.py"}))
    recs = c.close()
    import base64
    raw = base64.b64decode(b64["content"])
    check(GHP.encode() not in raw and "content" in b64.get("redacted", []) and raw.startswith(b"a = 1\ntoken = '"),
          "base64 content: %r" % raw)
    check(b64["sha256"] == plain["sha256"] and len(b64["sha256"]) == 64, "the file's hash changed: %r" % b64)
    check(hunk["result"]["isError"] and "hunk 1" in hunk["result"]["content"][0]["text"] and
          GHP not in json.dumps(hunk), "failing hunk: %r" % hunk)
    check(GHP not in json.dumps(names) and len(structured(names)["entries"]) == 1, "list_dir: %r" % names)
    check(GHP not in plain["content"], "file_read: %r" % plain)
    with open(c.log) as f:
        check(GHP not in f.read(), "the token is in the audit log")
    check([t["outcome"] for t in calls(recs)] == ["ok", "error", "ok", "ok"], "records %r" % calls(recs))


def answer(c, i, name, args, timeout=15):
    c.send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}})
    return c.recv(timeout=timeout)


def ends(c, timeout=30):
    """The client's EOF: harness-mcp must end, its log closed."""
    c.p.stdin.close()
    try:
        c.p.wait(timeout=timeout)
    except Exception:  # noqa: BLE001 - a wedged server is the failure
        c.p.kill()
        c.p.wait()
        check(False, "harness-mcp did not end %ds after its client's EOF" % timeout)
    from lib import read_log
    recs = read_log(c.log)
    check(recs and recs[-1]["event"] == "session_end", "no session_end")
    return recs


def test_code_run_cannot_signal_the_worker(wd):
    # The worker serves every call; a code_run's process is its child,
    # same uid, same sandbox: SIGSTOP wedged every later call and the
    # session's end (harness-mcp never exited, no record was written).
    wd.file("a.txt", "A\n")
    c = Raw(wd)
    try:
        r = structured(answer(c, 1, "code_run", {
            "command": "kill -STOP $PPID && echo stopped || echo refused; "
                       "kill -TERM $PPID && echo termed || echo refused"}))
        check(r.get("stdout") == "refused\nrefused\n", "the worker was signalled: %r" % r)
        r = structured(answer(c, 2, "file_read", {"path": "a.txt"}))
        check(r.get("content") == "A\n", "file_read after the attempt: %r" % r)
        recs = ends(c)
    finally:
        if c.p.poll() is None:
            c.p.kill()
            c.p.wait()
    check([t["outcome"] for t in calls(recs)] == ["ok", "ok"], "records %r" % calls(recs))


# A 4 KiB-class alternation: glibc's regexec(3) takes time growing with
# the line's length times the pattern's (minutes on a line of MiBs).
SLOW = "(" + "|".join("a" * k + "b" for k in range(1, 60)) + ")*(a*b*)*(ab|ba|a|b)*c"


def test_search_cannot_hold_the_worker(wd):
    # The worker serves every call in one loop: a search whose regexec
    # never ends (a back-reference, exponential; or a long line) held
    # every call, code_run's timeouts and the session's end with it.
    wd.file("r.txt", "a" * 3000 + "\n")
    wd.file("slow/lines.txt", ("ab" * 8000 + "\n") * 500)
    wd.file("long/one.txt", "ab" * (1 << 20) + "\n")
    c = Raw(wd)
    try:
        t0 = time.monotonic()
        r = answer(c, 1, "search", {"path": ".", "pattern": "^(a*)*(a*)*\\2\\1b$"}, timeout=20)
        check(r["result"]["isError"] and "back-reference" in r["result"]["content"][0]["text"], "backref: %r" % r)
        r = structured(answer(c, 2, "search", {"path": "slow", "pattern": SLOW}, timeout=30))
        check(r.get("timed_out") and r.get("truncated"), "slow search %r" % r)
        r = structured(answer(c, 3, "search", {"path": "long", "pattern": SLOW}, timeout=30))
        check(r.get("long_lines_skipped") == 1 and not r.get("timed_out"), "long line %r" % r)
        r = structured(answer(c, 4, "code_run", {"command": "echo hi"}))
        check(r.get("stdout") == "hi\n", "code_run after the searches %r" % r)
        check(time.monotonic() - t0 < 45, "the searches held the worker %.0f s" % (time.monotonic() - t0))
        recs = ends(c)
    finally:
        if c.p.poll() is None:
            c.p.kill()
            c.p.wait()
    check([t["outcome"] for t in calls(recs)] == ["error", "timed_out", "ok", "ok"], "records %r" % calls(recs))


def test_a_held_worker_does_not_keep_the_session_from_ending(wd):
    # Whatever holds the worker (a system call that does not return, a
    # tool's loop; here a SIGSTOP from outside the sandbox stands for
    # it), the client's EOF ends the session: before, harness-mcp waited
    # for the worker forever and wrote neither the pending call's record
    # nor session_end.
    import signal
    from lib import read_log
    wd.file("a.txt", "A\n")
    c = Raw(wd)
    try:
        check(structured(answer(c, 1, "file_read", {"path": "a.txt"})).get("content") == "A\n", "first read")
        starts = [r for r in read_log(c.log) if r["event"] == "process_start"]
        worker = starts[0]["pid"]
        check(starts[0]["args"]["argv"][0].endswith("harness-mcp-worker"), "worker %r" % starts[0])
        os.kill(worker, signal.SIGSTOP)
        c.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "file_read", "arguments": {"path": "a.txt"}}})
        time.sleep(0.5)
        t0 = time.monotonic()
        recs = ends(c, timeout=30)
        took = time.monotonic() - t0
    finally:
        if c.p.poll() is None:
            c.p.kill()
            c.p.wait()
    check(took < 15, "harness-mcp took %.0f s to end" % took)
    tc = calls(recs)
    check([t["outcome"] for t in tc] == ["ok", "ended"] and tc[1].get("errno") == "ECHILD", "records %r" % tc)


def test_a_long_command_is_pinned_in_its_record(wd):
    # The record keeps 4 KiB of a command: a harmless-looking prefix
    # (a long comment) hid what ran after it. The record now pins the
    # whole text by size and hash, as it does a file's content.
    import hashlib
    cmd = "# " + "harmless " * 600 + "\necho ran-the-tail > tail.txt"
    c = Raw(wd)
    r = structured(c.call(1, "code_run", {"command": cmd}))
    recs = c.close()
    check(r.get("exit_code") == 0 and os.path.exists(os.path.join(wd.path, "tail.txt")), "the call %r" % r)
    a = calls(recs)[0]["args"]
    check("ran-the-tail" not in a["command"] and a.get("cut"), "the record's command %r" % a)
    check(a.get("command_bytes") == len(cmd.encode()) and
          a.get("command_sha256") == hashlib.sha256(cmd.encode()).hexdigest(),
          "what ran is not pinned in the record: %r" % {k: v for k, v in a.items() if k != "command"})


# Detached processes forking every 3 ms, each child leaving a file
# behind 1.5 s later: a child born after the call's end took the list
# of its processes, before its parent was killed, outlived the call
# (one run in two).
FORKERS = r"""
import os, time, signal
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    for _ in range(7):
        if os.fork() == 0:
            break
    while True:
        if os.fork() == 0:
            time.sleep(1.5)
            os.close(os.open('spawned-%d' % os.getpid(), os.O_WRONLY | os.O_CREAT, 0o644))
            os._exit(0)
        time.sleep(0.003)
time.sleep(0.3)
"""


def test_no_process_born_while_the_call_ends_survives_it(wd):
    # A process outlived the call when it wrote after the call's result
    # came: the leftovers are killed before it is sent. One that wrote
    # before (a loaded machine took 1.5 s from the code's end to its
    # result, and a grandchild's sleep was over) ran within the call.
    c = Raw(wd, TEST_POLICY)
    for i in range(3):
        first = structured(c.call(2 * i + 1, "code_run", {"language": "python", "code": FORKERS}))
        done = time.time()
        check(first.get("exit_code") == 0 and first.get("leftovers_killed", 0) >= 8, "the call %r" % first)
        structured(c.call(2 * i + 2, "code_run", {"command": "sleep 2"}))
        left = [n for n in os.listdir(wd.path) if n.startswith("spawned-") and
                os.stat(os.path.join(wd.path, n)).st_mtime > done]
        check(not left, "run %d: %d processes born as the call ended outlived it" % (i, len(left)))
    recs = c.close()
    check(all(t.get("leftovers_killed", 0) >= 8 for t in calls(recs)[::2]), "records %r" % calls(recs))


def start_http(wd, log, extra=()):
    """harness-mcp --http on a loopback port: (process, mcp.json, host, port)."""
    import subprocess
    from test_mcp import MCP, env_for
    p = subprocess.Popen([MCP, "--quiet", "--audit-log", log, "--http", "127.0.0.1:0"] + TEST_POLICY +
                         list(extra), cwd=wd.path, env=env_for(wd), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    check("is in " in line, "no endpoint said: %r" % line)
    ep = json.load(open(line.split("is in ", 1)[1].rstrip(")\n")))
    host, port = ep["url"][len("http://"):].split("/")[0].rsplit(":", 1)
    return p, ep, host, int(port)


def hostile_initialize(i):
    """An initialize whose clientInfo and capabilities no client would
    send: a name of a MiB, a version whose NUL would end a C string
    before the rest, more capabilities than a record lists."""
    caps = {"c" * 5000: {}}
    caps.update({"cap%03d" % k: {} for k in range(40)})
    return {"jsonrpc": "2.0", "id": i, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18" + "\u0000x" * 1000, "capabilities": caps,
                       "clientInfo": {"name": "N" * (1 << 20),
                                      "version": "1.0\u0000 then what a C string hides"}}}


def check_client_record(rec, transport):
    # Every text of the claim is bounded; what was cut of it is pinned
    # by its size and hash, and named in "cut"; the NUL hides nothing
    # unmarked; the capabilities past the listed ones are counted.
    import hashlib
    msg = hostile_initialize(0)["params"]
    size = len(json.dumps(rec))
    check(size < 16384, "a %d-byte mcp_client record" % size)
    check(rec["transport"] == transport, "transport %r" % rec["transport"])
    c = rec["client"]
    check(set(rec.get("cut", [])) >= {"client.name", "client.version", "protocol_asked", "capabilities"},
          "what was cut is not said: %r" % rec.get("cut"))
    version = msg["clientInfo"]["version"].encode()
    check(c["version"] == "1.0" and c["version_bytes"] == len(version) and
          c["version_sha256"] == hashlib.sha256(version).hexdigest(), "the version %r" % c)
    check(c["name_bytes"] == 1 << 20 and len(c["name"]) <= 256, "the name %r" % {k: c[k] for k in c if k != "name"})
    check(rec["capabilities_total"] == 41 and len(rec["capabilities"]) <= 16 and
          all(len(x) <= 256 for x in rec["capabilities"]), "capabilities %r" % rec["capabilities"][:3])


def test_a_hostile_client_info_is_bounded_and_cut_where_it_says(wd):
    # The mcp_client record of each initialize carried the client's
    # words whole: a 1 MiB name was a 1 MiB record (40 MiB fit a
    # message), and a version with a NUL in it was recorded up to the
    # NUL, the rest gone without a mark. Over stdio and over HTTP.
    import http.client
    c = Raw(wd, TEST_POLICY)
    c.send(hostile_initialize(1))
    check(c.recv()["id"] == 1, "the second initialize was not answered")
    recs = c.close()
    mine = [r for r in recs if r["event"] == "mcp_client"]
    check(len(mine) == 2 and mine[0]["client"] == {"name": "raw", "version": "0"}, "records %r" % mine[:1])
    check_client_record(mine[1], "stdio")
    log = os.path.join(wd.state, "audit-http-client.jsonl")
    p, ep, host, port = start_http(wd, log)
    try:
        auth = {"Authorization": "Bearer " + ep["token"], "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"}
        conn = http.client.HTTPConnection(host, port, timeout=30)
        conn.request("POST", "/mcp", body=json.dumps(hostile_initialize(2)), headers=auth)
        r = conn.getresponse()
        check(r.status == 200 and b'"id":2' in r.read(), "the initialize over HTTP was not answered")
        conn.close()
        conn = http.client.HTTPConnection(host, port, timeout=30)
        conn.request("DELETE", "/mcp", headers=auth)
        conn.getresponse().read()
        check(p.wait(timeout=60) == 0, "the session did not end: %s" % p.returncode)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    from lib import read_log
    mine = [r for r in read_log(log) if r["event"] == "mcp_client"]
    check(len(mine) == 1, "records %d" % len(mine))
    check_client_record(mine[0], "http")


def test_streams_the_client_keeps_open_do_not_fill_the_server(wd):
    # A refused or answered request's connection lingers after its
    # answer (the server shuts its side and drains what the client
    # still sends). A finished stream kept its request id, so a client
    # that keeps each connection open after the end of its answer (as a
    # pool that ignores "Connection: close" does) held a slot for good:
    # the 65th such connection was reset, and the session served no
    # one any more.
    import socket
    log = os.path.join(wd.state, "audit-linger.jsonl")
    p, ep, host, port = start_http(wd, log)
    kept = []

    def post(i, sid=None):
        body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "initialize" if i == 0 else "ping",
                           "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "pool", "version": "1"}} if i == 0 else {}})
        head = ("POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                "%sContent-Length: %d\r\n\r\n" % (ep["token"], "Mcp-Session-Id: %s\r\n" % sid if sid else "",
                                                  len(body)))
        s = socket.create_connection((host, port), 10)
        kept.append(s)
        s.settimeout(10)
        s.sendall(head.encode() + body.encode())
        data = b""
        try:
            while True:  # to the end of the answer; the socket stays open
                d = s.recv(65536)
                if not d:
                    break
                data += d
        except OSError as e:
            data += b" %r" % e
        return data

    try:
        first = post(0)
        sid = [x.split(b":", 1)[1].strip() for x in first.split(b"\r\n")
               if x.lower().startswith(b"mcp-session-id:")]
        check(sid, "no session id: %r" % first[:300])
        for i in range(1, 100):
            got = post(i, sid[0].decode())
            check(b'"id":%d' % i in got, "request %d over its own connection was not answered: %r" % (i, got[-200:]))
    finally:
        for s in kept:
            s.close()
        p.kill()
        p.wait()


# A code_run that moves the directory holding harness-mcp's socket away
# (or re-points a symlink on its path) and serves its own socket where
# the client will connect: what it reads is the client's request, with
# its bearer token.
FAKE = r"""
import os, socket, sys
path = sys.argv[1]
try:
    if sys.argv[2] == "dir":
        os.rename(os.path.dirname(path), os.path.dirname(path) + ".old")
        os.mkdir(os.path.dirname(path))
    else:
        os.unlink(os.path.dirname(path))
        os.mkdir(os.path.dirname(path) + ".fake")
        os.symlink(os.path.basename(os.path.dirname(path)) + ".fake", os.path.dirname(path))
except OSError as e:
    print("refused", e.errno)
    sys.exit(0)
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(1)
s.settimeout(8)
print("moved", flush=True)
try:
    c, _ = s.accept()
    c.settimeout(3)
    print("got", c.recv(4096).decode(errors="replace").replace("\r\n", " | "))
except OSError as e:
    print("none", e)
"""


def test_the_unix_endpoint_cannot_be_moved_from_under_its_path(wd):
    # The socket file was protected by its inode (a connect, a rename,
    # an unlink or a hard link of it refused), but not the path to it:
    # a code_run renamed the directory it is in (a write root: the
    # project), or replaced a symlink on the way, and served its own
    # socket there, which the next request of the client reached.
    import threading
    from test_mcp import MCP, env_for, unix_http
    import subprocess
    os.makedirs(os.path.join(wd.path, "real"))
    os.symlink("real", os.path.join(wd.path, "link"))
    for how, sock in (("dir", os.path.join(wd.path, "run", "mcp.sock")),
                      ("symlink", os.path.join(wd.path, "link", "mcp.sock"))):
        os.makedirs(os.path.dirname(os.path.realpath(sock)), exist_ok=True)
        log = os.path.join(wd.state, "audit-move-%s.jsonl" % how)
        p = subprocess.Popen([MCP, "--quiet", "--audit-log", log, "--http", "unix:" + sock] + TEST_POLICY,
                             cwd=wd.path, env=env_for(wd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            line = p.stderr.readline()
            check("is in " in line, "no endpoint said: %r" % line)
            ep = json.load(open(line.split("is in ", 1)[1].rstrip(")\n")))
            conn = unix_http(sock)
            auth = {"Authorization": "Bearer " + ep["token"], "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream"}

            def post(msg):
                c = conn()
                c.request("POST", "/mcp", headers=auth, body=json.dumps(msg))
                r = c.getresponse()
                data = r.read().decode()
                c.close()
                if r.getheader("Mcp-Session-Id"):
                    auth["Mcp-Session-Id"] = r.getheader("Mcp-Session-Id")
                return [json.loads(x[5:]) for x in data.splitlines() if x.startswith("data:")]

            post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "t", "version": "0"}}})
            later = []

            def client_later():
                time.sleep(2)
                try:
                    later.append(post({"jsonrpc": "2.0", "id": 9, "method": "ping"}))
                except Exception as e:  # noqa: BLE001 - what the client met
                    later.append(repr(e))

            t = threading.Thread(target=client_later)
            t.start()
            got = post({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "code_run", "arguments": {"argv": ["python3", "-c", FAKE, sock, how]}}})
            t.join()
            out = got[-1]["result"].get("structuredContent", {}).get("stdout", "") if got else ""
            check(out.startswith("refused"), "%s: the agent moved the endpoint: %r" % (how, out or got))
            check(later and isinstance(later[0], list) and later[0][-1].get("id") == 9,
                  "%s: the client's next request did not reach harness-mcp: %r" % (how, later))
        finally:
            p.kill()
            p.wait()
        recs = read_log(log)
        check(any(r.get("rule") == "harness:protect" and r.get("event", "").startswith(("rename", "unlink"))
                  for r in recs), "%s: no harness:protect refusal recorded" % how)


# Widens the window between a socket's bind and what follows it: every
# Unix bind of harness-mcp sleeps 300 ms once done (an LD_PRELOAD on
# harness-mcp itself, the test's; a loaded machine does the same).
SLOW_BIND = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/socket.h>
#include <unistd.h>

int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	int (*real)(int, const struct sockaddr *, socklen_t) =
	    (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");
	int r = real(fd, sa, len);

	if (sa->sa_family == AF_UNIX)
		usleep(300000);
	return r;
}
"""


def _cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read()
    except OSError:
        return b""


def test_the_unix_endpoint_is_made_where_a_symlink_cannot_redirect_it(wd):
    # The socket was bound at PATH, then chmod(PATH, 0600) by name: who
    # may write PATH's directory (another user's directory, /tmp for a
    # session of another agent of the same user) replaced the new
    # socket by a symlink in between, and harness-mcp (root, for one)
    # made the file it named 0600; the file protected by inode was
    # the symlink. Now the socket is made in a private directory and
    # renamed to PATH.
    import subprocess
    import threading
    from test_mcp import MCP, env_for
    from lib import preload_library
    lib = preload_library(wd.state, "slowbind", SLOW_BIND)
    victim = os.path.join(wd.state, "victim.txt")
    with open(victim, "w") as f:
        f.write("mine\n")
    os.chmod(victim, 0o644)
    shared = os.path.join(wd.state, "shared")
    os.makedirs(shared)
    sock = os.path.join(shared, "mcp.sock")
    swapped = []

    def attacker():
        end = time.monotonic() + 20
        while time.monotonic() < end and not swapped:
            if os.path.lexists(sock) and not os.path.islink(sock):
                try:
                    os.rename(sock, sock + ".aside")
                    os.symlink(victim, sock)
                    swapped.append(True)
                except OSError:
                    pass
            time.sleep(0.001)

    t = threading.Thread(target=attacker)
    t.start()
    log = os.path.join(wd.state, "audit-slowbind.jsonl")
    p = subprocess.Popen([MCP, "--quiet", "--audit-log", log, "--http", "unix:" + sock] + TEST_POLICY,
                         cwd=wd.path, env=dict(env_for(wd), LD_PRELOAD=lib), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        p.stderr.readline()
        t.join()
        check(os.stat(victim).st_mode & 0o777 == 0o644,
              "harness-mcp chmod'ed the file a symlink at its socket's path named: %o" % os.stat(victim).st_mode)
    finally:
        t.join()
        p.kill()
        p.wait()
    # Killed in its set-up: nothing of the session lives on (its first
    # process held the reaper's pipe open, stuck on the dead FUSE mask).
    left = []
    for _ in range(300):
        left = [d for d in os.listdir("/proc") if d.isdigit() and log.encode() in _cmdline(d)]
        if not left:
            break
        time.sleep(0.1)
    check(not left, "processes of the killed session left: %r" % left)
