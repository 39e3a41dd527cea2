"""harness-policy test: the decisions of recorded sessions of real
programs replayed through a candidate policy; the policy they ran under
gives them back unchanged, an edited one lists what would change, by
rule, with counts and examples, and exits 1 when something allowed then
would be refused now."""

import json
import os
import subprocess

from lib import POLICIES, POLICY_TOOL, PYTHON, check, harness

BUSYBOX = "/bin/busybox"
TEST_POLICY = os.path.join(POLICIES, "test.yaml")

RUN = ("echo x > out.txt; cat secret/key; echo y > /etc/hx-never; mkdir -p build; "
       "echo z > build/a.o; git init -q r 2>/dev/null; %s -c \"open('py.txt', 'w').write('1')\"; "
       "true" % PYTHON)


def state_env(logs):
    # as the user whose sessions they were: their anchors in its state
    # dir (harness() keeps the logs in the test's state dir), which
    # test and learn check each log against
    return dict(os.environ, XDG_STATE_HOME=os.path.dirname(logs[0]))


def replay(policy, *logs, json_out=False):
    argv = [POLICY_TOOL, "test"] + (["--json"] if json_out else []) + [policy] + list(logs)
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=state_env(logs))


def runs(wd):
    logs = []
    for cmd in (["sh", "-c", RUN], [BUSYBOX, "sh", "-c", RUN.replace("git init -q r 2>/dev/null; ", "")]):
        r = harness(cmd, wd)
        check(os.path.exists(os.path.join(wd.path, "out.txt")) and not os.path.exists("/etc/hx-never"),
              "the run did not do what it should: %r" % r.stderr)
        logs.append(r.log)
    return logs


def test_the_policy_of_the_run_changes_nothing(wd):
    logs = runs(wd)
    r = replay(TEST_POLICY, *logs)
    check(r.returncode == 0 and " 0 changed" in r.stdout, "%r %r" % (r.stdout, r.stderr))
    decisions = int(r.stdout.split(" decisions")[0].split()[-1])
    check(decisions >= 10, "too few decisions replayed: %r" % r.stdout)


def test_an_edited_policy_lists_what_would_change(wd):
    logs = runs(wd)
    text = open(TEST_POLICY).read()
    # No project write root, and the secret no longer denied.
    edited = text.replace('allow: ["$CWD/**", "$TMPDIR/**", "/dev/null", "/dev/tty", "/dev/pts/**"]',
                          'allow: ["$TMPDIR/**", "/dev/null", "/dev/tty", "/dev/pts/**"]')
    edited = edited.replace('deny: ["$CWD/secret/**"]', 'allow: ["$CWD/secret/**"]')
    check(edited != text, "the test policy changed shape")
    pol = wd.file("edited.yaml", edited)
    r = replay(pol, *logs, json_out=True)
    check(r.returncode == 1, "exit %r: %r %r" % (r.returncode, r.stdout, r.stderr))
    groups = [json.loads(line) for line in r.stdout.splitlines()]
    by = {(g["then"], g["now"], g["rule"]): g for g in groups}
    lost = by.get(("allow", "deny", "default:file_write"))
    check(lost and any("out.txt" in e for e in lost["examples"]) and lost["count"] >= 4,
          "writes lost: %r" % groups)
    won = by.get(("deny", "allow", "test-secret"))
    check(won and won["count"] == 2 and won.get("origin", "").startswith(pol + ":"),
          "the secret: %r" % groups)
    # Only what changed is listed.
    check(set(by) == {("allow", "deny", "default:file_write"), ("deny", "allow", "test-secret")},
          "unexpected changes: %r" % sorted(by))
    text_out = replay(pol, *logs).stdout
    check("allowed then, denied now: " in text_out and "denied then, allowed now: 2, rule test-secret at " in text_out,
          "text output %r" % text_out)


def test_bad_input_is_a_clear_error(wd):
    r = replay(os.path.join(wd.path, "nope.yaml"), os.path.join(wd.path, "nope.jsonl"))
    check(r.returncode == 2 and "nope.jsonl" in r.stderr, "%r" % r.stderr)
    r = subprocess.run([POLICY_TOOL, "test"], capture_output=True, text=True)
    check(r.returncode == 2 and "Usage:" in r.stderr, "%r" % r.stderr)


LEARN_RUN = ("echo x > out.txt; cat secret/key > /dev/null; mkdir -p build/sub; echo z > build/sub/a.o; "
             "mv build/sub/a.o build/b.o; rm build/b.o; git init -q r; git -C r status --short; "
             "%s -c \"open('py.txt', 'w').write('1')\"" % PYTHON)


