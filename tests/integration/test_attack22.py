"""The twenty-second attack review: what an exec is decided with against
what it runs with, and the questions on the terminal. An outside
attacker's agent under the embedded default policy (or the ask policy of
test_ask), in enforce mode."""

import os

from lib import HELPERS, check, harness, preload_library, xfail
from test_ask import ASKED_WRITE

STATIC19A = os.path.join(HELPERS, "static_attack19a")

EVIL_SHIM = r'''
#include <unistd.h>
__attribute__((constructor)) static void injected(void)
{
	write(2, "INJECTED\n", 9);
}
'''


def _env_of(x, name):
    env = x.get("args", x).get("env") or []
    return [e for e in env if e.split("=", 1)[0] in (name, "-" + name)]


def _evil_shim(wd):
    """A library of the agent's in the project, named as harness's shim
    is (libharness-shim.so): its constructor says INJECTED."""
    d = os.path.join(wd.path, "lib")
    os.makedirs(d, exist_ok=True)
    return preload_library(d, "libharness-shim", EVIL_SHIM)


def test_a_library_named_like_the_shim_is_in_the_environment_shown(wd):
    """An exec's environment as it differs from the session's is shown
    in its question, recorded and held by the exec gate, less harness's
    own names: the shim's entry in LD_PRELOAD. That entry was told by
    its file name alone, so LD_PRELOAD=PROJECT/lib/libharness-shim.so,
    a library of the agent's, was harness's own: a raw execve (no shim
    to rebuild LD_PRELOAD) of "git push origin main" was asked about
    with no LD_PRELOAD shown, and once approved ran the agent's code
    inside git. Only the shim harness gives the agent is its own now:
    the question shows the library."""
    from test_ask import Session, answer, wait_pending
    from test_attack19a import _two_dirs_and_a_git
    evil = _evil_shim(wd)
    a, b, git = _two_dirs_and_a_git(wd)
    s = Session(wd, [STATIC19A, "askenv", a, "-", "LD_PRELOAD=" + evil, git,
                     "push", "origin", "main"])
    q = wait_pending(wd, s)
    shown = _env_of(q, "LD_PRELOAD")
    answer(wd, "deny", q["id"])
    s.finish()
    check(shown == ["LD_PRELOAD=" + evil] and evil in q.get("what", ""),
          "the question does not show the agent's library: %r" % q)
    asked = [x for x in s.asked() if x.get("op") == "exec"]
    check(asked and _env_of(asked[0], "LD_PRELOAD") == ["LD_PRELOAD=" + evil],
          "the record does not name the library: %r" % asked)
    check("INJECTED" not in s.stderr and
          not os.path.exists(os.path.join(a, "pushed")),
          "the denied exec ran: %r" % s.stderr[-400:])


def test_a_library_named_like_the_shim_is_in_the_exec_record(wd):
    """The same without a question: a static program's exec of /bin/true
    with LD_PRELOAD naming the agent's library ran its code under a
    record with no LD_PRELOAD in its environment."""
    evil = _evil_shim(wd)
    a = os.path.join(wd.path, "a")
    os.makedirs(a, exist_ok=True)
    r = harness([STATIC19A, "askenv", a, "-", "LD_PRELOAD=" + evil, "/bin/true"],
                wd, policy=None)
    execs = [x for x in r.records if x.get("event") == "execve" and
             x.get("layer") == "kernel" and
             x.get("args", {}).get("path") == "/bin/true"]
    check(execs, "no record of the exec:\n%s" % r.dump())
    check(_env_of(execs[0], "LD_PRELOAD") == ["LD_PRELOAD=" + evil],
          "the exec ran the agent's library (%s) under a record without it: %r" %
          ("INJECTED" in r.stderr, execs[0].get("args")))


# A process of the agent's that holds the terminal and continues itself:
# a POSIX timer of its own sends it SIGCONT every 3 ms. The kernel makes
# a timer's signal while the process is stopped: nothing of the agent's
# has to run for it to go on.
TIMER_CONT_AGENT = r"""
import ctypes, os, signal, time
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
a = os.fork()
if a == 0:
    # caught, not ignored: a kernel that drops an ignored timer signal
    # (6.13 on) makes this one
    signal.signal(signal.SIGCONT, lambda *_: None)
    libc = ctypes.CDLL(None, use_errno=True)
    ev = (ctypes.c_char * 64)()
    ctypes.c_int.from_buffer(ev, 8).value = signal.SIGCONT  # sigev_signo
    ctypes.c_int.from_buffer(ev, 12).value = 0              # SIGEV_SIGNAL
    tid = ctypes.c_void_p()
    if libc.timer_create(1, ev, ctypes.byref(tid)):         # CLOCK_MONOTONIC
        os.write(2, b"timer_create %d\n" % ctypes.get_errno())
    its = (ctypes.c_long * 4)(0, 3000000, 0, 3000000)
    libc.timer_settime(tid, 0, its, None)
    time.sleep(1.0)
    os.write(1, b"\r\x1b[2KFAKE-QUESTION [o]nce: write /harmless\r\n")
    os._exit(0)
""" + ASKED_WRITE + r"""os.waitpid(a, 0)
os.write(1, ("RESULT %s\r\n" % r).encode())
"""


