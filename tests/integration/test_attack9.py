"""The ninth attack review: the changes of its day attacked (the pidfd
of a shim connection, the process count in the agent's user namespace,
the lazy DNS threads, the keepers, the moves and links of the eighth
review), each hole tried as the attacker would and checked for its
effect and its record."""

import os
import shutil
import subprocess

from lib import EXEC, HELPERS, PYTHON, Skip, Started, check, harness
from test_attack8 import GIT_ENV, git_repo
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox")


def _links_beneath(top):
    found = []
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            if os.path.islink(os.path.join(d, n)):
                found.append(os.path.relpath(os.path.join(d, n), top))
    return found


def test_a_directory_moved_into_git_brings_no_link(wd):
    """The eighth review refused a symbolic link made or moved beneath a
    .git, but judged a rename by its own two ends: a directory holding
    a link, moved in as .git/logs, left .git/logs/refs/heads/main a link to a file
    the agent may not write, and the user's next git commit, outside
    the harness, appended its reflog line there (~/victim standing for
    ~/.bashrc). The same for a directory moved in by a static program
    (the kernel layer) and for one moved in under another name and
    then made to hold the link's directory by a second rename."""
    home = fake_home(wd)
    victim = os.path.join(home, "victim")
    open(victim, "w").write("the user's\n")
    genv = git_repo(wd, home)
    git = os.path.join(wd.path, ".git")
    code = ("import os\n"
            "os.makedirs('x/logs/refs/heads')\n"
            "os.symlink(os.path.expanduser('~/victim'), 'x/logs/refs/heads/main')\n"
            "for a, b in (('.git/logs', 'old-logs'), ('x/logs', '.git/logs')):\n"
            "    try:\n"
            "        os.rename(a, b); print('moved', b)\n"
            "    except OSError as e:\n"
            "        print('refused', b, e.errno)\n")
    r = harness([PYTHON, "-c", code], wd, policy=None, env=dict(GIT_ENV, HOME=home))
    check("moved .git/logs" not in r.stdout, "python: %r %r" % (r.stdout, r.stderr))
    check(not _links_beneath(git), "python: links in .git: %r" % _links_beneath(git))
    rec = r.one(op="rename", args_path2=os.path.join(git, "logs"))
    check(rec["verdict"] == "deny" and rec["rule"] == "harness:git-config", "record %r" % rec)

    # A static program: the kernel layer.
    script = ("mkdir -p y/d/refs/heads && ln -s ~/victim y/d/refs/heads/main && "
              "mv .git/logs old2; mv y/d .git/logs; mkdir -p z/e && "
              "ln -s ~/victim z/e/main && mkdir .git/sub && mv z/e .git/sub/e; echo done")
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("done" in r.stdout, r.stderr)
    check(not _links_beneath(git), "busybox: links in .git: %r" % _links_beneath(git))
    rec = r.one(op="rename", args_path=os.path.join(wd.path, "y", "d"))
    check(rec["verdict"] == "deny" and rec["rule"] == "harness:git-config", "record %r" % rec)

    # The user's next commit, outside: the victim stays as it was.
    open(os.path.join(wd.path, "a.txt"), "a").write("c\n")
    subprocess.run(["git", "-C", wd.path, "commit", "-qam", "user message"], env=genv,
                   capture_output=True)
    check(open(victim).read() == "the user's\n", "the user's git commit wrote ~/victim: %r"
          % open(victim).read())


def _wait_line(path, prefix, tries=1000):
    import time
    for _ in range(tries):
        try:
            s = open(path).read()
        except OSError:
            s = ""
        if s.endswith("\n") and s.startswith(prefix):
            return s.strip()
        time.sleep(0.01)
    return None


