"""Issue 10, classes 8 and 9: audit records an agent could erase, hide or
forge, and limits it could exhaust. Each attack runs in enforce and in
audit mode, from python (the shim) and from a static program (the kernel
layer only); each test checks that the forbidden effect did not happen
and that the record says what did."""

import json
import os
import re
import resource
import subprocess

from lib import (AUDIT_TOOL, EXEC, HELPERS, POLICIES, PYTHON, Skip, Started, alone,
                 check, harness, read_log)

BUSYBOX = "/bin/busybox"
FD_ATTACK = os.path.join(HELPERS, "static_fd_attack")
MODES = ("enforce", "audit")


def verify(log):
    p = subprocess.run([AUDIT_TOOL, "verify", log], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def project_log(wd):
    os.makedirs(os.path.join(wd.path, "logs"))
    return os.path.join(wd.path, "logs", "audit.jsonl")


def protect_denials(r, op):
    """Enforced harness:protect denials of op (its op, or its event:
    chmod is op "write", event "chmod")."""
    return [x for x in r.events(rule="harness:protect")
            if op in (x.get("op"), x.get("event")) and x.get("verdict") == "deny"
            and x.get("enforced") is True]


# Every way of erasing or hiding the log by name, for sh (shim) and
# busybox sh (kernel only). {L} is the log, {D} the directory above it.
ATTACKS = [
    ("truncate", ": > {L}", "write"),
    ("append", "echo forged >> {L}", "write"),
    ("rename", "mv {L} {D}/moved", "rename"),
    ("unlink", "rm -f {L}", "unlink"),
    ("hardlink", "ln {L} {D}/alias", "link"),
    ("rename-dir-above", "mv {D} {D}.gone", "rename"),
    ("chmod", "chmod 000 {L}", "chmod"),
]


def test_log_in_project_survives_every_attack_in_both_modes(wd):
    for mode in MODES:
        for shell in (["/bin/sh", "-c"], [BUSYBOX, "sh", "-c"]):
            for name, cmd, op in ATTACKS:
                log = project_log(wd) if not os.path.isdir(
                    os.path.join(wd.path, "logs")) else os.path.join(wd.path, "logs", "audit.jsonl")
                if os.path.exists(log):
                    os.unlink(log)
                d = os.path.dirname(log)
                r = harness(shell + [cmd.format(L=log, D=d)], wd, mode=mode, log=log)
                what = "%s %s %s" % (mode, shell[0], name)
                st = os.stat(log)
                check(st.st_nlink == 1 and st.st_mode & 0o777 == 0o600,
                      "%s: log now %o with %d links" % (what, st.st_mode, st.st_nlink))
                check(not os.path.exists(d + ".gone") and not os.path.exists(d + "/moved")
                      and not os.path.exists(d + "/alias"), "%s: the log moved" % what)
                rc, out = verify(log)
                check(rc == 0, "%s: chain broken: %s" % (what, out))
                check(b"\nforged" not in open(log, "rb").read(), "%s: forged line" % what)
                recs = read_log(log)
                check(recs[0]["event"] == "session_start" and recs[-1]["event"] == "session_end",
                      "%s: log lost its start or end" % what)
                found = protect_denials(r, op)
                check(found, "%s: no enforced harness:protect deny for %s:\n%s" % (what, op, r.dump()))
                if shell[0] == BUSYBOX:
                    check(any(x["layer"] == "kernel" for x in found),
                          "%s: busybox's attack not seen by the kernel layer: %r" % (what, found))


def test_session_and_state_dirs_protected_in_audit_mode(wd):
    # The session directory holds the socket; the agent finds it there.
    cmd = ('d=$(dirname "$HARNESS_SOCKET"); rm -rf "$d"; echo x > "$d/planted";'
           ' mv "$d" "$d.x"; s=$(dirname "$(dirname "$d")"); mv "$s" "$s.x"; echo done')
    for shell in (["/bin/sh", "-c"], [BUSYBOX, "sh", "-c"]):
        r = harness(shell + [cmd], wd, mode="audit")
        check("done" in r.stdout, "shell did not finish: %s" % r.stderr)
        sd = r.one(event="session_start")["session_dir"]
        check(os.path.isdir(sd) and not os.path.exists(sd + ".x"),
              "%s: session dir gone" % shell[0])
        check(not os.path.exists(os.path.join(sd, "planted")), "planted a file")
        state = os.path.dirname(os.path.dirname(sd))
        check(os.path.isdir(state) and not os.path.exists(state + ".x"), "state dir moved")
        # (in audit mode every open is decided: rm -rf is refused
        # already at listing the directory, a read)
        for ops in (("unlink", "rmdir", "read"), ("write",), ("rename",)):
            check(any(protect_denials(r, op) for op in ops),
                  "%s: no protect deny for %s:\n%s" % (shell[0], ops, r.dump()))


def test_read_only_fd_of_the_log(wd):
    # A static program tries to open a log in the project read-only: it
    # is masked in enforce mode (masks.h) and its open is decided (and
    # refused, harness:protect) in audit mode, where every open is. Were
    # an fd had all the same, truncate, write and a link through it must
    # fail; a fchmod would pass the kernel layer and be put back.
    log = project_log(wd)
    for mode in MODES:
        if os.path.exists(log):
            os.unlink(log)
        r = harness([FD_ATTACK, log, os.path.join(wd.path, "alias")], wd, mode=mode, log=log)
        out = dict(l.split(" ", 1) for l in r.stdout.splitlines())
        st = os.stat(log)
        check(st.st_mode & 0o777 == 0o600, "%s: mode left %o" % (mode, st.st_mode))
        check(st.st_nlink == 1 and not os.path.exists(os.path.join(wd.path, "alias")),
              "%s: a hard link was made: %r" % (mode, out))
        check(verify(log)[0] == 0, "%s: chain broken" % mode)
        check(out.get("ftruncate", "err") != "ok" and out.get("write", "err") != "ok",
              "%s: %r" % (mode, out))
        check(out["open"] != "ok", "%s: the log was opened: %r" % (mode, out))
        if mode == "audit":
            check(protect_denials(r, "read"), "%s: no protect deny of the read\n%s" % (mode, r.dump()))
        check(out.get("link", "err") != "ok", "%s link: %r\n%s" % (mode, out, r.dump()))
        end = r.one(event="session_end")
        if out.get("fchmod") == "ok":
            check(end.get("audit_log_mode_restored", 0) >= 1, "fchmod not counted: %r" % end)


def test_log_by_inode_through_a_second_mount(wd):
    if os.getuid() != 0:
        raise Skip("a bind mount needs root")
    log = project_log(wd)
    alias = os.path.join(wd.path, "mnt")
    os.makedirs(alias)
    subprocess.run(["mount", "--bind", os.path.dirname(log), alias], check=True)
    try:
        for mode in MODES:
            other = os.path.join(alias, "audit.jsonl")
            r = harness(["/bin/sh", "-c", "true > %s; echo x >> %s; %s sh -c 'true > %s'"
                         % (other, other, BUSYBOX, other)], wd, mode=mode, log=log)
            check(verify(log)[0] == 0 and read_log(log)[0]["event"] == "session_start",
                  "%s: log truncated through the other mount" % mode)
            # By inode, or by harness:protect's glob rebased onto the
            # second mount found at start (mountalias.h).
            found = [x for x in protect_denials(r, "write") if x.get("protected_by") == "inode"
                     or x.get("args", {}).get("path") == other]
            check(len(found) >= 3, "%s: denials %r\n%s" % (mode, found, r.dump()))
            os.unlink(log)
    finally:
        subprocess.run(["umount", alias])


def test_log_with_a_second_name_is_refused(wd):
    log = project_log(wd)
    open(log, "w").close()
    os.link(log, os.path.join(wd.path, "other-name"))
    r = harness(["/bin/true"], wd, log=log)
    check(r.status == 2 and "hard links" in r.stderr, "started: %s %s" % (r.status, r.stderr))
    check(os.path.getsize(log) == 0, "ran and wrote the log")


def test_invalid_utf8_is_escaped_never_dropped(wd):
    # One byte that is not UTF-8 in a `sh -c` used to leave no argv.
    name = b"f\xff\xfe.txt"
    script = b"echo \xe9t\xe9 > " + name + b"; /bin/true arg\xff"
    for mode in MODES:
        for shell in ([b"/bin/sh", b"-c"], [BUSYBOX.encode(), b"sh", b"-c"]):
            log = os.path.join(wd.state, "u-%s-%d.jsonl" % (mode, len(shell)))
            argv = [EXEC.encode(), b"--quiet", b"--audit-log", log.encode(), b"--policy",
                    os.path.join(POLICIES, "test.yaml").encode(), b"--mode", mode.encode(),
                    b"--"] + shell + [script]
            env = dict(os.environ, XDG_STATE_HOME=wd.state)
            p = subprocess.run(argv, cwd=wd.path, env=env, capture_output=True)
            check(p.returncode == 0, "%s: %r" % (mode, p.stderr))
            check(os.path.exists(os.path.join(wd.path.encode(), name)), "file not made")
            os.unlink(os.path.join(wd.path.encode(), name))
            recs = read_log(log)
            want = script.decode("latin-1").replace("\\", "\\\\")
            want = "".join("\\x%02x" % ord(c) if ord(c) >= 0x80 else c for c in want)
            start = recs[0]
            check(start["command"][-1] == want and "command" in start.get("escaped", []),
                  "%s: session_start command %r" % (mode, start.get("command")))
            execs = [x for x in recs if x.get("op") == "exec" and
                     x["args"].get("argv", [None])[-1] == "arg\\xff"]
            check(execs and all("args.argv" in x.get("escaped", []) for x in execs),
                  "%s %s: exec of /bin/true arg\\xff not recorded: %r" % (mode, shell[0], execs))
            writes = [x for x in recs if x.get("op") == "write" and
                      x["args"].get("path", "").endswith("/f\\xff\\xfe.txt")]
            check(writes and "args.path" in writes[0].get("escaped", []),
                  "%s %s: write of the file not recorded" % (mode, shell[0]))
            if shell[0].startswith(BUSYBOX.encode()):
                check(any(x["layer"] == "kernel" for x in writes), "not the kernel's record")


RATE = "rate.yaml"
LOOP = "import os\nfor i in range(%d):\n    try: os.close(os.open(%r, os.O_WRONLY | os.O_CREAT))\n    except OSError: pass\n"


def coalesced_count(recs, path, event):
    n = 0
    for r in recs:
        if r["event"] != "audit_overflow":
            continue
        for g in r["groups"]:
            if g.get("event") == event and g.get("first_args", {}).get("path") == path:
                n += g["count"]
    return n


def test_rate_quota_coalesces_and_counts(wd):
    # A tight loop of opens: beyond the rate they are counted, not lost.
    target = "/nonexistent-hx/x"  # fails in audit mode too (ENOENT)
    n = 3000
    for mode in MODES:
        for who, cmd, event in (
                ("python", [PYTHON, "-c", LOOP % (n, target)], "openat"),
                ("busybox", [BUSYBOX, "sh", "-c",
                             "i=0; while [ $i -lt %d ]; do true 2>/dev/null > %s; i=$((i+1)); done"
                             % (n, target)], "openat")):
            r = harness(cmd, wd, policy=RATE, mode=mode)
            r.expect_status(0)
            on_target = [x for x in r.records if x.get("args", {}).get("path") == target]
            written = [x for x in on_target if x["event"] != "failed"]
            folded = coalesced_count(r.records, target, written[0]["event"] if written else event)
            check(len(written) + folded == n,
                  "%s %s: %d written + %d coalesced != %d" % (mode, who, len(written), folded, n))
            # In audit mode each open went ahead and the kernel said
            # ENOENT: a "failed" record each, under the same quota.
            failed = len(on_target) - len(written) + coalesced_count(r.records, target, "failed")
            check(failed == (n if mode == "audit" else 0),
                  "%s %s: %d failed records for %d opens" % (mode, who, failed, n))
            if mode == "enforce":
                check(len(written) < 400, "%s %s: rate not applied: %d written" % (mode, who, len(written)))
            else:  # each went ahead against its verdict: written past the rate (test_attack24a)
                check(len(written) == n, "%s %s: %d of %d written" % (mode, who, len(written), n))
            check(verify(r.log)[0] == 0, "chain broken")
            check(r.records[-1]["event"] == "session_end", "no session_end")


HIDE = r"""
import os, sys, time
kids = []
for k in range(24):
    p = os.fork()
    if p == 0:
        for i in range(600):
            try: os.open("/nonexistent-hx/%d-%d" % (k, i), os.O_WRONLY | os.O_CREAT)
            except OSError: pass
        os._exit(0)
    kids.append(p)
time.sleep(0.5)
os.system("/bin/echo " + sys.argv[1])
for p in kids:
    os.waitpid(p, 0)
"""


def test_a_flood_cannot_hide_what_ran(wd):
    """Found by an attack review: past the rate, records were coalesced
    into 16 groups by pid, event, op, verdict and rule and the rest only
    counted (`other`), so a flood of refused opens from more than 16
    processes, then a command, left no record of what that command was:
    only a count. What went ahead and runs or reaches the network (an
    exec, a connect, a send) is written whatever the rate; refusals and
    reads are still coalesced."""
    for mode in MODES:
        word = "hidden-%s-%d" % (mode, os.getpid())
        r = harness([PYTHON, "-c", HIDE, word], wd, policy=RATE, mode=mode, timeout=120)
        r.expect_status(0)
        check(word in r.stdout, "the command did not run: %r" % r.stdout)
        check(any(x["event"] == "audit_overflow" for x in r.records), "%s: no flood" % mode)
        ran = [x for x in r.records if x.get("op") == "exec" and
               x.get("args", {}).get("argv", [])[:2] == ["/bin/echo", word]]
        check(ran, "%s: no record of the exec of /bin/echo %s" % (mode, word))
        check(verify(r.log)[0] == 0, "chain broken")


def test_size_quota_ends_the_session(wd):
    target = "/nonexistent-hx/x"
    for mode in MODES:
        r = harness([PYTHON, "-c", LOOP % (10 ** 7, target)], wd, policy="audit-size.yaml",
                    mode=mode, timeout=60)
        check(r.status == 125, "%s: status %s (%s)" % (mode, r.status, r.stderr[-500:]))
        check("audit quota" in r.stderr, "no reason on stderr: %s" % r.stderr[-500:])
        fail = r.one(event="audit_failed")
        check("max_size" in fail["reason"] and fail["written"] >= 65536, "record: %r" % fail)
        end = r.records[-1]
        check(end["event"] == "session_end" and end["exit_code"] == 125 and end.get("audit_failed"),
              "%s: end %r" % (mode, end))
        check(os.path.getsize(r.log) < 65536 + 16384, "log grew to %d" % os.path.getsize(r.log))
        check(verify(r.log)[0] == 0, "chain broken")


def run_raw(wd, log, cmd, mode, preexec=None, timeout=60):
    argv = [EXEC, "--quiet", "--audit-log", log, "--policy", os.path.join(POLICIES, "test.yaml"),
            "--mode", mode, "--"] + cmd
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    return subprocess.run(argv, cwd=wd.path, env=env, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=preexec)


FLOOD = [PYTHON, "-c", LOOP % (10 ** 7, "/nonexistent-hx/x")]


def check_failed_closed(p, log, what, final_records):
    check(p.returncode == 125, "%s: status %s %s" % (what, p.returncode, p.stderr[-400:]))
    check("every request is denied and the session ends" in p.stderr, "%s: %s" % (what, p.stderr[-400:]))
    data = open(log, "rb").read()
    check(data.endswith(b"\n"), "%s: torn last line" % what)
    rc, out = verify(log)
    check(rc == 0, "%s: %s" % (what, out))
    if final_records:
        recs = read_log(log)
        check(recs[-2]["event"] == "audit_failed" and recs[-1]["event"] == "session_end",
              "%s: last records %r" % (what, [x["event"] for x in recs[-3:]]))


def test_disk_full_fails_closed_with_the_log_intact(wd):
    if os.getuid() != 0:
        raise Skip("mounting a small tmpfs needs root (the RLIMIT_FSIZE test covers the user)")
    mnt = os.path.join(wd.path, "small")
    os.makedirs(mnt)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mnt], check=True)
    try:
        for mode in MODES:
            log = os.path.join(mnt, "audit-%s.jsonl" % mode)
            p = run_raw(wd, log, FLOOD, mode)
            check_failed_closed(p, log, mode, True)
            check("No space left" in p.stderr, p.stderr[-300:])
            os.unlink(log)
    finally:
        subprocess.run(["umount", mnt])


