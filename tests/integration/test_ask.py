"""Approvals (supervisor/ask.h): a call the policy says ask for waits in
its system call until a person answers, from harness-exec's terminal (a
pty the test drives) or with `harness-exec approve|deny` from another
process; the answer's scope is honoured (once, the session, always in
the grants file), a grant holds only for what it names, no answer is a
refusal after the timeout, and each question and answer is recorded.
Through the shim (python, sh) and without it (static busybox)."""

import json
import os
import pty
import select
import shutil
import signal
import subprocess
import time

from lib import AUDIT_TOOL, EXEC, HELPERS, POLICIES, POLICY_TOOL, PYTHON, Listener, check, read_log

BUSYBOX = "/bin/busybox"
POLICY = os.path.join(POLICIES, "ask.yaml")


def env_of(wd):
    e = dict(os.environ)
    e["XDG_STATE_HOME"] = wd.state
    e.pop("LD_PRELOAD", None)
    e.pop("HARNESS_SOCKET", None)
    return e


def argv_of(wd, cmd, timeout, log):
    return [EXEC, "--quiet", "--policy", POLICY, "--audit-log", log,
            "--ask-timeout", str(timeout), "--"] + list(cmd)


class Session:
    """harness-exec running cmd in the background, with no terminal (a
    session of its own): its questions are answered with the CLI."""

    def __init__(self, wd, cmd, timeout=30, preexec_fn=None):
        self.wd = wd
        self.log = os.path.join(wd.state, "ask-%d.jsonl" % len(os.listdir(wd.state)))
        self.p = subprocess.Popen(argv_of(wd, cmd, timeout, self.log), cwd=wd.path,
                                  env=env_of(wd), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, start_new_session=True, preexec_fn=preexec_fn)

    def finish(self, timeout=60):
        self.stdout, self.stderr = self.p.communicate(timeout=timeout)
        self.status = self.p.returncode
        self.records = read_log(self.log)
        return self

    def answers(self):
        return [r for r in self.records if r.get("event") == "ask_answer"]

    def asked(self):
        return [r for r in self.records if r.get("ask") and r.get("event") != "ask_answer"]


def cli(wd, *args):
    return subprocess.run([EXEC] + list(args), cwd=wd.path, env=env_of(wd),
                          capture_output=True, text=True, timeout=30)


def pending(wd):
    r = cli(wd, "pending", "--json")
    check(r.returncode == 0, "pending: %r" % (r.stderr,))
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def wait_pending(wd, session, paths=1, timeout=20):
    """The first question waiting, once it names paths calls (a batch)."""
    end = time.time() + timeout
    while time.time() < end:
        if session.p.poll() is not None:
            raise AssertionError("the session ended while a question was expected: %r" %
                                 (session.p.communicate()[1][-2000:],))
        q = pending(wd)
        if q and len(q[0].get("paths", [None])) >= paths:
            return q[0]
        time.sleep(0.05)
    raise AssertionError("no question waits after %ss" % timeout)


def answer(wd, verb, qid, scope="once", *more):
    r = cli(wd, verb, str(qid), "--scope", scope, *more)
    check(r.returncode == 0, "%s %s: %r %r" % (verb, qid, r.stdout, r.stderr))
    return r


WRITER = """
import sys, time
for p in sys.argv[1:]:
    t = time.time()
    try:
        open(p, "w").write("x")
        r = "ok"
    except OSError as e:
        r = "errno%d" % e.errno
    print("%s %s %.3f" % (p, r, time.time() - t), flush=True)
"""


def results(s):
    out = {}
    for line in s.stdout.splitlines():
        p, r, t = line.split()
        out.setdefault(p, []).append((r, float(t)))
    return out