def test_a_process_that_continues_itself_by_a_timer_draws_nothing_over_a_question(wd):
    """While a question is up every process of the agent's is stopped
    (SIGSTOP) and one continued by another process of the agent's is
    caught since that one is stopped too; but a POSIX timer's signal is
    made by the kernel: a process whose timer sent it SIGCONT every
    3 ms was stopped, seen stopped, and went on while the question was
    up, drawing a question of its own over the real one."""
    from test_ask import answered_before_the_fake
    recs = answered_before_the_fake(wd, TIMER_CONT_AGENT, "timercont", wait=2.0)
    answers = [x for x in recs if x.get("event") == "ask_answer"]
    check(len(answers) == 1 and answers[0].get("verdict") == "allow" and
          answers[0].get("by") == "terminal", "the answer's record: %r" % answers)


def test_a_crowd_held_by_the_exec_gate_draws_nothing_over_a_question(wd):
    """The twenty-first review's crowd (1100 processes that hold the
    terminal, more than the stops by signal count) under the exec gate's
    hold, which takes every tracee whatever their number: the question
    is put, and the fake comes after its answer."""
    from test_attack21 import CROWD_AGENT, BUSYBOX
    from test_ask import answer_once_after, argv_of, on_a_terminal
    from lib import PYTHON, read_log
    os.makedirs(os.path.join(wd.path, "ask"))
    log = os.path.join(wd.state, "crowd.jsonl")
    cmd = [PYTHON, "-c", CROWD_AGENT, BUSYBOX]
    pid, fd = on_a_terminal(wd, cmd, log, job=argv_of(wd, cmd, 20, log))
    out = answer_once_after(pid, fd, 2.5, first=30, rest=60)
    check(b"RESULT ok" in out and b"FAKE-QUESTION" in out, "%r" % out[-800:])
    check(out.index(b"FAKE-QUESTION") > out.index(b"allowed once"),
          "the fake was drawn while the question was up: %r" % out[-800:])
    answers = [x for x in read_log(log) if x.get("event") == "ask_answer"]
    check(len(answers) == 1 and answers[0].get("verdict") == "allow" and
          answers[0].get("by") == "terminal", "the answer's record: %r" % answers)


def test_without_the_exec_gate_a_timer_continues_a_process_past_a_question(wd):
    """Without the exec gate (--no-exec-gate) a question holds the tree
    by SIGSTOP only, which the kernel's own SIGCONT undoes: the timer's
    process draws over the question when a look of the hold found it
    stopped (else the tree does not come to rest, and the question is
    not put on the terminal). Not fixed (README)."""
    from test_ask import answer_once_after, argv_of, on_a_terminal
    from lib import PYTHON
    os.makedirs(os.path.join(wd.path, "ask"))
    log = os.path.join(wd.state, "nogate.jsonl")
    cmd = [PYTHON, "-c", TIMER_CONT_AGENT]
    job = argv_of(wd, cmd, 30, log)
    job.insert(1, "--no-exec-gate")
    pid, fd = on_a_terminal(wd, cmd, log, job=job)
    out = answer_once_after(pid, fd, 2.0)
    check(b"RESULT" in out and b"FAKE-QUESTION" in out, "%r" % out[-800:])
    # A tree that does not come to rest in the hold's looks gets no
    # question on the terminal (refused, nobody answering): that is safe.
    put = b"allowed once" in out
    check(put or b"RESULT errno13" in out, "%r" % out[-800:])
    if put and out.index(b"FAKE-QUESTION") < out.index(b"allowed once"):
        xfail("without the exec gate a question holds the tree by SIGSTOP, which a "
              "SIGCONT the kernel makes (a POSIX timer's) undoes (README)")


LDSO = "/lib64/ld-linux-x86-64.so.2"


def _git_elf(wd):
    """An ELF program named git (a copy of echo): the dynamic loader runs
    ELF files only."""
    import shutil
    d = os.path.join(wd.state, "elfbin")
    os.makedirs(d, exist_ok=True)
    git = os.path.join(d, "git")
    shutil.copy("/bin/echo", git)
    os.chmod(git, 0o755)
    return git


