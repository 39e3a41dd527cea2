"""The twentieth attack review, part b: records that say one thing while
another happened, in audit mode above all (the security team's mode,
whose log `harness-policy learn` reads), and the log's own protection.
An outside attacker's agent under the embedded default policy."""

import hashlib
import os
import shutil
import subprocess

from lib import BUILD, check, harness
from test_attack17 import _learn
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox") or "/bin/busybox"

# The harness's programs, as installed side by side.
PROGRAMS = ("harness-exec", "harness-audit", "harness-policy", "libharness-shim.so",
            "libharness-git.so")


def _install(where):
    """A copy of the harness's programs in where, as an install puts
    them; returns {path: sha256}."""
    os.makedirs(where, exist_ok=True)
    sums = {}
    for p in PROGRAMS:
        dst = os.path.join(where, p)
        shutil.copy2(os.path.join(BUILD, p), dst)
        with open(dst, "rb") as f:
            sums[dst] = hashlib.sha256(f.read()).hexdigest()
    return sums


def _unchanged(sums):
    bad = []
    for p, h in sums.items():
        try:
            with open(p, "rb") as f:
                if hashlib.sha256(f.read()).hexdigest() != h:
                    bad.append(p + " (rewritten)")
        except OSError as e:
            bad.append("%s (%s)" % (p, e.strerror))
    return bad


# Each way of changing a program of the harness by its name, {B} its
# directory, {P} the project: sh (the shim) and busybox sh (the kernel
# layer alone).
ATTACKS = (
    'printf "#!/bin/sh\\necho ok\\n" > {B}/harness-audit',
    "echo x >> {B}/libharness-shim.so",
    "rm -f {B}/harness-policy && echo forged > {B}/harness-policy",
    'printf "#!/bin/sh\\necho ok\\n" > {P}/v && chmod +x {P}/v && mv -f {P}/v {B}/harness-audit',
    "mv {B} {B}.old && mkdir {B} && cp {B}.old/* {B}/ && echo x >> {B}/harness-exec",
    "ln {B}/harness-exec {P}/hx && echo x >> {P}/hx",
    "chmod 0777 {B}/harness-exec",
    "truncate -s 0 {B}/libharness-git.so",
)


def _installed(exe):
    """harness()'s wrap that runs the installed harness-exec exe in the
    build's place."""
    return ("/bin/sh", "-c", 'shift; exec "$0" "$@"', exe)