def test_file_size_limit_on_the_log_fails_closed(wd):
    # RLIMIT_FSIZE on harness-exec stands for a full disk as any user.
    for mode in MODES:
        log = os.path.join(wd.state, "fsize-%s.jsonl" % mode)
        p = run_raw(wd, log, FLOOD, mode,
                    preexec=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (400000, 400000)))
        check_failed_closed(p, log, mode, True)
        check(os.path.getsize(log) <= 400000, "log past the limit")


FORK = r'''
import os, sys, time
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
        n += 1
except OSError as e:
    print("stopped", n, e.errno)
else:
    print("unbounded", n)
'''


# Alone: in audit mode an ordinary user's count is the user's tasks at
# the start plus the limit (README, limits), and another test's tasks
# that end meanwhile give the storm their places (100 under 40, once,
# in a suite run).
@alone
def test_fork_storm_ends_at_the_process_limit(wd):
    for mode in MODES:
        r = harness([PYTHON, "-c", FORK], wd, policy="procs.yaml", mode=mode, timeout=60)
        r.expect_status(0)
        words = r.stdout.split()
        check(words[:1] == ["stopped"] and int(words[2]) == 11,
              "%s: %r" % (mode, r.stdout))
        check(int(words[1]) < 40, "%s: %s processes under a limit of 40" % (mode, words[1]))
        lim = r.one(event="session_start")["kernel"]["limits"]
        check(lim.get("processes") == 40 and lim.get("processes_by") in ("cgroup", "rlimit"),
              "%s: %r" % (mode, lim))
        check(verify(r.log)[0] == 0 and r.records[-1]["event"] == "session_end", "log")


