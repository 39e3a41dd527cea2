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


# Agent-side Python the untracked cache attacks share (run under
# harness-exec, prepended to each): stat36(path, ctime_off) packs a
# directory's stat as the cache keeps it, entries_end(data) is where an
# index's (v2, v3) extensions start, untr(data) the offset and size of
# its UNTR payload, cache_then(make) has git make the cache and then
# changes tests/, write_index(data) puts the index back, its checksum
# computed.
UNTR_TOOLS = r'''
import hashlib, os, struct, subprocess, sys, time
def stat36(p, ctime_off=0):
    st = os.stat(p)
    return struct.pack(">9I", int(st.st_ctime) - ctime_off, st.st_ctime_ns % 10**9,
                       int(st.st_mtime), st.st_mtime_ns % 10**9, st.st_dev & 0xffffffff,
                       st.st_ino & 0xffffffff, st.st_uid, st.st_gid, st.st_size & 0xffffffff)
def entries_end(data):
    off = 12
    for _ in range(struct.unpack(">I", data[8:12])[0]):
        fixed = 64 if struct.unpack(">H", data[off + 60:off + 62])[0] & 0x4000 else 62
        end = data.index(b"\0", off + fixed)
        off += (end - off + 8) & ~7
    return off
def untr(data):
    off = entries_end(data)
    while data[off:off + 4] != b"UNTR":
        off += 8 + struct.unpack(">I", data[off + 4:off + 8])[0]
    return off + 8, struct.unpack(">I", data[off + 4:off + 8])[0]
def cache_then(make):
    # git makes the cache (tests/ as it is), make() changes tests/ a
    # second later, and a second after that (a directory changed in the
    # index's second is "racy": git reads it) the index is read: tests/'s
    # stat as cached, the index, its UNTR payload's offset and size.
    subprocess.run(["git", "-c", "core.untrackedCache=true", "status", "--porcelain"],
                   check=True)
    old = stat36("tests")
    time.sleep(1.1)
    make()
    time.sleep(1.1)
    data = bytearray(open(".git/index", "rb").read())
    return (old, data) + untr(data)
def write_index(data):
    data[-20:] = hashlib.sha1(bytes(data[:-20])).digest()
    open(".git/index.new", "wb").write(data)
    os.rename(".git/index.new", ".git/index")
'''