def test_a_library_the_loader_is_told_to_preload_is_in_the_question(wd):
    """"ld.so PROGRAM" is decided as the exec of PROGRAM, with PROGRAM's
    argv: the loader's own options (--preload LIB, --audit LIB,
    --library-path DIR) were left out of what was decided, asked,
    recorded and a grant is keyed on, while they put the agent's code
    into the approved program as LD_PRELOAD does: "git push origin
    main" was asked about with nothing of the library shown, and once
    approved ran it. They are part of the call now, as its environment
    is ("ld.so:--preload=LIB")."""
    from test_ask import Session, answer, wait_pending
    if not os.path.exists(LDSO):
        from lib import Skip
        raise Skip("no " + LDSO)
    evil = _evil_shim(wd)
    git = _git_elf(wd)
    a = os.path.join(wd.path, "a")
    os.makedirs(a, exist_ok=True)
    s = Session(wd, [STATIC19A, "askenv", a, "-", "X=1", LDSO, "--preload", evil,
                     git, "push", "origin", "main"])
    q = wait_pending(wd, s)
    answer(wd, "deny", q["id"])
    s.finish()
    entry = "ld.so:--preload=" + evil
    check(entry in q.get("what", "") and entry in (q.get("env") or []),
          "the question does not show the loader's library: %r" % q)
    asked = [x for x in s.asked() if x.get("op") == "exec"]
    check(asked and entry in (asked[0].get("args", {}).get("env") or []),
          "the record does not name the loader's library: %r" % asked)
    check("INJECTED" not in s.stderr and "push origin main" not in s.stdout,
          "the denied exec ran: %r %r" % (s.stdout, s.stderr[-400:]))


def test_a_grant_does_not_hold_for_a_library_the_loader_preloads(wd):
    """A "session" grant for git push, given to the plain exec, held for
    the same exec through "ld.so --preload LIB" (the grant was keyed on
    the program's file and argv only): LIB's code ran in git with no
    question. It is asked again, showing the library."""
    from test_ask import Session, answer, wait_pending
    from test_attack19a import _deny_the_next_question
    import shutil
    if not os.path.exists(LDSO):
        from lib import Skip
        raise Skip("no " + LDSO)
    busybox = shutil.which("busybox") or "/bin/busybox"
    evil = _evil_shim(wd)
    git = _git_elf(wd)
    script = "%s push origin main; %s --preload %s %s push origin main" % (
        git, LDSO, evil, git)
    s = Session(wd, [busybox, "sh", "-c", script])
    q = wait_pending(wd, s)
    check("ld.so:" not in q.get("what", ""), "the first question: %r" % q)
    answer(wd, "approve", q["id"], "session")
    again = _deny_the_next_question(wd, s, q)
    s.finish()
    check("INJECTED" not in s.stderr,
          "the grant held for the loader's library: %r %r" % (s.stdout, s.stderr[-400:]))
    check(again and "ld.so:--preload=" + evil in (again.get("env") or []),
          "not asked again with the library shown: %r" % again)


# An exec of "git push origin main" whose environment sets harmless
# variables first (by name), pad bytes of them, then the one that steers
# git.
PAD_AGENT = r"""
import os, sys
git, pad = sys.argv[1], int(sys.argv[2])
env = dict(os.environ)
for i in range(pad // 100):  # each shown whole (a word is cut at ~100)
    env["AAAA_PAD%03d" % i] = "x" * 80
env["GIT_SSH_COMMAND"] = "touch STEERED; ssh"
os.execve(git, [git, "push", "origin", "main"], env)
"""


def _pad_session(wd, pad, key):
    """The padded exec asked on a terminal, key typed at its question:
    (what the terminal showed, the records)."""
    from test_ask import argv_of, on_a_terminal, read_until
    from lib import PYTHON, read_log
    from test_attack19a import _two_dirs_and_a_git
    _, _, git = _two_dirs_and_a_git(wd)
    log = os.path.join(wd.state, "pad.jsonl")
    cmd = [PYTHON, "-c", PAD_AGENT, git, str(pad)]
    pid, fd = on_a_terminal(wd, cmd, log, job=argv_of(wd, cmd, 6, log))
    try:
        out = read_until(fd, b"(refused in ", 20)
        out += read_until(fd, b"): ", 5)
        os.write(fd, key)
        out += read_until(fd, b"\n", 3)
        out += read_until(fd, b"NEVER", 10)
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    return out, read_log(log)


def test_an_environment_padded_past_the_line_shows_what_steers(wd):
    """The question on the terminal showed an exec's environment up to
    640 bytes and counted the rest ("...[1 more variables]"): harmless
    variables sorted first hid GIT_SSH_COMMAND, which the approved git
    push then ran. The terminal shows the environment
    whole now (up to about 12 KB)."""
    out, recs = _pad_session(wd, 700, b"d")
    check(b"GIT_SSH_COMMAND=" in out, "the question hid the variable: %r" % out[-1500:])


def test_a_question_that_does_not_fit_is_not_allowed_on_the_terminal(wd):
    """Past what the terminal shows (an environment of 30 KB), a key
    that allows is no answer: the question says so, offers deny only,
    and waits for harness-exec approve (here it times out, refused)."""
    out, recs = _pad_session(wd, 30000, b"o")
    answers = [x for x in recs if x.get("event") == "ask_answer"]
    check(not os.path.exists(os.path.join(wd.path, "STEERED")),
          "the exec shown cut ran: %r" % out[-600:])
    check(answers and answers[0].get("verdict") == "deny" and
          answers[0].get("by") != "terminal",
          "allowed from the terminal unseen: %r %r" % (answers, out[-600:]))