def test_the_process_count_is_the_sessions_own(wd):
    # RLIMIT_NPROC counts every task of the user. Set to the user's
    # tasks at the start plus the limit, it gave the agent the places of
    # the user's other tasks that ended meanwhile: 30 of them killed
    # after the start let a fork storm make 57 processes under a limit
    # of 40. In the agent's own user namespace (enforce mode) only the
    # session's tasks are counted.
    if os.getuid() == 0:
        raise Skip("root: the cgroup's pids.max holds it, or nothing")
    import time
    others = [subprocess.Popen(["sleep", "60"]) for _ in range(30)]
    ready, go = os.path.join(wd.path, "ready"), os.path.join(wd.path, "go")
    script = ("import os, time\nopen(%r, 'w').close()\n"
              "while not os.path.exists(%r): time.sleep(0.01)\n" % (ready, go)) + FORK
    t = Started([PYTHON, "-c", script], wd, policy="procs.yaml", timeout=60)
    try:
        for _ in range(1000):
            if os.path.exists(ready):
                break
            time.sleep(0.01)
    finally:
        for p in others:
            p.kill()
            p.wait()
        open(go, "w").close()
    r = t.join(90)
    r.expect_status(0)
    words = r.stdout.split()
    check(words[:1] == ["stopped"] and int(words[1]) < 40,
          "%s under a limit of 40" % r.stdout.strip())
    lim = r.one(event="session_start")["kernel"]["limits"]
    if lim.get("processes_by") == "rlimit":
        check(lim.get("nproc_counts") == "session" and lim.get("nproc_rlimit") == 40,
              "counted: %r" % lim)


