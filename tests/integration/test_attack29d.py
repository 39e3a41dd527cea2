"""Attack review 29, part d: audit mode's completeness. A security team
runs a third-party agent with --mode audit under the embedded default
policy, reads what it did and learns a policy from the run; the agent
wants something it did to leave no record, or a record that names
another thing, and the learned policy to miss it.

Past the log's rate (the default: a burst of 50,000 records, then
2,000 a second) the records of files were coalesced by pid, event, op,
verdict and rule, each group showing the arguments of its first record
only: a flood of reads of /etc/hostname, then a read of a private file
(allowed by the default: reads are), and the audit_overflow record said
"/etc/hostname, 3001 times"; the private file's name was nowhere. A
write allowed by a rule (the project's, ~/.cache's) after such a flood
was a count under the flood's first write, and harness-policy learn,
which took no audit_overflow record, learned no rule for it."""

import array
import os
import re
import socket
import subprocess
import threading

from lib import AUDIT_TOOL, POLICY_TOOL, PYTHON, check, harness
from test_attack17 import _learn
from test_default_policy import fake_home

BUSYBOX = "/bin/busybox"
FLOOD = 3000


def _low_rate_default(wd):
    """The embedded default with a low audit rate (as the default's
    burst, reached sooner): a flood the test can afford."""
    p = subprocess.run([POLICY_TOOL, "default"], capture_output=True, text=True, check=True)
    text = p.stdout.replace("\naudit:\n", "\naudit:\n  rate: 50\n  burst: 100\n", 1)
    check(text != p.stdout, "the default has no audit: section")
    path = os.path.join(wd.state, "default-low-rate.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def _named(records, path):
    """Written records and coalesced groups whose path is path, with
    their counts."""
    out = []
    for r in records:
        if r.get("event") == "audit_overflow":
            for g in r.get("groups", []):
                if g.get("first_args", {}).get("path") == path:
                    out.append((g.get("event"), g.get("count")))
        elif r.get("args", {}).get("path") == path:
            out.append((r.get("event"), 1))
    return out


PY_AGENT = r"""
import os, sys
flood, private, out = sys.argv[1:4]
tmpmiss = os.path.join(os.environ["TMPDIR"], "missing", "x")
for i in range(%d):
    os.close(os.open(flood, os.O_RDONLY))
print(open(private).read().strip())
with open(out, "w") as f:
    f.write("made\n")
try:
    os.open(tmpmiss, os.O_WRONLY | os.O_CREAT, 0o600)
except OSError:
    pass
""" % FLOOD

BB_AGENT = """
i=0
while [ $i -lt %d ]; do read x < "$1"; i=$((i+1)); done
read y < "$2" && echo "$y"
echo made > "$3"
echo no 2>/dev/null > "$TMPDIR/missing/x"
exit 0
""" % FLOOD


def test_a_flood_does_not_hide_the_name_of_what_was_read_or_written(wd):
    """After a flood of one file's reads, the agent's read of another
    file and its write in the project are each named (a record, or a
    group of its own in audit_overflow), the flood's count is the
    flood's, and learn allows the write; a write that failed (ENOENT,
    its decision and its failure both coalesced) is not learned."""
    policy = _low_rate_default(wd)
    private = os.path.join(wd.state, "private-notes.txt")
    with open(private, "w") as f:
        f.write("PRIVATE-NOTES\n")
    flood = wd.file("flood.txt", "x\n")
    nowrite = os.path.join(wd.state, "nowrite.yaml")
    with open(nowrite, "w") as f:
        f.write("version: 1\nmode: enforce\ndefaults:\n  file_write: deny\n")
    for who, argv in (("python", [PYTHON, "-c", PY_AGENT]),
                      ("busybox", [BUSYBOX, "sh", "-c", BB_AGENT, "sh"])):
        out = os.path.join(wd.path, "out-%s.txt" % who)
        r = harness(argv + [flood, private, out], wd, policy=policy, mode="audit", timeout=180)
        r.expect_status(0)
        check("PRIVATE-NOTES" in r.stdout and os.path.exists(out), "%s: the agent did not act: %s %s"
              % (who, r.stdout, r.stderr[-800:]))
        check(any(x.get("event") == "audit_overflow" for x in r.records), "%s: no flood" % who)
        what = "%s:\n%s" % (who, r.dump(15))
        fl = _named(r.records, flood)
        check(sum(n for ev, n in fl if ev != "failed") == FLOOD,
              "%s: the flood's reads counted %d for %d: %s" % (who, sum(n for _, n in fl), FLOOD, what))
        check(_named(r.records, private), "%s: the read of the private file is named nowhere: %s"
              % (who, what))
        check(_named(r.records, out), "%s: the write in the project is named nowhere: %s" % (who, what))
        # the reviewer's query for it finds it, coalesced or not
        q = subprocess.run([AUDIT_TOOL, "query", r.log, "--path", private, "--json"],
                           capture_output=True, text=True, env=dict(os.environ, XDG_STATE_HOME=wd.state))
        check(q.returncode == 0 and private in q.stdout,
              "%s: harness-audit query --path finds no read of it: %s %s" % (who, q.returncode, q.stderr))
        # harness-audit summary counts the calls coalesced too
        sm = subprocess.run([AUDIT_TOOL, "summary", r.log], capture_output=True, text=True,
                            env=dict(os.environ, XDG_STATE_HOME=wd.state))
        reads = [ln.split() for ln in sm.stdout.splitlines() if ln.strip().startswith("file_read")]
        check(reads and int(reads[0][reads[0].index("allow") + 1]) >= FLOOD,
              "%s: summary counts %s reads for a flood of %d:\n%s" % (who, reads, FLOOD, sm.stdout[:800]))
        # harness-audit tree counts them in their process's events
        tr = subprocess.run([AUDIT_TOOL, "tree", r.log], capture_output=True, text=True,
                            env=dict(os.environ, XDG_STATE_HOME=wd.state))
        counts = [int(x) for x in re.findall(r"(\d+) events", tr.stdout)]
        check(counts and max(counts) >= FLOOD,
              "%s: tree counts %s events for a flood of %d" % (who, counts, FLOOD))
        # harness-policy test replays it: a policy that writes nothing
        # changes its verdict (a coalesced call was in no replay)
        t = subprocess.run([POLICY_TOOL, "test", nowrite, r.log], capture_output=True, text=True,
                           env=dict(os.environ, XDG_STATE_HOME=wd.state))
        check(t.returncode == 1 and ("write " + out) in t.stdout,
              "%s: harness-policy test: %s %s%s" % (who, t.returncode, t.stdout[-1500:], t.stderr))
        text, _ = _learn(wd, r.log)
        learned = [x for x in text.splitlines() if x.strip().startswith("allow:")]
        check(any('"$CWD/**"' in x for x in learned),
              "%s: learn did not learn the run's write in the project:\n%s" % (who, "\n".join(learned)))
        check(not any('"$TMPDIR/**"' in x for x in learned),
              "%s: learn learned a write that failed:\n%s" % (who, "\n".join(learned)))
        os.unlink(out)


LISTEN = r"""
import random, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ports = [int(sys.argv[1])] if len(sys.argv) > 1 else random.sample(range(40000, 41000), 50)
for p in ports:
    try:
        s.bind(("0.0.0.0", p))
        break
    except PermissionError:
        print("REFUSED %d" % p)
        sys.exit(0)
    except OSError:
        continue
s.listen()
print("LISTENING %d" % p)
"""


def test_a_listen_a_rule_refused_in_audit_mode_stays_refused_by_the_learned_policy(wd):
    """A team's policy refuses a server on every interface
    (listen:0.0.0.0:*). In an audit run the agent listens there: the
    record is a refusal not enforced, and learn flagged it, saying
    such a refusal is refused as if enforced; but it wrote no rule for
    it, and the learned defaults (net_listen: allow) let the same
    listen through in enforce mode. It is a deny rule now, like a
    refused connect's."""
    p = subprocess.run([POLICY_TOOL, "default"], capture_output=True, text=True, check=True)
    text = p.stdout.replace("\nnetwork:\n", "\nnetwork:\n  - id: no-public-listen\n"
                            "    deny: [\"listen:0.0.0.0:*\"]\n", 1)
    check(text != p.stdout, "the default has no network: section")
    team = os.path.join(wd.state, "team.yaml")
    with open(team, "w") as f:
        f.write(text)
    r = harness([PYTHON, "-c", LISTEN], wd, policy=team, mode="audit")
    r.expect_status(0)
    check("LISTENING" in r.stdout, "the audit run did not listen: %s %s" % (r.stdout, r.stderr[-500:]))
    port = int(r.stdout.split("LISTENING")[1].split()[0])
    recs = [x for x in r.records if x.get("args", {}).get("addr") == "0.0.0.0:%d" % port]
    check(recs and recs[0].get("verdict") == "deny" and recs[0].get("rule") == "no-public-listen"
          and recs[0].get("enforced") is False, "the listen's record: %s" % recs)
    text, pol = _learn(wd, r.log)
    check('listen "0.0.0.0:%d"' % port in text, "not flagged:\n%s" % text[:1500])
    e = harness([PYTHON, "-c", LISTEN, str(port)], wd, policy=pol)
    e.expect_status(0)
    check("REFUSED %d" % port in e.stdout and "LISTENING" not in e.stdout,
          "the learned policy let the flagged listen through: %s %s" % (e.stdout, e.stderr[-500:]))
    recs = [x for x in e.records if x.get("args", {}).get("addr") == "0.0.0.0:%d" % port]
    check(recs and recs[0].get("verdict") == "deny" and recs[0].get("enforced") is not False,
          "the refused listen's record: %s" % recs)


THROUGH = """
exec 3<"$HOME/.bashrc"
echo fd >> /proc/self/fd/3
echo devfd >> /dev/fd/3
echo root >> "/proc/self/root$HOME/.profile"
echo cwd >> "/proc/self/cwd/../${HOME##*/}/.profile"
"""


def test_a_write_through_a_magic_link_names_the_rule_of_the_file_it_reached(wd):
    """A write is judged as named and as resolved, the stronger verdict
    winning; of two refusals the named form's was kept. ~/.bashrc
    opened read-only, then appended through /proc/self/fd/3 (or
    /dev/fd/3, /proc/self/root/..., /proc/self/cwd/...): the name is in
    no write root (the category's default refuses it), the file it
    reaches is shell-rc's. The record said default:file_write, which in
    audit mode the reviewers and learn take for no rule's concern: not
    flagged, and learned as a write the run needed ($HOME/.bashrc in
    learned-writes). Of two alike a rule's verdict is named now."""
    home = fake_home(wd)
    with open(os.path.join(home, ".profile"), "w") as f:
        f.write("# profile\n")
    for who, argv in (("sh", ["sh", "-c", THROUGH]), ("busybox", [BUSYBOX, "sh", "-c", THROUGH])):
        r = harness(argv, wd, policy=None, mode="audit", env={"HOME": home})
        r.expect_status(0)
        what = "%s:\n%s" % (who, r.dump(20))
        rc = open(os.path.join(home, ".bashrc")).read()
        check("fd" in rc and "devfd" in rc, "%s: audit mode did not write: %r" % (who, rc))
        reached = [x for x in r.records if x.get("event") in ("open", "openat")
                   and x.get("op") == "write" and x.get("args", {}).get("path_resolved")
                   in (os.path.join(home, ".bashrc"), os.path.join(home, ".profile"))]
        check(len(reached) >= 4, "%s: the writes' records: %s" % (who, what))
        for x in reached:
            check(x.get("rule") == "shell-rc" and x.get("verdict") == "deny"
                  and x.get("enforced") is False,
                  "%s: %s recorded %s %s" % (who, x["args"], x.get("verdict"), x.get("rule")))
        text, pol = _learn(wd, r.log)
        check('(resolved %s/.bashrc)" (deny by "shell-rc")' % home in text,
              "%s: not flagged:\n%s" % (who, text[:2000]))
        learned = [x for x in text.splitlines() if x.strip().startswith("allow:")]
        check(not any("$HOME/.bashrc" in x or "$HOME/.profile" in x for x in learned),
              "%s: learned as a need:\n%s" % (who, "\n".join(learned)))
        for name, text0 in ((".bashrc", "# rc\n"), (".profile", "# profile\n")):
            with open(os.path.join(home, name), "w") as f:
                f.write(text0)


RECEIVE = r"""
import array, os, socket, sys
c = socket.socket(socket.AF_UNIX)
c.connect(sys.argv[1])
msg, anc, fl, addr = c.recvmsg(1, socket.CMSG_LEN(4))
fd = array.array("i")
fd.frombytes(anc[0][2][:4])
os.write(fd[0], b"written through a received fd\\n")
print("WROTE")
"""


def _fd_server(path, target, ready):
    """A process of the user's outside the session: it hands whoever
    connects an fd of target, open for appending."""
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(1)
    s.settimeout(60)
    ready.set()
    try:
        c, _ = s.accept()
        fd = os.open(target, os.O_WRONLY | os.O_APPEND)
        c.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
        os.close(fd)
        c.recv(1)
        c.close()
    except OSError:
        pass
    s.close()


def test_what_only_the_harness_refuses_is_flagged_by_learn(wd):
    """An audit-mode agent connects to a socket of a process of the
    user's outside the session (refused as harness:neighbour in enforce
    mode) and writes ~/.bashrc through the fd it is handed. The write
    itself is the outside process's fd (no call of the session's names
    it: not recorded); the connect is recorded, a refusal not enforced.
    learn skipped every harness:* record: the one thing the team could
    see was in no Flagged line. Such refusals audit mode let past are
    flagged now (and stay refused: the harness's own)."""
    home = fake_home(wd)
    path = os.path.join(wd.state, "outside.sock")
    ready = threading.Event()
    t = threading.Thread(target=_fd_server, args=(path, os.path.join(home, ".bashrc"), ready),
                         daemon=True)
    t.start()
    ready.wait(10)
    r = harness([PYTHON, "-c", RECEIVE, path], wd, policy=None, mode="audit", env={"HOME": home})
    t.join(30)
    r.expect_status(0)
    check("WROTE" in r.stdout, "the agent got no fd: %s %s" % (r.stdout, r.stderr[-800:]))
    recs = [x for x in r.records if x.get("args", {}).get("addr") == "unix:" + path]
    check(recs and recs[0].get("rule") == "harness:neighbour" and recs[0].get("enforced") is False,
          "the connect's record: %s\n%s" % (recs, r.dump(15)))
    text, _ = _learn(wd, r.log)
    check('connect "unix:%s" (deny by "harness:neighbour")' % path in text,
          "not flagged:\n%s" % text[:1500])


META = r"""
import os, sys
p = sys.argv[1]
open(p, "w").write("x")
fd = os.open(p, os.O_RDONLY)
os.setxattr(fd, "user.by-fd", b"1")
os.setxattr(p, "user.by-path", b"1")
os.removexattr(p, "user.by-path")
os.chown(p, os.getuid(), -1)
os.fchown(fd, -1, os.getgid())
print("DONE")
"""


def test_a_metadata_changes_record_says_what_it_changed(wd):
    """A chmod's record has its mode; a setxattr's (an ACL is one:
    system.posix_acl_access), a removexattr's and a chown's said a
    write of the path and nothing of the attribute or the owner. They
    say it now, by path and through an fd, from a program without the
    shim's help for these calls (the kernel layer decides them)."""
    p = os.path.join(wd.path, "meta.txt")
    r = harness([PYTHON, "-c", META, p], wd, policy=None, mode="audit")
    r.expect_status(0)
    check("DONE" in r.stdout, "the agent: %s %s" % (r.stdout, r.stderr[-600:]))
    got = [(x["event"], x["args"].get("xattr"), x["args"].get("uid"), x["args"].get("gid"))
           for x in r.records if x.get("args", {}).get("path") == p and x.get("op") == "write"
           and x["event"] not in ("open", "openat", "failed")]
    want = [("setxattr", "user.by-fd", None, None), ("setxattr", "user.by-path", None, None),
            ("removexattr", "user.by-path", None, None), ("chown", None, os.getuid(), -1),
            ("fchown", None, -1, os.getgid())]
    check(got == want, "records %r, want %r" % (got, want))


def test_a_scripts_exec_names_the_program_that_runs_it(wd):
    """An exec of a #! script was recorded as the script's path and
    argv: what ran (its interpreter, and the argument the #! line gives
    it: `#!/usr/bin/busybox sh -x`, `#!/usr/bin/env -S ...`) was in no
    record, though the kernel layer reads it to hold the exec gate to
    it. The kernel layer's record of such an exec names them
    (args.interpreter, args.interpreter_argv); where the shim's record
    stands for the call, an exec_interpreter record after it does
    (ref_seq)."""
    script = wd.file("run-me.sh", "#!%s sh\necho ran\n" % BUSYBOX)
    os.chmod(script, 0o755)
    for who, argv in (("sh", ["sh", "-c", "./run-me.sh one; exit 0"]),
                      ("busybox", [BUSYBOX, "sh", "-c", "./run-me.sh one; exit 0"])):
        r = harness(argv, wd, policy=None, mode="audit")
        r.expect_status(0)
        check("ran" in r.stdout, "%s: the script did not run: %s" % (who, r.stderr[-500:]))
        execs = [x for x in r.records if x.get("category") == "exec"
                 and x.get("args", {}).get("path") == script]
        check(len(execs) == 1, "%s: the script's execs: %s" % (who, r.dump(20)))
        named = [x["args"] for x in [execs[0]] + [y for y in r.records
                 if y.get("event") == "exec_interpreter" and y.get("ref_seq") == execs[0]["seq"]]
                 if x["args"].get("interpreter")]
        check(named and os.path.realpath(named[0]["interpreter"]) == os.path.realpath(BUSYBOX),
              "%s: no record names the interpreter: %s" % (who, named or execs))
        check(named[0].get("interpreter_argv", [])[1:3] == ["sh", "./run-me.sh"],
              "%s: the interpreter's argv: %s" % (who, named[0]))


def test_a_root_agents_audited_write_of_a_system_file_opens_no_other(wd):
    """learn took a write outside the user's trees for its directory's
    files: a root agent's audited write of one file of /etc was learned
    as "/etc/*", and under the learned policy the enforced agent wrote
    any other file there (/etc/ld.so.preload, /etc/passwd,
    /etc/crontab: code for every process and login of the machine,
    which no protection of the default names, being outside every write
    root). Such a write is learned as the file itself now, and the
    files the machine runs or trusts for every user (/etc/profile.d,
    cron, systemd units, /etc/ld.so.preload, /etc/passwd...) are a rule
    of the default's (system-autorun): an audit run's write of one is
    flagged and stays refused under the learned policy."""
    if os.geteuid() != 0:
        from lib import Skip
        raise Skip("an ordinary user's agent writes no file of /etc")
    tag = "%d" % os.getpid()
    made, other = "/etc/hx29d-made-%s.conf" % tag, "/etc/hx29d-other-%s.conf" % tag
    autorun = "/etc/profile.d/hx29d-%s.sh" % tag
    try:
        r = harness(["sh", "-c", "echo x > %s" % made], wd, policy=None, mode="audit")
        r.expect_status(0)
        check(os.path.exists(made), "the audit run did not write %s" % made)
        text, pol = _learn(wd, r.log)
        learned = [x for x in text.splitlines() if x.strip().startswith("allow:")]
        check(any('"%s"' % made in x for x in learned) and not any('"/etc/*"' in x for x in learned),
              "learned:\n%s" % "\n".join(learned))
        e = harness(["sh", "-c", "echo x > %s; echo x > %s; exit 0" % (made, other)], wd, policy=pol)
        e.expect_status(0)
        check(not os.path.exists(other), "the learned policy let the agent write %s" % other)
        recs = [x for x in e.records if x.get("args", {}).get("path") == other
                and x.get("op") == "write"]
        check(recs and recs[0].get("verdict") == "deny", "the refusal's record: %s" % recs)
        # What the machine runs for every user: a rule's (system-autorun),
        # so the audit run's write of one is flagged and stays refused.
        r = harness(["sh", "-c", "echo '# x' > %s" % autorun], wd, policy=None, mode="audit")
        r.expect_status(0)
        recs = [x for x in r.records if x.get("args", {}).get("path") == autorun
                and x.get("op") == "write"]
        check(recs and recs[0].get("rule") == "system-autorun" and recs[0].get("enforced") is False,
              "the write's record: %s" % recs)
        text, pol = _learn(wd, r.log)
        check('write "%s" (deny by "system-autorun")' % autorun in text, "not flagged:\n%s" % text[:1500])
        os.unlink(autorun)
        e = harness(["sh", "-c", "echo '# x' > %s; exit 0" % autorun], wd, policy=pol)
        check(not os.path.exists(autorun), "the learned policy let the agent write %s" % autorun)
    finally:
        for p in (made, other, autorun):
            if os.path.exists(p):
                os.unlink(p)