def test_a_connection_made_short_of_fds_is_pinned_or_refused(wd):
    """A shim connection is pinned to its process by a pidfd, and a HELLO
    of another process on it is marked unverified (its number is not
    pinned). The pidfd was taken with pidfd_open after the socketpair:
    an agent that filled the supervisor's fd table (each connection is
    two of its fds, so 512 make 1024, a desktop's soft RLIMIT_NOFILE)
    so that two were left got a connection with no pidfd, on which a
    forked child's HELLO, and a reaped sender's, read /proc by a number
    nothing pinned, as before 6.5. Here the test lowers harness-exec's
    limit (prlimit: root) in place of the hundreds of connections."""
    if os.geteuid() != 0:
        raise Skip("prlimit of harness-exec needs root")
    import resource
    import signal
    from test_audit_attacks import _supervisor_of
    client = os.path.join(HELPERS, "static_wire_client")
    # By connect, and by an open of the socket's path, the shim's way
    # under the kernel layer (a connection made for the opener).
    for dial in ("connect", "open"):
        ready = os.path.join(wd.path, "ready-" + dial)
        log = os.path.join(wd.state, "short-%s.jsonl" % dial)
        env = {"HX_DIAL_OPEN": "1"} if dial == "open" else None
        t = Started([client, "hello-short", ready, "/usr/bin/ls", "ls", "-la"], wd, log=log, env=env)
        hx = None
        try:
            pid = _wait_line(ready, "")
            hx = _supervisor_of(log)
            check(pid and hx, "%s: no client or supervisor: %r %r" % (dial, pid, hx))
            old = resource.prlimit(hx, resource.RLIMIT_NOFILE)
            nfds = len(os.listdir("/proc/%d/fd" % hx))
            resource.prlimit(hx, resource.RLIMIT_NOFILE, (nfds + 60, old[1]))
            os.kill(int(pid), signal.SIGUSR1)
            full = _wait_line(ready, "full")
            resource.prlimit(hx, resource.RLIMIT_NOFILE, old)
            check(full, "%s: the client did not fill the table" % dial)
            os.kill(int(pid), signal.SIGUSR1)
            t.join(60)
        finally:
            if hx and t.alive():
                os.kill(hx, signal.SIGTERM)
        r = t.join(60)
        check("hellos" in r.stdout, "%s: %r %r" % (dial, r.stdout, r.stderr))
        starts = [x for x in r.records if x["event"] == "process_start" and
                  (x.get("args", {}).get("claimed_path") or
                   x.get("args", {}).get("path") == "/usr/bin/ls")]
        check(starts, "%s: no HELLO recorded:\n%s" % (dial, r.dump()))
        for s in starts:
            check("args.path" in s.get("unverified", []) and "args.argv" in s.get("unverified", []),
                  "%s: a forked child's HELLO taken as its own (%s): %r" % (dial, full, s))


def test_a_request_on_a_reaped_senders_number_names_its_own_process(wd):
    """A connection kept what /proc showed for the last number that sent
    on it, and read it again only for another number: a process that
    took the number of a reaped sender (a fork loop: pid_max is 32768
    on many systems) and sent on a connection it inherited was recorded
    with the reaped one's exe and ppid. Here the reaped sender ran a
    copy of the client (another exe), the newcomer the client itself.
    The facts are now pinned by a pidfd (the connection's own for its
    number) and read again once that process is reaped."""
    client = os.path.join(HELPERS, "static_wire_client")
    if int(open("/proc/sys/kernel/pid_max").read()) > 65536:
        raise Skip("pid_max too large to take a number back in time")
    copy = os.path.join(wd.path, "old-client")
    shutil.copy(client, copy)
    # The number may be held by a process that outlives the loop (the
    # suite runs tests side by side): the same attack again, twice more.
    for _ in range(3):
        r = harness([client, "reuse", wd.path, copy], wd, timeout=120)
        if " sent " in r.stdout:
            break
    check(" sent " in r.stdout, "no number taken back: %r %r" % (r.stdout, r.stderr))
    a = int(r.stdout.split()[1])
    first = r.one(op="write", args_path=os.path.join(wd.path, "first"))
    check(first["pid"] == a and first["exe"] == copy, "the first: %r" % first)
    second = r.one(op="write", args_path=os.path.join(wd.path, "second"))
    # The number was the connection's own, its process reaped: nothing
    # says whether the message is a late one of the reaped process or
    # the newcomer's, so no exe is named, never the reaped one's.
    check(second["pid"] == a and second.get("exe") in (None, os.path.realpath(client)) and
          second.get("ppid") != first.get("ppid"),
          "the newcomer recorded as the reaped sender: %r" % second)


