"""A look into a mask is a record (supervisor/kernel/maskfs.h; issue 10,
class 10): each mask is a FUSE file system served by harness-exec, which
refuses every open of it and every name looked up in it, and writes who
it was (pid and exe from the kernel's request, not from the agent),
the exact path, the policy's rule and the syscall. Where Landlock's own
refusals cannot be read (an ordinary user: no CAP_AUDIT_READ; root with
--no-kernel-audit), the directories Landlock refuses are masked so too,
so that Claude Code's raw read of ~/.ssh/id_rsa leaves a record. Tried
by a static busybox and raw syscalls, as root and as the ordinary user."""

import json
import os
import shutil
import subprocess
import time

from lib import PYTHON, EXEC, Skip, check, harness
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox")
SECRET = "API_KEY=sk-live-123\n"


def _fuse(r):
    """Skips when this user cannot serve masks so (a /dev/fuse it
    cannot open: not Debian's udev mode); root always can."""
    k = r.one(event="session_start")["kernel"]
    if k.get("mask_records") != "fuse":
        check(os.geteuid() != 0 and not os.access("/dev/fuse", os.R_OK | os.W_OK),
              "masks without records, though /dev/fuse opens: %r" % k)
        raise Skip("/dev/fuse is not the user's to open: %r" % k.get("mask_records"))


def _mask_records(r, **want):
    return [e for e in r.events(layer="mask", **want)]


def test_masked_file_read_is_a_record(wd):
    wd.file(".env", SECRET)
    home = fake_home(wd)
    # A static program twice (two processes), then python: its shim
    # refuses first (a record of the shim's), and harness-exec's own
    # walk through the agent's view meets the mask unrecorded.
    script = ("cat .env; echo pid $$; cat .env; "
              "/usr/bin/python3 -c \"open('.env')\"; ls -l /proc/self/fd/; echo done")
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    _fuse(r)
    check("sk-live" not in r.stdout and r.stdout.endswith("done\n"), "%r %r" % (r.stdout, r.stderr))
    check("fuse" not in r.stdout, "the agent holds a FUSE connection: %r" % r.stdout)
    path = os.path.join(wd.path, ".env")
    recs = _mask_records(r, args_path=path)
    check(len(recs) == 2, "two static reads, %d mask records:\n%s" % (len(recs), r.dump()))
    for e in recs:
        check(e["verdict"] == "deny" and e["enforced"] is True and e["rule"] == "dotenv",
              "record %r" % e)
        check(e["exe"] == os.path.realpath(BUSYBOX) and e["event"] in ("openat", "open"),
              "who and how: %r" % e)
        check(e["pid"] not in (None, r.one(event="session_start")["pid"]), "pid %r" % e)
    check(recs[0]["pid"] != recs[1]["pid"], "two processes, one pid: %r" % recs)
    shim = r.events(args_path=path, layer="shim")
    check(len(shim) == 1 and shim[0]["verdict"] == "deny", "python's read: %r" % shim)
    end = r.one(event="session_end")["mask_records"]
    check(end["records"] == 2 and end["dropped"] == 0, "session_end %r" % end)


def test_access_of_a_mask_is_a_record(wd):
    # access(2) asking to read or run a masked file is refused and a
    # record (it said nothing before); F_OK says it is there, as stat
    # does, and is no record; W_OK is refused by the kernel before the
    # masks are asked (they are mounted read-only: EROFS).
    wd.file(".env", SECRET)
    home = fake_home(wd)
    code = ("import os; print(os.access('.env', os.F_OK), os.access('.env', os.R_OK),"
            " os.access('.env', os.X_OK), os.access('.env', os.W_OK))")
    r = harness([PYTHON, "-c", code], wd, policy=None, env={"HOME": home})
    _fuse(r)
    check(r.stdout.split() == ["True", "False", "False", "False"], "%r %r" % (r.stdout, r.stderr))
    recs = _mask_records(r, args_path=os.path.join(wd.path, ".env"))
    check(recs and all(e["event"] in ("access", "faccessat", "faccessat2") and
                       e["verdict"] == "deny" and e["rule"] == "dotenv" for e in recs),
          "records %r" % recs)
    n = sum(e.get("repeated", 1) for e in recs)
    check(n == 2, "R_OK and X_OK, %d refusals: %r" % (n, recs))


