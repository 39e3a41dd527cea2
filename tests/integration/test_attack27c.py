"""Attack review 27, part c: what the agent can exhaust or leave behind
so that harness-exec skips a check, loses a record or leaves the next
session unprotected (DESIGN classes 8 and 9), under the embedded default
policy in enforce mode, from a static busybox, as root and as an
ordinary user.

The project's denied files (its .env) are held against programs that
skip the shim by masks, found by a walk of the project at start and
kept by an inotify watcher. Each had a bound or a per-user count the
agent could fill for the next session: the walk stops at 200,000
entries, the watcher's instance and watches are the uid's (a root
agent's are root's, unbounded), its 16,384 places went to the project
first; past any of them a static cat read what the masks should have
held. And harness-exec died of SIGPIPE at a notice on a stderr whose
reader the agent's own output had sent away, its session left with no
session_end and no anchor."""

import ctypes
import os
import shutil
import subprocess
import tempfile

from lib import EXEC, PYTHON, Skip, Workdir, alone, check, harness, read_log

BUSYBOX = "/bin/busybox"
SECRET = "API_KEY=sk-live-27c-not-for-the-agent"
FLOOD = 200001  # one past the walk's bound


def flood(wd):
    """What an earlier session's agent leaves in the project: 200,001
    entries in a directory the walk takes before the one that holds
    the .env (named until one lists first: ext4 lists by a hash of the
    name, as `ls -U` shows the agent). Returns (the .env's path, the
    flood's directory)."""
    env = wd.file("config/.env", SECRET + "\n")
    for k in range(64):
        d = os.path.join(wd.path, "build%d" % k)
        os.mkdir(d)
        names = os.listdir(wd.path)
        if names.index(os.path.basename(d)) < names.index("config"):
            break
        os.rmdir(d)
    else:
        check(False, "no name lists before config: %r" % os.listdir(wd.path))
    # Names of 8 files (ext4 links one at most 65,000 times): as many
    # entries as new files for the walk, made in a second, not thirty.
    files = [os.path.join(d, "x%d" % k) for k in range(8)]
    for f in files:
        os.close(os.open(f, os.O_CREAT | os.O_WRONLY, 0o644))
    for i in range(FLOOD - len(files)):
        os.link(files[i % len(files)], os.path.join(d, "f%06d" % i))
    return env, d


def test_a_project_past_the_mask_walk_hides_no_denied_file(wd):
    """A project past the mask walk's bound has every open decided in
    the kernel layer instead (as --trace-reads): the .env past the cut
    is refused, on record, and session_start says why."""
    env, d = flood(wd)
    try:
        r = harness([BUSYBOX, "cat", env], wd, policy=None)
        check(SECRET not in r.stdout,
              "a static cat read the .env past the mask walk: %r" % r.stdout[-200:])
        check(r.status != 0, "cat exited %s" % r.status)
        rec = r.one(event="openat", args_path=env)
        check(rec.get("verdict") == "deny" and rec.get("rule") == "dotenv" and
              rec.get("layer") == "kernel",
              "the read's record: %r" % rec)
        kern = r.one(event="session_start")["kernel"]
        check(kern.get("masks_truncated") is True and kern.get("reads_decided"),
              "session_start says nothing of the cut walk: %r" %
              {k: v for k, v in kern.items() if k.startswith(("masks", "reads"))})
    finally:
        shutil.rmtree(d, ignore_errors=True)


INOTIFY_FILL = r'''
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while n < 1 << 16 and libc.inotify_init() >= 0:
    n += 1
print(n, flush=True)
sys.stdin.readline()
'''

# The next session's agent: told when its start is over, it waits for
# the user's tool to write the .env, gives the masks a moment, reads it.
LATE_READER = ("echo ready; while [ ! -e config/.env ]; do sleep 0.05; done; "
               "sleep 0.5; exec /bin/busybox cat config/.env")


def start(wd, cmd, log):
    return subprocess.Popen([EXEC, "--quiet", "--audit-log", os.path.join(wd.state, log),
                             "--"] + cmd, cwd=wd.path, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            env=dict(os.environ, XDG_STATE_HOME=wd.state))


