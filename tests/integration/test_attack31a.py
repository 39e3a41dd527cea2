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
from test_attack30a import EMPTY, HELLO, PLANT, _user_adds, _forged_records


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
    r = harness(["sh", "-c", script], wd, policy=None)
    check("SWAPPED" in r.stdout, "the agent did not swap: %s %s" % (r.stdout, r.stderr[-1500:]))
    got = _user_adds(sub)
    check(got["empty.py"] == "", "the user's empty file, checked out: %r" % got)
    check(_forged_records(r) == [(os.path.join(real, "sub", ".git", "objects"), 1)],
          "forged_objects records: %r" % _forged_records(r))


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
    r = harness(["sh", "-c", script], wd, policy=None)
    check("SWAPPED" in r.stdout, "the agent did not swap: %s %s" % (r.stdout, r.stderr[-1500:]))
    got = _user_adds(sub)
    check(got["empty.py"] == "", "the user's empty file, checked out: %r" % got)
    check((store, 1) in _forged_records(r),
          "forged_objects records: %r" % _forged_records(r))