def test_storm_is_one_record_and_an_exact_count(wd):
    wd.file(".env", SECRET)
    # One static process refused the same read in a loop.
    r = harness([BUSYBOX, "sh", "-c",
                 "i=0; while [ $i -lt 200 ]; do read x < .env; i=$((i+1)); done 2>/dev/null; "
                 "echo $$"], wd, policy=None, env={"HOME": fake_home(wd)})
    _fuse(r)
    pid = int(r.stdout.split()[-1])
    path = os.path.join(wd.path, ".env")
    recs = _mask_records(r, args_path=path)
    check(recs and all(e["pid"] == pid for e in recs), "pid %d: %r" % (pid, recs))
    # Nothing is lost on the way (unlike the kernel's audit queue).
    total = sum(e.get("repeated", 1) for e in recs)
    check(total == 200, "200 refusals, %d counted:\n%s" % (total, r.dump()))
    check(len(recs) <= 6, "a storm of %d records:\n%s" % (len(recs), "\n".join(json.dumps(e) for e in recs)))
    for e in recs:
        if "repeated" in e:
            check(r.one(seq=e["ref_seq"])["args"]["path"] == path, "ref_seq %r" % e)
    check(r.stderr.count("harness: denied read %s" % path) == 1,
          "the notice is not printed once: %r" % r.stderr[:500])


def test_name_looked_up_in_a_masked_directory(wd):
    # The test policy denies $CWD/secret/** inside its write root $CWD.
    r = harness([BUSYBOX, "sh", "-c", "cat secret/key; ls secret; stat -c %s secret/key"], wd)
    _fuse(r)
    check("TOP-SECRET" not in r.stdout, r.stdout)
    d = os.path.join(wd.path, "secret")
    e = r.one(layer="mask", args_path=os.path.join(d, "key"))
    check(e["args"].get("mask") == d and e["rule"] == "test-secret", "record %r" % e)
    r.one(layer="mask", args_path=d)  # the listing


def test_landlock_refused_directory_recorded_without_kernel_audit(wd):
    """Claude Code's Read of ~/.ssh/id_rsa is a raw openat: refused by
    Landlock, which only kernel audit reports. Without it (an ordinary
    user; here also root with --no-kernel-audit) ~/.ssh is a mask."""
    home = fake_home(wd)
    key = os.path.join(home, ".ssh", "id_rsa")
    extra = ["--no-kernel-audit"] if os.geteuid() == 0 else []
    r = harness([BUSYBOX, "sh", "-c", "cat ~/.ssh/id_rsa; ls ~/.ssh; cat ~/.bashrc"], wd,
                policy=None, env={"HOME": home}, extra=extra)
    if r.one(event="session_start")["kernel"].get("landlock_audit", {}).get("recorded"):
        # Kernel audit was on already (auditd, another session): then
        # Landlock's own record it is, and nothing is masked for it.
        check("PRIVATE-KEY" not in r.stdout, r.stdout)
        r.one(layer="landlock", args_path=key)
        return
    _fuse(r)
    check("PRIVATE-KEY" not in r.stdout and "# rc" in r.stdout, "%r %r" % (r.stdout, r.stderr))
    e = r.one(layer="mask", args_path=key)
    check(e["rule"] == "ssh" and e["exe"] == os.path.realpath(BUSYBOX), "record %r" % e)
    k = r.one(event="session_start")["kernel"]
    check(k.get("masks_held", 0) >= 1 and k.get("masks") == 0, "kernel %r" % k)
    # The rest of $HOME is untouched: ~/.bashrc read, nothing else masked.
    check(open(key).read() == "PRIVATE-KEY\n", "the key changed")


def test_landlock_refused_file_and_listing_recorded_without_kernel_audit(wd):
    """A denied *file* outside write roots (~/.netrc, ~/.git-credentials):
    Landlock refused its open before any mask was asked, so without
    kernel audit it left no record (the README said so). Now each is a
    mask whose node Landlock lets be opened, so that the mask refuses the
    open on record; the listing of a held directory (ls ~/.ssh) is one
    too."""
    home = fake_home(wd)
    files = {".netrc": "machine h login u password NETRC-SECRET\n",
             ".git-credentials": "https://u:GITCRED-SECRET@example.com\n"}
    for name, text in files.items():
        with open(os.path.join(home, name), "w") as f:
            f.write(text)
    extra = ["--no-kernel-audit"] if os.geteuid() == 0 else []
    script = "cat ~/.netrc; cat ~/.git-credentials; ls ~/.ssh; head -c 3 ~/.bashrc; echo"
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home}, extra=extra)
    check("SECRET" not in r.stdout and "# r" in r.stdout, "%r %r" % (r.stdout, r.stderr))
    for name, text in files.items():
        check(open(os.path.join(home, name)).read() == text, "%s changed" % name)
    if r.one(event="session_start")["kernel"].get("landlock_audit", {}).get("recorded"):
        # Kernel audit on already (another session): Landlock's records,
        # and a held directory's names stay listable.
        for name in files:
            r.one(layer="landlock", args_path=os.path.join(home, name))
        return
    _fuse(r)
    check("id_rsa" not in r.stdout, "the held directory listed: %r" % r.stdout)
    for name in files:
        e = r.one(layer="mask", args_path=os.path.join(home, name))
        check(e["rule"] == "credential-files" and e["verdict"] == "deny" and
              e["exe"] == os.path.realpath(BUSYBOX) and e["event"] in ("open", "openat"),
              "record %r" % e)
    e = r.one(layer="mask", args_path=os.path.join(home, ".ssh"))
    check(e["rule"] == "ssh" and e["event"] in ("open", "openat"), "the listing: %r" % e)
    k = r.one(event="session_start")["kernel"]
    check(k.get("masks_held", 0) >= 3, "kernel %r" % k)