def test_fork_bomb_session_ends_cleanly(wd):
    # The sleep is forked before the bomb: after it, the limit may leave
    # the shell no fork of its own (a loaded machine's race, not the
    # session's end), and wait and echo are builtins.
    bomb = "sleep 2 & s=$!; b() { b & b & }; b 2>/dev/null & wait $s; echo survived"
    for mode in MODES:
        r = harness([BUSYBOX, "sh", "-c", bomb], wd, policy="procs.yaml", mode=mode, timeout=90)
        check(r.status == 0 and "survived" in r.stdout, "%s: %s %r" % (mode, r.status, r.stderr[-300:]))
        check(verify(r.log)[0] == 0 and r.records[-1]["event"] == "session_end",
              "%s: log not intact" % mode)


def test_process_limit_is_on_by_default(wd):
    r = harness(["/bin/true"], wd)
    lim = r.one(event="session_start")["kernel"]["limits"]
    want = "cgroup" if os.getuid() == 0 else "rlimit"
    check(lim.get("processes") == 4096, "default: %r" % lim)
    if os.getuid() != 0:
        check(lim.get("processes_by") == want, "held by %r" % lim)
    else:
        check(lim.get("processes_by") in ("cgroup", "none"), "held by %r" % lim)


def test_agent_cannot_leave_the_session_cgroup(wd):
    """Class 9: in audit mode (the policy unenforced) a root agent wrote
    its pid into the root cgroup's cgroup.procs and left the session's
    cgroup, with its process count and the reaper's cgroup.kill; an
    ordinary user can do the same under a delegated subtree. Writes to
    the cgroup file systems are harness:protect, in both modes; reading
    them stays allowed."""
    script = ("for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/unified/cgroup.procs "
              "/sys/fs/cgroup/pids/cgroup.procs; do "
              "[ -f $f ] && { echo $$ > $f && echo MOVED $f; }; done; "
              "cat /proc/self/cgroup; cat /sys/fs/cgroup/cgroup.controllers "
              "/sys/fs/cgroup/unified/cgroup.controllers /sys/fs/cgroup/pids/tasks "
              ">/dev/null 2>&1; echo read $?")
    for mode in MODES:
        r = harness([BUSYBOX, "sh", "-c", script], wd, mode=mode)
        check("MOVED" not in r.stdout, "%s: %r" % (mode, r.stdout))
        recs = [x for x in r.records if x.get("args", {}).get("path", "").endswith("/cgroup.procs")]
        check(recs, "%s: no record of the writes:\n%s" % (mode, r.dump()))
        for rec in recs:
            check(rec["rule"] == "harness:protect" and rec["verdict"] == "deny" and
                  rec.get("enforced", True) is not False and rec["layer"] == "kernel",
                  "%s: %r" % (mode, rec))
        start = r.one(event="session_start")["kernel"]["limits"]
        if start.get("processes_by") == "cgroup":
            check("harness-" in r.stdout, "%s: not in the session's cgroup: %r" % (mode, r.stdout))