def test_a_write_waits_in_its_call_until_approved(wd):
    """The agent's call returns only after the answer: through the shim
    (python) and in the kernel layer (static busybox, no shim)."""
    os.makedirs(os.path.join(wd.path, "ask"))
    for name, cmd in (("py", [PYTHON, "-c", WRITER, "ask/py"]),
                      ("bb", [BUSYBOX, "sh", "-c", "echo x > ask/bb; echo rc=$?"])):
        s = Session(wd, cmd)
        q = wait_pending(wd, s)
        check(q["op"] == "write" and q["paths"] == [os.path.join(wd.path, "ask", name)] and
              q["rule"] == "ask-write" and q["processes"], "question %r" % q)
        time.sleep(0.6)
        check(not os.path.exists(os.path.join(wd.path, "ask", name)), "%s: written before the answer" % name)
        check(s.p.poll() is None, "%s: the session did not wait" % name)
        answer(wd, "approve", q["id"])
        s.finish()
        check(s.status == 0 and open(os.path.join(wd.path, "ask", name)).read().strip() == "x",
              "%s: %r %r" % (name, s.stdout, s.stderr))
        if name == "py":
            check(float(s.stdout.split()[2]) >= 0.6, "the call returned before the answer: %r" % s.stdout)
        ev, = s.asked()
        ans, = s.answers()
        check(ev["verdict"] == "ask" and ev["ask"] == q["id"] and ev["rule"] == "ask-write", "question record %r" % ev)
        check(ans["verdict"] == "allow" and ans["scope"] == "once" and ans["ref_seq"] == ev["seq"] and
              ans["by"].startswith("control pid ") and ans["latency_ms"] >= 600, "answer record %r" % ans)
        check(ans["layer"] == ("kernel" if name == "bb" else "shim"), "answer layer %r" % ans)
        # One record for the write in each layer's view: the shim's
        # question stands for the kernel's sight of it.
        writes = [r for r in s.records if (r.get("args") or {}).get("path", "").endswith("ask/" + name)]
        check(len(writes) == 1, "records of the write: %r" % writes)
        check(subprocess.run([AUDIT_TOOL, "verify", s.log], capture_output=True).returncode == 0, "chain")


def test_once_asks_again_session_does_not(wd):
    os.makedirs(os.path.join(wd.path, "ask"))
    s = Session(wd, [PYTHON, "-c", WRITER, "ask/f", "ask/f", "ask/g", "ask/g", "ask/g"])
    answer(wd, "approve", wait_pending(wd, s)["id"], "once")
    q2 = wait_pending(wd, s)
    check(q2["paths"] == [os.path.join(wd.path, "ask", "f")], "once: asked again for the same call %r" % q2)
    answer(wd, "approve", q2["id"], "once")
    answer(wd, "approve", wait_pending(wd, s)["id"], "session")
    s.finish()
    res = results(s)
    check([r for r, _ in res["ask/f"]] == ["ok", "ok"] and [r for r, _ in res["ask/g"]] == ["ok"] * 3, "%r" % res)
    check(len(s.asked()) == 3, "questions: %r" % s.asked())
    granted = [r for r in s.records if (r.get("grant") or "").startswith("session g-")]
    check(len(granted) == 2 and all(r["verdict"] == "allow" and r["rule"] == "ask-write" for r in granted),
          "the session's grant: %r" % granted)


