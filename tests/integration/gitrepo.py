"""A project repository made outside the harness, as the user's, and
the user's own look at it, for the tests of what an agent hides from
the user's git (test_hidden_changes.py, test_attack18.py)."""

import os
import subprocess
import time

GIT_ENV = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x", "GIT_CONFIG_NOSYSTEM": "1"}


def user_env(wd):
    """The environment the user's git runs in (HOME wd.state)."""
    env = dict(os.environ, HOME=wd.state, **GIT_ENV)
    env.pop("LD_PRELOAD", None)
    return env


def commit_all(d, env, msg="0"):
    subprocess.run(["git", "-C", d, "add", "."], check=True, env=env, capture_output=True)
    subprocess.run(["git", "-C", d, "commit", "-qm", msg], check=True, env=env)


def project(wd, files):
    """A repository in wd holding files (name: text, or "->TARGET" for
    a symlink) in one commit; then a second passes, so that what the
    session changes is of a later one. Returns user_env(wd)."""
    env = user_env(wd)
    subprocess.run(["git", "init", "-q", wd.path], check=True, env=env)
    for name, text in files.items():
        if text.startswith("->"):
            os.symlink(text[2:], os.path.join(wd.path, name))
        else:
            wd.file(name, text)
    commit_all(wd.path, env)
    time.sleep(1.1)
    return env


def status(wd, env):
    """The user's `git status --short` in wd, outside the harness."""
    return subprocess.run(["git", "status", "--short"], cwd=wd.path, capture_output=True,
                          text=True, env=env, check=True).stdout


def hidden(r, want):
    """r's one hidden_changes record holds exactly want, a list of
    (path, hidden_by)."""
    from lib import check
    recs = r.events(event="hidden_changes")
    check(recs, "no hidden_changes record: %s" % r.dump()[-2000:])
    got = [(c["path"], c["hidden_by"]) for c in recs[0]["changes"]]
    check(got == want, "recorded: %r" % got)