def test_a_forged_hello_does_not_name_another_command(wd):
    # A program that speaks the protocol itself says in its HELLO that
    # it is "ls -la": process_start names what the kernel shows (its
    # image, its /proc cmdline), and keeps the claim apart.
    # Connected, or opened as the shim asks for its connection under
    # the kernel layer: the same pinned connection either way.
    client = os.path.join(HELPERS, "static_wire_client")
    for env in (None, {"HX_DIAL_OPEN": "1"}):
        r = harness([client, "hello", "/usr/bin/ls", "ls", "-la"], wd, env=env)
        check(r.stdout.startswith("hello ") and not r.stdout.startswith("hello -"),
              repr((env, r.stdout, r.stderr)))
        start = [x for x in r.records if x["event"] == "process_start" and
                 x.get("args", {}).get("claimed_argv")]
        check(len(start) == 1, "%r: the claim is not kept apart:\n%s" % (env, r.dump()))
        args = start[0]["args"]
        check(args["argv"] == [client, "hello", "/usr/bin/ls", "ls", "-la"] and
              args["path"] == os.path.realpath(client), "what ran: %r" % args)
        check(args["claimed_argv"] == ["ls", "-la"] and args["claimed_path"] == "/usr/bin/ls",
              "the claim: %r" % args)
        check(not any(x["event"] == "process_start" and x.get("args", {}).get("argv") == ["ls", "-la"]
                      for x in r.records), "a record names the claimed command as what ran")


def test_a_forged_exec_request_does_not_stand_for_the_exec(wd):
    # A program that speaks the protocol itself asks for "echo innocent",
    # then execs "echo EVIL" by a raw syscall: the same file, the same
    # verdict. The kernel layer took the shim's record for its own (the
    # key was the path only), and the log named only "echo innocent".
    claim = os.path.join(HELPERS, "static_exec_claim")
    for mode in MODES:
        r = harness([claim, "/bin/echo", "echo", "innocent", "--", "echo", "EVIL"], wd, mode=mode)
        check(r.status == 0 and r.stdout == "verdict 0\nEVIL\n",
              "%s: %r" % (mode, (r.status, r.stdout, r.stderr[-400:])))
        ran = [x for x in r.events(event="execve", verdict="allow")
               if x.get("args", {}).get("argv") == ["echo", "EVIL"]]
        check(len(ran) == 1 and ran[0]["layer"] == "kernel",
              "%s: no record of what ran:\n%s" % (mode, r.dump()))
        claimed = r.one(event="execve", layer="shim+kernel")
        check(claimed["args"]["argv"] == ["echo", "innocent"], "%s: %r" % (mode, claimed))
        r.one(event="kernel_unconfirmed", ref_seq=claimed["seq"])


