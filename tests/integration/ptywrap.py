"""The start of a wrap script (lib.harness's wrap) that runs harness-exec
on a terminal of its own, as the user's shell would: a pty m/s, s made
the controlling terminal of the session the child starts (own, as
preexec_fn), drain(p) reading m until p ends, settings(before) telling
whether the terminal's settings are still those of before."""

PRELUDE = r'''
import fcntl, os, pty, select, struct, subprocess, sys, termios, time, tty
m, s = pty.openpty()
def own():
    os.setsid()
    fcntl.ioctl(s, termios.TIOCSCTTY, 0)
def drain(p):
    out = b""
    while p.poll() is None:
        if select.select([m], [], [], 0.1)[0]:
            try:
                out += os.read(m, 4096)
            except OSError:
                break
    return out
def settings(before):
    return "same" if termios.tcgetattr(s)[:6] == before[:6] else "changed"
'''