def test_long_name_recorded_whole(wd):
    # FUSE asks about names up to 1024 bytes: the record is the name
    # asked for, not a cut one the rule was decided on.
    name = "a" * 300 + "b" * 20
    r = harness([BUSYBOX, "cat", "secret/" + name], wd)
    _fuse(r)
    e = r.one(layer="mask", args_path=os.path.join(wd.path, "secret", name))
    check(e["rule"] == "test-secret", "record %r" % e)


def test_outside_process_is_no_refusal_of_the_session(wd):
    """A process outside the session reaching a mask through the agent's
    /proc/<pid>/root is refused, and is not written as the agent's."""
    wd.file(".env", SECRET)
    pidfile = os.path.join(wd.path, "agent.pid")
    proc = subprocess.Popen(
        [EXEC, "--quiet", "--audit-log", os.path.join(wd.state, "outside.jsonl"), "--",
         BUSYBOX, "sh", "-c", "echo $$ > agent.pid; exec busybox sleep 3"],
        cwd=wd.path, env=dict(os.environ, HOME=fake_home(wd)))
    try:
        for _ in range(600):
            if os.path.exists(pidfile) and open(pidfile).read().strip():
                break
            time.sleep(0.05)
        agent = open(pidfile).read().strip()
        out = subprocess.run(["cat", "/proc/%s/root%s/.env" % (agent, wd.path)],
                             capture_output=True, text=True, timeout=10)
        check("sk-live" not in out.stdout, "read from outside: %r" % out.stdout)
    finally:
        proc.wait(timeout=30)
    with open(os.path.join(wd.state, "outside.jsonl")) as f:
        recs = [json.loads(l) for l in f]
    # A denied name made meanwhile (another session of the same user
    # starting in the state directory) is a mask added, no refusal.
    masks = [e for e in recs if e.get("layer") == "mask" and e.get("event") != "mask_added"]
    check(not masks, "an outside process written as the session's: %r" % masks)


def test_many_masks_one_connection(wd):
    # A connection a mask made harness-exec run out of fds past about a
    # thousand masked files (found by an attack review): the masks are
    # nodes of one FUSE file system, each recorded.
    for i in range(1100):
        wd.file("p%04d/.env" % i, SECRET)
    r = harness([BUSYBOX, "sh", "-c", "cat p0000/.env; cat p1099/.env; echo ok > o.txt; cat o.txt"],
                wd, policy=None, env={"HOME": fake_home(wd)})
    _fuse(r)
    check("sk-live" not in r.stdout and r.stdout.endswith("ok\n"), "%r %r" % (r.stdout, r.stderr))
    check(r.one(event="session_start")["kernel"].get("masks") == 1100, "masks")
    for name in ("p0000", "p1099"):
        r.one(layer="mask", args_path=os.path.join(wd.path, name, ".env"))
    with open("/proc/self/mountinfo") as f:
        check(wd.path not in f.read(), "a mask leaked into the caller's mounts")


def test_the_checkout_of_a_worktree_is_masked_too(wd):
    # In --worktree mode the agent works in a worktree, and the checkout
    # it was made from is as readable: its .env is masked as well.
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    wd.file("a.txt", "hi\n")
    subprocess.run(["git", "init", "-q", wd.path], check=True)
    subprocess.run(["git", "-C", wd.path, "add", "a.txt"], check=True)
    subprocess.run(["git", "-C", wd.path, "commit", "-qm", "init"], check=True, env=env)
    wd.file(".env", SECRET)
    env_file = os.path.join(wd.path, ".env")
    r = harness([BUSYBOX, "sh", "-c", "cat %s; cat a.txt" % env_file], wd, policy=None,
                env={"HOME": fake_home(wd)}, extra=["--worktree"])
    check("sk-live" not in r.stdout and "hi" in r.stdout, "%r %r" % (r.stdout, r.stderr))
    check(r.one(event="session_start")["cwd"] != wd.path, "not in a worktree")
    if r.one(event="session_start")["kernel"].get("mask_records") == "fuse":
        r.one(layer="mask", args_path=env_file)