def test_an_exec_claimed_by_a_process_and_made_by_its_child_is_the_childs(wd):
    # A claim stood for an exec of the claimer's child (posix_spawn asks
    # in the parent), whatever call it claimed: a program that asks for
    # an execve and has a child it forks make it had one record, under
    # its own pid. Only a spawn's claim (posix_spawn, system, popen)
    # stands for a child's exec now; python's posix_spawn and system
    # still have one record each.
    claim = os.path.join(HELPERS, "static_exec_claim")
    for mode in MODES:
        r = harness([claim, "-c", "/bin/echo", "echo", "hi", "--", "echo", "hi"], wd, mode=mode)
        # The child's "hi" and the parent's "child N" come in either order.
        lines = r.stdout.split("\n")
        kids = [ln for ln in lines if ln.startswith("child ")]
        check(r.status == 0 and lines[0] == "verdict 0" and len(kids) == 1 and "hi" in lines,
              "%s: %r" % (mode, (r.status, r.stdout, r.stderr[-400:])))
        child = int(kids[0].split()[1])
        ran = [x for x in r.events(event="execve") if x["args"].get("argv") == ["echo", "hi"]]
        made = [x for x in ran if x["pid"] == child]
        check(len(made) == 1 and made[0]["layer"] == "kernel",
              "%s: the child's exec is not recorded as its own:\n%s" % (mode, r.dump()))
        claimed, = [x for x in ran if x["pid"] != child]
        r.one(event="kernel_unconfirmed", ref_seq=claimed["seq"])
        r = harness([PYTHON, "-c", "import os; os.posix_spawn('/bin/echo', ['echo', 'spawned'],"
                     " os.environ); os.wait(); os.system('echo sys')"], wd, mode=mode)
        check(r.stdout == "spawned\nsys\n", "%s: %r" % (mode, r.stderr[-400:]))
        for event in ("posix_spawn", "system"):
            check(r.one(event=event)["layer"] == "shim+kernel", "%s: %s" % (mode, event))
        check(not r.events(event="kernel_unconfirmed"), "%s: %s" % (mode, r.dump()))


def test_a_hello_from_a_process_gone_says_it_is_unverified(wd):
    # The shim does not wait for its HELLO's reply, so a short program
    # can be a zombie (no image, an empty cmdline) when the supervisor
    # reads it. Its process_start then carries the claim, and names each
    # field taken from it in "unverified"; a field without that mark is
    # what the kernel showed. Which of the two a run gets is a race, so
    # every run is checked for the one it got.
    client = os.path.join(HELPERS, "static_wire_client")
    seen = set()
    for _ in range(8):
        r = harness(["sh", "-c", '"$0" hello-exit /usr/bin/ls ls -la; sleep 0.1', client], wd)
        start = [x for x in r.records if x["event"] == "process_start" and
                 x["args"].get("path") in (os.path.realpath(client), "/usr/bin/ls")]
        check(len(start) == 1, "one process_start for the client:\n" + r.dump())
        args, unverified = start[0]["args"], start[0].get("unverified", [])
        if "args.argv" in unverified:
            check(args["argv"] == ["ls", "-la"] and "claimed_argv" not in args, "the claim: %r" % start[0])
        else:
            check(args["argv"] == [client, "hello-exit", "/usr/bin/ls", "ls", "-la"] and
                  args["claimed_argv"] == ["ls", "-la"], "what ran: %r" % start[0])
        if "args.path" in unverified:
            check(args["path"] == "/usr/bin/ls", "the claimed path: %r" % start[0])
        else:
            check(args["path"] == os.path.realpath(client), "the image: %r" % start[0])
        seen.add(tuple(unverified))
    print("# unverified fields seen: %r" % sorted(seen))


def _supervisor_of(log):
    """The harness-exec process (this test's child) writing log."""
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and log.encode() in argv:
            return int(d)
    return None


def _take_pid(pid, tries=200):
    """A process of ours (sleep) given the number pid, through
    ns_last_pid; None when others keep taking it first."""
    for _ in range(tries):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        p = subprocess.Popen(["sleep", "30"])
        if p.pid == pid:
            return p
        p.kill()
        p.wait()
    return None


def _sent_by_a_reaped_number(argv, wd, ready, log):
    """Runs argv (a client that writes the sender's pid to ready, then
    sends on SIGUSR1 and exits, reaped by its parent) while the test
    holds the supervisor stopped, and gives the sender's number to a
    sleep of ours before the supervisor reads what it sent: (the
    session, the sender's pid). The exec gate is off: it would reap the
    sender only through the stopped supervisor. Root: ns_last_pid."""
    if os.geteuid() != 0:
        raise Skip("ns_last_pid needs root")
    import signal
    import time
    t = Started(argv, wd, log=log, extra=["--no-exec-gate"])
    impostor = None
    try:
        for _ in range(500):
            if os.path.exists(ready) and open(ready).read().endswith("\n"):
                break
            time.sleep(0.01)
        sender = int(open(ready).read())
        hx = _supervisor_of(log)
        check(hx, "no supervisor found")
        os.kill(hx, signal.SIGSTOP)
        try:
            os.kill(sender, signal.SIGUSR1)
            for _ in range(500):  # sent, exited and reaped
                if not os.path.exists("/proc/%d" % sender):
                    break
                time.sleep(0.01)
            impostor = _take_pid(sender)
        finally:
            os.kill(hx, signal.SIGCONT)
    finally:
        r = t.join(120)
    if impostor is None:
        raise Skip("pid %d kept being taken by another process" % sender)
    impostor.kill()
    impostor.wait()
    return r, sender