def test_deny_and_always_outlive_the_session(wd):
    os.makedirs(os.path.join(wd.path, "ask"))
    s = Session(wd, [PYTHON, "-c", WRITER, "ask/keep", "ask/never", "ask/no"])
    answer(wd, "approve", wait_pending(wd, s)["id"], "always")
    answer(wd, "deny", wait_pending(wd, s)["id"], "always")
    answer(wd, "deny", wait_pending(wd, s)["id"], "once")
    s.finish()
    res = results(s)
    check(res["ask/keep"][0][0] == "ok" and res["ask/never"][0][0] == "errno13" and
          res["ask/no"][0][0] == "errno13", "answers not applied: %r" % res)
    grants = os.path.join(wd.state, "harness", "grants.jsonl")
    lines = [json.loads(line) for line in open(grants)]
    check(len(lines) == 2 and os.stat(grants).st_mode & 0o777 == 0o600, "grants file %r" % lines)
    check(lines[0]["verdict"] == "allow" and lines[0]["kind"] == "file" and lines[0]["access"] == "write" and
          lines[0]["glob"] == os.path.join(wd.path, "ask", "keep"), "grant %r" % lines[0])
    listed = subprocess.run([POLICY_TOOL, "grants", "--json"], env=env_of(wd), capture_output=True, text=True)
    check(listed.returncode == 0 and [json.loads(x)["id"] for x in listed.stdout.splitlines()] ==
          [g["id"] for g in lines], "harness-policy grants: %r %r" % (listed.stdout, listed.stderr))
    # A new session: neither is asked again; "no" is.
    s2 = Session(wd, [PYTHON, "-c", WRITER, "ask/keep", "ask/never", "ask/no"], timeout=1)
    s2.finish()
    res = results(s2)
    check(res["ask/keep"][0][0] == "ok" and res["ask/never"][0][0] == "errno13" and
          res["ask/no"][0][0] == "errno13", "%r" % res)
    check(len(s2.asked()) == 1 and s2.answers()[0]["by"] == "timeout", "questions %r" % s2.asked())
    # The whole second: timed out by the second, a question asked at
    # x.95 s was refused at x+1 s (896 ms once).
    check(s2.answers()[0]["latency_ms"] >= 1000, "the timeout did not wait: %r" % s2.answers())
    by_grant = {r["args"]["path"]: r["grant"] for r in s2.records if r.get("grant")}
    check(by_grant == {os.path.join(wd.path, "ask", "keep"): "always " + lines[0]["id"],
                       os.path.join(wd.path, "ask", "never"): "always " + lines[1]["id"]}, "%r" % by_grant)
    # Revoked: asked again.
    r = subprocess.run([POLICY_TOOL, "grants", "revoke", lines[0]["id"]], env=env_of(wd), capture_output=True, text=True)
    check(r.returncode == 0, "revoke: %r" % r.stderr)
    s3 = Session(wd, [PYTHON, "-c", WRITER, "ask/keep"], timeout=1).finish()
    check(results(s3)["ask/keep"][0][0] == "errno13" and len(s3.asked()) == 1, "revoked grant still holds")


def test_exec_and_connect_are_asked(wd):
    lst = Listener(ports=range(22000, 23000))
    try:
        conn = "import socket; socket.create_connection(('127.0.0.1', %d)).close(); print('connected')" % lst.port
        s = Session(wd, ["sh", "-c", "git push origin main 2>/dev/null; echo git=$?; %s -c \"%s\"" % (PYTHON, conn)])
        q = wait_pending(wd, s)
        check(q["op"] == "exec" and q["argv"] == ["git", "push", "origin", "main"] and
              q["path"] == os.path.realpath(shutil.which("git")) and q["cwd"] == wd.path, "exec question %r" % q)
        answer(wd, "approve", q["id"])
        q = wait_pending(wd, s)
        check(q["op"] == "connect" and q["addr"] == "127.0.0.1:%d" % lst.port and q["rule"] == "ask-port",
              "connect question %r" % q)
        check(lst.accepted == 0, "connected before the answer")
        answer(wd, "approve", q["id"])
        s.finish()
        # git ran (and found no remote: 128) past the exec gate
        check("git=128" in s.stdout and "connected" in s.stdout and lst.accepted == 1,
              "%r %r" % (s.stdout, s.stderr))
        check(not [r for r in s.records if r.get("event") == "exec_mismatch" or r.get("attack")],
              "the gate objected: %r" % s.records[-5:])
    finally:
        lst.close()


def test_no_answer_is_a_refusal_after_the_timeout(wd):
    os.makedirs(os.path.join(wd.path, "ask"))
    t = time.time()
    s = Session(wd, [BUSYBOX, "sh", "-c", "echo x > ask/t; echo rc=$?"], timeout=1).finish()
    check("rc=1" in s.stdout and not os.path.exists(os.path.join(wd.path, "ask", "t")), "%r" % s.stdout)
    ans, = s.answers()
    check(ans["verdict"] == "deny" and ans["by"] == "timeout" and 900 <= ans["latency_ms"] < 5000, "%r" % ans)
    check(time.time() - t < 15, "took %.1fs" % (time.time() - t))
    end = s.records[-1]
    check(end["event"] == "session_end" and end["answers"]["timed_out"] == 1, "session_end %r" % end)


