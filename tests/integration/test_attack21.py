"""The twenty-first attack review: what the toolchains profile keeps
of a store (keep_existing) against what the tool takes from that store
unchecked. An outside attacker's agent under the embedded default
policy."""

import json
import os
import shutil
import subprocess
import zipfile

from lib import PYTHON, check, harness, read_log
from test_ask import ASKED_WRITE
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox") or "/bin/busybox"

GO_V = "go/pkg/mod/cache/download/ex.test/lib%s/@v/"

# What predates the session in a store and a tool takes from there
# without a second check, each writable before this review:
# go extracts a module again from its zip (checked by the cached
# .ziphash only) once a .partial file says the directory is unfinished;
# cargo extracts a cached .crate without checking it against the index;
# protobuf-maven-plugin runs protoc from ~/.m2, frontend-maven-plugin
# unpacks node from there; the Gradle wrapper unpacks its zip again
# when the .ok mark is gone, Gradle loads its native libraries; pnpm
# 10's index names the store file of each file of a package.
KEPT = {
    GO_V % "" + "v1.0.0.zip": "PK-genuine\n",
    GO_V % "" + "v1.0.0.ziphash": "h1:genuine=\n",
    ".cargo/registry/cache/index.crates.io-6f17d22bba15001f/serde-1.0.0.crate": "crate\n",
    ".m2/repository/com/google/protobuf/protoc/3.25.1/protoc-3.25.1-linux-x86_64.exe": "ELF\n",
    ".m2/repository/com/github/eirslett/node/20.11.0/node-20.11.0-linux-x64.tar.gz": "tgz\n",
    ".gradle/wrapper/dists/gradle-8.5-bin/5t9h/gradle-8.5-bin.zip": "PK-gradle\n",
    ".gradle/wrapper/dists/gradle-8.5-bin/5t9h/gradle-8.5-bin.zip.ok": "",
    ".gradle/native/0a1b/linux-amd64/libnative-platform.so": "ELF-native\n",
    ".local/share/pnpm/store/v10/index/3f/3fa0-lodash@4.17.21.json": "{}\n",
}

# What the tools themselves rewrite there at every use (the agent's own
# builds): version lists, lock files, Maven's metadata. Still writable.
STATE = (
    GO_V % "" + "list",
    GO_V % "" + "v1.0.0.lock",
    ".m2/repository/org/slf4j/slf4j-api/maven-metadata-central.xml",
    ".m2/repository/org/slf4j/slf4j-api/2.0.9/_remote.repositories",
    ".gradle/wrapper/dists/gradle-8.5-bin/5t9h/gradle-8.5-bin.zip.lck",
    ".gradle/native/0a1b/linux-amd64/libnative-platform.so.lock",
)


def _put(home, rel, text):
    p = os.path.join(home, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)
    return p


def test_what_a_tool_takes_from_its_store_unchecked_is_kept(wd):
    """keep_existing kept the part of each store the tool had extracted
    (a module's directory, a crate's sources, Maven's jars and poms,
    an unpacked Gradle distribution), not what the tool extracts it
    from again or runs from beside it: sh and a static busybox rewrote
    Go's cached zip, cargo's .crate, protoc's executable and node's
    archive in ~/.m2, Gradle's native library and wrapper zip (and
    removed its .ok mark, after which ./gradlew unpacks that zip
    again), and pnpm 10's index. Each is kept now, and what the tools
    rewrite there themselves stays writable."""
    home = fake_home(wd)
    for rel, text in KEPT.items():
        _put(home, rel, text)
    for rel in STATE:
        _put(home, rel, "state\n")
    zp = GO_V % "" + "v1.0.0.zip"
    script = "; ".join("echo EVIL >> ~/%s" % rel for rel in KEPT)
    script += ("; rm -f ~/%s; mv ~/%s ~/%s.x; " % (list(KEPT)[6], zp, zp))
    script += " && ".join("echo more >> ~/%s" % rel for rel in STATE) + " && echo state-ok"
    for prog in (["sh", "-c", script], [BUSYBOX, "sh", "-c", script]):
        r = harness(prog, wd, policy=None, env={"HOME": home})
        for rel, text in KEPT.items():
            p = os.path.join(home, rel)
            check(os.path.exists(p) and open(p).read() == text,
                  "%s: %s was changed or removed" % (prog[0], rel))
            rec = r.one(args_path=p, verdict="deny")
            check(rec["rule"] == "harness:keep-existing" and rec.get("enforced", True),
                  "%s: %s: record %r" % (prog[0], rel, rec))
        check("state-ok" in r.stdout,
              "%s: what the tools rewrite was refused: %r %r" % (prog[0], r.stdout, r.stderr[-600:]))
        for rel in STATE:
            with open(os.path.join(home, rel), "w") as f:
                f.write("state\n")


