"""Attack review 31, part a: the thirtieth review's fixes attacked (the
nested repositories' stores swept at the end, ...), under the embedded
default policy, as root and as an ordinary user.

A store other than the session's was kept for the end's sweep only
when a judged write named a loose object in it while it was a git dir
(its HEAD there). A directory of planted objects made elsewhere and
renamed into the user's nested store, or a store whose objects were
written before its HEAD, was never swept; nor were the stores a swept
one names in its objects/info/alternates, which git reads as its own."""

import os

from lib import check, harness
from test_attack30a import EMPTY, HELLO, PLANT, _forged_records, _swapped_in_and_swept, swap_and_checkout


def test_a_store_written_before_its_head_then_moved_in_place_is_swept(wd):
    """The agent planted in f2/.git/objects before f2/.git was a git dir
    (no HEAD yet: the write named no object), then made it one (git
    init) and moved f2 in place of the user's nested sub."""
    from test_attack29a import _nested
    from lib import PYTHON
    sub, _ = _nested(wd)
    real = os.path.realpath(wd.path)
    made = os.path.join(real, "f2", ".git", "objects")
    script = ("%s -c '%s' %s %s && git init -q f2 && mv sub sub-old && mv f2 sub && echo SWAPPED"
              % (PYTHON, PLANT, made, EMPTY))
    _swapped_in_and_swept(wd, sub, script)


def test_an_object_planted_in_an_alternate_of_a_store_moved_in_place_is_swept(wd):
    """The agent planted in a plain directory (store: no git dir), named
    it in the alternates of a repository it made (f2), and moved f2 in
    place of the user's nested sub: git read the empty blob from the
    alternate, the sweep read sub's own store only."""
    from test_attack29a import _nested
    from lib import PYTHON
    sub, _ = _nested(wd)
    real = os.path.realpath(wd.path)
    store = os.path.join(real, "store")
    script = ("%s -c '%s' %s %s && git init -q f2 && echo %s > f2/.git/objects/info/alternates"
              " && mv sub sub-old && mv f2 sub && echo SWAPPED" % (PYTHON, PLANT, store, EMPTY, store))
    r = swap_and_checkout(wd, sub, script)
    check((store, 1) in _forged_records(r),
          "forged_objects records: %r" % _forged_records(r))


BIG = r"""
import os, sys, zlib
objects, oid = sys.argv[1:3]
code = b"import os  # PLANTED\n"
pad = (1 << 30) + (64 << 20)
z = zlib.compressobj(1)
d = os.path.join(objects, oid[:2])
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, oid[2:]), "wb") as f:
    f.write(z.compress(b"blob %d\0" % (len(code) + pad) + code))
    chunk = b" " * (16 << 20)
    for _ in range(pad // len(chunk)):
        f.write(z.compress(chunk))
    f.write(z.flush())
"""


def test_a_planted_object_too_large_to_read_whole_is_swept(wd):
    """The sweep read each new loose object whole (git_odb_read), within
    the check's 1 GiB of memory: one planted under the empty blob's id
    that inflates to more (code, then spaces: still a Python file) failed
    to read and was left, where git streams it. The user's git add of an
    empty file wrote no object, and its checkout gave the planted code."""
    from test_attack29a import _nested
    from test_worktree import git
    from lib import PYTHON
    sub, _ = _nested(wd)
    objects = os.path.join(os.path.realpath(sub), ".git", "objects")
    script = "%s -c '%s' %s %s && echo PLANTED" % (PYTHON, BIG, objects, EMPTY)
    r = harness(["sh", "-c", script], wd, policy=None)
    check("PLANTED" in r.stdout, "the agent did not plant: %s %s" % (r.stdout, r.stderr[-1500:]))
    planted = os.path.join(objects, EMPTY[:2], EMPTY[2:])
    check(not os.path.exists(planted), "the planted object is there: %s" % planted)
    check(_forged_records(r) == [(objects, 1)],
          "forged_objects records: %r" % _forged_records(r))
    check(git(sub, "hash-object", "-w", "/dev/null").strip() == EMPTY, "the user's empty blob")
    check(git(sub, "cat-file", "-s", EMPTY).strip() == "0", "the user's empty blob's size")