def test_a_path_search_waits_out_one_timeout(wd):
    """A shell's $PATH search tries each directory in turn: refused in
    the first (/usr/bin/git), it asked again for the same file by its
    other name (/bin/git, a merged /usr) and waited out a second
    timeout. Unanswered is denied once, as "deny" is: the same call at
    once is refused unasked, on record."""
    os.makedirs(os.path.join(wd.path, "a"))
    os.symlink("a", os.path.join(wd.path, "b"))
    os.symlink("/usr/bin/git", os.path.join(wd.path, "a", "git"))
    t = time.time()
    s = Session(wd, ["sh", "-c", 'PATH="$PWD/a:$PWD/b:$PATH"; git push origin main; echo rc=$?'],
                timeout=1).finish()
    check("rc=126" in s.stdout or "rc=127" in s.stdout, "%r %r" % (s.stdout, s.stderr[-300:]))
    ans = s.answers()
    check(len(s.asked()) == 1 and len(ans) == 1 and ans[0]["by"] == "timeout",
          "questions %r answers %r" % (s.asked(), ans))
    again = [r for r in s.records if r.get("op") == "exec" and r.get("verdict") == "deny" and
             not r.get("ask")]
    check(again, "the second name's exec unrecorded: %r" % [
        (r.get("op"), r.get("verdict"), r.get("args")) for r in s.records if r.get("op")])
    check(time.time() - t < 8, "took %.1fs" % (time.time() - t))


def test_kill_of_the_waiting_agent_is_clean(wd):
    os.makedirs(os.path.join(wd.path, "ask"))
    for cmd in ([BUSYBOX, "sh", "-c", "echo x > ask/k"], [PYTHON, "-c", WRITER, "ask/k"]):
        s = Session(wd, cmd)
        q = wait_pending(wd, s)
        os.kill(q["processes"][0]["pid"], signal.SIGKILL)
        s.finish(timeout=20)
        check(s.status == 137, "exit status %r" % s.status)
        ans, = s.answers()
        check(ans["verdict"] == "deny" and ans["by"] == "gone", "%r" % ans)
        check(not pending(wd), "still pending after the session")
        check(subprocess.run([AUDIT_TOOL, "verify", s.log], capture_output=True).returncode == 0, "chain")


def test_grants_hold_for_what_they_name_only(wd):
    """An always grant for the real git with argv push ** allows git
    push, also from sh -c (read and judged as that git push, and the
    exec of git judged again); not a copy of git elsewhere, a symlink
    named git to another program, nor a file put in place of the granted
    one, run directly or named in a script."""
    git = os.path.realpath(shutil.which("git"))
    st = os.stat(git)
    os.makedirs(os.path.join(wd.state, "harness"), exist_ok=True)
    tool = os.path.join(wd.path, "tool")
    os.makedirs(os.path.join(wd.path, "bin"))
    os.makedirs(tool)
    shutil.copy(git, os.path.join(wd.path, "bin", "git"))
    os.symlink(BUSYBOX, os.path.join(tool, "git"))
    own = os.path.join(wd.path, "own")
    os.makedirs(own)
    shutil.copy(git, os.path.join(own, "git"))
    ost = os.stat(os.path.join(own, "git"))
    with open(os.path.join(wd.state, "harness", "grants.jsonl"), "w") as f:
        for g in ({"id": "g-real", "verdict": "allow", "kind": "exec", "path": git, "dev": st.st_dev,
                   "ino": st.st_ino, "argv": ["push", "**"]},
                  # as harness-exec writes an answer "always": an inode
                  # number given again is no longer the file granted
                  {"id": "g-own", "verdict": "allow", "kind": "exec", "path": os.path.join(own, "git"),
                   "dev": ost.st_dev, "ino": ost.st_ino, "ctime_ns": ost.st_ctime_ns, "size": ost.st_size,
                   "argv": ["push", "**"]}):
            f.write(json.dumps(g) + "\n")
    os.chmod(os.path.join(wd.state, "harness", "grants.jsonl"), 0o600)
    script = ("git push origin main 2>/dev/null; echo real=$?; sh -c 'git push x' 2>/dev/null; echo viash=$?; "
              "sh -c './bin/git push x' 2>/dev/null; echo shcopy=$?; "
              "./bin/git push origin main 2>/dev/null; echo copy=$?; ./tool/git push 2>/dev/null; echo sym=$?; "
              "./own/git push o 2>/dev/null; echo own=$?; rm own/git; cp bin/git own/git; "
              "./own/git push o 2>/dev/null; echo replaced=$?")
    s = Session(wd, ["sh", "-c", script], timeout=1).finish()
    out = dict(line.split("=") for line in s.stdout.split())
    check(out == {"real": "128", "viash": "128", "shcopy": "126", "copy": "126", "sym": "126", "own": "128",
                  "replaced": "126"}, "%r %r" % (out, s.stderr[-1500:]))
    # sh -c './bin/git ...' is asked (once per directory sh's search
    # tries: /usr/bin/sh, /bin/sh), as a git that is no /usr/bin/git
    asked = sorted(set(r["args"]["path"] for r in s.asked()) - {"/bin/sh", "/usr/bin/sh"})
    check(asked == sorted([os.path.join(wd.path, "bin", "git"), os.path.join(tool, "git"),
                           os.path.join(own, "git")]), "asked %r" % asked)
    check([r for r in s.asked() if r["args"]["argv"] == ["sh", "-c", "./bin/git push x"]], "the copy by script")
    via = [r for r in s.records if (r.get("args") or {}).get("argv") == ["sh", "-c", "git push x"]]
    check(via and via[0]["grant"] == "parts always g-real" and via[0]["judged_as"] == "git push x",
          "sh -c 'git push x': %r" % via[:1])
    check(len([r for r in s.records if r.get("grant") == "always g-real"]) == 2, "grant records")