def _go_module(root):
    """A file GOPROXY at root serving ex.test/lib v1.0.0; returns its path."""
    proxy = os.path.join(root, "proxy")
    v = os.path.join(proxy, "ex.test", "lib", "@v")
    os.makedirs(v)
    with zipfile.ZipFile(os.path.join(v, "v1.0.0.zip"), "w") as z:
        z.writestr("ex.test/lib@v1.0.0/go.mod", "module ex.test/lib\n\ngo 1.19\n")
        z.writestr("ex.test/lib@v1.0.0/lib.go",
                   'package lib\n\nfunc Say() string { return "genuine" }\n')
    with open(os.path.join(v, "v1.0.0.mod"), "w") as f:
        f.write("module ex.test/lib\n\ngo 1.19\n")
    with open(os.path.join(v, "list"), "w") as f:
        f.write("v1.0.0\n")
    with open(os.path.join(v, "v1.0.0.info"), "w") as f:
        f.write('{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}\n')
    return proxy


# The agent's side: a zip of its own where go's is, and the mark of an
# unfinished extraction that makes go unpack it again.
FORGE_GO = r"""
import os, sys, zipfile
v = sys.argv[1]
try:
    z = zipfile.ZipFile(os.path.join(v, "v1.0.0.zip"), "w")
    z.writestr("ex.test/lib@v1.0.0/go.mod", "module ex.test/lib\n\ngo 1.19\n")
    z.writestr("ex.test/lib@v1.0.0/lib.go",
               'package lib\n\nfunc Say() string { return "AGENT CODE" }\n')
    z.close()
except OSError as e:
    print("zip:", e)
open(os.path.join(v, "v1.0.0.partial"), "w").close()
print("forged")
"""


def test_a_go_module_zip_rewritten_in_the_cache_does_not_run_in_the_users_build(wd):
    """go checks a module's zip against go.sum by the .ziphash it cached
    beside it, not by the zip, and extracts the zip again whenever a
    .partial file beside it says the module's directory is unfinished:
    an agent (python, and python without the shim) rewrote the user's
    cached zip and made that file, and the user's next `go run`, outside
    the harness, ran the agent's code, go.sum and the kept module
    directory notwithstanding. The zip is kept now; the .partial makes
    go unpack the genuine one, and the agent's own go builds still
    work on that cache."""
    go = shutil.which("go")
    if not go:
        from lib import Skip
        raise Skip("no go")
    home = fake_home(wd)
    proxy = _go_module(wd.state)
    app = os.path.join(wd.state, "app")
    os.makedirs(app)
    with open(os.path.join(app, "go.mod"), "w") as f:
        f.write("module ex.test/app\n\ngo 1.19\n\nrequire ex.test/lib v1.0.0\n")
    with open(os.path.join(app, "main.go"), "w") as f:
        f.write('package main\n\nimport (\n\t"fmt"\n\t"ex.test/lib"\n)\n\n'
                'func main() { fmt.Println(lib.Say()) }\n')
    env = dict(os.environ, HOME=home, GOPATH=os.path.join(home, "go"),
               GOPROXY="file://" + proxy, GOSUMDB="off", GOFLAGS="-mod=mod",
               GOCACHE=os.path.join(home, ".cache", "go-build"))
    env.pop("LD_PRELOAD", None)

    def users_go_run():
        return subprocess.run([go, "run", "."], cwd=app, env=env, capture_output=True,
                              text=True, timeout=300)

    try:
        p = users_go_run()
        check(p.stdout == "genuine\n", "set-up: %r %r" % (p.stdout, p.stderr))
        v = os.path.join(home, GO_V % "")
        forge = os.path.join(wd.state, "forge.py")
        with open(forge, "w") as f:
            f.write(FORGE_GO)
        for shim in ({}, {"HARNESS_SHIM": ""}):
            r = harness([PYTHON, forge, v], wd, policy=None, env=dict(shim, HOME=home))
            check("forged" in r.stdout, "%s: %r %r" % (shim, r.stdout, r.stderr))
            p = users_go_run()
            check(p.stdout == "genuine\n",
                  "%s: the user's go run ran the agent's module: %r %r" % (shim, p.stdout, p.stderr))
            rec = r.one(args_path=os.path.join(v, "v1.0.0.zip"), verdict="deny")
            check(rec["rule"] == "harness:keep-existing", "%s: record %r" % (shim, rec))
        # The agent's own go on that cache (lock files opened for writing).
        r = harness(["sh", "-c", "cd %s && go build -o /dev/null . && echo built" % app], wd,
                    policy=None, env={k: env[k] for k in ("HOME", "GOPATH", "GOPROXY", "GOSUMDB",
                                                          "GOFLAGS", "GOCACHE")})
        check("built" in r.stdout, "the agent's go build failed: %r %r" % (r.stdout, r.stderr[-800:]))
    finally:
        subprocess.run(["chmod", "-R", "u+w", os.path.join(home, "go")], capture_output=True)


GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_CONFIG_NOSYSTEM": "1"}


def _git(args, cwd):
    e = dict(os.environ, **GIT_ENV)
    e.pop("LD_PRELOAD", None)
    return subprocess.run(["git"] + args, cwd=cwd, env=e, check=True, capture_output=True,
                          text=True).stdout.strip()


# A force push, each way git's own command line can say it without
# --force in the push's argv: a forcing refspec or a mirror in -c
# remote.origin.*, a file of configuration -c include.path brings in,
# and push's plumbing. (An alias given with -c was held: git runs its
# expansion as a new exec, judged then.)
FORCED = (
    ["git", "-c", "remote.origin.push=+main:main", "push", "origin"],
    ["git", "-c", "remote.origin.mirror=true", "push", "origin"],
    ["git", "-c", "include.path={P}/force.cfg", "push", "origin"],
    ["git", "--config-env=remote.origin.push=HX_PUSH", "push", "origin"],
    ["git", "send-pack", "--force", "../remote.git", "main"],
    # git-core's dashed name of the builtin: git runs push when so called
    ["/usr/lib/git-core/git-push", "--force", "origin", "main"],
)

# The same said by git's environment, set for the push alone (the
# twenty-first review's XFAIL): GIT_CONFIG_COUNT and its keys,
# GIT_CONFIG_PARAMETERS (what -c passes on), a global file of the
# agent's.
FORCED_BY_ENV = (
    ["GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=remote.origin.push",
     "GIT_CONFIG_VALUE_0=+main:main"],
    ["GIT_CONFIG_PARAMETERS='remote.origin.push'='+main:main'"],
    ["GIT_CONFIG_GLOBAL={P}/force.cfg"],
)


def remote_and_clone(wd):
    """A bare remote whose main a local clone has rewritten (amended):
    only a forced push puts the clone's main there. The first commit."""
    remote = os.path.join(wd.path, "remote.git")
    local = os.path.join(wd.path, "local")
    _git(["init", "-q", "--bare", "-b", "main", remote], wd.path)
    _git(["clone", "-q", remote, local], wd.path)
    with open(os.path.join(local, "a"), "w") as f:
        f.write("a\n")
    _git(["add", "a"], local)
    _git(["commit", "-qm", "first"], local)
    _git(["push", "-q", "origin", "HEAD:main"], local)
    first = _git(["rev-parse", "HEAD"], local)
    _git(["commit", "-q", "--amend", "-m", "rewritten"], local)  # not a fast-forward
    return remote, first