@alone
def test_a_session_started_short_of_inotify_instances_holds_late_files(wd):
    """The mask watcher's inotify instance is counted to the user, with
    every agent's: a root agent (no user namespace of its own: no bound)
    opened all 128 of root's, an ordinary user's two sessions' agents
    their half each, and the next session started with no watcher, not
    a word of it, so a .env the user's tool wrote in its project later
    was read by its static cat. A session that cannot watch its project
    decides every open in the kernel layer instead."""
    os.mkdir(os.path.join(wd.path, "config"))
    fillers = []
    b = None
    try:
        # Another session's agent (two as the user: each is held to half).
        for i in range(1 if os.geteuid() == 0 else 2):
            other = Workdir()
            p = start(other, [PYTHON, "-c", INOTIFY_FILL], "fill%d.jsonl" % i)
            fillers.append((p, other))
            p.stdout.readline()
        b = start(wd, [BUSYBOX, "sh", "-c", LATE_READER], "b.jsonl")
        ready = b.stdout.readline()
    finally:
        for p, other in fillers:  # the machine's count back at once
            p.communicate("\n", timeout=30)
            other.cleanup()
    late_env_refused(wd, b, ready, "inotify", "(inotify: Too many open files)")


def late_env_refused(wd, b, ready, short, why):
    """b, a session started short of inotify (short: of what), its
    LATE_READER ready: the .env made now is not read by its static cat,
    the refusal is on record, and session_start says why (why in its
    reads_decided)."""
    if ready.strip() != "ready":
        b.kill()
        check(False, "the next session did not start: %r" % b.communicate()[1][-500:])
    env = wd.file("config/.env", SECRET + "\n")
    out, err = b.communicate(timeout=60)
    check(SECRET not in out,
          "a static cat read a .env made after a start short of %s: %r" % (short, out[-200:]))
    recs = read_log(os.path.join(wd.state, "b.jsonl"))
    reads = [r for r in recs if r.get("event") == "openat" and
             r.get("args", {}).get("path") == env]
    check(reads and reads[0].get("verdict") == "deny" and reads[0].get("rule") == "dotenv",
          "no refusal on record for %s: %r" % (env, reads))
    kern = [r for r in recs if r.get("event") == "session_start"][0]["kernel"]
    check(why in kern.get("reads_decided", ""),
          "session_start: %r" % kern.get("reads_decided"))


def take_watches(where):
    """Takes every inotify watch the user has left (max_user_watches,
    counted per watch: one file watched by many instances counts each),
    as another session's agent does (a root agent's count is root's;
    its watches are decided one by one, a few seconds). Returns the
    instances to close."""
    libc = ctypes.CDLL(None, use_errno=True)
    files = []
    for i in range(4096):
        f = os.path.join(where, "w%d" % i)
        os.close(os.open(f, os.O_CREAT | os.O_WRONLY, 0o644))
        files.append(f.encode())
    fds = []
    while len(fds) < 120:
        fd = libc.inotify_init1(os.O_CLOEXEC)
        if fd < 0:
            break
        fds.append(fd)
        for f in files:
            if libc.inotify_add_watch(fd, f, 0x2) < 0:  # IN_MODIFY
                return fds
    for fd in fds:
        os.close(fd)
    raise Skip("max_user_watches not reached with 120 instances of 4096")


@alone
def test_a_session_started_short_of_inotify_watches_holds_late_files(wd):
    """The watches of the project's directories count to the user's
    max_user_watches, every agent's with them: a session started while
    they were all taken watched none of its directories (inotify_add_watch
    failed without a word), so a .env the user's tool wrote later was
    never masked and its static cat read it. Such a session decides
    every open in the kernel layer instead."""
    os.mkdir(os.path.join(wd.path, "config"))
    hold = tempfile.mkdtemp(prefix="hx-watches-")
    fds = []
    b = None
    try:
        fds = take_watches(hold)
        b = start(wd, [BUSYBOX, "sh", "-c", LATE_READER], "b.jsonl")
        ready = b.stdout.readline()
    finally:
        for fd in fds:  # the machine's count back at once
            os.close(fd)
        shutil.rmtree(hold, ignore_errors=True)
    late_env_refused(wd, b, ready, "watches", "inotify watches")


