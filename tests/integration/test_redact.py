"""Redaction (supervisor/redact.h, README "Redaction"): credentials that
real programs are given through exec argv, env and shell assignments,
paths and URLs reach neither the audit log nor harness-audit's exports:
each is its «redacted:TYPE:HASH» tag there, the record says which field
was redacted, and the chain still verifies. With audit.redact false
they are kept; the tags are keyed with the user's key."""

import json
import os
import re
import stat
import subprocess

from lib import AUDIT_TOOL, POLICIES, PYTHON, check, harness

GHP = "ghp_" + "R3dact0123456789abcdefghijKLMNOPQRSTuv"
# (secret bytes that must not be written, how it is given, its tag)
SECRETS = [
    (GHP, GHP, "github-token"),
    ("github_pat_11R3DACT0_" + "q" * 20 + "Zx9" * 10, None, "github-token"),
    ("glpat-R3dactGitLab0123xyzW", None, "gitlab-token"),
    ("sk-ant-api03-R3dactAnthropic_" + "Ab9" * 20, None, "anthropic-key"),
    ("sk-proj-R3dactOpenAI_" + "Cd8" * 15, None, "openai-key"),
    ("AKIAR3DACTAWS0KEY123", None, "aws-access-key-id"),
    ("wJalrXUtnR3dact/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "aws_secret_access_key=wJalrXUtnR3dact/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-key"),
    ("AIzaSyR3dact-Google0123456789abcdefghij", None, "google-api-key"),
    ("xoxb-1234567890-R3dactSlack-AbCdEfGh", None, "slack-token"),
    ("sk_live_R3dactStripe0123456789ab", None, "stripe-key"),
    ("npm_R3dactNpm0123456789abcdefghijABCDEFGH", None, "npm-token"),
    ("pypi-AgEIcHlwaS5vcmcR3dactPyPI" + "x1Y2" * 10, None, "pypi-token"),
    ("hf_R3dactHuggingFaceAbCdEfGhIjKlMnOp", None, "huggingface-token"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyM2RhY3QifQ.R3dactJwtSignature0123",
     None, "jwt"),
    ("b3BlbnNzaC1R3dactPrivateKeyBody",
     "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1R3dactPrivateKeyBody\n"
     "-----END OPENSSH PRIVATE KEY-----", "private-key"),
    ("R3dactBearerTok.abc", "Authorization: Bearer R3dactBearerTok.abc", "bearer"),
    ("R3dactUrlPass", "https://bob:R3dactUrlPass@example.com/x", "url-password"),
    ("R3dactOption", "--password=R3dactOption", "secret"),
]


def tag_re(tag):
    return "\u00abredacted:%s:[0-9a-f]{8}\u00bb" % tag


def count(path, needle):
    """grep -c -F: the lines of path that hold needle."""
    r = subprocess.run(["grep", "-c", "-F", "--", needle, path], capture_output=True, text=True)
    return int(r.stdout.strip() or 0)


def verify(log):
    r = subprocess.run([AUDIT_TOOL, "verify", log], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and "chain intact" in r.stdout, "verify: %r %r" % (r.stdout, r.stderr))


def absent(log, secrets):
    for s in secrets:
        check(count(log, s) == 0, "%r is in the log:\n%s" % (s, open(log).read()[-3000:]))


def tags(log):
    return re.findall("\u00abredacted:([a-z0-9-]+):([0-9a-f]{8})\u00bb", open(log, encoding="utf-8").read())


def test_each_format_through_exec_argv(wd):
    words = [given or secret for secret, given, _ in SECRETS]
    r = harness(["/bin/echo"] + words, wd)
    r.expect_status(0)
    check(all(w in r.stdout for w in words), "echo did not get them: %r" % r.stdout)
    absent(r.log, [s for s, _, _ in SECRETS])
    for _, _, tag in SECRETS:
        check(count(r.log, "\u00abredacted:%s:" % tag) >= 1, "no %s tag:\n%s" % (tag, r.dump()))
    ex = r.one(op="exec", args_argv0="/bin/echo")
    check(ex["redacted"] == ["args.argv"] and ex["args"]["argv"][1].startswith("\u00abredacted:github-token:"),
          "the exec record %r" % ex)
    check(re.fullmatch("Authorization: Bearer " + tag_re("bearer"), ex["args"]["argv"][16]),
          "the header's name and scheme kept: %r" % ex["args"]["argv"][16])
    check(r.one(event="session_start")["redaction"] == {"enabled": True, "key": "user"}, "session_start")
    verify(r.log)
    # the exports copy the record's text: the tag, never the secret
    for cmd in (["show", r.log], ["query", r.log, "--category", "exec"], ["summary", r.log]):
        out = subprocess.run([AUDIT_TOOL] + cmd, capture_output=True, text=True, timeout=30)
        check(out.returncode == 0 and "redacted:github-token" in out.stdout and
              not any(s in out.stdout for s, _, _ in SECRETS),
              "harness-audit %s: %r" % (cmd[0], out.stdout[-2000:]))


def test_env_shell_assignments_and_paths(wd):
    ant = "sk-ant-api03-R3dactInAPath_" + "Xy7" * 12
    script = ("env GITHUB_TOKEN=R3dactEnvValue MY_PASSWORD='R3dact two words' true; "
              "export API_KEY=R3dactExported; true; "
              "mkdir -p %s/keys && touch %s/keys/%s" % (wd.path, wd.path, ant))
    r = harness(["sh", "-c", script], wd)
    r.expect_status(0)
    check(os.path.exists(os.path.join(wd.path, "keys", ant)), "the file was not made")
    absent(r.log, ["R3dactEnvValue", "R3dact two words", "R3dactExported", ant])
    env = r.one(event="execve", args_argv0="env")
    check(re.fullmatch("GITHUB_TOKEN=" + tag_re("secret"), env["args"]["argv"][1]) and
          re.fullmatch("MY_PASSWORD=" + tag_re("secret"), env["args"]["argv"][2]), "env's argv %r" % env)
    sh = r.one(event="session_start")
    check(sh["redacted"] == ["command"] and "export API_KEY=\u00abredacted:secret:" in sh["command"][2]
          and "; true; mkdir -p" in sh["command"][2], "the command %r" % sh["command"])
    made = [x for x in r.events(op="write") if "keys/" in x.get("args", {}).get("path", "")]
    check(made and all(x["args"]["path"].endswith("/keys/\u00abredacted:anthropic-key:%s\u00bb" % tags(r.log)[-1][1])
                       and "args.path" in x["redacted"] for x in made), "the path's records %r" % made)
    verify(r.log)


def test_url_password_given_to_a_denied_connect(wd):
    url = "http://alice:R3dactUrlPw@127.0.0.1:21001/x"
    py = ("import socket, urllib.parse\nu = urllib.parse.urlsplit(%r)\n"
          "try:\n    socket.create_connection((u.hostname, u.port), timeout=3)\n"
          "except OSError as e:\n    print('refused', e)\n" % url)
    r = harness(["sh", "-c", "curl -s --max-time 3 -u carol:R3dactCurlPw %s; %s -c \"$0\"" % (url, PYTHON), py], wd)
    check("refused" in r.stdout, "python was not refused: %r %r" % (r.stdout, r.stderr))
    denied = r.events(op="connect", verdict="deny")
    check(len(denied) >= 2 and all(x["args"]["addr"] == "127.0.0.1:21001" for x in denied), "%s" % r.dump())
    absent(r.log, ["R3dactUrlPw", "R3dactCurlPw"])
    curl = r.one(event="execve", args_argv0="curl")
    check(re.fullmatch("carol:" + tag_re("password"), curl["args"]["argv"][5]) and
          curl["args"]["argv"][6].startswith("http://alice:\u00abredacted:url-password:"), "curl's argv %r" % curl)
    check(count(r.log, "\u00abredacted:url-password:") >= 3, "the URL in curl's, sh's and python's argv")
    verify(r.log)


def test_redact_false_keeps_them(wd):
    text = open(os.path.join(POLICIES, "test.yaml")).read()
    check("audit:\n  log_reads: false\n" in text, "test.yaml changed")
    policy = os.path.join(wd.state, "keep.yaml")
    with open(policy, "w") as f:
        f.write(text.replace("audit:\n  log_reads: false\n", "audit:\n  log_reads: false\n  redact: false\n"))
    r = harness(["sh", "-c", "/bin/echo %s; env API_KEY=R3dactKept true" % GHP], wd, policy=policy)
    r.expect_status(0)
    check(count(r.log, GHP) >= 2 and count(r.log, "API_KEY=R3dactKept") >= 1, "not kept:\n%s" % r.dump())
    check(count(r.log, "\u00abredacted:") == 0 and not any("redacted" in x for x in r.records), "tags written")
    check(r.one(event="session_start")["redaction"] == {"enabled": False}, "session_start")
    verify(r.log)


def test_tags_are_keyed_with_the_users_key(wd):
    first = harness(["/bin/echo", GHP], wd)
    second = harness(["/bin/echo", GHP], wd)
    key = os.path.join(wd.state, "harness", "redact.key")
    st = os.stat(key)
    check(stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == os.getuid() and st.st_size == 65, "key %r" % (st,))
    t1, t2 = tags(first.log), tags(second.log)
    check(t1 and t1 == t2, "one secret, one tag across the user's sessions: %r %r" % (t1, t2))
    secret = open(key).read().strip()
    check(count(first.log, secret) == 0, "the key is in the log")
    # the key's holder finds where a secret was used
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    tag = subprocess.run([AUDIT_TOOL, "tag"], input=GHP + "\n", capture_output=True, text=True, env=e, timeout=30)
    check(tag.returncode == 0 and tag.stdout == t1[0][1] + "\n", "harness-audit tag: %r %r" % (tag.stdout, tag.stderr))
    none = subprocess.run([AUDIT_TOOL, "tag"], input=GHP, capture_output=True, text=True, timeout=30,
                          env=dict(e, XDG_STATE_HOME=os.path.join(wd.state, "nobody")))
    check(none.returncode == 2 and "redact.key" in none.stderr, "no key: %r" % none.stderr)
    # another user's key (another state dir): another tag
    other = os.path.join(wd.state, "other")
    os.makedirs(other)
    third = harness(["/bin/echo", GHP], wd, env={"XDG_STATE_HOME": other})
    t3 = tags(third.log)
    check(t3 and t3[0][0] == "github-token" and t3[0][1] != t1[0][1], "%r %r" % (t1, t3))
    # a key others can read is not used: this session's own, said so
    os.chmod(key, 0o644)
    fourth = harness(["/bin/echo", GHP], wd)
    check(fourth.one(event="session_start")["redaction"]["key"] == "session" and tags(fourth.log)[0] != t1[0],
          "a readable key was used: %r" % tags(fourth.log))
    absent(fourth.log, [GHP])
    check(json.loads(json.dumps(fourth.records[-1]))["event"] == "session_end", "the session ended")


def test_worktree_commits_carry_the_tags(wd):
    """The result commit names the command, a checkpoint the process
    that caused it: in git objects, which are pushed and outlive the
    log, the tags too."""
    from test_worktree import git, make_repo, wt_run
    repo = make_repo(wd)
    r = wt_run(wd, repo, ["sh", "-c", "echo new > a; env GITHUB_TOKEN=R3dactWorktree sh -c 'echo x > b'; "
                          "/bin/echo %s" % GHP], "red1")
    r.expect_status(0)
    objects = subprocess.run(["git", "-C", repo, "cat-file", "--batch-all-objects", "--batch"],
                             capture_output=True).stdout
    msg = git(repo, "log", "-1", "--format=%B", "harness/red1")
    check(b"R3dactWorktree" not in objects and GHP.encode() not in objects, "a secret in the repository")
    check("Harness-Command: [\"sh\",\"-c\",\"echo new > a; env GITHUB_TOKEN=\u00abredacted:secret:" in msg and
          "\u00abredacted:github-token:" in msg, "the result commit:\n" + msg)
    absent(r.log, ["R3dactWorktree", GHP])
    verify(r.log)


def test_coalesced_records_carry_the_tags(wd):
    """Beyond the audit rate, records are counted in audit_overflow with
    the arguments of each group's first: a copy of a redacted record."""
    target = "/nonexistent-hx/" + GHP
    loop = ("import os\nfor i in range(3000):\n    try:\n        os.open(%r, os.O_WRONLY | os.O_CREAT)\n"
            "    except OSError:\n        pass\n" % target)
    r = harness([PYTHON, "-c", loop], wd, policy="rate.yaml")
    r.expect_status(0)
    groups = [g for x in r.events(event="audit_overflow") for g in x["groups"]]
    check(groups and any("github-token" in json.dumps(g.get("first_args"), ensure_ascii=False) for g in groups),
          "no coalesced group of the opens: %r" % groups[:3])
    absent(r.log, [GHP])
    verify(r.log)


def test_mask_refusals_carry_the_tags(wd):
    """A program without the shim (a static busybox) meets the mask of a
    .env file whose name holds a token: the mask's refusal record, the
    kernel layers' and the shim's, the tag only."""
    from test_default_policy import fake_home
    from test_mask_records import BUSYBOX, _fuse
    name = ".env." + GHP
    wd.file(name, "API_KEY=R3dactMasked\n")
    r = harness([BUSYBOX, "sh", "-c", "cat %s; /usr/bin/python3 -c \"open('%s')\"; echo done" % (name, name)],
                wd, policy=None, env={"HOME": fake_home(wd)})
    _fuse(r)
    check("R3dactMasked" not in r.stdout and r.stdout.endswith("done\n"), "%r %r" % (r.stdout, r.stderr))
    masked = [x for x in r.events(layer="mask") if x.get("verdict") == "deny"]
    want = os.path.join(wd.path, ".env.\u00abredacted:github-token:")
    check(masked and all(x["args"]["path"].startswith(want) and x["redacted"] == ["args.path"] for x in masked),
          "the mask's records:\n%s" % r.dump())
    check(any(x["args"].get("path", "").startswith(want) for x in r.events(layer="shim")), "the shim's record")
    absent(r.log, [GHP])
    verify(r.log)


def test_a_question_carries_the_tags(wd):
    """An exec a rule asks about: its record, harness-exec pending's
    question (which may be pasted anywhere) and the answer's record."""
    from test_ask import Session, answer, wait_pending
    s = Session(wd, ["sh", "-c", "git push https://bob:R3dactAskPw@example.com/r.git main 2>/dev/null; echo git=$?"])
    q = wait_pending(wd, s)
    text = json.dumps(q, ensure_ascii=False)
    check(q["op"] == "exec" and "R3dactAskPw" not in text and
          q["argv"][2].startswith("https://bob:\u00abredacted:url-password:") and "redacted:url-password" in q["what"],
          "the question %r" % q)
    answer(wd, "deny", q["id"])
    s.finish()
    check("git=" in s.stdout, "%r %r" % (s.stdout, s.stderr))
    asked = [x for x in s.records if x.get("verdict") == "ask" and x.get("op") == "exec"]
    check(asked and asked[0]["redacted"] == ["args.argv"], "the ask's record %r" % asked)
    absent(s.log, ["R3dactAskPw"])
    verify(s.log)
