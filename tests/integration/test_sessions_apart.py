"""Two sessions of one user, each out of the other's reach.

Each session's TMPDIR is /tmp/harness-<uid>/<id>/tmp, beside every other
running session's. The default lets the agent read /tmp, and audit mode
lets it write there: one session's agent read another's temporary files
(a shell snapshot, a build's sources, what the other agent was given)
and, in audit mode, wrote them (twenty-sixth attack review, part c, left
open then). Every other session's tmp_root is harness:protect now, for
reading and writing, in both modes, through the shim and for a static
program (Landlock's entries of the run dir at the start, and one made
later is new there, which Landlock grants entry by entry)."""

import os
import subprocess
import time

from lib import EXEC, check, harness, read_log

BUSYBOX = "/bin/busybox"
SECRET = "SECRET-OF-THE-OTHER-SESSION"

# The other session: writes its secret in its TMPDIR, says where (whole:
# a file renamed into place, never one the test could read half-written),
# and waits for the test's stop file.
OTHER = ('echo %s > "$TMPDIR/note" && mkdir "$TMPDIR/d" && echo %s > "$TMPDIR/d/f" && '
         'echo "$TMPDIR" > "$1.part" && mv "$1.part" "$1.tmp" && while [ ! -e "$1.stop" ]; do sleep 0.05; done' %
         (SECRET, SECRET))

# What the agent tries on the other's TMPDIR ($1): through the shim (cat,
# a shell's redirection) and from a static busybox.
TRY = ('for f in "$1/note" "$1/d/f"; do cat "$f"; %s cat "$f"; done; '
       '%s sh -c "echo X > $1/note"; echo X >> "$1/d/f"; %s mkdir "$1/new"; '
       'mv "$1/d" "$1/e"; true' % (BUSYBOX, BUSYBOX, BUSYBOX))


def _other(wd, name):
    """Starts the other session (policy default) and waits for its TMPDIR."""
    base = os.path.join(wd.path, name)
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    p = subprocess.Popen([EXEC, "--quiet", "--audit-log", base + ".jsonl", "--", BUSYBOX,
                          "sh", "-c", OTHER, "other", base], cwd=wd.path, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for _ in range(1200):
        if os.path.exists(base + ".tmp") or p.poll() is not None:
            break
        time.sleep(0.025)
    tmp = open(base + ".tmp").read().strip() if os.path.exists(base + ".tmp") else ""
    check(tmp.startswith("/tmp/harness-%d/" % os.getuid()),
          "the other session did not start: %r" % (p.stderr.read() if p.poll() is not None else ""))
    return p, base, tmp


def _stop(p, base):
    open(base + ".stop", "w").close()
    p.wait(timeout=30)


def _held(tmp, r, what):
    """The other TMPDIR as the other session left it, the secret not in
    what the agent printed, and each try refused on record."""
    check(SECRET not in r.stdout + r.stderr.replace(SECRET + "\n", ""),
          "%s: the other session's file was read: %r" % (what, r.stdout))
    for f in ("note", "d/f"):
        got = open(os.path.join(tmp, f)).read()
        check(got == SECRET + "\n", "%s: the other session's %s was written: %r" % (what, f, got))
    check(not os.path.exists(os.path.join(tmp, "new")) and not os.path.exists(os.path.join(tmp, "e")),
          "%s: the other session's TMPDIR was changed: %r" % (what, os.listdir(tmp)))
    denied = [x for x in r.records if x.get("rule") == "harness:protect"]
    ops = {x.get("op") for x in denied}
    check({"read", "write", "mkdir", "rename"} <= ops and all(x.get("verdict") == "deny" for x in denied),
          "%s: the refusals' records: %r" % (what, [(x.get("op"), x.get("verdict"), x.get("rule"))
                                                    for x in r.records if x.get("op")]))
    check(all(tmp in str(x.get("args")) for x in denied),
          "%s: a refusal names another file: %r" % (what, denied))


def test_another_sessions_tmpdir_is_not_the_agents(wd):
    """A session that runs while the agent's starts: its TMPDIR unread and
    unchanged, in enforce and in audit mode."""
    p, base, tmp = _other(wd, "earlier")
    try:
        for mode in ("enforce", "audit"):
            r = harness(["sh", "-c", TRY, "try", tmp], wd, policy=None, mode=mode)
            _held(tmp, r, mode)
    finally:
        _stop(p, base)


def test_a_session_started_later_is_out_of_reach_too(wd):
    """The other session starts after the agent's: its entry in the run
    dir is new to the agent's Landlock domain and to its globs alike."""
    later = os.path.join(wd.path, "later")
    script = ('while [ ! -e "$1.tmp" ]; do sleep 0.05; done; t=$(cat "$1.tmp"); ' +
              TRY.replace('"$1', '"$t').replace('$1/', '$t/'))
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    log = os.path.join(wd.state, "first.jsonl")
    first = subprocess.Popen([EXEC, "--quiet", "--audit-log", log, "--", "sh", "-c", script,
                              "try", later], cwd=wd.path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    p, base, tmp = _other(wd, "later")
    try:
        out, err = first.communicate(timeout=60)

        class R:
            stdout, stderr, records = out, err, read_log(log)
        _held(tmp, R, "later")
    finally:
        _stop(p, base)