def env_push_is_asked(wd, remote, first, shim, assign):
    """git push origin from the clone, with assign (NAME=VALUE, {P} the
    work dir) set for the push alone: asked, and the remote's main kept."""
    assign = [a.replace("{P}", wd.path) for a in assign]
    push = ["git", "push", "origin"]
    r = harness(["sh", "-c", 'cd local && exec env "$@"', "sh"] + assign + push, wd,
                policy=None, env=dict(shim, HOME=fake_home(wd), **GIT_ENV))
    what = "%s %s" % (shim, " ".join(assign))
    check(_git(["rev-parse", "main"], remote) == first,
          "%s: the remote's main was rewritten unasked\n%s" % (what, r.dump()))
    recs = [x for x in r.records if x.get("event", "").startswith("exec") and
            x.get("args", {}).get("argv", []) == push]
    check(recs and recs[0].get("rule") == "destructive" and recs[0].get("verdict") == "ask",
          "%s: record %r\n%s" % (what, recs[:1], r.dump()))


def test_a_force_push_git_is_told_of_on_its_command_line_is_asked(wd):
    """The destructive rule asks before git push --force (a checkpoint
    does not bring the remote's branch back), and the policy reads
    through git's -C and -c; but -c remote.origin.push=+..., .mirror
    or an include.path naming a file that says so forces a push whose
    argv says nothing of it, and send-pack, push's plumbing, was not
    read at all: each rewrote the remote's main unasked. Each is asked
    now (refused: nobody answers), from git through the shim and
    without it. What the agent's own repository's configuration says
    is not read (an XFAIL below)."""
    remote, first = remote_and_clone(wd)
    with open(os.path.join(wd.path, "force.cfg"), "w") as f:
        f.write('[remote "origin"]\n\tpush = +main:main\n')
    for shim in ({}, {"HARNESS_SHIM": ""}):
        for argv in FORCED:
            argv = [a.replace("{P}", wd.path) for a in argv]
            r = harness(["sh", "-c", 'cd local && exec "$@"', "sh"] + argv, wd, policy=None,
                        env=dict(shim, HOME=fake_home(wd), HX_PUSH="+main:main", **GIT_ENV))
            what = "%s %s" % (shim, " ".join(argv))
            check(_git(["rev-parse", "main"], remote) == first,
                  "%s: the remote's main was rewritten unasked" % what)
            recs = [x for x in r.records if x.get("event") == "execve" and
                    x.get("args", {}).get("argv", [])[:len(argv)] == argv]
            check(recs and recs[0].get("rule") == "destructive" and
                  recs[0].get("class") == "destructive" and recs[0].get("verdict") == "ask",
                  "%s: record %r\n%s" % (what, recs[:1], r.dump()))
        for assign in FORCED_BY_ENV:
            env_push_is_asked(wd, remote, first, shim, assign)

    # The same from the configuration of a repository of the agent's
    # own (a clone in $TMPDIR: its config is the agent's to write): the
    # config that forces every push does not land (the twenty-first
    # review's XFAIL), a mirror's neither; a clone's own config does.
    # Its main rewritten, so that only a forced push goes through.
    for key, value in (("remote.origin.push", "+HEAD:main"), ("remote.origin.mirror", "true")):
        r = harness(["sh", "-c", 'rm -rf "$TMPDIR/c"; git clone -q "$1" "$TMPDIR/c" && '
                     'cd "$TMPDIR/c" && git commit -q --amend -m mine && '
                     'git config "$2" "$3"; git push -q', "sh", remote, key, value],
                    wd, policy=None, env=dict(HOME=fake_home(wd), **GIT_ENV))
        check(_git(["rev-parse", "main"], remote) == first,
              "%s: a push forced by the agent's own config rewrote the remote's main\n%s"
              % (key, r.dump()))
        refused = [x for x in r.records if x.get("rule") == "harness:git-config" and
                   x.get("verdict") == "deny" and "/c/.git/config" in json.dumps(x)]
        check(refused, "%s: no refusal of the config's rename\n%s" % (key, r.dump()))