def test_a_hello_read_once_its_pid_is_another_process_shows_nothing_of_that_one(wd):
    # The shim does not wait for its HELLO's reply: a process reaped
    # before the supervisor reads its HELLO leaves its number free, and
    # a process made meanwhile may take it. The record read the facts by
    # that number: it named the newcomer (here "sleep 30", made by the
    # test) as what started, unmarked.
    client = os.path.join(HELPERS, "static_wire_client")
    ready = os.path.join(wd.path, "ready")
    r, sender = _sent_by_a_reaped_number(
        ["sh", "-c", '"$0" hello-on-signal "$1" /usr/bin/ls ls -la; sleep 1', client, ready],
        wd, ready, os.path.join(wd.state, "reuse.jsonl"))
    start = [x for x in r.records if x["event"] == "process_start" and x.get("pid") == sender]
    check(len(start) == 1, "one process_start for the sender:\n" + r.dump())
    args, unverified = start[0]["args"], start[0].get("unverified", [])
    check("sleep" not in (args.get("path") or "") + (start[0].get("exe") or "") and
          (args.get("argv") or [None])[0] != "sleep" and start[0].get("ppid") != os.getpid(),
          "the newcomer named as what started: %r" % start[0])
    check(args.get("path") == "/usr/bin/ls" and "args.path" in unverified and
          args.get("argv") == ["ls", "-la"] and "args.argv" in unverified,
          "the claim, marked: %r" % start[0])


def test_a_forked_childs_request_read_once_its_pid_is_another_process_names_nothing_of_that_one(wd):
    # A request of a forked child on its parent's connection (a number
    # other than the connection's own) was read by that number with
    # nothing to pin it: a child reaped before the supervisor read its
    # request, its number given to another process meanwhile, was
    # recorded as that process (here "sleep 30": its exe, cwd, the test
    # as its parent). Each message's sender is now named by the kernel
    # (SCM_PIDFD, Linux 6.5), and what /proc shows is kept only while
    # that sender is not reaped.
    client = os.path.join(HELPERS, "static_wire_client")
    ready = os.path.join(wd.path, "ready")
    target = os.path.join(wd.path, "from-the-child")
    r, kid = _sent_by_a_reaped_number(
        [client, "child-send-on-signal", ready, target],
        wd, ready, os.path.join(wd.state, "child-reuse.jsonl"))
    rec = r.one(op="write", args_path=target)
    check(rec.get("pid") == kid, "the child's number: %r" % rec)
    check("sleep" not in (rec.get("exe") or "") and rec.get("ppid") != os.getpid() and
          rec.get("cwd") != os.getcwd(), "the newcomer named as the sender: %r" % rec)


def test_a_hello_from_a_live_process_the_kernel_shows_nothing_of_is_marked(wd):
    # Alive, and still nothing to read: a process whose first thread
    # has exited (a zombie leader: no image, no cmdline, while a second
    # thread says HELLO), or one that unmapped its argv strings (its
    # cmdline reads empty). What the kernel does not show is the claim,
    # each such field marked "unverified"; what it shows is its own.
    client = os.path.join(HELPERS, "static_wire_client")
    for how in ("hello-zombie", "hello-unmapped"):
        r = harness([client, how, "/usr/bin/ls", "ls", "-la"], wd)
        check(r.stdout.startswith("hello "), "%s: %r %s" % (how, r.stdout, r.stderr))
        start = [x for x in r.records if x["event"] == "process_start"]
        check(len(start) == 1, "%s: one process_start:\n%s" % (how, r.dump()))
        args, unverified = start[0]["args"], start[0].get("unverified", [])
        check("args.argv" in unverified and args["argv"] == ["ls", "-la"], "%s: %r" % (how, start[0]))
        check(("args.path" in unverified and args["path"] == "/usr/bin/ls") or
              (args["path"] == os.path.realpath(client) and args.get("claimed_path") == "/usr/bin/ls"),
              "%s: the path %r" % (how, start[0]))


FAILING = r'''
import errno, os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
def call(name, f, *a):
    try:
        f(*a); print(name, "OK")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
call("mkdir-new", os.mkdir, "d")
call("mkdir-again", os.mkdir, "d")
open("d/x", "w").close()
call("rmdir-full", os.rmdir, "d")
call("excl", os.open, "d/x", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
call("link-onto", os.link, "d/x", "d/x")
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
call("truncate-past", os.truncate, "d/x", 1 << 20)
call("truncate-within", os.truncate, "d/x", 100)
'''