def test_exec_of_a_mask_is_a_refusal_on_record(wd):
    # The masks were noexec: an exec failed unrecorded, after an exec
    # record saying "allow" (found by an attack review).
    wd.file(".env", "#!/bin/sh\necho ran\n")
    os.chmod(os.path.join(wd.path, ".env"), 0o755)
    r = harness([BUSYBOX, "sh", "-c", "./.env; echo rc=$?"], wd, policy=None,
                env={"HOME": fake_home(wd)})
    _fuse(r)
    check("ran" not in r.stdout and "rc=126" in r.stdout, "%r %r" % (r.stdout, r.stderr))
    e = r.one(layer="mask", args_path=os.path.join(wd.path, ".env"))
    check(e["event"] in ("execve", "execveat") and e["rule"] == "dotenv", "record %r" % e)


def _wait_for(pred, what, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting for %s" % what)


def _masks_added(log):
    with open(log) as f:
        return {json.loads(l)["args"]["path"] for l in f if '"mask_added"' in l}


def _agent_until_go(wd, log, script, marker, outside, paths):
    """Runs script (which writes marker, then waits for "go") as the
    agent; once marker exists, outside() plays the user's tools, and
    "go" waits for a mask of one path of each tuple in paths. Returns
    stdout, stderr and the records."""
    proc = subprocess.Popen([EXEC, "--quiet", "--audit-log", log, "--", BUSYBOX, "sh", "-c", script],
                            cwd=wd.path, env=dict(os.environ, HOME=fake_home(wd)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: os.path.exists(os.path.join(wd.path, marker)), "the agent")
        if os.geteuid() and not os.access("/dev/fuse", os.R_OK | os.W_OK):
            raise Skip("/dev/fuse is not the user's to open")
        outside()
        _wait_for(lambda: all(_masks_added(log) & set(alts) for alts in paths),
                  "the masks of %r" % (paths,))
        open(os.path.join(wd.path, "go"), "w").close()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with open(log) as f:
        return out, err, [json.loads(l) for l in f]


def test_files_made_later_by_an_outside_process_are_masked(wd):
    """A denied file that a process outside the session writes into the
    project after the start (an editor, a pull, a build outside) is
    masked as it appears (supervisor/kernel/maskwatch.h), in a new
    directory too; what the policy lets be written is left alone."""
    env, deep = os.path.join(wd.path, ".env"), os.path.join(wd.path, "new", "deep", ".env")

    def outside():
        wd.file(".env", SECRET)
        wd.file("new/deep/.env", SECRET)
        wd.file("notes.txt", "plain notes\n")
    out, err, recs = _agent_until_go(
        wd, os.path.join(wd.state, "late.jsonl"),
        "echo > ready; while [ ! -e go ]; do sleep 0.02; done; "
        "cat .env; cat new/deep/.env; cat notes.txt; echo done", "ready", outside,
        [(env,), (deep,)])
    check("sk-live" not in out and "plain notes" in out and out.endswith("done\n"),
          "%r %r" % (out, err))
    for p in (env, deep):
        check([e for e in recs if e.get("layer") == "mask" and e.get("args", {}).get("path") == p
               and e.get("verdict") == "deny"], "no refusal of %s" % p)
    check(not [e for e in recs if e["event"] == "mask_added" and "notes" in e["args"]["path"]],
          "a file the policy lets be written was masked")
    end = [e for e in recs if e["event"] == "session_end"][0]
    check(end["mask_records"]["late"] == 2, "session_end %r" % end["mask_records"])


def test_masks_survive_a_replaced_file_and_a_renamed_directory(wd):
    """An editor's save or `sed -i` renames a new file over the masked
    one: the kernel drops the mask with the old file, so it is bound
    again. A directory the agent renames is watched under its new name
    (found by an attack review: both read)."""
    wd.file(".env", SECRET)
    wd.file("sub/keep.txt", "k\n")

    def outside():
        wd.file(".env.tmp", "API_KEY=sk-live-rotated\n")
        os.rename(os.path.join(wd.path, ".env.tmp"), os.path.join(wd.path, ".env"))
        wd.file("renamed/.env", SECRET)
    out, err, _ = _agent_until_go(
        wd, os.path.join(wd.state, "replace.jsonl"),
        "mv sub renamed; echo > moved; while [ ! -e go ]; do sleep 0.02; done; "
        "cat .env; cat renamed/.env; echo done", "moved", outside,
        # The new file is masked as .env.tmp (".env.*"), and the mask
        # moves with it; or, when the rename came first, as .env.
        [(os.path.join(wd.path, ".env"), os.path.join(wd.path, ".env.tmp")),
         (os.path.join(wd.path, "renamed", ".env"),)])
    check("sk-live" not in out and out.endswith("done\n"), "%r %r" % (out, err))