def test_questions_about_one_directory_are_one(wd):
    os.makedirs(os.path.join(wd.path, "ask", "b"))
    s = Session(wd, [BUSYBOX, "sh", "-c", "for i in 1 2 3 4 5; do (echo $i > ask/b/f$i) & done; wait; "
                     "cat ask/b/f1 ask/b/f2 ask/b/f3 ask/b/f4 ask/b/f5 | busybox wc -l"])
    q = wait_pending(wd, s, paths=5)
    check(q["what"] == "write 5 files in %s/" % os.path.join(wd.path, "ask", "b") and len(pending(wd)) == 1,
          "batch %r" % q)
    answer(wd, "approve", q["id"], "session")
    s.finish()
    check(s.stdout.strip() == "5", "%r %r" % (s.stdout, s.stderr))
    check(len(s.answers()) == 5 and {a["verdict"] for a in s.answers()} == {"allow"}, "%r" % s.answers())
    g = json.dumps(s.records)
    check(os.path.join(wd.path, "ask", "b") in g, "grant")


def test_the_agent_cannot_answer_itself(wd):
    os.makedirs(os.path.join(wd.path, "ask"))
    script = ("(echo x > ask/self; echo write=$?) & sleep 1; %s approve 1 --scope always; echo approve=$?; "
              "echo '{}' >> \"$XDG_STATE_HOME/harness/grants.jsonl\"; echo grants=$?; wait" % EXEC)
    s = Session(wd, ["sh", "-c", script], timeout=3).finish()
    out = dict(line.split("=") for line in s.stdout.split() if "=" in line)
    check(out.get("approve") not in (None, "0") and out.get("grants") not in (None, "0") and
          out.get("write") != "0", "the agent answered itself: %r %r" % (s.stdout, s.stderr))
    check(s.answers()[0]["by"] == "timeout", "%r" % s.answers())


def read_until(fd, want, timeout=20):
    buf = b""
    end = time.time() + timeout
    while want not in buf and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    return buf


# The agent's write that draws the question, its outcome in r.
ASKED_WRITE = """try:
    open("ask/t", "w").write("x")
    r = "ok"
except OSError as e:
    r = "errno%d" % e.errno
"""

RAW_AGENT = """
import os, sys, termios, threading, time, tty
fd = sys.stdin.fileno()
tty.setraw(fd)
raw = termios.tcgetattr(fd)
got = []
def reader():
    while True:
        b = os.read(fd, 1)
        if not b:
            return
        got.append(b)
threading.Thread(target=reader, daemon=True).start()
os.write(1, b"\\x1b[2J\\x1b[Hfull screen\\r\\n")
time.sleep(0.3)
""" + ASKED_WRITE + """os.write(1, ("RESULT %s same=%s got=%r\\r\\n" % (r, termios.tcgetattr(fd) == raw, b"".join(got))).encode())
"""