# A process of the agent's that holds no fd of the terminal when the
# question goes up: it put its terminal fd in flight on a unix socket of
# its own (SCM_RIGHTS) and closed every other, so no /proc/PID/fd of its
# shows the terminal; it takes the fd back while the question is up and
# draws a question of its own (no open: nothing harness:question-up sees).
INFLIGHT_AGENT = """
import array, os, signal, socket, time
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
if os.fork() == 0:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendmsg([b"t"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [1]))])
    null = os.open("/dev/null", os.O_RDWR)
    for n in (0, 1, 2):
        os.dup2(null, n)
    time.sleep(0.8)
    try:
        _, fds, _, _ = socket.recv_fds(b, 16, 4)
        os.write(fds[0], b"\\r\\x1b[2KFAKE-QUESTION [o]nce: write /harmless\\r\\n")
    except OSError as e:
        os.write(2, b"inflight %d" % e.errno)
    os._exit(0)
""" + ASKED_WRITE + """os.wait()
os.write(1, ("RESULT %s\\r\\n" % r).encode())
"""


def test_a_terminal_fd_in_flight_draws_nothing_over_a_question(wd):
    """While a question is up, each process of the tree that holds an fd
    of the terminal is stopped, and none may open it anew: a process
    that held it only in flight on a socket of its own (sent with
    SCM_RIGHTS to itself, every other fd closed) was not stopped, took
    it back while the question was up and drew a question of its own
    over the real one."""
    from test_ask import answered_before_the_fake
    recs = answered_before_the_fake(wd, INFLIGHT_AGENT, "inflight")
    asked = [x for x in recs if x.get("event") == "open" and x.get("verdict") == "ask"]
    answers = [x for x in recs if x.get("event") == "ask_answer"]
    check(len(asked) == 1 and asked[0]["args"]["path"] == os.path.join(wd.path, "ask", "t"),
          "the question's record: %r" % asked)
    check(len(answers) == 1 and answers[0].get("verdict") == "allow" and
          answers[0].get("by") == "terminal", "the answer's record: %r" % answers)


# A process of the agent's that holds the terminal and has made itself
# non-dumpable: its /proc/PID/fd is then its own to read (and root's),
# not harness-exec's when harness-exec runs as an ordinary user.
NONDUMP_AGENT = """
import ctypes, os, signal, time
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
if os.fork() == 0:
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    time.sleep(0.8)
    os.write(1, b"\\r\\x1b[2KFAKE-QUESTION [o]nce: write /harmless\\r\\n")
    os._exit(0)
""" + ASKED_WRITE + """os.wait()
os.write(1, ("RESULT %s\\r\\n" % r).encode())
"""


def test_a_process_whose_fds_harness_cannot_read_draws_nothing_over_a_question(wd):
    """Which processes hold the terminal while a question is up is read
    from /proc/PID/fd, which a process that made itself non-dumpable
    (prctl PR_SET_DUMPABLE 0, no privilege needed) keeps from a
    harness-exec run by an ordinary user: such a process was taken for
    one that holds nothing, was not stopped, and drew a question of its
    own over the real one. One whose fds cannot be read is stopped now."""
    from test_ask import answered_before_the_fake
    recs = answered_before_the_fake(wd, NONDUMP_AGENT, "nondump")
    answers = [x for x in recs if x.get("event") == "ask_answer"]
    check(len(answers) == 1 and answers[0].get("verdict") == "allow" and
          answers[0].get("by") == "terminal", "the answer's record: %r" % answers)


# More processes that hold the terminal than a question's hold counts
# (1024): a shell's 1100 sleeps, then the one that draws, last in the
# scan's order.
CROWD_AGENT = """
import os, signal, sys, time
BB = sys.argv[1]
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
r, w = os.pipe()
if os.fork() == 0:
    os.close(r)
    kids = [os.posix_spawn(BB, [BB, "sleep", "25"], os.environ) for _ in range(1100)]
    os.posix_spawn(sys.executable, [sys.executable, "-c",
        "import os, signal, time; signal.signal(signal.SIGTTOU, signal.SIG_IGN); time.sleep(1.5); "
        "os.write(1, b'\\\\r\\\\x1b[2KFAKE-QUESTION [o]nce: write /harmless\\\\r\\\\n')"], os.environ)
    os.write(w, b"x")
    os.close(w)
    for _ in range(1101):
        os.wait()
    os._exit(0)
os.close(w)
os.read(r, 1)
try:
    open("ask/t", "w").write("x")
    res = "ok"
except OSError as e:
    res = "errno%d" % e.errno
os.write(1, ("RESULT %s\\r\\n" % res).encode())
"""


