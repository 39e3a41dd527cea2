"""Attack review 26, part b: the kernel layer's newest emulation and the
FUSE masks, where the supervisor acts with another view than the
kernel's. The held file masks (a credential outside the write roots,
refused by Landlock, whose read is a record because the file is a FUSE
node granted to Landlock): what the user's own tools do to the file
while the session runs must not make the agent's reads of it
unrecorded, nor a credential the user's tool writes first while it
runs."""

import json
import os
import shutil
import subprocess

from lib import EXEC, Skip, check
from test_default_policy import fake_home
from test_mask_records import _wait_for

BUSYBOX = shutil.which("busybox")


def _records(log):
    with open(log) as f:
        return [json.loads(l) for l in f]


def _session(wd, home, name, outside, secret=".netrc", audit=False):
    """A static agent reads ~/SECRET once outside() has played the
    user's tool on it (a new file where the masked one was, or none
    was); returns its output and the records."""
    log = os.path.join(wd.state, name + ".jsonl")
    extra = ["--no-kernel-audit"] if os.geteuid() == 0 and not audit else []
    script = ("echo > ready-%s; while [ ! -e go-%s ]; do sleep 0.02; done; "
              "cat $HOME/%s; echo done") % (name, name, secret)
    proc = subprocess.Popen([EXEC, "--quiet", "--audit-log", log] + extra +
                            ["--", BUSYBOX, "sh", "-c", script],
                            cwd=wd.path, env=dict(os.environ, HOME=home),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: os.path.exists(os.path.join(wd.path, "ready-" + name)), "the agent")
        outside()
        # The new file's mask, when there is one, before the read: a
        # read between the file's creation and its mask is Landlock's
        # alone (maskwatch.h). Without one the read goes on after 10 s.
        try:
            _wait_for(lambda: '"mask_added"' in open(log).read(), "the mask", timeout=10)
        except AssertionError:
            pass
        open(os.path.join(wd.path, "go-" + name), "w").close()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out, err, _records(log)


def test_a_held_mask_the_users_tool_replaces_still_records_a_read(wd):
    """A held file mask is a bind on the file's dentry: the user's tool
    that rotates the credential (a new file renamed over it, as git's
    credential store and most editors write; or removed and written
    again) drops the mount with the old file, in the agent's namespace
    too. Landlock still refuses the new file (a new entry of a directory
    it carves), but as an ordinary user (and as root without kernel
    audit) that refusal was no record: the agent's reads of the rotated
    secret left nothing in the log (found by this review). The held
    masks' directories are watched for their names, and the new file is
    bound to the mask's own node, whose Landlock grant stays."""
    home = fake_home(wd)
    netrc = os.path.join(home, ".netrc")
    with open(netrc, "w") as f:
        f.write("machine h login u password NETRC-OLD\n")

    def rename_over():
        with open(netrc + ".lock", "w") as f:
            f.write("machine h login u password NETRC-ROTATED\n")
        os.rename(netrc + ".lock", netrc)

    def remove_and_write():
        os.unlink(netrc)
        with open(netrc, "w") as f:
            f.write("machine h login u password NETRC-WRITTEN\n")

    for name, outside in (("rename", rename_over), ("rewrite", remove_and_write)):
        out, err, recs = _session(wd, home, name, outside)
        check("NETRC" not in out and out.endswith("done\n"), "%s: %r %r" % (name, out, err))
        check(open(netrc).read().startswith("machine h"), "%s: changed" % name)
        _check_recorded(name, recs, netrc, "credential-files")


def _check_recorded(name, recs, path, rule, mask=None):
    """The agent's read of path is refused on record: by the mask, or by
    Landlock's own record where kernel audit is read."""
    kernel = [e for e in recs if e["event"] == "session_start"][0]["kernel"]
    if kernel.get("landlock_audit", {}).get("recorded"):
        # Kernel audit on (another session turned it on): Landlock's
        # own record, and no held mask is made.
        layers = ("landlock", "mask")
    elif kernel.get("mask_records") != "fuse":
        check(os.geteuid() != 0, "%s: masks without records as root: %r" % (name, kernel))
        raise Skip("/dev/fuse is not the user's to open: %r" % kernel.get("mask_records"))
    else:
        layers = ("mask",)
    reads = [e for e in recs if e.get("args", {}).get("path") == path and
             e.get("op") == "read" and e.get("layer") in layers]
    check(reads and all(e["verdict"] == "deny" and e["rule"] == rule for e in reads),
          "%s: the read of the new %s left no record: %r" % (
              name, path, [(e["event"], e.get("layer"), e.get("args")) for e in recs
                           if e["event"] not in ("execve", "process_exit", "session_start")]))
    if layers == ("mask",):
        check([e for e in recs if e["event"] == "mask_added" and
               e["args"]["path"] == (mask or path) and "error" not in e["args"]],
              "%s: no mask_added" % name)