def foreground_job():
    """In a child of a pty's session leader: a process group of its own
    in the terminal's foreground, as a shell starts a job."""
    os.setpgid(0, 0)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    os.tcsetpgrp(0, os.getpid())
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)


def answer_once_after(pid, fd, wait, first=20, rest=20):
    """Waits for the question on the terminal, wait seconds more, answers
    it once ("o") and reads to the agent's RESULT line: the terminal's
    bytes, its session waited for and closed."""
    try:
        seen = read_until(fd, b"(refused in ", first)
        time.sleep(wait)
        os.write(fd, b"o")
        out = seen + read_until(fd, b"RESULT", rest)
        out += read_until(fd, b"\n", 5)
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    return out


def on_a_terminal(wd, cmd, log, job=None):
    """harness-exec running cmd on a new pty, as a shell starts a job:
    its own process group, in the terminal's foreground, the shell (the
    session leader) waiting; or job instead (an argv), which starts
    harness-exec itself. Returns the pid and the master's fd."""
    pid, fd = pty.fork()
    if pid == 0:
        argv = job or argv_of(wd, cmd, 30, log)
        child = os.fork()
        if child == 0:
            foreground_job()
            os.chdir(wd.path)
            os.execve(argv[0], argv, env_of(wd))
        _, st = os.waitpid(child, 0)
        os._exit(os.waitstatus_to_exitcode(st) & 0xff)
    return pid, fd


CLIENT_ABOVE = """
import os, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:])  # in our process group, as an MCP server is
tty = os.open("/dev/tty", os.O_RDONLY | os.O_NONBLOCK)
while p.poll() is None:  # a TUI's reads: each stops us while we are not in front
    try:
        os.read(tty, 64)
    except BlockingIOError:
        pass
    time.sleep(0.05)
os.write(1, b"CLIENT-DONE %d\\r\\n" % p.returncode)
"""


def test_a_client_above_harness_exec_goes_on_after_a_question(wd):
    # A program that started harness-exec in its own process group and
    # reads the terminal (Claude Code running harness-mcp) is stopped
    # by its read (SIGTTIN) while the question holds the terminal; once
    # the terminal is its again it is continued, not left stopped.
    os.makedirs(os.path.join(wd.path, "ask"))
    log = os.path.join(wd.state, "above.jsonl")
    agent = [PYTHON, "-c", "open('ask/t', 'w').write('x'); print('AGENT-DONE')"]
    pid, fd = on_a_terminal(wd, None, log, job=[PYTHON, "-c", CLIENT_ABOVE] + argv_of(wd, agent, 30, log))
    out, state = b"", None
    try:
        seen = read_until(fd, b"(refused in ")
        time.sleep(0.5)  # the client's next read stops it
        for p in os.listdir("/proc"):
            try:
                # (the other run's client, another user's, is not this one)
                if os.stat("/proc/%s" % p).st_uid != os.getuid():
                    continue
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    if b"CLIENT-DONE" in f.read():
                        state = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[0]
            except OSError:
                pass
        os.write(fd, b"o")
        out = seen + read_until(fd, b"CLIENT-DONE", 10)
    finally:
        if b"CLIENT-DONE" not in out:
            os.killpg(os.getpgid(pid), signal.SIGKILL)  # the shell; the job is stopped
        os.waitpid(pid, 0)
        os.close(fd)
    check(state == "T", "the client was not stopped by its read while the question was up: %r" % state)
    check(b"AGENT-DONE" in out and b"CLIENT-DONE 0" in out, "the client was left stopped: %r" % out[-600:])


def test_writes_that_come_together_are_one_question_on_the_terminal(wd):
    os.makedirs(os.path.join(wd.path, "ask", "b"))
    log = os.path.join(wd.state, "batch.jsonl")
    pid, fd = on_a_terminal(wd, [BUSYBOX, "sh", "-c", "for i in 1 2 3 4 5; do (echo $i > ask/b/f$i) & done; "
                                 "wait; echo DONE $(busybox cat ask/b/f* | busybox wc -l)"], log)
    try:
        seen = read_until(fd, b"(refused in ")
        check(b"write 5 files in " + os.path.join(wd.path, "ask", "b").encode() + b"/" in seen,
              "not one question: %r" % seen[-600:])
        os.write(fd, b"o")
        out = read_until(fd, b"DONE")
        out += read_until(fd, b"\n", 5)
        check(b"DONE 5" in out and out.count(b"harness: ask") == 0, "after the answer: %r" % out[-600:])
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    answers = [r for r in read_log(log) if r.get("event") == "ask_answer"]
    check(len(answers) == 5 and {a["by"] for a in answers} == {"terminal"}, "%r" % answers)