def test_a_crowd_of_terminal_holders_draws_nothing_over_a_question(wd):
    """While a question is up, every process of the tree that holds the
    terminal is stopped, but the hold counted 1024 of them and the scan
    of the tree 4096 (a root agent has no process count without a pids
    cgroup, a policy may lift it): past that, a process that held the
    terminal was not stopped and drew a question of its own over the
    real one. A tree the hold cannot count whole gets no question on
    the terminal (a line says how to answer it with harness-exec
    approve, but for --quiet), and nobody answering, it is refused.
    Held by signals, that is: without the exec gate (--no-exec-gate),
    whose hold takes the whole tree (test_attack22.py)."""
    from test_ask import answer_once_after, argv_of, on_a_terminal
    os.makedirs(os.path.join(wd.path, "ask"))
    log = os.path.join(wd.state, "crowd.jsonl")
    cmd = [PYTHON, "-c", CROWD_AGENT, BUSYBOX]
    # Without the exec gate, whose hold takes a tree of any size
    # (test_attack22.py): the stops of the processes it counts.
    job = argv_of(wd, cmd, 8, log)
    job.insert(1, "--no-exec-gate")
    pid, fd = on_a_terminal(wd, cmd, log, job=job)
    out = answer_once_after(pid, fd, 2.5, first=20, rest=60)
    check(b"FAKE-QUESTION" in out and b"RESULT" in out, "%r" % out[-600:])
    check(b"allowed once" not in out and b"(refused in " not in out and
          b"RESULT errno13" in out, "the question was put on the terminal: %r" % out[-600:])
    answers = [x for x in read_log(log) if x.get("event") == "ask_answer"]
    check(len(answers) == 1 and answers[0].get("verdict") == "deny",
          "the answer's record: %r" % answers)


# A process of the agent's that holds the terminal, and one that holds
# nothing of it and continues the first (SIGCONT) as soon as it stops.
# The first draws once it has been continued (or after 8 s): drawn after
# a fixed second, it came before the question on a loaded machine (a CI
# run), which is no drawing over it.
CONT_AGENT = """
import os, signal, time
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
went_on = []
signal.signal(signal.SIGCONT, lambda *_: went_on.append(1))
a = os.fork()
if a == 0:
    end = time.time() + 8
    while not went_on and time.time() < end:
        time.sleep(0.01)
    os.write(1, b"\\r\\x1b[2KFAKE-QUESTION [o]nce: write /harmless\\r\\n")
    os._exit(0)
b = os.fork()
if b == 0:
    null = os.open("/dev/null", os.O_RDWR)
    for n in (0, 1, 2):
        os.dup2(null, n)
    end = time.time() + 10
    while time.time() < end:
        try:
            state = open("/proc/%d/stat" % a).read().rsplit(")", 1)[1].split()[0]
            if state in ("T", "t"):
                os.kill(a, signal.SIGCONT)
        except (OSError, IndexError):
            break
        time.sleep(0.005)
    os._exit(0)
""" + ASKED_WRITE + """os.waitpid(a, 0)
os.waitpid(b, 0)
os.write(1, ("RESULT %s\\r\\n" % r).encode())
"""


def test_a_held_process_continued_by_another_draws_nothing_over_a_question(wd):
    """The processes that hold the terminal are stopped (SIGSTOP) while a
    question is up; another process of the agent's, which holds nothing
    of the terminal and so was not stopped, sent SIGCONT to one of them
    as soon as it stopped, and that one drew a question of its own over
    the real one."""
    from test_ask import answered_before_the_fake
    recs = answered_before_the_fake(wd, CONT_AGENT, "cont", wait=2.0)
    answers = [x for x in recs if x.get("event") == "ask_answer"]
    check(len(answers) == 1 and answers[0].get("verdict") == "allow" and
          answers[0].get("by") == "terminal", "the answer's record: %r" % answers)