def test_a_credential_the_users_tool_writes_first_during_the_session_is_a_record(wd):
    """A literal credential path outside the write roots that is not
    there at start (~/.git-credentials before the user's first `git
    credential approve`) had no mask: Landlock refused the file the
    user's tool made during the session, and as an ordinary user (or as
    root without kernel audit) that read was no record (found by this
    review). A node of the masks is kept and granted at start for each
    such file whose directory exists, and bound to the file when it
    appears; a directory's (~/.aws/ **) is watched and masked then."""
    home = fake_home(wd)
    creds = os.path.join(home, ".git-credentials")
    aws = os.path.join(home, ".aws")

    def store():
        with open(creds + ".lock", "w") as f:
            f.write("https://u:GITCRED-TOKEN@example.com\n")
        os.rename(creds + ".lock", creds)

    def configure():
        os.makedirs(aws)
        with open(os.path.join(aws, "credentials"), "w") as f:
            f.write("[default]\naws_secret_access_key = AWS-SECRET\n")

    out, err, recs = _session(wd, home, "store", store, ".git-credentials")
    check("GITCRED" not in out and out.endswith("done\n"), "store: %r %r" % (out, err))
    _check_recorded("store", recs, creds, "credential-files")
    out, err, recs = _session(wd, home, "aws", configure, ".aws/credentials")
    check("AWS-SECRET" not in out and out.endswith("done\n"), "aws: %r %r" % (out, err))
    _check_recorded("aws", recs, os.path.join(aws, "credentials"), "aws", mask=aws)


def test_a_credential_re_pointed_by_a_symlink_during_the_session_is_not_read(wd):
    """Landlock holds a read deny on the file the name resolves to at
    start (its directory carved entry by entry); a name the user's
    dotfile manager re-points during the session (stow, chezmoi, a
    home-manager switch: a symlink renamed over ~/.netrc, to a new file
    in a directory Landlock grants) named a file no rule denied: a
    static cat of ~/.netrc read the new secret, as root (kernel audit or
    not) and as the user (found by this review). The held names are
    watched (the masks' or, where Landlock's refusals are read, by name
    only), and one that becomes a symlink is masked on the name itself,
    never its target. A read in the millisecond before that mask is not
    held."""
    home = fake_home(wd)
    netrc = os.path.join(home, ".netrc")
    for d in ("dotfiles", "other"):
        os.makedirs(os.path.join(home, d))

    def re_point(n):
        def outside():
            target = os.path.join("other", "netrc-%s" % n)
            with open(os.path.join(home, target), "w") as f:
                f.write("machine h login u password NETRC-NEW-%s\n" % n)
            os.symlink(target, netrc + ".tmp")
            os.rename(netrc + ".tmp", netrc)
        return outside

    runs = [("file", False), ("link", False)]
    if os.geteuid() == 0:  # and with Landlock's refusals read, the default
        runs += [("file-audit", True), ("link-audit", True)]
    for name, audit in runs:
        if os.path.lexists(netrc):
            os.unlink(netrc)
        if name.startswith("file"):
            with open(netrc, "w") as f:
                f.write("machine h login u password NETRC-OLD\n")
        else:  # a dotfile manager's link from the start
            with open(os.path.join(home, "dotfiles", "netrc"), "w") as f:
                f.write("machine h login u password NETRC-OLD\n")
            os.symlink(os.path.join("dotfiles", "netrc"), netrc)
        out, err, recs = _session(wd, home, name, re_point(name), audit=audit)
        check("NETRC" not in out and out.endswith("done\n"), "%s: %r %r" % (name, out, err))
        kernel = [e for e in recs if e["event"] == "session_start"][0]["kernel"]
        if kernel.get("mask_records") != "fuse" and not kernel.get("masks"):
            check(os.geteuid() != 0, "%s: no masks as root: %r" % (name, kernel))
            raise Skip("/dev/fuse is not the user's to open: %r" % kernel.get("mask_records"))
        reads = [e for e in recs if e.get("args", {}).get("path") == netrc and
                 e.get("op") == "read" and e.get("layer") in ("mask", "landlock")]
        check(reads and all(e["verdict"] == "deny" and e["rule"] == "credential-files"
                            for e in reads),
              "%s: the read of the re-pointed ~/.netrc: %r" % (
                  name, [(e["event"], e.get("layer"), e.get("rule"), e.get("args")) for e in recs
                         if e["event"] not in ("execve", "process_exit", "session_start")]))