def _verify_says(tool, log):
    p = subprocess.run([tool, "verify", log], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def test_the_harness_programs_are_not_the_agents_to_change(wd):
    """In audit mode the policy holds no write, and harness:protect held
    the session's log, its directory and the policy, not the programs
    that make and read them: an agent rewrote the harness-audit
    installed beside harness-exec into a script that prints "ok" (every
    later `harness-audit verify` of any log, a forged one too, said ok)
    and appended to the shim every later session preloads; in enforce
    mode the same held for a harness installed in a write root (the
    project, ~/.cache). Each program beside the running harness-exec
    (and the shim it preloads) is now harness:protect for writes, in
    both modes: not written, removed, replaced, linked, re-moded, nor
    its directory moved."""
    cases = (("audit", os.path.join(wd.state, "opt", "bin")),
             ("enforce", os.path.join(wd.path, "tools", "bin")))
    for mode, where in cases:
        sums = _install(where)
        exe = os.path.join(where, "harness-exec")
        for shell in (["/bin/sh", "-c"], [BUSYBOX, "sh", "-c"]):
            for attack in ATTACKS:
                cmd = attack.format(B=where, P=wd.path)
                r = harness(shell + [cmd], wd, policy=None, mode=mode,
                            env={"HARNESS_SHIM": ""}, wrap=_installed(exe))
                what = "%s %s: %s" % (mode, shell[0], cmd)
                if os.path.isdir(where + ".old"):  # put back what moved
                    shutil.rmtree(where)
                    os.rename(where + ".old", where)
                for p in (os.path.join(wd.path, "hx"), os.path.join(wd.path, "v")):
                    if os.path.lexists(p):
                        os.unlink(p)
                bad = _unchanged(sums)
                check(not bad, "%s: the harness's programs changed: %s" % (what, bad))
                check(any(x.get("rule") == "harness:protect" and x.get("enforced") is True
                          for x in r.records),
                      "%s: no enforced harness:protect refusal:\n%s" % (what, r.dump()))
                rc, out = _verify_says(os.path.join(where, "harness-audit"), r.log)
                check(rc == 0 and "ok" in out, "%s: verify: %s" % (what, out))
        shutil.rmtree(where)


def test_learn_allows_no_write_the_run_tried_and_the_kernel_refused(wd):
    """learn took every write decision of an audit run for a write made,
    a call allowed and then refused by the kernel too (its `failed`
    record, nothing done): the agent ran mkdir of a directory of /etc
    that exists (EEXIST) and a write into one that does not (ENOENT), as
    an ordinary user a write into /etc/profile.d (EACCES), and learn
    allowed "/etc/*" (every file of /etc, passwd and shadow for a root
    agent enforced by it later) and the other two directories whole,
    though the run changed nothing there. A call the log says failed is
    not learned; the same call made later in the run is."""
    etc = next(d for d in ("/etc/profile.d", "/etc/ssl", "/etc/default", "/etc/apt")
               if os.path.isdir(d))
    # (as root the write into /etc/profile.d would be made: not tried)
    user_only = "" if os.getuid() == 0 else " echo x > /etc/profile.d/hx-evil.sh;"
    cmd = ("mkdir %s; echo x > /etc/hx-no-such-dir/x;%s echo y > ok.txt;"
           " mkdir -p made; mkdir made/d; mkdir made/d" % (etc, user_only))
    for shell in (["/bin/sh", "-c"], [BUSYBOX, "sh", "-c"]):
        r = harness(shell + [cmd], wd, policy=None, mode="audit")
        check(not os.path.exists("/etc/hx-no-such-dir"), "made /etc/hx-no-such-dir")
        text, _ = _learn(wd, r.log)
        allow = [line for line in text.splitlines() if line.strip().startswith("allow:")]
        what = "%s: learned:\n%s" % (shell[0], "\n".join(allow))
        check(r.events(event="failed"), "%s: no failed record:\n%s" % (shell[0], r.dump()))
        for wider in ('"/etc/*"', "/etc/hx-no-such-dir", '"/etc/profile.d/*"'):
            check(wider not in text,
                  "%s: %s allowed though nothing was written there" % (what, wider))
        check('"$CWD/**"' in text, "%s: the run's own writes not learned" % what)
        shutil.rmtree(os.path.join(wd.path, "made"))
        os.unlink(os.path.join(wd.path, "ok.txt"))


def test_a_learned_policy_reads_no_secret_the_run_did_not_read(wd):
    """An audit run under the default policy that read no secret (it
    wrote one file of the project) was learned as a policy whose
    file_read default is allow with no read deny: enforced, the agent
    read ~/.ssh/id_rsa, which the run never read and the default policy
    it replaced refuses; and its "$CWD/**" let the agent write a git
    hook. The learned policy includes the default's deny and ask rules
    (default-protections): the read and the hook are refused, by the
    default's own rules, and recorded."""
    home = fake_home(wd)
    subprocess.run(["git", "init", "-q", wd.path], check=True)
    hook = os.path.join(wd.path, ".git", "hooks", "pre-commit")
    for shell in (["sh", "-c"], [BUSYBOX, "sh", "-c"]):
        r = harness(shell + ["echo y > ok.txt"], wd, policy=None, mode="audit",
                    env={"HOME": home})
        r.expect_status(0)
        text, pol = _learn(wd, r.log)
        check('"$CWD/**"' in text, "learned:\n%s" % text)
        os.unlink(os.path.join(wd.path, "ok.txt"))
        # (the shell's own read: the learned policy runs the shell alone)
        e = harness(shell + ["read k < ~/.ssh/id_rsa; echo \"$k\"; echo x > .git/hooks/pre-commit;"
                             " echo y > ok.txt"], wd, policy=pol, env={"HOME": home})
        what = "%s: %s\n%s" % (shell[0], e.stderr[-800:], e.dump())
        check(os.path.exists(os.path.join(wd.path, "ok.txt")),
              "the run's own write refused by its learned policy: %s" % what)
        check("PRIVATE-KEY" not in e.stdout, "a learned policy let the agent read ~/.ssh/id_rsa")
        check(not os.path.exists(hook), "a learned policy let the agent write a git hook")
        key = os.path.join(home, ".ssh", "id_rsa")
        for path, rule in ((key, "ssh"), (hook, "git-hooks")):
            rec = [x for x in e.events(args_path=path) if x.get("verdict") == "deny"]
            check(rec and rec[0].get("rule") == rule and rec[0].get("enforced") is True,
                  "%s: no enforced refusal of %s by %s: %s" % (what, path, rule, rec[:1]))
        os.unlink(os.path.join(wd.path, "ok.txt"))
        check("include: [default-protections]" in text, "learned:\n%s" % text)


def test_a_secret_an_audit_run_read_is_flagged_not_learned(wd):
    """The same, when the audit run did read ~/.ssh/id_rsa (done: nothing
    was enforced; its record says the default's rule ssh refused it):
    that is what the team reviews, not a need to learn. learn names it
    at the head of the policy and keeps it refused. Its write of .envrc,
    which the default asks about, is flagged and learned, and asked
    again."""
    home = fake_home(wd)
    envrc = os.path.join(wd.path, ".envrc")
    r = harness(["sh", "-c", "cat ~/.ssh/id_rsa; echo x > .envrc; echo y > ok.txt"], wd,
                policy=None, mode="audit", env={"HOME": home})
    r.expect_status(0)
    check("PRIVATE-KEY" in r.stdout, "the audit run did not read the key: %s" % r.dump())
    text, pol = _learn(wd, r.log)
    key = os.path.join(home, ".ssh", "id_rsa")
    for name in ("ok.txt", ".envrc"):
        os.unlink(os.path.join(wd.path, name))
    e = harness(["sh", "-c", "read k < ~/.ssh/id_rsa; echo \"$k\"; echo x > .envrc; echo y > ok.txt"],
                wd, policy=pol, env={"HOME": home})
    check(os.path.exists(os.path.join(wd.path, "ok.txt")), "the run's own write refused: %s" % e.stderr)
    check("PRIVATE-KEY" not in e.stdout, "the key an audit run read was learned as readable")
    rec = [x for x in e.events(args_path=key) if x.get("verdict") == "deny"]
    check(rec and rec[0].get("enforced") is True, "no enforced refusal of the key: %s" % e.dump())
    rec = [x for x in e.events(args_path=envrc) if x.get("verdict") == "ask"]
    check(not os.path.exists(envrc) and rec and rec[0].get("rule") == "project-autorun",
          ".envrc not asked about: %s" % e.dump())
    head = text.split("version: 1")[0]
    check("Flagged: " in head and 'read "%s" (deny by "ssh")' % key in head and
          'write "%s" (ask by "project-autorun")' % envrc in head,
          "the audit run's read of the key not flagged:\n%s" % text)


TEAM_POLICY = """version: 1
mode: enforce
defaults:
  exec: allow
  file_read: allow
  file_write: deny
audit:
  log_reads: true
files:
  - id: team-project
    access: write
    allow: "$CWD/**"
"""


def test_a_learned_policy_keeps_what_the_runs_policy_allowed(wd):
    """A run under the team's own policy, enforced, was allowed to read
    ~/.npmrc and to write .envrc in the project, which the default's
    rules cloud-and-registry-tokens and project-autorun refuse or ask.
    What the run's policy allowed stays allowed in the learned policy:
    those two rules are disabled and copied but for the patterns that
    refuse those calls; the rest of them, and every other protection,
    still refuses."""
    home = fake_home(wd)
    for name in (".npmrc", ".pypirc"):
        with open(os.path.join(home, name), "w") as f:
            f.write("TOKEN-%s\n" % name)
    team = os.path.join(wd.state, "team.yaml")
    with open(team, "w") as f:
        f.write(TEAM_POLICY)
    r = harness(["sh", "-c", "cat ~/.npmrc; echo x > .envrc; echo y > ok.txt"], wd,
                policy=team, env={"HOME": home})
    r.expect_status(0)
    check("TOKEN-.npmrc" in r.stdout, "the team's run did not read ~/.npmrc: %s" % r.dump())
    text, pol = _learn(wd, r.log)
    check("disable: [cloud-and-registry-tokens, project-autorun]" in text and
          "- id: cloud-and-registry-tokens-kept" in text and '"$HOME/.pypirc"' in text and
          '"$HOME/.npmrc"' not in text.split("disable:")[1],
          "learned:\n%s" % text)
    rep = subprocess.run([os.path.join(BUILD, "harness-policy"), "test", pol, r.log],
                         capture_output=True, text=True, env=dict(os.environ, XDG_STATE_HOME=wd.state))
    check(rep.returncode == 0 and " 0 changed" in rep.stdout, "replay: %s %s" % (rep.stdout, rep.stderr))
    for name in (".envrc", "ok.txt"):
        os.unlink(os.path.join(wd.path, name))
    e = harness(["sh", "-c", "read a < ~/.npmrc; echo \"$a\"; read b < ~/.pypirc; echo \"$b\";"
                 " read k < ~/.ssh/id_rsa; echo \"$k\"; echo x > .envrc; echo z > .mcp.json;"
                 " echo y > ok.txt"], wd, policy=pol, env={"HOME": home})
    what = "%s\n%s" % (e.stderr[-800:], e.dump())
    check("TOKEN-.npmrc" in e.stdout and os.path.exists(os.path.join(wd.path, ".envrc")),
          "what the run's policy allowed was refused: %s" % what)
    check("TOKEN-.pypirc" not in e.stdout and "PRIVATE-KEY" not in e.stdout and
          not os.path.exists(os.path.join(wd.path, ".mcp.json")),
          "a protection the run did not need was opened: %s" % what)
    for path, verdict, rule in ((os.path.join(home, ".pypirc"), "deny", "cloud-and-registry-tokens-kept"),
                                (os.path.join(home, ".ssh", "id_rsa"), "deny", "ssh"),
                                (os.path.join(wd.path, ".mcp.json"), "ask", "project-autorun-kept")):
        rec = [x for x in e.events(args_path=path) if x.get("verdict") == verdict]
        check(rec and rec[0].get("rule") == rule, "%s: not %s by %s: %s" % (path, verdict, rule, what))