def test_a_directory_of_planted_objects_moved_into_an_alternate_is_swept(wd):
    """The agent planted in stage/e6 (stage kept for the sweep), moved
    that directory into a plain one (a static busybox's mv stage/e6
    store/: a directory's
    rename names no object) that a repository it made names in its
    alternates, and moved that repository in place of the user's nested
    sub: stage was swept, empty."""
    from test_attack29a import _nested
    from lib import PYTHON
    sub, _ = _nested(wd)
    real = os.path.realpath(wd.path)
    store = os.path.join(real, "store")
    from test_sessions_apart import BUSYBOX
    script = ("%s -c '%s' stage %s && mkdir store && %s mv stage/%s store/ && git init -q f2"
              " && echo %s > f2/.git/objects/info/alternates && mv sub sub-old && mv f2 sub"
              " && echo SWAPPED" % (PYTHON, PLANT, EMPTY, BUSYBOX, EMPTY[:2], store))
    r = swap_and_checkout(wd, sub, script)
    check((store, 1) in _forged_records(r), "forged_objects records: %r" % _forged_records(r))


RAW = r"""
import sys, zlib
with open(sys.argv[1], "wb") as f:
    f.write(zlib.compress(b"blob 20\0import os  # PLANTED\n"))
"""


def test_a_planted_object_reached_through_a_symlinked_directory_is_swept(wd):
    """The agent wrote the planted object as real/<rest of the empty
    blob's id> (no loose object's shape), linked store/e6 -> real (git
    follows it; the sweep opened xx with O_NOFOLLOW), named store in
    the alternates of a repository it made, and moved that repository
    in place of the user's nested sub."""
    from test_attack29a import _nested
    from lib import PYTHON
    sub, _ = _nested(wd)
    real = os.path.realpath(wd.path)
    store = os.path.join(real, "store")
    from test_sessions_apart import BUSYBOX
    script = ("mkdir real store && %s -c '%s' real/%s && %s ln -s %s/real store/%s && git init -q f2"
              " && echo %s > f2/.git/objects/info/alternates && mv sub sub-old && mv f2 sub"
              " && echo SWAPPED" % (PYTHON, RAW, EMPTY[2:], BUSYBOX, real, EMPTY[:2], store))
    r = swap_and_checkout(wd, sub, script)
    check((store, 1) in _forged_records(r), "forged_objects records: %r" % _forged_records(r))


SWAP = r"""
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, sys.argv[1].encode(), AT_FDCWD, sys.argv[2].encode(), RENAME_EXCHANGE):
    sys.exit("renameat2: %d" % ctypes.get_errno())
"""


def test_a_directory_of_planted_objects_exchanged_into_an_alternate_is_swept(wd):
    """As the rename of stage/e6 into the alternate store, with
    renameat2(RENAME_EXCHANGE) of store/e6 (its first name, only the
    second of which was looked at) and stage/e6."""
    from test_attack29a import _nested
    from lib import PYTHON
    sub, _ = _nested(wd)
    real = os.path.realpath(wd.path)
    store = os.path.join(real, "store")
    script = ("%s -c '%s' stage %s && mkdir -p store/%s && %s -c '%s' store/%s stage/%s"
              " && git init -q f2 && echo %s > f2/.git/objects/info/alternates"
              " && mv sub sub-old && mv f2 sub && echo SWAPPED"
              % (PYTHON, PLANT, EMPTY, EMPTY[:2], PYTHON, SWAP, EMPTY[:2], EMPTY[:2], store))
    r = swap_and_checkout(wd, sub, script)
    check((store, 1) in _forged_records(r), "forged_objects records: %r" % _forged_records(r))