def test_the_question_reaches_the_user_past_a_full_screen_agent(wd):
    """The agent owns the terminal in raw mode and reads it from another
    thread; the question is still put and its answer read by harness-exec,
    and the agent's terminal modes are its own again after."""
    os.makedirs(os.path.join(wd.path, "ask"))
    log = os.path.join(wd.state, "pty.jsonl")
    for key, want in ((b"o", "ok"), (b"d", "errno13")):
        pid, fd = on_a_terminal(wd, [PYTHON, "-c", RAW_AGENT], log)
        try:
            seen = read_until(fd, b"(refused in ")
            check(b"harness: ask" in seen and b"write " + os.path.join(wd.path, "ask", "t").encode() in seen and
                  b"rule ask-write" in seen and b"[o]nce" in seen, "no question on the terminal: %r" % seen[-800:])
            time.sleep(0.3)
            os.write(fd, key)
            out = read_until(fd, b"RESULT")
            out += read_until(fd, b"\n", 5)
            check(b"RESULT " + want.encode() + b" same=True got=b''" in out, "after the answer: %r" % out[-800:])
        finally:
            _, status = os.waitpid(pid, 0)
            os.close(fd)
        check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "status %r" % status)
        if os.path.exists(os.path.join(wd.path, "ask", "t")):
            os.unlink(os.path.join(wd.path, "ask", "t"))
    by = [r["by"] for r in read_log(log) if r.get("event") == "ask_answer"]
    check(by == ["terminal", "terminal"], "answered by %r" % by)


SWAP = os.path.join(HELPERS, "static_ask_swap")


def test_once_is_for_the_call_shown(wd):
    """An attack review's finds: the agent asks (as the shim) about one
    call and, once allowed, makes another with a raw syscall: an exec
    with other arguments, a write through a symlink re-pointed since.
    Each is asked again (and refused here); neither happens unrecorded."""
    for d in ("docs", "hooks"):
        os.makedirs(os.path.join(wd.path, "ask", d))
    os.symlink(os.path.join(wd.path, "ask", "docs"), os.path.join(wd.path, "lnk"))
    s = Session(wd, [SWAP, "exec", "git", "push", "origin", "feature", "--", "git", "push", "origin", "main"])
    q = wait_pending(wd, s)
    check(q["argv"] == ["git", "push", "origin", "feature"], "%r" % q)
    answer(wd, "approve", q["id"])
    q2 = wait_pending(wd, s)
    check(q2["argv"] == ["git", "push", "origin", "main"], "the other argv was not asked: %r" % q2)
    answer(wd, "deny", q2["id"])
    s.finish()
    check("execve: Permission denied" in s.stdout, "%r %r" % (s.stdout, s.stderr))
    s = Session(wd, [SWAP, "write", os.path.join(wd.path, "lnk", "notes.txt"), os.path.join(wd.path, "lnk"),
                     os.path.join(wd.path, "ask", "hooks")])
    q = wait_pending(wd, s)
    check(q["paths"] == [os.path.join(wd.path, "ask", "docs", "notes.txt")], "%r" % q)
    answer(wd, "approve", q["id"])
    q2 = wait_pending(wd, s)
    check(q2["paths"] == [os.path.join(wd.path, "ask", "hooks", "notes.txt")], "the re-pointed write: %r" % q2)
    answer(wd, "deny", q2["id"])
    s.finish()
    check("open: Permission denied" in s.stdout and
          not os.path.exists(os.path.join(wd.path, "ask", "hooks", "notes.txt")), "%r" % s.stdout)
    asked = [r["args"].get("path_resolved", r["args"]["path"]) for r in s.asked()]
    check(asked == [os.path.join(wd.path, "ask", d, "notes.txt") for d in ("docs", "hooks")], "records %r" % asked)