def test_a_projects_secret_that_is_a_symlink_is_masked_on_its_name(wd):
    """The walk for the masks skipped symlinks ("their targets are what
    Landlock and the masks judge"): a project's .env linked to a file
    the policy does not name (../shared/app.env, a monorepo's, a
    secrets mount's) was read by a static program through the name the
    policy denies, which the shim refuses; one an outside process linked
    in later likewise (found by this review). A denied name that is a
    symlink is masked itself, never its target (which stays readable by
    its own name, as the policy says)."""
    home = fake_home(wd)
    shared = os.path.join(home, "shared")
    os.makedirs(shared)
    with open(os.path.join(shared, "app.env"), "w") as f:
        f.write("API_KEY=sk-live-LINKED\n")
    with open(os.path.join(shared, "late.env"), "w") as f:
        f.write("API_KEY=sk-live-LATE\n")
    os.symlink(os.path.join(shared, "app.env"), os.path.join(wd.path, ".env"))
    late = os.path.join(wd.path, "sub", ".env")
    os.makedirs(os.path.dirname(late))

    def link_later():
        os.symlink(os.path.join(shared, "late.env"), late)
    log = os.path.join(wd.state, "linked.jsonl")
    script = ("echo > ready; while [ ! -e go ]; do sleep 0.02; done; "
              "cat .env; cat sub/.env; cat %s/app.env; echo done") % shared
    proc = subprocess.Popen([EXEC, "--quiet", "--audit-log", log, "--", BUSYBOX, "sh", "-c", script],
                            cwd=wd.path, env=dict(os.environ, HOME=home),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: os.path.exists(os.path.join(wd.path, "ready")), "the agent")
        link_later()
        try:
            _wait_for(lambda: '"mask_added"' in open(log).read(), "the mask", timeout=10)
        except AssertionError:
            pass
        open(os.path.join(wd.path, "go"), "w").close()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    recs = _records(log)
    kernel = [e for e in recs if e["event"] == "session_start"][0]["kernel"]
    if kernel.get("mask_records") != "fuse":
        check(os.geteuid() != 0, "masks without records as root: %r" % kernel)
        raise Skip("/dev/fuse is not the user's to open: %r" % kernel.get("mask_records"))
    # The target by its own name once (the policy names it not), never
    # through the denied names.
    check(out.count("sk-live-LINKED") == 1 and "sk-live-LATE" not in out and
          out.endswith("done\n"),
          "a linked .env read through its name (or its target refused): %r %r" % (out, err))
    for path in (os.path.join(wd.path, ".env"), late):
        reads = [e for e in recs if e.get("layer") == "mask" and e.get("op") == "read" and
                 e.get("args", {}).get("path") == path]
        check(reads and all(e["verdict"] == "deny" and e["rule"] == "dotenv" for e in reads),
              "no refusal of %s on record: %r" % (path, [
                  (e["event"], e.get("layer"), e.get("args")) for e in recs
                  if e["event"] not in ("execve", "process_exit", "session_start")]))


def test_a_token_in_another_write_root_rewritten_during_the_session_is_not_read(wd):
    """A read deny inside a write root other than the project
    (~/.cache/huggingface/token under ~/.cache; the shell histories under
    ~/.local) is masked at start, and the write root grants Landlock's
    read of the whole tree: the user's tool that rewrites the file (a
    new token renamed over it, `huggingface-cli login`; fish saving its
    history) dropped the mask with the old file, and one written first
    during the session had none: a static cat read the new token, as
    root and as the user (found by this review). The directories those
    denies name files in are watched for their names."""
    home = fake_home(wd)
    hf = os.path.join(home, ".cache", "huggingface")
    os.makedirs(hf)
    tok = os.path.join(hf, "token")
    for name in ("rewrite", "first"):
        if os.path.exists(tok):
            os.unlink(tok)
        if name == "rewrite":
            with open(tok, "w") as f:
                f.write("hf_OLD\n")

        def login():
            with open(tok + ".tmp", "w") as f:
                f.write("hf_NEWTOKEN\n")
            os.rename(tok + ".tmp", tok)
        out, err, recs = _session(wd, home, name, login, ".cache/huggingface/token")
        check("hf_" not in out and out.endswith("done\n"), "%s: %r %r" % (name, out, err))
        kernel = [e for e in recs if e["event"] == "session_start"][0]["kernel"]
        if kernel.get("mask_records") != "fuse":
            check(os.geteuid() != 0, "%s: masks without records as root: %r" % (name, kernel))
            raise Skip("/dev/fuse is not the user's to open: %r" % kernel.get("mask_records"))
        reads = [e for e in recs if e.get("layer") == "mask" and e.get("op") == "read" and
                 e.get("args", {}).get("path") == tok]
        check(reads and all(e["verdict"] == "deny" and e["rule"] == "cloud-and-registry-tokens"
                            for e in reads), "%s: no refusal on record: %r" % (name, [
                                (e["event"], e.get("layer"), e.get("args")) for e in recs
                                if e["event"] not in ("execve", "process_exit", "session_start")]))