def test_an_allowed_call_the_kernel_refuses_has_a_failed_record(wd):
    """The kernel layer records its decision before it acts; when the
    kernel's own checks then refused the call (a name already there, a
    directory not empty, RLIMIT_FSIZE), the log said only "allow", of
    a mkdir, a link or a truncate that did not happen (seventh attack
    review). Each now has a "failed" record with the kernel's errno and
    the decision's seq, and a call that succeeded has none; through the
    shim (python) and from a static program (the kernel layer alone),
    bare and under harness with the same answers."""
    want = ["mkdir-new OK", "mkdir-again EEXIST", "rmdir-full ENOTEMPTY", "excl EEXIST",
            "link-onto EEXIST", "truncate-past EFBIG", "truncate-within OK"]
    run = harness([PYTHON, "-c", FAILING], wd)
    check(run.stdout.split("\n")[:-1] == want, "python: %r\n%s" % (run.stdout, run.stderr))
    rows = [("mkdir", "EEXIST", "d"), ("rmdir", "ENOTEMPTY", "d"), ("write", "EEXIST", "d/x"),
            ("link", "EEXIST", "d/x"), ("truncate", "EFBIG", "d/x")]
    for op, err, path in rows:
        got = [(f, d) for f, d in run.failed(err) if f.get("op") == op]
        check(len(got) == 1, "%s %s: %d failed records\n%s" % (op, err, len(got), run.dump()))
        f, d = got[0]
        check(f["args"]["path"] == os.path.join(wd.path, path) and f["layer"] == "kernel",
              "failed record %r" % f)
        check(d and d["verdict"] == "allow" and d["op"] == op and
              d["args"]["path"] == f["args"]["path"], "%s: it follows %r" % (op, d))
    check(len(run.events(event="failed")) == len(rows),
          "a failed record for a call that succeeded: %r" % run.events(event="failed"))
    # The summary counts them beside the allows.
    out = subprocess.run([AUDIT_TOOL, "summary", run.log], capture_output=True, text=True).stdout
    check(re.search(r"file_write +allow \d+ failed %d\n" % len(rows), out), out)

    # A static program: the kernel layer's own decision.
    seam = os.path.join(HELPERS, "static_seam7")
    for args, err in ((["mkdir", "d"], "EEXIST"), (["truncate", "d/x", str(1 << 20), "4096"], "EFBIG")):
        run = harness([seam] + args, wd)
        check(run.stdout.split("\n")[0] == err, "%s: %r" % (args, run.stdout))
        got = run.failed(err)
        check(len(got) == 1 and got[0][1] and got[0][1]["verdict"] == "allow" and
              got[0][1]["layer"] == "kernel", "%s: %r" % (args, got))


EXEC_FAILS = r'''
import os, sys
open("junk", "wb").write(b"not a program\0")
os.chmod("junk", 0o755)
try:
    os.execv("./junk", ["./junk"])
except OSError as e:
    print("junk", e.strerror)
sys.stdout.flush()
if sys.argv[1] == "again":
    os.execv("/bin/echo", ["echo", "ran"])
'''


def test_an_exec_the_kernel_refuses_after_its_allow_has_a_failed_record(wd):
    """An exec is decided and recorded, then continued to the kernel
    (the exec gate checks what runs); when the kernel then refused it (a
    file it cannot run: ENOEXEC), the log said it was allowed, as if it
    ran. The gate sees no exec event for that approval: when the thread
    execs again or ends, a "failed" record follows the allow. A shell
    whose every exec runs has none."""
    for how, out in (("again", "junk Exec format error\nran\n"), ("exit", "junk Exec format error\n")):
        r = harness([PYTHON, "-c", EXEC_FAILS, how], wd)
        check(r.stdout == out, "%s: %r" % (how, (r.stdout, r.stderr[-400:])))
        failed = r.events(event="failed", op="exec")
        check(len(failed) == 1 and failed[0]["args"]["path"] == os.path.join(wd.path, "junk"),
              "%s: %r\n%s" % (how, failed, r.dump()))
        allow = [x for x in r.records if x.get("seq") == failed[0].get("ref_seq")]
        check(allow and allow[0]["verdict"] == "allow" and allow[0]["op"] == "exec" and
              allow[0]["args"]["path"] == failed[0]["args"]["path"], "%s: it follows %r" % (how, allow))
    r = harness(["sh", "-c", "for i in 1 2 3; do /bin/true; done; exec /bin/echo done"], wd)
    check(r.stdout == "done\n" and not r.events(event="failed"),
          "execs that ran: %r" % r.events(event="failed"))


def test_a_process_outside_the_session_cannot_speak_on_its_socket(wd):
    """The session's socket takes any connection its uid may make: a
    process outside the session (the user's, or an agent of another
    session, in audit mode or when this one's socket is in
    /tmp/harness-<uid>) that spoke the protocol had its HELLO answered
    and recorded in this session's log as a process of it, its claim
    and all. A connection from a process that does not descend from
    harness-exec is refused, in both places the socket may be."""
    client = os.path.join(HELPERS, "static_wire_client")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    for extra in ([], ["--no-kernel-notify"]):
        log = os.path.join(wd.state, "outside-%d.jsonl" % len(extra))
        p = subprocess.Popen([EXEC, "--quiet", "--audit-log", log] + extra +
                             ["--", "sh", "-c", 'echo "$HARNESS_SOCKET"; exec sleep 30'],
                             cwd=wd.path, env=env, stdout=subprocess.PIPE, text=True)
        try:
            sock = p.stdout.readline().strip()
            check(sock, "%r: no socket" % extra)
            out = subprocess.run([client, "hello", "/usr/bin/ls", "ls", "-la"],
                                 env=dict(env, HARNESS_SOCKET=sock), capture_output=True,
                                 text=True, timeout=30)
            check(out.stdout.strip() in ("hello 0", "hello -1"),
                  "%r: an outside HELLO was answered: %r %r" % (extra, out.stdout, out.stderr))
        finally:
            p.terminate()
            p.wait()
        recs = [json.loads(l) for l in open(log)]
        forged = [x for x in recs if x.get("event") == "process_start" and
                  "-la" in (x.get("args", {}).get("claimed_argv") or x.get("args", {}).get("argv") or [])]
        check(not forged, "%r: recorded as the session's: %r" % (extra, forged))