def test_a_batch_is_what_was_shown(wd):
    """Writes that come later do not join a question already shown, and
    a "session" answer grants the files shown, not their directory."""
    os.makedirs(os.path.join(wd.path, "ask"))
    s = Session(wd, [BUSYBOX, "sh", "-c", "(sleep 0.4; echo b > ask/b.txt; echo rc=$?) & echo a > ask/a.txt; "
                     "wait; echo c > ask/a.txt; echo again=$?"], timeout=3)
    q = wait_pending(wd, s)
    time.sleep(0.8)  # b waits too by now, as a question of its own
    check(len(pending(wd)) == 2 and len(pending(wd)[0]["paths"]) == 1, "the batch grew: %r" % pending(wd))
    answer(wd, "approve", q["id"], "session")
    s.finish()
    check("rc=1" in s.stdout and "again=0" in s.stdout, "%r" % s.stdout)
    check(not os.path.exists(os.path.join(wd.path, "ask", "b.txt")), "b.txt was written under a's grant")


SPOOF_AGENT = """
import os, signal, sys, time
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
if os.fork() == 0:
    time.sleep(0.8)
    os.write(1, b"\\r\\x1b[2KFAKE-QUESTION [o]nce: write /harmless\\r\\n")
    os._exit(0)
""" + ASKED_WRITE + """os.wait()
os.write(1, ("RESULT %s\\r\\n" % r).encode())
"""


def answered_before_the_fake(wd, agent, name, wait=1.2):
    """agent (python) on a terminal asks a question and, meanwhile, tries
    to draw one of its own (FAKE-QUESTION): the real one is answered
    "once" after wait s, and the fake must come after that answer. The
    session's records."""
    os.makedirs(os.path.join(wd.path, "ask"))
    log = os.path.join(wd.state, name + ".jsonl")
    pid, fd = on_a_terminal(wd, [PYTHON, "-c", agent], log)
    out = answer_once_after(pid, fd, wait)
    check(b"RESULT ok" in out and b"FAKE-QUESTION" in out, "%r" % out[-800:])
    check(out.index(b"FAKE-QUESTION") > out.index(b"allowed once"),
          "the fake was drawn while the question was up: %r" % out[-800:])
    return read_log(log)


def test_nothing_draws_over_a_question(wd):
    """A process of the agent's that ignores SIGTTOU (so TOSTOP does not
    stop it) writes a question of its own while the real one is up: it is
    stopped until the question is answered."""
    answered_before_the_fake(wd, SPOOF_AGENT, "spoof")


def test_a_signal_to_end_the_session_is_not_held_by_a_question(wd):
    """A SIGTERM (or SIGHUP, SIGINT) to harness-exec while the agent's
    first process waits on a question: the process, traced by the exec
    gate, acts on no signal but SIGKILL until its call returns, so the
    session waited out the question's timeout (30 s here, 60 by
    default). The question is now refused at once (answer "end"), the
    signal then ends the process, and the session ends with it."""
    os.makedirs(os.path.join(wd.path, "ask"))

    def default_signals():
        # What the test runs under may ignore SIGHUP (nohup) or SIGINT
        # (a shell's background job), and an ignored disposition is
        # inherited by the agent, which then goes on (exit 1).
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        for cmd in ([BUSYBOX, "sh", "-c", "echo x > ask/bb"],
                    [PYTHON, "-c", WRITER, "ask/py"]):
            s = Session(wd, cmd, preexec_fn=default_signals)
            wait_pending(wd, s)
            t = time.time()
            s.p.send_signal(sig)
            s.finish(timeout=40)
            took = time.time() - t
            print("# %s %s: %.2f s, exit %d" % (sig.name, cmd[0], took, s.status))
            check(took < 10, "%s: the session ended %.1f s after the signal" % (sig.name, took))
            check(s.status == 128 + sig, "%s %s: exit %d" % (sig.name, cmd[0], s.status))
            ans, = s.answers()
            check(ans["verdict"] == "deny" and ans["by"] == "end", "the answer: %r" % ans)
            check(s.records[-1]["event"] == "session_end", "the log ends with %r"
                  % s.records[-1]["event"])
            check(not os.listdir(os.path.join(wd.path, "ask")), "written: %r"
                  % os.listdir(os.path.join(wd.path, "ask")))