def learn(*logs):
    # as the user whose sessions they were: their anchors in its state
    # dir (harness() keeps the logs in the test's state dir)
    env = dict(os.environ, XDG_STATE_HOME=os.path.dirname(logs[0]))
    return subprocess.run([POLICY_TOOL, "learn"] + list(logs), capture_output=True, text=True,
                          timeout=120, env=env)


def test_a_learned_policy_lets_the_same_runs_pass(wd):
    """Audit mode, learn, check, enforce: the same runs pass with no
    refusal but the read their policy's rule refused (test-secret: done
    in audit mode, flagged at the policy's head, kept refused), and the
    replay of the audit logs refuses nothing their policy allowed."""
    logs = []
    for cmd in (["sh", "-c", LEARN_RUN], [BUSYBOX, "sh", "-c", LEARN_RUN.replace("git ", "/usr/bin/git ")]):
        r = harness(cmd, wd, mode="audit")
        r.expect_status(0)
        logs.append(r.log)
    out = learn(*logs)
    check(out.returncode == 0 and out.stdout.startswith("# Learned by harness-policy learn"), "%r" % out.stderr)
    pol = wd.file("learned.yaml", out.stdout)
    chk = subprocess.run([POLICY_TOOL, "check", pol], capture_output=True, text=True)
    check(chk.returncode == 0, "the learned policy does not check: %r\n%s" % (chk.stderr, out.stdout))
    check("exec: deny" in out.stdout and '"$CWD/**"' in out.stdout and "/usr/bin/git init *" in out.stdout,
          "learned %s" % out.stdout)
    key = os.path.join(wd.path, "secret", "key")
    check('read "%s" (deny by "test-secret")' % key in out.stdout.split("version: 1")[0],
          "the audit runs' refused read not flagged: %s" % out.stdout)
    for cmd in (["sh", "-c", LEARN_RUN], [BUSYBOX, "sh", "-c", LEARN_RUN.replace("git ", "/usr/bin/git ")]):
        r = harness(cmd, wd, policy=pol)
        refused = [x for x in r.records if x.get("verdict") in ("deny", "ask") and
                   not (x.get("rule") or "").startswith("harness:")]
        others = [x for x in refused if (x["args"].get("path"), x.get("rule")) !=
                  (key, "learned-refused-reads")]
        check(r.status == 0 and refused and not others, "under the learned policy: %s %r\n%s" % (
            r.status, (others or refused)[:3], r.stderr[-1500:]))
    rep = replay(pol, *logs)
    check(rep.returncode == 0 and "allowed then" not in rep.stdout, "replay %r" % rep.stdout)


def test_what_was_refused_stays_refused(wd):
    r = harness(["sh", "-c", "echo x > ok.txt; echo y > /etc/hx-never; cat secret/key; true"], wd)
    out = learn(r.log)
    check(out.returncode == 0 and "/etc/hx-never" in out.stdout and '"$CWD/secret/key"' in out.stdout,
          "refusals not kept: %s" % out.stdout)
    pol = wd.file("learned.yaml", out.stdout)
    r2 = harness(["sh", "-c", "echo x > ok.txt; echo y > /etc/hx-never; cat secret/key; true"], wd, policy=pol)
    check(not os.path.exists("/etc/hx-never") and "TOP-SECRET" not in r2.stdout, "a refusal was learned as allowed")
    check(r2.one(op="write", args_path="/etc/hx-never")["rule"] == "learned-refused-writes", "rule")


def test_denials_lists_exactly_the_refusals_of_the_runs(wd):
    logs = runs(wd)
    r = subprocess.run([POLICY_TOOL, "test", "--json", "--denials", TEST_POLICY] + logs,
                       capture_output=True, text=True, timeout=120, env=state_env(logs))
    check(r.returncode == 0, "%r %r" % (r.stdout, r.stderr))
    listed = {}
    for g in map(json.loads, r.stdout.splitlines()):
        check(g["then"] == g["now"], "a change with the run's own policy: %r" % g)
        listed[g["rule"]] = listed.get(g["rule"], 0) + g["count"]
    refused = {}
    for log in logs:
        for rec in map(json.loads, open(log)):
            rule = rec.get("rule") or ""
            if (rec.get("op") and rec.get("verdict") in ("deny", "ask") and rec.get("event") != "ask_answer"
                    and not rule.startswith("harness:")):
                refused[rule] = refused.get(rule, 0) + 1
    check(listed == refused and refused.get("test-secret") == 2, "listed %r, the runs refused %r" % (listed, refused))