def test_a_directory_linked_in_on_the_way_to_a_credential_is_not_read_through(wd):
    """A credential's directory that is not there at start, linked in
    during the session by the user's dotfile manager (stow folds a
    package into one symlink: ~/.docker -> dotfiles/docker) made
    ~/.docker/config.json, which the policy denies, resolve to a file in
    a directory Landlock grants: a static cat read it, as root and as the
    user (found by this review). The deepest directory of each held
    literal deny that is there is watched for its names, and a symlink
    made there on the way to one is masked on its name (a look-up beneath
    it fails with ENOTDIR: refused, with no record of that read)."""
    home = fake_home(wd)
    os.makedirs(os.path.join(home, "dotfiles", "docker"))
    with open(os.path.join(home, "dotfiles", "docker", "config.json"), "w") as f:
        f.write('{"auths": "DOCKER-SECRET"}\n')
    docker = os.path.join(home, ".docker")

    def stow():
        os.symlink(os.path.join("dotfiles", "docker"), docker)
    out, err, recs = _session(wd, home, "stow", stow, ".docker/config.json", audit=True)
    check("DOCKER-SECRET" not in out and out.endswith("done\n"), "%r %r" % (out, err))
    kernel = [e for e in recs if e["event"] == "session_start"][0]["kernel"]
    if kernel.get("mask_records") != "fuse" and os.geteuid() != 0:
        raise Skip("/dev/fuse is not the user's to open: %r" % kernel.get("mask_records"))
    check([e for e in recs if e["event"] == "mask_added" and e["args"]["path"] == docker
           and "error" not in e["args"]], "no mask on the link: %r" % [
               (e["event"], e.get("layer"), e.get("args")) for e in recs
               if e["event"] not in ("execve", "process_exit", "session_start")])


# The agent's side on a Linux console (its controlling terminal, as in
# test_attack10): the keyboard's lock flags, the LEDs and a tone with no
# end, which the kernel lets the terminal's own processes set with no
# capability. Prints each errno.
CONSOLE = r"""
import fcntl, os
fd = os.open("/dev/tty", os.O_RDWR)
for name, req, arg in (("kbled", 0x4B65, 0x74), ("setled", 0x4B32, 0x7),
                       ("sound", 0x4B2F, 0), ("tone", 0x4B30, 0)):
    try:
        fcntl.ioctl(fd, req, arg)
        print(name, "ok")
    except OSError as e:
        print(name, "errno", e.errno)
"""
KDGKBLED, KDSKBLED, KDSETLED = 0x4B64, 0x4B65, 0x4B32


def _kbled(path):
    import array
    import fcntl
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    try:
        flags = array.array("B", [0])
        fcntl.ioctl(fd, KDGKBLED, flags)
        return flags[0]
    finally:
        os.close(fd)


def test_the_consoles_keyboard_flags_and_tone_do_not_outlast_the_session(wd):
    """On a Linux console, the agent set the keyboard's lock flags and
    their defaults (KDSKBLED: Caps Lock left on, the next login's
    password typed wrong), the LEDs (KDSETLED) and a tone with no end
    (KIOCSOUND, KDMKTONE of no duration); each outlasted the session,
    where the console's keyboard mode and keymap were refused (tenth
    attack review). Now refused in BPF (no record: the deny list)."""
    import fcntl
    from lib import PYTHON, harness
    if os.geteuid() != 0:
        raise Skip("needs root to give the agent a console as its terminal")
    path = "/dev/tty9"
    try:
        before = _kbled(path)
    except OSError as e:
        raise Skip("no console here: %s" % e)
    try:
        start = ("import os, sys; os.setsid(); f = os.open(%r, os.O_RDWR); "
                 "os.dup2(f, 0); os.execv(sys.argv[1], sys.argv[1:])" % path)
        r = harness([PYTHON, "-c", CONSOLE], wd, policy=None, wrap=[PYTHON, "-c", start])
        lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
        check(_kbled(path) == before, "the console's keyboard flags changed: %#x, were %#x" % (
            _kbled(path), before))
        for name in ("kbled", "setled", "sound", "tone"):
            check(lines.get(name) == "errno 1", "%s: %r (%r %r)" % (
                name, lines.get(name), r.stdout, r.stderr))
    finally:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        fcntl.ioctl(fd, KDSKBLED, before)
        fcntl.ioctl(fd, KDSETLED, 0xff)  # the LEDs follow the flags again
        os.close(fd)