def test_a_full_fd_table_does_not_lose_a_late_mask(wd):
    """A denied file a process outside the session writes into the
    project later (the user's editor makes .env) is masked as it
    appears: the inotify event is followed by an open of its directory
    in harness-exec. Each shim connection is two or three of
    harness-exec's fds, and its soft RLIMIT_NOFILE is a desktop's 1024:
    an agent that held about 500 connections had that open fail with
    EMFILE, the event dropped, and once it let them go its static
    program read the new .env."""
    import resource
    from test_mask_records import SECRET, _masks_added, _wait_for
    if os.geteuid() and not os.access("/dev/fuse", os.R_OK | os.W_OK):
        raise Skip("/dev/fuse is not the user's to open")
    client = os.path.join(HELPERS, "static_wire_client")
    log = os.path.join(wd.state, "full.jsonl")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]

    def desktop():
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    proc = subprocess.Popen([EXEC, "--quiet", "--audit-log", log, "--", client, "fill", wd.path],
                            cwd=wd.path, env=dict(os.environ, HOME=fake_home(wd)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=desktop)
    try:
        _wait_for(lambda: os.path.exists(os.path.join(wd.path, "ready")), "the agent", 60)
        wd.file(".env", SECRET)
        env = os.path.join(wd.path, ".env")
        try:
            _wait_for(lambda: env in _masks_added(log), "the mask", 3)
        except AssertionError:
            pass
        open(os.path.join(wd.path, "go"), "w").close()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    held = open(os.path.join(wd.path, "ready")).read().strip()
    check("sk-live" not in out and out.startswith("refused"),
          "the late .env read after %s connections: %r %r" % (held, out, err[-2000:]))
    # The agent gets the soft limit harness-exec was started with.
    r = subprocess.run([EXEC, "--quiet", "--", "sh", "-c", "ulimit -n"], cwd=wd.path,
                       capture_output=True, text=True, preexec_fn=desktop)
    check(r.stdout.strip() == "1024", "the agent's soft limit: %r %r" % (r.stdout, r.stderr))


def test_git_init_keeps_its_symbolic_links(wd):
    """The eighth review's refusal of every link beneath a .git refused
    git init's own probe (a link .git/tXXXXXX to "testing", removed at
    once): git then wrote core.symlinks = false into the repository it
    made, and the user's checkouts there, outside the harness, made each
    tracked link a plain file. The probe is let through, and nothing
    else: another target, another name, a static program's too."""
    home = fake_home(wd)
    victim = os.path.join(home, "victim")
    open(victim, "w").write("the user's\n")
    r = harness(["sh", "-c", "git init -q r && git -C r config --get core.symlinks; echo done"],
                wd, policy=None, env=dict(GIT_ENV, HOME=home))
    check(r.stdout.endswith("done\n") and "false" not in r.stdout,
          "git init under the harness: %r %r" % (r.stdout, r.stderr))
    check(not [x for x in r.records if x.get("verdict") == "deny"], "refused: " + r.dump())
    git = os.path.join(wd.path, "r", ".git")
    r = harness([BUSYBOX, "sh", "-c", "cd r; ln -s testing .git/tAbC123 && echo probe; "
                 "ln -s ~/victim .git/tAbC124 && echo victim; "
                 "ln -s testing .git/COMMIT_EDITMSG && echo named; "
                 "ln -s testing .git/tAbC12 && echo short; echo done"],
                wd, policy=None, env={"HOME": home})
    check("probe" in r.stdout and "done" in r.stdout, "%r %r" % (r.stdout, r.stderr))
    for word in ("victim", "named", "short"):
        check(word not in r.stdout, "%s: %r" % (word, r.stdout))
    check(_links_beneath(git) == ["tAbC123"], "links in .git: %r" % _links_beneath(git))