def test_a_closed_stderr_does_not_end_the_session_unrecorded(wd):
    """harness-exec's notices of refusals go to its stderr, which the
    agent shares: under `harness-exec -- agent 2>&1 | head`, the agent
    fills head with its own lines, head exits, and the next refusal's
    notice killed harness-exec by SIGPIPE (exit 141) mid-session: no
    session_end, no anchor (a log that can be cut afterwards and still
    verify), the rest of the tree's calls failing. harness-exec ignores
    SIGPIPE; the agent keeps the disposition it was started with."""
    log = os.path.join(wd.state, "pipe.jsonl")
    # The agent's own stderr elsewhere: its own SIGPIPE is its own.
    script = ("exec 2>/dev/null; sleep 0.3; echo x > /etc/hx-attack27c; sleep 0.3; "
              "echo after > after.txt; grep SigIgn /proc/self/status > sigign.txt")
    p = subprocess.Popen([EXEC, "--quiet", "--audit-log", log, "--", BUSYBOX, "sh", "-c", script],
                         cwd=wd.path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=dict(os.environ, XDG_STATE_HOME=wd.state))
    p.stderr.close()  # the reader is gone (head has what it wanted)
    status = p.wait(timeout=60)
    check(status == 0, "harness-exec exited %s (141: SIGPIPE)" % status)
    check(not os.path.exists("/etc/hx-attack27c"), "the write outside the roots landed")
    check(os.path.exists(os.path.join(wd.path, "after.txt")),
          "the agent's next call failed once harness-exec was gone")
    with open(os.path.join(wd.path, "sigign.txt")) as f:
        ign = int(f.read().split()[1], 16)
    check(not ign & (1 << 12), "the agent was started with SIGPIPE ignored: %x" % ign)
    recs = read_log(log)
    check(any(r.get("event") == "openat" and r.get("verdict") == "deny" and
              r.get("args", {}).get("path") == "/etc/hx-attack27c" for r in recs),
          "no refusal on record")
    check(recs and recs[-1].get("event") == "session_end",
          "the log ends with %r" % (recs[-1].get("event") if recs else None))


def test_a_project_full_of_directories_leaves_other_write_roots_watched(wd):
    """The mask watcher watches at most HX_MASKWATCH_MAX (16,384)
    directories, the project's first (walked at start) and the
    directories of the read denies inside the other write roots after
    (~/.cache/huggingface, where the user's tool rewrites the token): an
    agent that left 16,384 directories in the project had the next
    session watch none of those, and a token `huggingface-cli login`
    wrote during it was read by its static cat. The project's walk
    leaves room for them."""
    from test_attack26b import _session
    from test_default_policy import fake_home
    home = fake_home(wd)
    hf = os.path.join(home, ".cache", "huggingface")
    os.makedirs(hf)
    tok = os.path.join(hf, "token")
    with open(tok, "w") as f:
        f.write("hf_OLD\n")
    many = os.path.join(wd.path, "build")
    os.mkdir(many)
    for i in range(16400):
        os.mkdir(os.path.join(many, "d%05d" % i))

    def login():
        with open(tok + ".tmp", "w") as f:
            f.write("hf_NEWTOKEN\n")
        os.rename(tok + ".tmp", tok)
    try:
        out, err, recs = _session(wd, home, "cap", login, ".cache/huggingface/token")
    finally:
        shutil.rmtree(many, ignore_errors=True)
    check("hf_" not in out and out.endswith("done\n"),
          "the rewritten token was read past a project of 16,400 directories: %r %r" %
          (out, err[-300:]))
    kernel = [e for e in recs if e["event"] == "session_start"][0]["kernel"]
    if kernel.get("mask_records") != "fuse":
        raise Skip("/dev/fuse is not the user's to open: %r" % kernel.get("mask_records"))
    check(any(e.get("event") == "mask_added" and e.get("args", {}).get("path") == tok
              for e in recs), "the new token was not masked")
